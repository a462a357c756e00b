package variant

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/simulator"
)

// Apply makes cfg the draw's server: the world's knobs, the server's own
// rate limits off (the draw counts instead), and the draw's layer
// appended to cfg.Layers (outermost).
func (d Draw) Apply(cfg *simulator.Config) { d.apply(cfg) }

func (d Draw) apply(cfg *simulator.Config) *binding {
	cfg.Seed, cfg.Channels, cfg.History, cfg.Start = d.Seed, d.Channels, d.History, d.Start
	cfg.EdgeRate, cfg.KeyPrefix = d.EdgeRate, d.KeyPrefix
	cfg.FeedLimit, cfg.VideosLimit = -1, -1
	b := &binding{d: d, cur: newCursors(d), feedBudget: newBudget(schemas.FeedRequestsPerMinute)}
	// On a manual clock the draw's growth moves it; a realtime clock runs
	// by itself (and its jumps would shorten the real minute of the rate
	// limit).
	b.grow = cfg.Speed == 0 && d.Growth > 0
	if !d.Shared && d.VideosLimit > 0 {
		b.videosBudget = newBudget(d.VideosLimit)
	}
	cfg.Layers = append(cfg.Layers, simulator.Layer{Name: fmt.Sprintf("conforming draw %d", d.N), Wrap: b.wrap})
	return b
}

// Server builds the draw's server from cfg (its other fields are kept).
func (d Draw) Server(cfg simulator.Config) (*simulator.Server, error) {
	d.Apply(&cfg)
	return simulator.New(cfg)
}

// binding is a draw applied to one server: its budgets and cursors.
type binding struct {
	d   Draw
	cur *cursors
	srv *simulator.Server // the server that wrapped the draw around its operations
	// feedInner is the feed's answerer inside the draw, which health
	// asks whether a key is valid (the server's limits are off).
	feedInner    simulator.Answerer
	feedBudget   *budget
	videosBudget *budget // nil: shared with the feed's, or none
	grow         bool    // move the clock by Growth before each request
	requests     atomic.Uint64
}

// wrap is the draw's layer around one operation of server s.
func (b *binding) wrap(s *simulator.Server, op simulator.Operation, next simulator.Answerer) simulator.Answerer {
	b.srv = s
	if op == simulator.OpFeed {
		b.feedInner = next
	}
	return func(r *http.Request) simulator.Answer {
		var raw []byte
		if r.Body != nil && r.Body != http.NoBody {
			raw, _ = io.ReadAll(io.LimitReader(r.Body, simulator.MaxBodyBytes+1))
		}
		if b.grow {
			s.Advance(b.d.Growth)
		}
		x := &exchange{b: b, r: r, raw: raw, next: next, id: fmt.Sprintf("req_%x_%d", b.d.N, b.requests.Add(1))}
		var a *answer
		switch op {
		case simulator.OpFeed:
			a = x.feed()
		case simulator.OpVideos:
			a = x.videos()
		default:
			a = x.health()
		}
		return b.send(r, a, x.id)
	}
}

// exchange is one request through the draw.
type exchange struct {
	b    *binding
	r    *http.Request
	raw  []byte
	next simulator.Answerer
	id   string
}

// answer is what the draw sends: a status, a document, headers of its
// own, and for an error its cause (the server's code, for the journal and
// the client judge).
type answer struct {
	status int
	doc    any
	header http.Header
	cause  string
	// observed: the observers (the client judge) get the page in the
	// server's own layout (compact, members in the server's order,
	// nextCursor last), which they read without decoding it whole; the
	// client gets the draw's.
	observed bool
}

// inner is an answer of the real handler, its body decoded (nil when it
// is not JSON).
type inner struct {
	simulator.Answer
	doc any
}

// serveInner serves a variant of the request through the real handler.
func (x *exchange) serveInner(h simulator.Answerer, r *http.Request, body []byte) *inner {
	r2 := r.Clone(r.Context())
	r2.Body = io.NopCloser(bytes.NewReader(body))
	r2.ContentLength = int64(len(body))
	in := &inner{Answer: h(r2)}
	in.doc, _ = parse(in.Body)
	return in
}

// fromServer turns an error answer of the server into the draw's.
func (x *exchange) fromServer(in *inner, params []string) *answer {
	o, _ := in.doc.(*object)
	code, msg := o.str("error"), o.str("message")
	details, _ := o.get("details")
	if params == nil && in.Status == http.StatusBadRequest && x.r.URL.Path == schemas.PathFeed {
		params = paramsOf(details)
	}
	return &answer{status: in.Status, doc: x.b.d.errorBody(in.Status, code, msg, details, params, x.id), cause: code}
}

// authenticated is the request's key (the server found it valid).
func (x *exchange) key() string {
	key, err := simulator.ParseBearer(x.r.Header.Values("Authorization"), x.b.d.KeyPrefix)
	if err != nil {
		return ""
	}
	return key
}

func (x *exchange) feed() *answer {
	d := x.b.d
	q, cursorBad := x.feedQuery()
	var problems []simulator.QueryProblem
	if q == nil { // not a query url.Values reads: the server judges it as it came
		_, problems = simulator.ParseFeedQuery(x.r.URL.RawQuery)
	} else {
		_, problems = simulator.ParseFeedQuery(q.Encode())
	}
	if cursorBad && d.UnknownCursor == "reject" {
		problems = append(problems, simulator.QueryProblem{Parameter: "cursor", Rule: "not a cursor of this feed"})
	}
	if d.BadBeforeAuth && len(problems) > 0 {
		return x.badQuery(problems)
	}
	in := x.serveFeed(q)
	if in.Status == http.StatusUnauthorized {
		return x.fromServer(in, nil)
	}
	if in.Status == http.StatusBadRequest && d.UnknownCursor == "first" && q.Has("cursor") {
		o, _ := in.doc.(*object)
		if details, _ := o.get("details"); slices.Equal(paramsOf(details), []string{"cursor"}) {
			q.Del("cursor") // another account's or an altered cursor: the first page
			in = x.serveFeed(q)
		}
	}
	if a := x.admit(in.Status, x.b.feedBudget); a != nil {
		return a
	}
	if in.Status != http.StatusOK {
		return x.fromServer(in, nil)
	}
	page, _ := in.doc.(*object)
	if next, ok := page.get("nextCursor"); ok && next != nil {
		page.set("nextCursor", x.b.cur.encode(next.(string)))
	}
	for _, ev := range page.list("events") {
		x.event(ev)
	}
	if d.ExtraPage {
		next, _ := page.get("nextCursor")
		page.del("nextCursor")
		page.set("object", "feed_page")
		page.set("pageSize", number(len(page.list("events"))))
		page.set("nextCursor", next) // last, as the server writes it (see observed)
	}
	return &answer{status: http.StatusOK, doc: page, observed: true}
}

// feedQuery is the query the server is asked: the draw's cursor decoded
// (cursorBad when it is none of the draw's), a bad limit clamped if the
// draw clamps.
func (x *exchange) feedQuery() (url.Values, bool) {
	d := x.b.d
	q, err := url.ParseQuery(x.r.URL.RawQuery)
	if err != nil {
		return nil, false
	}
	bad := false
	if cs := q["cursor"]; len(cs) == 1 && cs[0] != "" {
		if c, ok := x.b.cur.decode(cs[0]); ok {
			q.Set("cursor", c)
		} else if bad = true; d.UnknownCursor == "first" {
			q.Del("cursor")
		} else {
			q.Set("cursor", "!") // no cursor of the server's: it answers 400 naming cursor
		}
	}
	if ls := q["limit"]; len(ls) > 0 && d.BadLimit != "reject" {
		if _, problems := simulator.ParseFeedQuery(url.Values{"limit": ls[:1]}.Encode()); len(problems) > 0 {
			q.Set("limit", clamp(ls[0], d.BadLimit))
		} else {
			q.Set("limit", ls[0])
		}
	}
	return q, bad
}

// clamp reads a limit that is not a whole number of at least 1.
func clamp(v, how string) string {
	def := strconv.Itoa(schemas.DefaultPageSize)
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	switch {
	case err != nil || f != f:
		return def
	case f < 1 && how == "one":
		return "1"
	case f < 1:
		return def
	case f >= float64(schemas.MaxPageSize):
		return strconv.Itoa(schemas.MaxPageSize)
	}
	return strconv.Itoa(int(f))
}

// serveFeed asks the server for the feed with query q (nil: the query
// as it came).
func (x *exchange) serveFeed(q url.Values) *inner {
	if q == nil {
		return x.serveInner(x.next, x.r, nil)
	}
	r2 := x.r.Clone(x.r.Context())
	u := *x.r.URL
	u.RawQuery = q.Encode()
	r2.URL, r2.RequestURI = &u, u.RequestURI()
	return x.serveInner(x.next, r2, nil)
}

// badQuery is the 400 of a feed query the draw refuses itself.
func (x *exchange) badQuery(problems []simulator.QueryProblem) *answer {
	params := problemParams(problems)
	details := map[string]any{"invalid": params, "problems": problems}
	return &answer{status: http.StatusBadRequest, doc: x.b.d.errorBody(http.StatusBadRequest, simulator.CodeInvalidQuery, "invalid query parameters: "+strings.Join(params, ", "), details, params, x.id), cause: simulator.CodeInvalidQuery}
}

func (x *exchange) videos() *answer {
	d := x.b.d
	r := x.r
	if d.LenientType && r.Header.Get("Content-Type") != "application/json" {
		r = r.Clone(r.Context())
		r.Header.Set("Content-Type", "application/json")
	}
	_, bad := simulator.ParseVideosRequest(r.Header, x.raw)
	if bad == nil && d.StrictBody {
		if o, _ := parseObject(x.raw); o != nil && len(o.keys) != 1 {
			bad = &simulator.BadRequest{Message: "the request body holds members besides videoIds", Details: map[string]any{"allowed": []string{"videoIds"}}}
		}
	}
	badAnswer := func() *answer {
		return &answer{status: http.StatusBadRequest, doc: d.errorBody(http.StatusBadRequest, simulator.CodeInvalidBody, bad.Message, bad.Details, nil, x.id), cause: simulator.CodeInvalidBody}
	}
	if d.BadBeforeAuth && bad != nil {
		return badAnswer()
	}
	in := x.serveInner(x.next, r, x.raw)
	if in.Status == http.StatusUnauthorized {
		return x.fromServer(in, nil)
	}
	budget := x.b.videosBudget
	if d.Shared {
		budget = x.b.feedBudget
	}
	if in.Status == http.StatusForbidden && d.BadBeforePro && bad != nil {
		in.Status = http.StatusBadRequest
		if a := x.admit(in.Status, budget); a != nil {
			return a
		}
		return badAnswer()
	}
	if a := x.admit(in.Status, budget); a != nil {
		return a
	}
	if in.Status != http.StatusOK {
		return x.fromServer(in, nil)
	}
	doc, _ := in.doc.(*object)
	entries := doc.list("videos")
	missing := doc.list("missingVideoIds")
	var byChannel map[string][]*object
	if d.EntryChannelEvents {
		byChannel = x.channelEvents()
	}
	for _, e := range entries {
		if o, _ := e.(*object); o != nil && byChannel != nil {
			addChannelEvents(o, byChannel)
		}
		x.entry(e)
	}
	switch d.VideoOrder {
	case "reversed":
		slices.Reverse(entries)
		slices.Reverse(missing)
	case "sorted":
		id := func(e any) string {
			v, _ := e.(*object).get("video")
			return v.(*object).str("platformVideoId")
		}
		slices.SortStableFunc(entries, func(a, b any) int { return strings.Compare(id(a), id(b)) })
		slices.SortStableFunc(missing, func(a, b any) int { return strings.Compare(a.(string), b.(string)) })
	}
	if d.ExtraVideos {
		doc.set("object", "video_list")
		doc.set("apiVersion", "1.0.0")
	}
	return &answer{status: http.StatusOK, doc: doc}
}

// entry rewrites one VideoEntry as the draw says.
func (x *exchange) entry(e any) {
	d := x.b.d
	o, _ := e.(*object)
	if o == nil {
		return
	}
	events := o.list("events")
	for _, ev := range events {
		x.event(ev)
	}
	if d.EntryEvents == "oldest" {
		slices.Reverse(events)
	}
	if v, _ := o.get("video"); v != nil && d.IDs != "server" {
		ch, _ := v.(*object).get("channel")
		x.channel(ch)
	}
	if v, _ := o.get("video"); v != nil {
		x.titles(v.(*object))
	}
	if d.HourlySamples {
		o.set("statSamples", hourly(o.list("statSamples"), x.b.srv.Now()))
	}
	if d.EntrySamples == "newest" {
		slices.Reverse(o.list("statSamples"))
	}
	if d.WindowDays > 0 {
		o.set("historyWindowDays", number(d.WindowDays))
	}
	if d.GraphNever {
		o.set("isGraphLocked", false)
	}
	if d.ExtraEntry {
		o.set("sampleCount", number(len(o.list("statSamples"))))
		o.set("meta", &object{keys: []string{"source"}, vals: []any{"poller"}})
	}
}

// event rewrites one event as the draw says.
func (x *exchange) event(ev any) {
	d := x.b.d
	o, _ := ev.(*object)
	if o == nil {
		return
	}
	if d.IDs != "server" {
		o.set("id", d.id(o.str("id")))
		if ch, _ := o.get("channel"); ch != nil {
			x.channel(ch)
		}
	}
	x.titles(o)
	if d.ChannelVideoNull && schemas.IsChannelLevel(o.str("type")) {
		o.set("video", nil)
	}
	if d.ExtraEvent {
		o.set("object", "event")
		o.set("schemaVersion", number(3))
		o.set("source", &object{keys: []string{"poller", "region"}, vals: []any{"rolling", nil}})
	}
}

// channel respells a ChannelRef's id.
func (x *exchange) channel(ch any) {
	if o, _ := ch.(*object); o != nil {
		o.set("id", x.b.d.id(o.str("id")))
	}
}

func (x *exchange) health() *answer {
	d := x.b.d
	auth := x.r.Header.Values("Authorization")
	if x.b.feedInner != nil && (d.HealthKey == "required" || d.HealthKey == "optional" && len(auth) > 0) {
		// The feed's handler says whether the key is valid (its 401 is the answer).
		probe := x.r.Clone(x.r.Context())
		probe.Method = http.MethodGet
		u := *x.r.URL
		u.Path, u.RawQuery = schemas.PathFeed, "limit=1"
		probe.URL, probe.RequestURI = &u, u.RequestURI()
		if in := x.serveInner(x.b.feedInner, probe, nil); in.Status == http.StatusUnauthorized {
			return x.fromServer(in, nil)
		}
		if d.HealthCounted {
			if a := x.admit(http.StatusOK, x.b.feedBudget); a != nil {
				return a
			}
		}
	}
	if d.HealthBody {
		if o, _ := parseObject(x.raw); o == nil {
			return &answer{status: http.StatusBadRequest, doc: d.errorBody(http.StatusBadRequest, simulator.CodeInvalidBody, "the health check's body must be a JSON object, such as {}", nil, nil, x.id), cause: simulator.CodeInvalidBody}
		}
	}
	in := x.serveInner(x.next, x.r, x.raw)
	if in.Status != http.StatusOK {
		return x.fromServer(in, nil)
	}
	doc, _ := in.doc.(*object)
	if d.ExtraHealth {
		doc.set("time", number(int(x.b.srv.Now().UnixMilli()))) // the world's clock, as Date
		doc.set("version", "1.0.0")
	}
	return &answer{status: http.StatusOK, doc: doc}
}

// admit counts an authenticated request against its budget (nil: none)
// in the draw's precedence; it returns the 429, or nil.
func (x *exchange) admit(status int, b *budget) *answer {
	if b == nil {
		return nil
	}
	d := x.b.d
	if status != http.StatusOK && !d.RateFirst {
		b.Allow(x.key(), x.now()) // counts when there is room; refused, it stays a 400 or 403
		return nil
	}
	ok, wait := b.Allow(x.key(), x.now())
	if ok {
		return nil
	}
	secs := int64((wait + time.Second - 1) / time.Second)
	a := &answer{status: http.StatusTooManyRequests, header: http.Header{}, cause: simulator.CodeRateLimited}
	switch d.RetryAfter {
	case "padded":
		secs += int64(d.RetryPad)
		a.header.Set("Retry-After", strconv.FormatInt(secs, 10))
	case "date":
		// After the Date header of the same answer, which a client reads
		// it against; the Date is cut to the second: one second more keeps
		// the date truthful. Both are the world's clock, as every Date the
		// server writes: the date minus Date is the wait, and a client
		// that reads the date against Date (RFC 9110) waits that long.
		secs++
		now := x.b.srv.Now().UTC().Truncate(time.Second)
		a.header.Set("Date", now.Format(http.TimeFormat))
		a.header.Set("Retry-After", now.Add(time.Duration(secs)*time.Second).Format(http.TimeFormat))
	default:
		a.header.Set("Retry-After", strconv.FormatInt(secs, 10))
	}
	msg := fmt.Sprintf("rate limit of %d requests per minute per API key exceeded; retry after %d s", b.Limit, secs)
	a.doc = d.errorBody(http.StatusTooManyRequests, simulator.CodeRateLimited, msg, map[string]any{"retryAfterSeconds": secs}, nil, x.id)
	return a
}

// now is the time budgets count in: the server's rate clock.
func (x *exchange) now() time.Time { return x.b.srv.RateNow() }

// send is the answer in the draw's layout and framing. The observers (the
// journal, the client judge) read the server's cause of an error, and a
// feed page in the server's layout (see answer.observed) or a gzipped body
// unzipped.
func (b *binding) send(r *http.Request, a *answer, id string) simulator.Answer {
	d := b.d
	body := d.render(a.doc)
	out := simulator.Answer{Status: a.status, Cause: a.cause, Header: http.Header{}, ContentType: d.ContentType}
	for k, v := range a.header {
		out.Header[k] = v
	}
	if a.status >= 400 && d.ProblemJSON {
		out.ContentType = "application/problem+json"
	}
	h := out.Header
	if a.status == http.StatusUnauthorized {
		h.Set("WWW-Authenticate", d.Challenge)
	}
	if d.Headers {
		h.Set("X-Request-Id", id)
		h.Set("Cache-Control", "no-store")
		h.Set("API-Version", "1.0.0")
	}
	if d.Close {
		h.Set("Connection", "close")
	}
	gz := d.Framing == "gzip" && acceptsGzip(r)
	switch {
	case a.observed:
		out.Observed = serverLayout.render(a.doc)
	case gz:
		out.Observed = body // observers read the body, not its gzip
	}
	switch {
	case gz:
		var z bytes.Buffer
		zw := gzip.NewWriter(&z)
		zw.Write(body)
		zw.Close()
		h.Set("Content-Encoding", "gzip")
		h.Add("Vary", "Accept-Encoding")
		out.Body = z.Bytes()
	case d.Framing == "chunked":
		out.Body, out.Chunked = body, true
	default:
		out.Body = body
	}
	return out
}

// serverLayout writes a document as the server does.
var serverLayout = Draw{KeyOrder: "server", Escape: "html"}

func acceptsGzip(r *http.Request) bool {
	for _, v := range r.Header.Values("Accept-Encoding") {
		for _, part := range strings.Split(v, ",") {
			name, q, _ := strings.Cut(strings.TrimSpace(part), ";")
			if strings.EqualFold(strings.TrimSpace(name), "gzip") && strings.ReplaceAll(strings.TrimSpace(q), " ", "") != "q=0" {
				return true
			}
		}
	}
	return false
}

// budget is "at most Limit requests in any minute" per key: the server's
// own limiter, counted on its rate clock.
type budget = simulator.RateLimiter

func newBudget(limit int) *budget { return simulator.NewRateLimiter(limit, schemas.RateWindow) }
