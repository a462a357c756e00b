package oracle

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/schemas/catalogue"
	"github.com/tcmkit/tcmkit/schemas/jsondoc"
	"github.com/tcmkit/tcmkit/suites/client"
)

// maxPerRule bounds the problems one rule finds in one answer: a page of
// 200 events with one wrong field each is one finding, counted.
const maxPerRule = 20

// headers judges the media type of every answer of the three operations,
// and the Retry-After of every 429.
func (j *judging) headers() {
	if j.op == Other || j.op == FeedHead {
		return
	}
	ct := j.resp.Header.Values("Content-Type")
	if len(ct) != 1 || !IsJSONMediaType(ct[0]) {
		got := "no Content-Type header"
		if len(ct) > 0 {
			got = fmt.Sprintf("Content-Type %q", strings.Join(ct, ", "))
		}
		exp := "a JSON media type (application/json)"
		if a := j.req.Values("Accept"); len(a) > 0 && a[0] != "application/json" {
			exp += fmt.Sprintf(", whatever Accept asked (%q)", a[0])
		}
		j.fail(catalogue.ContentTypeJSON, "", exp, fmt.Sprintf("status %d with %s", j.resp.Status, got))
	}
	if j.resp.Status == http.StatusTooManyRequests {
		v := j.resp.Header.Values("Retry-After")
		_, err := client.ParseRetryAfter(strings.Join(v, ", "), client.ServerTime(j.resp.Header, j.at))
		if len(v) != 1 || err != nil {
			why := "no Retry-After header"
			if len(v) > 0 {
				why = fmt.Sprintf("Retry-After %q: %v", strings.Join(v, ", "), err)
			}
			j.fail(catalogue.RateRetryAfter, "", "a Retry-After header of delta-seconds or an HTTP-date", why)
		}
	}
}

// jsonMedia reports an answer that says it is JSON.
func (j *judging) jsonMedia() bool {
	ct := j.resp.Header.Values("Content-Type")
	return len(ct) == 1 && IsJSONMediaType(ct[0])
}

// body judges the body by the rules of its status.
func (j *judging) body() {
	st := j.resp.Status
	switch {
	case j.op == FeedHead:
		// no content (RFC 9110 §9.3.2): its status was all it could say
	case j.op == Other:
		if j.cred.bad() {
			j.noAccountData(j.cred.requirement())
		}
	case st >= 400:
		j.errorBody()
	case st == http.StatusOK && j.docErr() != nil && !j.jsonMedia():
		// a page that says it is no JSON (XML for an Accept that asked for
		// it): CONTENT-TYPE-JSON's finding, not the resource's
	case st == http.StatusOK:
		switch j.op {
		case Feed:
			j.feedPage()
		case Videos:
			j.videosAnswer()
		case Health:
			for _, v := range Violations(j.resp, schemas.HealthBody) {
				j.fail(catalogue.HealthOK, v.Pointer, `{"status":"ok"}`, v.String())
			}
		}
	}
}

// errorBody: an ErrorBody, with none of the account's data; a feed 400
// names the parameters it refused.
func (j *judging) errorBody() {
	if j.docErr() != nil && !j.jsonMedia() {
		return // a page that says it is no JSON: CONTENT-TYPE-JSON's finding
	}
	vs := Violations(j.resp, schemas.ErrorBody)
	for _, v := range vs[:min(len(vs), maxPerRule)] {
		j.fail(catalogue.ErrorBody, v.Pointer, "an ErrorBody: error and message strings, details optional", v.String())
	}
	switch j.resp.Status {
	case http.StatusUnauthorized:
		j.noAccountData(j.cred.requirement())
	case http.StatusForbidden:
		j.noAccountData(catalogue.ProGate)
	case http.StatusTooManyRequests:
		j.noAccountData(catalogue.RateLimit429)
	default:
		j.noAccountData(catalogue.ErrorBody)
	}
	if j.op == Feed && j.resp.Status == http.StatusBadRequest && len(vs) == 0 {
		j.badParams()
	}
}

// badParams: a feed 400's details name a parameter it refused: the one
// open parameter when there is one, and each the target refused alone
// before.
func (j *judging) badParams() {
	if j.q.broken {
		return // no parameters to name in a query that does not parse
	}
	details := j.detailsText()
	var want []string
	switch open := j.q.open; {
	case len(open) == 1:
		want = open
	default:
		for _, p := range open {
			if j.o.m.refusedAlone[paramValue(j.req.Query, p)] {
				want = append(want, p)
			}
		}
	}
	named := 0
	for _, p := range j.q.open {
		if strings.Contains(details, p) {
			named++
		}
	}
	if j.cred.bad() && named == 0 {
		// a bad key and a bad parameter: which error wins is open, but a
		// 400 that names no parameter refused the key, which wants 401
		j.fail(j.cred.requirement(), "", "401 for the key, or a 400 whose details name the invalid parameter ("+strings.Join(j.q.open, ", ")+")",
			fmt.Sprintf("status 400; details %s", jsondoc.Excerpt(orNone(details), schemas.MaxExcerpt)))
		return
	}
	for _, p := range want {
		if !strings.Contains(details, p) {
			j.fail(catalogue.FeedBadParam, "/details", fmt.Sprintf("details that name the parameter %q (for 400 on the feed, details says which query parameters are invalid)", p),
				fmt.Sprintf("details %s", jsondoc.Excerpt(orNone(details), schemas.MaxExcerpt)))
		}
	}
	if len(want) == 0 && len(j.q.open) > 1 && named == 0 {
		j.fail(catalogue.FeedBadParam, "/details", fmt.Sprintf("details that name the invalid parameters (one of %s)", strings.Join(j.q.open, ", ")),
			fmt.Sprintf("details %s", jsondoc.Excerpt(orNone(details), schemas.MaxExcerpt)))
	}
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// noAccountData: an answer that refuses or carries no right to the data
// holds none of it: no event, no video entry, no id of the account's
// events, no id of its videos the request did not name.
func (j *judging) noAccountData(id catalogue.ID) {
	if j.docErr() != nil || j.doc() == nil {
		return
	}
	named := string(j.req.Body) + "\x00" + j.req.Query
	found := 0
	var walk func(v any, ptr string)
	walk = func(v any, ptr string) {
		if found >= maxPerRule {
			return
		}
		switch t := v.(type) {
		case map[string]any:
			if what := dataObject(t); what != "" {
				found++
				j.fail(id, ptr, "no data of the account in an answer that grants none", what+" at "+orRoot(ptr))
				return
			}
			for _, k := range slices.Sorted(maps.Keys(t)) {
				if what := j.o.m.accountString(k, named); what != "" {
					found++
					j.fail(id, ptr, "no data of the account in an answer that grants none", fmt.Sprintf("%s as a member name at %s", what, orRoot(ptr)))
				}
				walk(t[k], jsondoc.Join(ptr, k))
			}
		case []any:
			for i, x := range t {
				walk(x, jsondoc.Join(ptr, i))
			}
		case string:
			if what := j.o.m.accountString(t, named); what != "" {
				found++
				j.fail(id, ptr, "no data of the account in an answer that grants none", fmt.Sprintf("%s at %s", what, orRoot(ptr)))
			}
		}
	}
	walk(j.doc(), "")
}

func orRoot(ptr string) string {
	if ptr == "" {
		return "/"
	}
	return ptr
}

// dataObject names an object that is an event or a video's data.
func dataObject(o map[string]any) string {
	_, hasType := o["type"]
	_, hasCreated := o["createdAt"]
	_, hasChannel := o["channel"]
	_, hasVideoID := o["platformVideoId"]
	_, hasSamples := o["statSamples"]
	_, hasTitle := o["currentTitle"]
	switch {
	case hasType && hasCreated && hasChannel:
		return "an event"
	case hasSamples:
		return "a video entry"
	case hasVideoID && hasTitle:
		return "a video"
	}
	return ""
}

// feedPage judges a feed 200: a FeedPage, values, size, order and ids.
func (j *judging) feedPage() {
	own := j.schema(schemas.FeedPage)
	j.timestamps()
	if own > 0 {
		return // no page to judge further
	}
	events := jsondoc.Items(j.doc(), "/events")
	next, hasNext := j.nextCursor()
	more := hasNext && next != "" // "" is no cursor: FEED-CURSOR-END's
	q := j.q
	n := len(events)
	var short *shortPage
	k := j.o.m.key(j.token)
	rule := q.sizeRule
	if n == schemas.DefaultPageSize && q.sizeRule == catalogue.FeedLimit {
		k.ignoresLimit = true
	}
	if n == schemas.DefaultPageSize && q.sizeRule == catalogue.FeedLimitCap && k.ignoresLimit {
		rule = catalogue.FeedLimit // a key whose every limit gives the default: the limit ignored, not the cap
	}
	switch {
	case q.size > 0 && n > q.size:
		if rule == catalogue.FeedLimit && n == schemas.DefaultPageSize {
			k.ignoresLimit = true
		}
		j.fail(rule, "/events", fmt.Sprintf("at most %d events (%s)", q.size, sizeSays(q)), fmt.Sprintf("%d events", n))
	case q.size > 0 && more && n < q.size:
		short = &shortPage{resp: j.resp, rule: rule, expected: fmt.Sprintf("%d events: only the last page (null nextCursor) holds fewer (%s)", q.size, sizeSays(q)),
			actual: fmt.Sprintf("%d events and nextCursor %s", n, jsondoc.Quote(next, 40))}
	case q.size == 0 && len(q.readings) > 0 && (n > slices.Max(q.readings) || more && !slices.Contains(q.readings, n)):
		j.fail(catalogue.FeedLimit, "/events", fmt.Sprintf("%s events: the limit read as the integer it is, or ignored; only the last page (null nextCursor) holds fewer", joinInts(q.readings)),
			fmt.Sprintf("%d events, nextCursor %s", n, jsondoc.Quote(next, 40)))
	case q.size == 0 && n > schemas.MaxPageSize:
		j.fail(catalogue.FeedLimitCap, "/events", fmt.Sprintf("at most %d events, whatever limit asked", schemas.MaxPageSize), fmt.Sprintf("%d events", n))
	}
	if hasNext && next == "" {
		j.fail(catalogue.FeedCursorEnd, "/nextCursor", "null when there are no more pages, else a cursor to pass", `nextCursor ""`)
	}
	if more && n > 0 && next == q.cursor {
		// a cursor is a place in the feed: this one leads to this page
		// again, and a walk never ends (an empty page that does so is
		// judged as the end it is: chained)
		j.fail(catalogue.FeedCursorEnd, "/nextCursor", "a cursor to the events after this page's, or null at the end",
			fmt.Sprintf("nextCursor is the cursor that asked for this page of %d events: a walk reads it again and never ends", n))
	}
	seen := map[string]int{}
	var prev int64
	dup, order := 0, 0
	var dups []Problem
	evs := make([]event, len(events))
	for i, e := range events {
		ev := readEvent(e)
		evs[i] = ev
		j.meaning(fmt.Sprintf("/events/%d", i), ev)
		if ev.hasTime && i > 0 && ev.createdAt > prev && order < maxPerRule {
			order++
			j.fail(catalogue.FeedOrder, fmt.Sprintf("/events/%d/createdAt", i), "newest first by createdAt (ties allowed)",
				fmt.Sprintf("createdAt %d after createdAt %d at /events/%d", ev.createdAt, prev, i-1))
		}
		if ev.hasTime {
			prev = ev.createdAt
		}
		if ev.id == "" {
			continue
		}
		if k, ok := seen[ev.id]; ok && dup < maxPerRule {
			dup++
			dups = append(dups, Problem{Requirement: catalogue.EventIDUnique, Request: j.req.String(), Pointer: fmt.Sprintf("/events/%d/id", i),
				Expected: "ids no two events share", Actual: fmt.Sprintf("id %s also at /events/%d", jsondoc.Quote(ev.id, 60), k), Evidence: []*client.Response{j.resp}})
		}
		seen[ev.id] = i
	}
	before := len(j.problems)
	if j.cred == CredValid {
		// a form the contract leaves open may be read as another account
		// (or none) by a server in trouble: only the contract's form
		// speaks for the key's feed
		j.o.m.page(j, evs, next, hasNext && next != "", short)
	} else {
		j.pageSwitches(evs, nil)
	}
	if !slices.ContainsFunc(j.problems[before:], func(p Problem) bool { return p.Requirement == catalogue.FeedTenant }) {
		j.problems = append(j.problems, dups...) // on a page of another account's events they are its echo
	}
}

func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = fmt.Sprint(n)
	}
	return strings.Join(s, " or ")
}

func sizeSays(q feedQuery) string {
	switch q.sizeRule {
	case catalogue.FeedPageDefault:
		return fmt.Sprintf("no limit: the default, %d", schemas.DefaultPageSize)
	case catalogue.FeedLimitCap:
		return fmt.Sprintf("a limit above %d is capped at %d", schemas.MaxPageSize, schemas.MaxPageSize)
	}
	return fmt.Sprintf("limit=%d", q.size)
}

// nextCursor reads nextCursor: its value and whether it is a string.
func (j *judging) nextCursor() (string, bool) {
	s, ok := jsondoc.String(j.doc(), "/nextCursor")
	return s, ok
}

// schema judges the body against its resource; it returns how many
// violations the resource's own rule has (a page's structure, not its
// events' fields).
func (j *judging) schema(res schemas.Resource) int {
	own := 0
	per := map[catalogue.ID]int{}
	for _, v := range j.o.violations(j.resp, res) {
		id := ViolationRequirement(res, v)
		if id == ResourceRequirement(res) {
			own++
		}
		if per[id]++; per[id] > maxPerRule && v.Keyword != "limit" {
			continue // the rest counted; the notice that validation stopped is kept
		}
		j.fail(id, v.Pointer, "the body validates as "+strings.TrimSuffix(string(res), ".json"), v.String())
	}
	return own
}

// timestamps: every timestamp field of a 200 is epoch milliseconds.
func (j *judging) timestamps() {
	if j.docErr() != nil {
		return
	}
	ceiling := j.o.calendar().AddDate(1, 0, 0)
	n := 0
	Fields(j.doc(), TimestampFields, func(ptr string, v any) {
		if why := Implausible(v, ceiling); why != "" && !j.schemaSays(ptr) {
			if n++; n <= maxPerRule {
				j.fail(catalogue.TimestampEpochMs, ptr, why, "got "+jsondoc.Quote(v, schemas.MaxExcerpt))
			}
		}
	})
}

// schemaSays reports whether the schema already named the value at ptr (a
// string or a fraction where an integer belongs): one finding a value.
func (j *judging) schemaSays(ptr string) bool {
	for _, p := range j.problems {
		if p.Pointer == ptr && p.Requirement == catalogue.TimestampEpochMs {
			return true
		}
	}
	return false
}

// answersOnly reports whether the answer names an id that only the
// refused reading asked for, and none the other did not: it answers that
// reading, if not all of it.
func answersOnly(refused, ids, served, missing []string) bool {
	only := false
	for _, id := range slices.Concat(served, missing) {
		switch {
		case slices.Contains(refused, id) && !slices.Contains(ids, id):
			only = true
		case !slices.Contains(refused, id):
			return false
		}
	}
	return only
}

// videosAnswer judges a tracked-videos 200: the response's schema, its
// values, the partition of the ids asked, and what the model knows.
func (j *judging) videosAnswer() {
	own := j.schema(schemas.VideosResponse)
	j.timestamps()
	if own > 0 {
		return
	}
	entries := jsondoc.Items(j.doc(), "/videos")
	var served []string
	for _, e := range entries {
		id, _ := jsondoc.String(e, "/video/platformVideoId")
		served = append(served, id)
	}
	var missing []string
	for _, m := range jsondoc.Items(j.doc(), "/missingVideoIds") {
		s, _ := m.(string)
		missing = append(missing, s)
	}
	if why := partition(j.vb.ids, served, missing); why != "" {
		switch {
		case j.vb.alt != nil && partition(j.vb.alt, served, missing) == "":
		case j.vb.refused != nil && (partition(j.vb.refused, served, missing) == "" || answersOnly(j.vb.refused, j.vb.ids, served, missing)):
			// a parser that checked one reading and answered the other,
			// whole or cut to the bound it broke (21 ids served as 20)
			j.fail(j.vb.refusedBy, "", "the answer to a reading of videoIds the contract allows, or a 400 (RFC 8259 §4: either value of a repeated member, or a refusal)",
				fmt.Sprintf("200 answering the other value of videoIds, %d ids, which breaks this rule", len(j.vb.refused)))
		default:
			j.fail(catalogue.VideosPartition, "", "every requested id in exactly one of videos (video.platformVideoId) and missingVideoIds, and nothing else", why)
		}
	}
	evs := make([][]event, len(entries)) // each entry's events, read once
	for i, e := range entries {
		seen := map[string]int{}
		for k, x := range jsondoc.Items(e, "/events") {
			ev := readEvent(x)
			evs[i] = append(evs[i], ev)
			j.meaning(fmt.Sprintf("/videos/%d/events/%d", i, k), ev)
			if first, ok := seen[ev.id]; ok && ev.id != "" {
				j.fail(catalogue.EventIDUnique, fmt.Sprintf("/videos/%d/events/%d/id", i, k), "ids no two events of a VideoEntry share", fmt.Sprintf("id %s also at /videos/%d/events/%d", jsondoc.Quote(ev.id, 60), i, first))
				continue
			}
			seen[ev.id] = k
		}
	}
	if j.cred == CredValid { // as for a feed page
		j.o.m.videos(j, entries, evs, served, missing)
	}
}

// partition says how the two lists fail to partition the ids asked ("" if
// they do): each id asked is in one list, once or once per ask, and no
// other id is in either.
func partition(asked, served, missing []string) string {
	times := map[string]int{}
	for _, id := range asked {
		times[id]++
	}
	count := func(list []string) map[string]int {
		c := map[string]int{}
		for _, id := range list {
			c[id]++
		}
		return c
	}
	s, m := count(served), count(missing)
	var out []string
	for _, id := range slices.Sorted(maps.Keys(times)) {
		switch {
		case s[id] > 0 && m[id] > 0:
			out = append(out, fmt.Sprintf("%s is in both lists", jsondoc.Quote(id, 40)))
		case s[id] == 0 && m[id] == 0:
			out = append(out, fmt.Sprintf("%s is in neither list", jsondoc.Quote(id, 40)))
		case s[id] > times[id] || m[id] > times[id]:
			out = append(out, fmt.Sprintf("%s is listed %d times, asked %d", jsondoc.Quote(id, 40), max(s[id], m[id]), times[id]))
		}
	}
	for _, id := range slices.Concat(slices.Sorted(maps.Keys(s)), slices.Sorted(maps.Keys(m))) {
		if times[id] == 0 {
			out = append(out, fmt.Sprintf("%s was not asked for", jsondoc.Quote(id, 40)))
		}
	}
	if len(out) > maxPerRule {
		out = append(out[:maxPerRule], fmt.Sprintf("… and %d more", len(out)-maxPerRule))
	}
	return strings.Join(out, "; ")
}

// event is what the oracle reads of an event.
type event struct {
	id        string
	createdAt int64
	hasTime   bool
	typ       string
	channel   string
	video     string // the video's platformVideoId, for video events
	// print is what makes the event the event it is, field by field: its
	// type, time, channel and the change it records (not the current state
	// it shows). A field one reading lacks is the schema's to judge.
	print map[string]string
	raw   map[string]any
}

// judgedElsewhere reports a field whose value in either reading breaks its
// own rule (a type of none of the 11, a timestamp of no epoch
// milliseconds): that rule's finding, not two events under one id.
func judgedElsewhere(field, a, b string) bool {
	for _, v := range []string{a, b} {
		switch field {
		case "type":
			if s, err := strconv.Unquote(v); err != nil || !slices.Contains(schemas.EventTypes, s) {
				return true
			}
		case "createdAt", "publishedAt":
			doc, err := jsondoc.Decode([]byte(v))
			if err != nil || !plausible(doc) {
				return true
			}
		}
	}
	return false
}

// changeFields are the fields that record an event's change.
var changeFields = []string{"oldTitle", "newTitle", "oldThumbnailUrl", "newThumbnailUrl", "titles", "finalTitle",
	"thumbnailUrls", "finalThumbnailUrl", "isMembersOnly", "oldSubscriberCount", "newSubscriberCount",
	"oldChannelTitle", "newChannelTitle", "oldAvatarUrl", "newAvatarUrl"}

func readEvent(v any) event {
	o, _ := v.(map[string]any)
	e := event{raw: o, print: map[string]string{}}
	e.id, _ = o["id"].(string)
	if ms, ok := jsondoc.Int(o, "/createdAt"); ok {
		e.createdAt, e.hasTime = ms, true
	}
	e.typ, _ = o["type"].(string)
	e.channel, _ = jsondoc.String(o, "/channel/id")
	e.video, _ = jsondoc.String(o, "/video/platformVideoId")
	for _, f := range printed {
		if x, ok := jsondoc.Get(o, f.ptr); ok {
			e.print[f.name] = encodeValue(x)
		}
	}
	for _, f := range changeFields {
		if x, ok := o[f]; ok {
			e.print[f] = encodeValue(x)
		}
	}
	return e
}

// printed are the fields of an event's print beyond its change fields.
var printed = []struct{ ptr, name string }{
	{"/type", "type"}, {"/createdAt", "createdAt"}, {"/channel/id", "channel"},
	{"/video/platformVideoId", "video"}, {"/video/publishedAt", "publishedAt"},
}

// encodeValue is a value as JSON, the common scalars without the encoder.
func encodeValue(v any) string {
	switch t := v.(type) {
	case string:
		return strconv.Quote(t)
	case json.Number:
		return string(t)
	case bool:
		return strconv.FormatBool(t)
	case nil:
		return "null"
	}
	return string(jsondoc.Encode(v))
}

// differs names the first field two readings of an event id disagree on
// ("" when none: a field one of them lacks is no disagreement).
func differs(a, b map[string]string) string {
	for _, k := range slices.Sorted(maps.Keys(a)) {
		if v, ok := b[k]; ok && v != a[k] && judgedElsewhere(k, a[k], v) == false {
			return fmt.Sprintf("%s %s, then %s", k, a[k], v)
		}
	}
	return ""
}
