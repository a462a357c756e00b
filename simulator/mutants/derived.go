package mutants

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/schemas/catalogue"
	"github.com/tcmkit/tcmkit/schemas/jsondoc"
	"github.com/tcmkit/tcmkit/simulator"
)

// Derived mutants: a fault that breaks one requirement only on one request
// shape, made by a combinator (on) from a fault and a shape, so that the
// kill matrix can show, for each must requirement, the shapes where a
// fault hides and the shapes where the table has none (its holes).

// Shape is a kind of request (or answer) where a server can get a rule
// wrong while it gets the common case right.
type Shape struct {
	Name string
	Says string
	Ops  []simulator.Operation
}

// The shapes, in the order of the kill matrix's columns: the catalogue's
// (schemas/catalogue, grid.go), and "any", a fault on every request of its
// operations (the table's hand-written mutants).
const (
	ShapeAny          = "any"
	ShapeFirstPage    = string(catalogue.ShapeFirstPage)
	ShapeCursorPage   = string(catalogue.ShapeCursorPage)
	ShapeDeepPage     = string(catalogue.ShapeDeepPage)
	ShapeLongWalk     = string(catalogue.ShapeLongWalk)
	ShapeLiveHead     = string(catalogue.ShapeLiveHead)
	ShapeOtherKey     = string(catalogue.ShapeOtherKey)
	ShapeAfterBurst   = string(catalogue.ShapeAfterBurst)
	ShapeVideos       = string(catalogue.ShapeVideos)
	ShapeLargeBatch   = string(catalogue.ShapeLargeBatch)
	ShapeDuplicateIDs = string(catalogue.ShapeDuplicateIDs)
	ShapeMissingIDs   = string(catalogue.ShapeMissingIDs)
	ShapeEmptyArrays  = string(catalogue.ShapeEmptyArrays)
	ShapeBigCounts    = string(catalogue.ShapeBigCounts)
	ShapeReadByOther  = string(catalogue.ShapeReadByOtherKey)
)

// deepDepth is the depth from which a page is deep: the 4th page of a walk
// and after. longWalk is how many cursors a key must have been handed
// before its walk is long.
const (
	deepDepth = 4
	longWalk  = 8
)

// Shapes lists every shape a fault can be confined to, with what the
// simulator sees as the shape (Says) and the operations it has.
var Shapes = []Shape{
	{ShapeAny, "every request of the fault's operations", keyed},
	{ShapeFirstPage, "a feed request without cursor", feedOnly},
	{ShapeCursorPage, "a feed request with a cursor", feedOnly},
	{ShapeDeepPage, fmt.Sprintf("a feed page %d or later of a walk (past its first %d events at limit=200)", deepDepth, (deepDepth-1)*schemas.MaxPageSize), feedOnly},
	{ShapeLongWalk, fmt.Sprintf("a feed request of a key that has been handed %d cursors or more", longWalk), feedOnly},
	{ShapeLiveHead, "a feed page after new events arrived at the head", feedOnly},
	{ShapeOtherKey, "a request of another key than the first the feed served (the suite's free key: another account and plan)", keyed},
	{ShapeAfterBurst, "a request while some key is throttled, or of a key after its first lockout (its second lockout)", keyed},
	{ShapeVideos, "any tracked-videos request", videosOnly},
	{ShapeLargeBatch, "a tracked-videos request of more than 10 ids", videosOnly},
	{ShapeDuplicateIDs, "a tracked-videos request with an id twice", videosOnly},
	{ShapeMissingIDs, "a tracked-videos answer that lists a missing id", videosOnly},
	{ShapeEmptyArrays, "a tracked-videos answer with an empty list", videosOnly},
	{ShapeBigCounts, "a count past 2^31", videosOnly},
	{ShapeReadByOther, "a request for the URL (and body) the server answered 200 just before to another key", keyed},
}

// tracker learns, from what passes, which shape a request has: the depth
// of each cursor, how many cursors a key was handed, which keys are free,
// which are throttled, and how often each key was throttled.
type tracker struct {
	mu        sync.Mutex
	depth     map[string]int  // cursor → depth of the page it leads to
	issued    map[string]int  // Authorization → cursors handed out
	first     string          // the Authorization of the first 200 on the feed
	throttled map[string]bool // Authorization → its last limited answer was a 429
	lockouts  map[string]int  // Authorization → lockouts begun (a 429 after a 200)
	lastURL   string          // the URL and body of the last 200, and its Authorization
	lastAuth  string
}

func newTracker() *tracker {
	return &tracker{depth: map[string]int{}, issued: map[string]int{}, throttled: map[string]bool{}, lockouts: map[string]int{}}
}

// is reports whether the request has the shape, by what passed before it.
func (t *tracker) is(x *exchange, shape string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	feed := x.r.URL.Path == schemas.PathFeed
	cursor := ""
	if feed {
		q, _ := x.feed()
		cursor = q.Cursor
	}
	switch shape {
	case ShapeAny:
		return true
	case ShapeFirstPage:
		return feed && cursor == ""
	case ShapeCursorPage:
		return feed && cursor != ""
	case ShapeDeepPage:
		return feed && t.depth[cursor] >= deepDepth
	case ShapeLongWalk:
		return feed && t.issued[x.auth()] >= longWalk
	case ShapeOtherKey:
		return t.first != "" && x.auth() != t.first
	case ShapeAfterBurst:
		return slices.Contains(mapValues(t.throttled), true) || t.lockouts[x.auth()] >= 1
	case ShapeVideos:
		return !feed
	case ShapeLargeBatch:
		ids, _ := x.ids()
		return !feed && len(ids) > 10
	case ShapeDuplicateIDs:
		ids, _ := x.ids()
		return !feed && len(dedupe(ids)) < len(ids)
	case ShapeReadByOther:
		return t.lastURL == urlOf(x) && x.auth() != t.lastAuth
	case ShapeMissingIDs, ShapeEmptyArrays, ShapeBigCounts:
		return !feed // shapes of the answer: the fault changes only answers that have them
	}
	return false
}

// urlOf is what a cache by URL keys a request by: method, URI and body.
func urlOf(x *exchange) string {
	return x.r.Method + " " + x.r.URL.RequestURI() + "\x00" + string(x.raw)
}

func mapValues[V any](m map[string]V) []V {
	out := make([]V, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// saw learns from an answer.
func (t *tracker) saw(x *exchange, a *answer) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.depth) > maxRemembered {
		t.depth = map[string]int{}
	}
	auth := x.auth()
	switch a.Status {
	case http.StatusTooManyRequests:
		if !t.throttled[auth] {
			t.lockouts[auth]++
		}
		t.throttled[auth] = true
	case http.StatusOK:
		t.lastURL, t.lastAuth = urlOf(x), auth
		t.throttled[auth] = false
		if t.first == "" && x.r.URL.Path == schemas.PathFeed {
			t.first = auth
		}
	}
	if x.r.URL.Path != schemas.PathFeed {
		return
	}
	if pg, ok := readPage(a); ok && pg.next != "" {
		q, _ := x.feed()
		d := t.depth[q.Cursor]
		if q.Cursor == "" {
			d = 1
		}
		t.depth[pg.next] = d + 1
		t.issued[auth]++
	}
}

// on confines a fault to one shape: a request of the shape gets the
// fault's answer, any other the server's.
func on(shape string, fault func() serveFunc) func() serveFunc {
	return func() serveFunc {
		t, f := newTracker(), fault()
		return func(x *exchange) *answer {
			var a *answer
			if t.is(x, shape) {
				a = f(x)
			} else {
				a = x.serve()
			}
			t.saw(x, a)
			return a
		}
	}
}

// derive makes the mutant of a fault on one shape: its name is the fault's
// and the shape's.
func derive(fault string, req catalogue.ID, shape, does string, ops []simulator.Operation, f func() serveFunc) Mutant {
	return Mutant{Name: fault + "@" + shape, Requirement: req, Does: does, Ops: ops, fresh: on(shape, f)}
}

// derived are the faults confined to one shape, by requirement. They start
// with the classes where one-rule breaks written blind passed the suite
// (issue 18): a credential-like parameter in place of the key, checks in
// the wrong order, the plan gate on less common shapes, long walks, rate
// accounting across kinds of request, the rarer bodies of tracked videos.
var derived = []Mutant{
	// A credential-like parameter in place of the key.
	derive("cursor-without-key", catalogue.AuthMissing, ShapeCursorPage, "a feed request without a key whose cursor was handed to a key is served as that key's", feedOnly, cursorAsCredential(simulator.CodeMissingKey)),
	derive("accept-missing-key", catalogue.AuthMissing, ShapeVideos, "tracked videos without a key is served (every id missing) instead of 401", videosOnly, acceptKey(simulator.CodeMissingKey)),
	derive("cursor-with-revoked-key", catalogue.AuthRevoked, ShapeCursorPage, "a feed request with a revoked key whose cursor was handed to a key is served as that key's", feedOnly, cursorAsCredential(simulator.CodeRevokedKey)),
	derive("accept-revoked-key", catalogue.AuthRevoked, ShapeVideos, "tracked videos with a revoked key is served (every id missing) instead of 401", videosOnly, acceptKey(simulator.CodeRevokedKey)),
	derive("accept-unknown-key", catalogue.AuthUnknown, ShapeCursorPage, "a feed request with a cursor and a well-formed key of no account is served (an empty page)", feedOnly, acceptKey(simulator.CodeUnknownKey)),
	// Checks in the wrong order: the limiter before authentication.
	derive("limiter-first-revoked", catalogue.AuthRevoked, ShapeAfterBurst, "while a key is throttled, a revoked key is answered 429 (the limiter runs before authentication, per client)", keyed, limiterFirst(simulator.CodeRevokedKey)),
	derive("limiter-first-no-key", catalogue.AuthMissing, ShapeAfterBurst, "while a key is throttled, a request without a key is answered 429 (the limiter runs before authentication, per client)", keyed, limiterFirst(simulator.CodeMissingKey)),
	derive("limiter-first-unknown", catalogue.AuthUnknown, ShapeAfterBurst, "while a key is throttled, a well-formed key of no account is answered 429 (the limiter runs before authentication, per client)", keyed, limiterFirst(simulator.CodeUnknownKey)),
	// The valid key refused on a less common shape.
	derive("reject-valid-key", catalogue.AuthValid, ShapeDeepPage, "deep feed pages answer the valid key with 401", feedOnly, rejectValidKey),
	derive("reject-valid-key", catalogue.AuthValid, ShapeLargeBatch, "tracked videos of more than 10 ids answers the valid key with 401", videosOnly, rejectValidKey),
	// The plan gate on less common shapes.
	derive("no-pro-gate", catalogue.ProGate, ShapeLargeBatch, "tracked videos of more than 10 ids serves a free plan (every id missing) instead of 403", videosOnly, noProGate),
	derive("gate-leaks", catalogue.ProGate, ShapeOtherKey, "another key's feed pages reached through a cursor are answered 403 pro_plan_required (the plan gate leaks onto the free plan's feed)", feedOnly, gateLeaks),
	// Pages deep in a walk, long walks.
	derive("oldest-first", catalogue.FeedOrder, ShapeDeepPage, "deep feed pages list their events oldest first", feedOnly, editOK(reversePage)),
	derive("cursor-repeats", catalogue.FeedCursorWalk, ShapeDeepPage, "a deep page starts with the last event of the page before", feedOnly, cursorRepeats),
	derive("cursor-skips", catalogue.FeedCursorWalk, ShapeLongWalk, "once a key was handed 8 cursors, a cursor page leaves out its first event", feedOnly, cursorSkips),
	derive("cursor-end-late", catalogue.FeedCursorEnd, ShapeLongWalk, "once a key was handed 8 cursors, the last page has a nextCursor, which leads to an empty page", feedOnly, cursorEndLate),
	derive("limit-off-by-one", catalogue.FeedLimit, ShapeDeepPage, "deep pages hold limit-1 events", feedOnly, limitOffByOne),
	derive("default-page-size-49", catalogue.FeedPageDefault, ShapeCursorPage, "without limit, pages reached through a cursor hold 49 events", feedOnly, defaultPageSize(schemas.DefaultPageSize-1)),
	derive("feed-page-no-next-cursor", catalogue.FeedPageSchema, ShapeDeepPage, "deep pages omit nextCursor when it is null", feedOnly, editOK(omitNullCursor)),
	derive("missing-field", catalogue.EventSchema, ShapeDeepPage, "title_changed events of deep pages lack oldTitle", feedOnly, eventEdit(ofType(schemas.TypeTitleChanged, drop("oldTitle")))),
	derive("count-negative", catalogue.CountNonnegOrNull, ShapeDeepPage, "likeCount is -1 in the video_published events of deep pages", feedOnly, editOK(statsEdit(set("likeCount", json.Number("-1"))))),
	derive("timestamps-in-seconds", catalogue.TimestampEpochMs, ShapeDeepPage, "timestamps of deep pages are epoch seconds", feedOnly, editOK(scale(timestampKeys, 1, 1000))),
	derive("wrong-content-type", catalogue.ContentTypeJSON, ShapeDeepPage, "deep pages are sent as text/plain", feedOnly, contentType(http.StatusOK, "text/plain; charset=utf-8")),
	// The rarer bodies of tracked videos.
	derive("videos-not-served", catalogue.VideosServed, ShapeLargeBatch, "in a request of more than 10 ids, every video is listed as missing", videosOnly, editOK(notServed)),
	derive("reject-duplicates", catalogue.VideosIDsMax, ShapeDuplicateIDs, "a valid body with an id twice is refused with 400", videosOnly, rejectDuplicates),
	derive("missing-normalized", catalogue.VideosPartition, ShapeMissingIDs, "missing ids are listed in lower case, not as sent", videosOnly, editOK(lowerMissing)),
	derive("empty-list-omitted", catalogue.VideosEntrySchema, ShapeEmptyArrays, "an empty videos or missingVideoIds is left out of the answer", videosOnly, editOK(omitEmptyLists)),
	derive("big-count-as-string", catalogue.CountNonnegOrNull, ShapeBigCounts, "viewCounts of 10,000 or more are sent as strings, past 2^31 (×2^18: the world's counts are small)", videosOnly, editOK(statsEdit(bigCountAsString))),
	// Rate accounting across kinds of request, and every 429 of a lockout.
	{Name: "cursor-pages-uncounted@" + ShapeCursorPage, Requirement: catalogue.RateLimit429, Does: "cursor pages are not counted: a throttled cursor page is served (200, the page asked for), and so is a throttled first page for each cursor page the key was served since its last 429", Ops: feedOnly, fresh: uncounted},
	// The shape is what triggers the fault here, not where it shows.
	{Name: "videos-resets-feed@" + ShapeVideos, Requirement: catalogue.RateLimit429, Does: "a tracked-videos request resets its key's feed count: the key's next 20 throttled feed requests are answered 200", Ops: keyed, fresh: videosResetsFeed},
	derive("retry-after-once", catalogue.RateRetryAfter, ShapeAfterBurst, "a key's second lockout and every 429 after the first of a lockout carry no Retry-After", keyed, editStatus(http.StatusTooManyRequests, func(a *answer) { a.delHeader("Retry-After") })),
	derive("retry-after-missing", catalogue.RateRetryAfter, ShapeVideos, "tracked-videos 429s carry no Retry-After", videosOnly, editStatus(http.StatusTooManyRequests, func(a *answer) { a.delHeader("Retry-After") })),
	derive("rate-limit-no-errorbody", catalogue.ErrorBody, ShapeAfterBurst, "429s after the first of a lockout are not ErrorBodies", keyed, editStatus(http.StatusTooManyRequests, notErrorBody)),
	derive("error-not-errorbody", catalogue.ErrorBody, ShapeLargeBatch, "403 answers to more than 10 ids are not ErrorBodies", videosOnly, editStatus(http.StatusForbidden, notErrorBody)),
}

// cursorAsCredential serves a feed request refused for its key with code
// (missing, or revoked) as the key that was handed its cursor: the other
// bad keys stay refused, so that the fault breaks its one requirement.
func cursorAsCredential(code string) func() serveFunc {
	return func() serveFunc { return cursorAs(code) }
}

func cursorAs(code string) serveFunc {
	var owner memo[string]
	return func(x *exchange) *answer {
		a := x.serve()
		if q, ok := x.feed(); ok && q.Cursor != "" && refused(x, a, code) {
			if auth, known := owner.get(q.Cursor); known {
				a = x.serveAs(x.withAuth(auth), nil)
			}
		}
		if pg, ok := readPage(a); ok && pg.next != "" && x.auth() != "" {
			owner.put(pg.next, x.auth())
		}
		return a
	}
}

// limiterFirst answers 429 to a request refused with code while the shape
// (some key throttled) holds: the limiter ran first, per client.
func limiterFirst(code string) func() serveFunc {
	return stateless(func(x *exchange) *answer {
		a := x.serve()
		if refused(x, a, code) {
			a.setHeader("Retry-After", "60")
			a.setError(http.StatusTooManyRequests, simulator.CodeRateLimited, "rate limit exceeded", nil)
		}
		return a
	})
}

// gateLeaks answers a free key's cursor pages with the tracked-videos 403.
var gateLeaks = stateless(func(x *exchange) *answer {
	a := x.serve()
	if q, ok := x.feed(); ok && q.Cursor != "" && a.Status == http.StatusOK {
		a.setError(http.StatusForbidden, simulator.CodeProRequired, "a Pro plan is required", nil)
	}
	return a
})

var rejectDuplicates = stateless(func(x *exchange) *answer {
	a := &answer{}
	a.setError(http.StatusBadRequest, simulator.CodeInvalidBody, "videoIds must not repeat an id", map[string]any{"invalid": []string{"videoIds"}})
	return a
})

// lowerMissing lists missing ids in lower case (a change only when an id has capitals).
func lowerMissing(_ *http.Request, doc any) bool {
	changed := false
	items := jsondoc.Items(doc, "/missingVideoIds")
	for i, it := range items {
		if s, ok := it.(string); ok && strings.ToLower(s) != s {
			items[i], changed = strings.ToLower(s), true
		}
	}
	return changed
}

func omitEmptyLists(_ *http.Request, doc any) bool {
	obj, ok := doc.(map[string]any)
	if !ok {
		return false
	}
	changed := false
	for _, k := range []string{"videos", "missingVideoIds"} {
		if l, isList := obj[k].([]any); isList && len(l) == 0 {
			delete(obj, k)
			changed = true
		}
	}
	return changed
}

// bigCountAsString makes a viewCount of 10,000 or more a count past 2^31,
// sent as a string.
func bigCountAsString(video map[string]any) bool {
	n, ok := video["viewCount"].(json.Number)
	if !ok {
		return false
	}
	v, err := n.Int64()
	if err != nil || v < 10_000 {
		return false
	}
	video["viewCount"] = fmt.Sprint(v << 18)
	return true
}

// uncounted plays a limiter that does not count cursor pages, in front of
// one that counts every request: a throttled cursor page is served (the
// page asked for, uncounted), and a throttled first page too while the key
// has credit (one for each cursor page it was served since its last 429).
func uncounted() serveFunc {
	var (
		mu     sync.Mutex
		last   memo[[]byte]
		credit memo[int]
	)
	return func(x *exchange) *answer {
		a := x.serve()
		q, _ := x.feed()
		mu.Lock()
		defer mu.Unlock()
		n, _ := credit.get(x.auth())
		switch a.Status {
		case http.StatusOK:
			last.put(x.auth(), a.Body)
			if q.Cursor != "" {
				credit.put(x.auth(), n+1)
			}
		case http.StatusTooManyRequests:
			_, ok := last.get(x.auth())
			switch {
			case ok && q.Cursor != "":
				return x.serveUncounted()
			case ok && n > 0:
				credit.put(x.auth(), n-1)
				return x.serveUncounted()
			}
		}
		return a
	}
}

// videosResetsFeed: after a tracked-videos request of a key, up to 20 of
// its throttled feed requests are served (the page asked for, uncounted).
func videosResetsFeed() serveFunc {
	var (
		last  memo[[]byte]
		reset memo[int]
	)
	return func(x *exchange) *answer {
		a := x.serve()
		if x.r.URL.Path != schemas.PathFeed {
			if a.Status != http.StatusUnauthorized {
				reset.put(x.auth(), schemas.FeedRequestsPerMinute)
			}
			return a
		}
		switch a.Status {
		case http.StatusOK:
			last.put(x.auth(), a.Body)
		case http.StatusTooManyRequests:
			n, _ := reset.get(x.auth())
			if _, ok := last.get(x.auth()); ok && n > 0 {
				reset.put(x.auth(), n-1)
				return x.serveUncounted()
			}
		}
		return a
	}
}

func init() {
	table = append(table, derived...)
	table = append(table, survivors...)
	gen := generated(table)
	for _, m := range gen {
		isGenerated[m.Name] = true
	}
	table = append(table, gen...)
}

// isGenerated names the mutants generated from a base fault: each answers
// as its base does on its shape's requests, and as the server elsewhere.
var isGenerated = map[string]bool{}

// Generated reports whether the mutant of a name was generated from a base
// fault to fill a cell of the grid (requirement × shape) that no
// hand-written or derived mutant covers.
func Generated(name string) bool { return isGenerated[name] }

// handShapes are the hand-written mutants that break their requirement on
// one shape only; the others break it on every request they touch.
var handShapes = map[string]string{
	"cap-first-page-only":       ShapeCursorPage,
	"cursor-repeats":            ShapeCursorPage,
	"cursor-skips":              ShapeCursorPage,
	"cursor-null-early":         ShapeCursorPage,
	"later-pages-text-plain":    ShapeCursorPage,
	"offset-cursor":             ShapeLiveHead,
	"cursor-any-account":        ShapeCursorPage,
	"entry-event-missing-field": ShapeVideos,
	"first-seen-in-seconds":     ShapeVideos,
	"sample-count-negative":     ShapeVideos,
	"count-after-dedupe":        ShapeDuplicateIDs,
	"small-body-limit":          ShapeLargeBatch,
	"missing-not-listed":        ShapeMissingIDs,
	"unrequested-id-listed":     ShapeMissingIDs,
}

// Shape names the shape on which a mutant breaks its requirement.
func (m Mutant) Shape() string {
	if _, shape, ok := strings.Cut(m.Name, "@"); ok {
		return shape
	}
	if s, ok := handShapes[m.Name]; ok {
		return s
	}
	return ShapeAny
}
