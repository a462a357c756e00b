package conformance

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/schemas/catalogue"
	"github.com/tcmkit/tcmkit/schemas/jsondoc"
	"github.com/tcmkit/tcmkit/suites/client"
)

// judged is a response and the resource its body must be.
type judged struct {
	resp *client.Response
	res  schemas.Resource
}

// finding is one broken rule in one response.
type finding struct {
	req  string // the request, named
	ptr  string // the JSON pointer, for the order of findings
	kind string // the rule broken, for grouping: findings of one kind are counted past maxFindings
	line string // pointer, rule and value
	// blame is the requirement the finding breaks; "" is the spec's own.
	blame catalogue.ID
}

// schemaFinding is a finding of one schema violation in an answer that
// must be res.
func schemaFinding(req string, res schemas.Resource, v schemas.Violation) finding {
	kind := "[" + v.Keyword + "] " + v.Rule
	if v.EventType != "" {
		kind += " (" + v.EventType + ")"
	}
	return finding{req: req, ptr: v.Pointer, kind: kind, line: v.String(), blame: violationRequirement(res, v)}
}

// violationRequirement is the one requirement a schema violation breaks:
// the narrowest rule that speaks of it (an event's type, its video, a
// timestamp, a count, a URI), else the event's schema for what lies inside
// an event, else the schema of the answer itself. Each violation is judged
// by one spec, so one wrong field fails one requirement.
func violationRequirement(res schemas.Resource, v schemas.Violation) catalogue.ID {
	switch {
	case isTypeRule(v):
		return catalogue.EventTypes
	case isVideoPresenceRule(v):
		return catalogue.EventChannelNoVideo
	case about(v, timestampFields...):
		return catalogue.TimestampEpochMs
	case isCountRule(v):
		return catalogue.CountNonnegOrNull
	case isURIRule(v):
		return catalogue.URIFormat
	case inEvent(v):
		return catalogue.EventSchema
	}
	return resourceRequirement(res)
}

// resourceRequirement is the requirement that an answer is the resource.
func resourceRequirement(res schemas.Resource) catalogue.ID {
	switch res {
	case schemas.FeedPage:
		return catalogue.FeedPageSchema
	case schemas.VideosResponse:
		return catalogue.VideosEntrySchema
	case schemas.ErrorBody:
		return catalogue.ErrorBody
	case schemas.HealthBody:
		return catalogue.HealthOK
	}
	return ""
}

// owned keeps the violations that break one requirement.
func owned(id catalogue.ID) func(schemas.Resource, schemas.Violation) bool {
	return func(res schemas.Resource, v schemas.Violation) bool { return violationRequirement(res, v) == id }
}

// violations validates one response and returns the schema's violations;
// a body that is not JSON is one violation at the root. The validation is
// kept with the response, so the body is decoded again only when it is
// not JSON: the event specs ask for every answer's violations, and the
// client may have dropped a large decoded answer since.
func violations(j judged) []schemas.Violation {
	err := j.resp.Validate(j.res)
	var se *schemas.Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &se):
		return se.Violations
	}
	if _, jerr := j.resp.JSON(); jerr != nil {
		return []schemas.Violation{{Keyword: "json", Rule: "the body is not valid JSON: " + jerr.Error()}}
	}
	return []schemas.Violation{{Keyword: "schema", Rule: err.Error()}}
}

// schemaFindings are the violations that keep passes, over every response.
func schemaFindings(js []judged, keep func(schemas.Resource, schemas.Violation) bool) []finding {
	var out []finding
	for _, j := range js {
		for _, v := range violations(j) {
			if keep(j.res, v) {
				out = append(out, schemaFinding(j.resp.Request.String(), j.res, v))
			}
		}
	}
	return out
}

// about says whether a violation concerns one of the fields: at the field
// itself, or the field missing from its object.
func about(v schemas.Violation, fields ...string) bool {
	if slices.Contains(fields, jsondoc.Last(v.Pointer)) {
		return true
	}
	if v.Keyword == "required" {
		for _, f := range fields {
			if strings.Contains(v.Rule, "'"+f+"'") {
				return true
			}
		}
	}
	return false
}

var (
	countFields     = []string{"viewCount", "likeCount", "commentCount", "oldSubscriberCount", "newSubscriberCount"}
	uriFields       = []string{"thumbnailUrl", "currentThumbnailUrl", "oldThumbnailUrl", "newThumbnailUrl", "thumbnailUrls", "finalThumbnailUrl", "oldAvatarUrl", "newAvatarUrl"}
	timestampFields = []string{"createdAt", "publishedAt", "firstSeenAt"}
)

// inEvent reports a violation inside an event (under /events/N), not of
// the events array itself.
func inEvent(v schemas.Violation) bool { return eventPointer.MatchString(v.Pointer) }

var eventPointer = regexp.MustCompile(`/events/[0-9]+(/|$)`)

func isTypeRule(v schemas.Violation) bool {
	return jsondoc.Last(v.Pointer) == "type" && inEvent(v) || v.Keyword == "required" && strings.Contains(v.Rule, "'type'")
}

func isVideoPresenceRule(v schemas.Violation) bool {
	if v.EventType == "" || !inEvent(v) {
		return false
	}
	if schemas.IsChannelLevel(v.EventType) {
		return jsondoc.Last(v.Pointer) == "video"
	}
	return v.Keyword == "required" && strings.Contains(v.Rule, "'video'")
}

func isCountRule(v schemas.Violation) bool { return about(v, countFields...) }

func isURIRule(v schemas.Violation) bool {
	if v.Keyword == "format" {
		return true
	}
	// an item of thumbnailUrls has a numeric last token
	return about(v, uriFields...) || strings.Contains(v.Pointer, "/thumbnailUrls/")
}

// Plausible bounds of an epoch-milliseconds timestamp: a value in seconds
// (about 1.7e9) falls below the floor, one in microseconds above the ceiling.
var epochFloor = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// timestampFindings checks every createdAt, publishedAt and firstSeenAt of
// the responses: an integer count of milliseconds between 2000-01-01 and a
// year after now.
func timestampFindings(js []judged, now time.Time) []finding {
	ceiling := now.AddDate(1, 0, 0)
	var out []finding
	for _, j := range js {
		doc, err := j.resp.JSON()
		if err != nil {
			continue // the schema specs report bodies that are not JSON
		}
		fields(doc, timestampFields, func(ptr string, v any) {
			if why := implausible(v, ceiling); why != "" {
				out = append(out, finding{req: j.resp.Request.String(), ptr: ptr, kind: why, blame: catalogue.TimestampEpochMs,
					line: fmt.Sprintf("%s: %s; got %s", ptr, why, jsondoc.Quote(v, schemas.MaxExcerpt))})
			}
		})
	}
	return out
}

// fields calls fn with every member of an object in doc whose name is one
// of names, and its pointer. Unlike jsondoc.Walk it makes no pointer for
// the other values: a hostile body may hold millions.
func fields(doc any, names []string, fn func(ptr string, v any)) {
	var path []string
	var walk func(v any)
	walk = func(v any) {
		switch t := v.(type) {
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(t)) {
				path = append(path, k)
				if slices.Contains(names, k) {
					fn(jsondoc.Pointer(path...), t[k])
				}
				walk(t[k])
				path = path[:len(path)-1]
			}
		case []any:
			for i, x := range t {
				switch x.(type) {
				case map[string]any, []any:
					path = append(path, strconv.Itoa(i))
					walk(x)
					path = path[:len(path)-1]
				}
			}
		}
	}
	walk(doc)
}

func implausible(v any, ceiling time.Time) string {
	const rule = "want an integer count of Unix epoch milliseconds"
	num, ok := v.(json.Number)
	if !ok {
		if s, isStr := v.(string); isStr {
			if _, err := time.Parse(time.RFC3339Nano, s); err == nil {
				return rule + " (this is an ISO 8601 date string)"
			}
		}
		return rule
	}
	ms, err := num.Int64()
	if err != nil {
		return rule + " (not an integer)"
	}
	switch {
	case ms < epochFloor.UnixMilli() && ms >= epochFloor.Unix() && ms <= ceiling.Unix():
		return rule + " (this looks like seconds)"
	case ms < epochFloor.UnixMilli():
		return fmt.Sprintf("%s, not before %s", rule, epochFloor.Format(time.DateOnly))
	case ms > ceiling.UnixMilli():
		return fmt.Sprintf("%s, not after %s (a year from now; microseconds?)", rule, ceiling.Format(time.DateOnly))
	}
	return ""
}

// maxFindings is how many findings of one kind a failure message lists;
// the rest are counted. maxKinds bounds the kinds listed.
const (
	maxFindings = 20
	maxKinds    = 20
)

// describeFindings renders findings for a failure message: the rule, the
// count, then each kind of finding with its first maxFindings, request by
// request in the order they were sent and by JSON pointer in numeric
// order, and the count of the rest.
func describeFindings(rule string, fs []finding) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n%d finding(s):", rule, len(fs))
	writeFindings(&b, fs, "  ")
	return b.String()
}

// writeFindings writes findings grouped by kind, as describeFindings says.
func writeFindings(b *strings.Builder, fs []finding, indent string) {
	order := map[string]int{} // a request's place: the order it first appears
	var kinds []string
	byKind := map[string][]finding{}
	for _, f := range fs {
		if _, ok := order[f.req]; !ok {
			order[f.req] = len(order)
		}
		if _, ok := byKind[f.kind]; !ok {
			kinds = append(kinds, f.kind)
		}
		byKind[f.kind] = append(byKind[f.kind], f)
	}
	grouped := len(kinds) > 1
	for k, kind := range kinds {
		group := byKind[kind]
		if k == maxKinds {
			rest := 0
			for _, kind := range kinds[k:] {
				rest += len(byKind[kind])
			}
			fmt.Fprintf(b, "\n%s… and %d more finding(s) of %d other kind(s)", indent, rest, len(kinds)-k)
			return
		}
		group = first(group, maxFindings, func(a, b finding) int {
			if c := order[a.req] - order[b.req]; c != 0 {
				return c
			}
			return jsondoc.ComparePointers(a.ptr, b.ptr)
		})
		in := indent
		if grouped {
			fmt.Fprintf(b, "\n%s%s: %d finding(s)", indent, jsondoc.Excerpt(kind, 200), len(byKind[kind]))
			in += "  "
		}
		last := ""
		for i, f := range group {
			if i == maxFindings {
				fmt.Fprintf(b, "\n%s… and %d more of this kind", in, len(byKind[kind])-maxFindings)
				break
			}
			if f.req != last {
				fmt.Fprintf(b, "\n%s%s:", in, f.req)
				last = f.req
			}
			fmt.Fprintf(b, "\n%s  %s", in, f.line)
		}
	}
}

// first returns the n smallest items in order (all of them, sorted, when
// there are fewer), without sorting the rest; the item after them stands
// for the rest, so that a caller can tell there are more.
func first[T any](items []T, n int, cmp func(a, b T) int) []T {
	if len(items) <= n {
		slices.SortStableFunc(items, cmp)
		return items
	}
	best := make([]T, 0, n+1)
	for _, it := range items {
		if len(best) == n && cmp(it, best[n-1]) >= 0 {
			continue
		}
		i, _ := slices.BinarySearchFunc(best, it, func(a, b T) int {
			if c := cmp(a, b); c != 0 {
				return c
			}
			return -1 // after its equals: stable
		})
		best = slices.Insert(best, i, it)
		if len(best) > n {
			best = best[:n]
		}
	}
	return append(best, items[0]) // a stand-in for the rest
}

// listProblems renders plain problems, at most maxFindings of them and the
// count of the rest.
func listProblems(problems []string, indent string) string {
	shown := problems[:min(len(problems), maxFindings)]
	s := indent + strings.Join(shown, "\n"+indent)
	if rest := len(problems) - len(shown); rest > 0 {
		s += fmt.Sprintf("\n%s… and %d more", indent, rest)
	}
	return s
}

// natural orders texts with numbers in them by the numbers' values:
// /videos/2 before /videos/10.
func natural(a, b string) int {
	for a != "" && b != "" {
		da, db := digits(a), digits(b)
		if da > 0 && db > 0 {
			na, nb := strings.TrimLeft(a[:da], "0"), strings.TrimLeft(b[:db], "0")
			if c := cmp.Compare(len(na), len(nb)); c != 0 {
				return c
			}
			if c := strings.Compare(na, nb); c != 0 {
				return c
			}
			a, b = a[da:], b[db:]
			continue
		}
		if a[0] != b[0] {
			return cmp.Compare(a[0], b[0])
		}
		a, b = a[1:], b[1:]
	}
	return cmp.Compare(len(a), len(b))
}

func digits(s string) int {
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	return n
}
