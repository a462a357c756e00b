package mutants

import (
	"bytes"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/tcmkit/tcmkit/schemas/jsondoc"
	"github.com/tcmkit/tcmkit/simulator"
)

// The one skeleton of every mutant: an exchange holds the client's request
// (its body buffered, so that it can be served more than once), serves it
// or a variant of it through the real handler (the next simulator.Answerer)
// into an answer, a value, and the mutant changes the request before or
// the answer after. Authentication, rate limits and the order of the
// checks stay the server's.

// serveFunc is a mutant's body: it returns the answer the client gets.
type serveFunc func(x *exchange) *answer

// exchange is one request passing through a mutant.
type exchange struct {
	r    *http.Request
	raw  []byte // the request body, at most what the server reads
	next simulator.Answerer
	srv  *simulator.Server // the whole server, for a request of another operation
}

// wrap turns a mutant's body into a layer's answerer around next.
func wrap(s *simulator.Server, serve serveFunc, next simulator.Answerer) simulator.Answerer {
	return func(r *http.Request) simulator.Answer {
		x := &exchange{r: r, next: next, srv: s}
		if r.Body != nil && r.Body != http.NoBody {
			x.raw, _ = io.ReadAll(io.LimitReader(r.Body, simulator.MaxBodyBytes+1))
		}
		return serve(x).Answer
	}
}

// stateless is fresh for a mutant without state.
func stateless(f serveFunc) func() serveFunc { return func() serveFunc { return f } }

// serve serves the client's request as it came.
func (x *exchange) serve() *answer { return x.serveAs(x.r, x.raw) }

// serveAs serves a variant of the request with another body.
func (x *exchange) serveAs(r *http.Request, body []byte) *answer {
	r2 := r.Clone(r.Context())
	r2.Body = io.NopCloser(bytes.NewReader(body))
	r2.ContentLength = int64(len(body))
	return &answer{x.next(r2)}
}

// serveUncounted serves the client's request past the rate limit, not
// counted against its key (simulator.Uncounted).
func (x *exchange) serveUncounted() *answer { return x.serveAs(simulator.Uncounted(x.r), x.raw) }

// withAuth is the request with another Authorization header.
func (x *exchange) withAuth(auth string) *http.Request {
	r2 := x.r.Clone(x.r.Context())
	r2.Header.Set("Authorization", auth)
	return r2
}

// auth is the client's Authorization header.
func (x *exchange) auth() string { return sameKey(x.r.Header.Get("Authorization")) }

// sameKey spells a Bearer credential one way, as the server reads it
// (scheme in any case, spaces around and between): a fault that keys its
// state by the credential sees one key however a request wrote it (the
// suite carries such forms on its own requests). Anything else stays as
// sent.
func sameKey(v string) string {
	scheme, key, ok := strings.Cut(strings.TrimSpace(v), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return v
	}
	return "Bearer " + strings.TrimLeft(key, " ")
}

// feed reads the feed query as the server does; ok is false when the
// server will reject it (the mutant then leaves it alone).
func (x *exchange) feed() (simulator.FeedQuery, bool) {
	q, problems := simulator.ParseFeedQuery(x.r.URL.RawQuery)
	return q, len(problems) == 0
}

// feedAsUncounted is feedAs past the rate limit, not counted against the
// key (simulator.Uncounted): a request of the fault's own.
func (x *exchange) feedAsUncounted(limit int, cursor string) *answer {
	y := *x
	y.r = simulator.Uncounted(x.r)
	return y.feedAs(limit, cursor)
}

// feedAs serves the feed request with limit and cursor ("" drops it) set.
func (x *exchange) feedAs(limit int, cursor string) *answer {
	q, _ := url.ParseQuery(x.r.URL.RawQuery)
	q.Set("limit", strconv.Itoa(limit))
	if cursor == "" {
		q.Del("cursor")
	} else {
		q.Set("cursor", cursor)
	}
	r2 := x.r.Clone(x.r.Context())
	u := *x.r.URL
	u.RawQuery = q.Encode()
	r2.URL, r2.RequestURI = &u, u.RequestURI()
	return x.serveAs(r2, nil)
}

// ids reads videoIds when the body holds an array of strings there,
// whatever else is wrong with it.
func (x *exchange) ids() ([]string, bool) {
	doc, err := jsondoc.Decode(x.raw)
	if err != nil {
		return nil, false
	}
	items, isArray := jsondoc.Get(doc, "/videoIds")
	list, _ := items.([]any)
	if !isArray || list == nil {
		return nil, false
	}
	ids := make([]string, len(list))
	for i, it := range list {
		s, ok := it.(string)
		if !ok {
			return nil, false
		}
		ids[i] = s
	}
	return ids, true
}

// videosAs serves the tracked-videos request with other ids.
func (x *exchange) videosAs(ids []string) *answer {
	return x.serveAs(x.r, jsondoc.Encode(map[string]any{"videoIds": ids}))
}

// answer is an answer of the real handler, as a value the mutant changes:
// its Body may be the server's cached bytes, so a change builds a new one.
type answer struct{ simulator.Answer }

// doc decodes the body (numbers stay exact); nil when it is not JSON.
func (a *answer) doc() any {
	doc, _ := jsondoc.Decode(a.Body)
	return doc
}

// setJSON replaces the answer with v, encoded, as JSON.
func (a *answer) setJSON(status int, v any) {
	a.Status = status
	a.Body = jsondoc.Encode(v)
	a.ContentType = ""
}

// setError replaces the answer with an ErrorBody.
func (a *answer) setError(status int, code, message string, details any) {
	a.setJSON(status, simulator.ErrorBody{Error: code, Message: message, Details: details})
	a.Cause = code
}

// setHeader sets a header field, in a header of the answer's own.
func (a *answer) setHeader(name, value string) {
	a.Header = a.Header.Clone()
	if a.Header == nil {
		a.Header = http.Header{}
	}
	a.Header.Set(name, value)
}

// delHeader removes a header field, in a header of the answer's own.
func (a *answer) delHeader(name string) {
	a.Header = a.Header.Clone()
	a.Header.Del(name)
}

// code is the error string of an ErrorBody answer, "" if it is none.
func (a *answer) code() string {
	s, _ := jsondoc.String(a.doc(), "/error")
	return s
}

func (a *answer) clone() *answer {
	c := *a
	c.Header, c.Body = a.Header.Clone(), slices.Clone(a.Body)
	return &c
}

// jsonOK is a fresh 200 answer with a JSON body.
func jsonOK(v any) *answer {
	a := &answer{}
	a.setJSON(http.StatusOK, v)
	return a
}

// The combinators most mutants are made of.

// editOK changes the JSON body of a 200 answer in place; edit reports
// whether it changed anything (an unchanged body is sent as it came).
func editOK(edit func(r *http.Request, doc any) bool) func() serveFunc {
	return stateless(func(x *exchange) *answer {
		a := x.serve()
		if a.Status == http.StatusOK {
			if doc := a.doc(); doc != nil && edit(x.r, doc) {
				a.Body = jsondoc.Encode(doc)
			}
		}
		return a
	})
}

// editStatus changes the answers of one status.
func editStatus(status int, edit func(a *answer)) func() serveFunc {
	return stateless(func(x *exchange) *answer {
		a := x.serve()
		if a.Status == status {
			edit(a)
		}
		return a
	})
}

// contentType sends the answers of one status with another media type.
func contentType(status int, mediaType string) func() serveFunc {
	return editStatus(status, func(a *answer) { a.ContentType = mediaType })
}

// feedRewrite serves a feed request the server accepts with the page size
// size returns, when it returns one.
func feedRewrite(size func(q simulator.FeedQuery) (int, bool)) func() serveFunc {
	return stateless(func(x *exchange) *answer {
		if q, ok := x.feed(); ok {
			if n, change := size(q); change {
				return x.feedAs(n, q.Cursor)
			}
		}
		return x.serve()
	})
}

// memo is a small map for a mutant's state, bounded: a long-running
// simulator forgets rather than grows.
type memo[V any] struct {
	mu sync.Mutex
	m  map[string]V
}

const maxRemembered = 4096

func (m *memo[V]) get(k string) (V, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.m[k]
	return v, ok
}

func (m *memo[V]) put(k string, v V) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.m == nil || len(m.m) >= maxRemembered {
		m.m = map[string]V{}
	}
	m.m[k] = v
}

// take returns and forgets the value of k.
func (m *memo[V]) take(k string) (V, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.m[k]
	delete(m.m, k)
	return v, ok
}

// keys lists the keys, sorted, without k.
func (m *memo[V]) others(k string) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for key := range m.m {
		if key != k {
			out = append(out, key)
		}
	}
	slices.Sort(out)
	return out
}

// page is a decoded FeedPage.
type page struct {
	doc    map[string]any
	events []any
	next   string // "" when null
}

func readPage(a *answer) (page, bool) {
	obj, isObj := a.doc().(map[string]any)
	if a.Status != http.StatusOK || !isObj {
		return page{}, false
	}
	next, _ := obj["nextCursor"].(string)
	return page{doc: obj, events: jsondoc.Items(obj, "/events"), next: next}, true
}

func (p page) set(a *answer) {
	p.doc["events"] = p.events
	p.doc["nextCursor"] = nil
	if p.next != "" {
		p.doc["nextCursor"] = p.next
	}
	a.Body = jsondoc.Encode(p.doc)
}

// held keeps the first answer of a request that needs two calls to the
// handler when the second was throttled: the client gets that 429, and its
// retry after Retry-After needs only the second call, so a client that
// honours Retry-After gets through.
type held struct{ m memo[*answer] }

func heldKey(x *exchange) string { return x.auth() + "\x00" + x.r.URL.RawQuery }

// first returns the held first answer of the request, or serves it.
func (h *held) first(x *exchange) *answer {
	if a, ok := h.m.take(heldKey(x)); ok {
		return a
	}
	return x.serve()
}

// second serves the second call; when it is throttled, the first answer
// is held and the 429 returned (ok false).
func (h *held) second(x *exchange, first *answer, serve func() *answer) (*answer, bool) {
	b := serve()
	if b.Status == http.StatusTooManyRequests {
		h.m.put(heldKey(x), first.clone())
		return b, false
	}
	return b, true
}

// eachEvent calls fn for every event of a feed page or a videos answer.
func eachEvent(doc any, fn func(ev map[string]any)) {
	visit := func(list []any) {
		for _, e := range list {
			if ev, ok := e.(map[string]any); ok {
				fn(ev)
			}
		}
	}
	visit(jsondoc.Items(doc, "/events"))
	for i := range jsondoc.Items(doc, "/videos") {
		visit(jsondoc.Items(doc, jsondoc.Join("/videos", i, "events")))
	}
}

// eventEdit applies edit to every event; edit says whether it changed one.
func eventEdit(edit func(ev map[string]any) bool) func() serveFunc {
	return editOK(func(_ *http.Request, doc any) bool {
		changed := false
		eachEvent(doc, func(ev map[string]any) { changed = edit(ev) || changed })
		return changed
	})
}

// ofType keeps edit to the events of one type.
func ofType(t string, edit func(ev map[string]any) bool) func(ev map[string]any) bool {
	return func(ev map[string]any) bool { return ev["type"] == t && edit(ev) }
}

// members calls fn for every member named key of every object of doc.
func members(doc any, key string, fn func(obj map[string]any) bool) bool {
	changed := false
	jsondoc.Walk(doc, func(ptr string, v any) {
		if obj, ok := v.(map[string]any); ok {
			if _, has := obj[key]; has {
				changed = fn(obj) || changed
			}
		}
	})
	return changed
}

// entries are the VideoEntries of a tracked-videos answer.
func entries(doc any) []map[string]any {
	var out []map[string]any
	for _, e := range jsondoc.Items(doc, "/videos") {
		if m, ok := e.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// isVideosAnswer reports whether doc has both lists of a videos answer.
func isVideosAnswer(doc any) bool {
	_, ok1 := jsondoc.Get(doc, "/videos")
	_, ok2 := jsondoc.Get(doc, "/missingVideoIds")
	return ok1 && ok2
}

// addMissing appends ids to missingVideoIds of a 200 answer.
func addMissing(a *answer, ids ...string) {
	doc := a.doc()
	if a.Status != http.StatusOK || !isVideosAnswer(doc) {
		return
	}
	missing := jsondoc.Items(doc, "/missingVideoIds")
	for _, id := range ids {
		missing = append(missing, id)
	}
	doc.(map[string]any)["missingVideoIds"] = missing
	a.Body = jsondoc.Encode(doc)
}
