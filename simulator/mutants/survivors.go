package mutants

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"sync"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/schemas/catalogue"
	"github.com/tcmkit/tcmkit/simulator"
)

// The one-rule breaks of servers written blind that slipped past the
// suite before its probes were generated (issue 24), each as the class it
// stands for: a limiter before authentication for every bad credential, a
// cache by URL for every bad credential, tracked videos that reset the
// feed's count while the key is under its limit, a window of half a
// minute, a cursor store that fills, the free plan's pages cut short.
// (Offset cursors on a growing feed are offset-cursor.)

// survivors are appended to the table with the derived faults, and the
// escapes of the generated probes after them (escapes.go).
var survivors = append([]Mutant{
	rawTokenLimiter(catalogue.AuthRevoked, simulator.CodeRevokedKey, "a revoked key"),
	rawTokenLimiter(catalogue.AuthUnknown, simulator.CodeUnknownKey, "a well-formed key of no account"),
	rawTokenLimiter(catalogue.AuthMalformed, simulator.CodeMalformedKey, "a malformed key"),
	rawTokenLimiter(catalogue.AuthMissing, simulator.CodeMissingKey, "a request without a key"),
	edgeCache(catalogue.AuthRevoked, simulator.CodeRevokedKey, "a revoked key"),
	edgeCache(catalogue.AuthUnknown, simulator.CodeUnknownKey, "a well-formed key of no account"),
	edgeCache(catalogue.AuthMalformed, simulator.CodeMalformedKey, "a malformed key"),
	edgeCache(catalogue.AuthMissing, simulator.CodeMissingKey, "a request without a key"),
	{Name: "videos-resets-window@" + ShapeVideos, Requirement: catalogue.RateLimit429, Ops: keyed, fresh: videosResetsWindow,
		Does: "a tracked-videos request of a key under its feed limit starts the key's feed window again: 20 more feed requests pass (a request made while the key is throttled resets nothing)"},
	{Name: "window-half-minute@" + ShapeAfterBurst, Requirement: catalogue.RateLimit429, Ops: feedOnly, fresh: halfMinuteWindow,
		Does: "the feed's window is half a minute: 20 requests pass, the 429 says Retry-After 30, then 20 more pass"},
	{Name: "cursor-store-fills@" + ShapeLongWalk, Requirement: catalogue.FeedCursorWalk, Ops: feedOnly, fresh: cursorStoreFills,
		Does: fmt.Sprintf("each key's cursor store holds %d cursors: a cursor handed out after it filled is answered 400, unknown", cursorStoreSize)},
	derive("free-limit-100", catalogue.FeedLimit, ShapeOtherKey, "the other key's (the free plan's) limit is capped at 100: limit=101..200 gives 100 events and a nextCursor", feedOnly,
		// above 200 the cap is FEED-LIMIT-CAP's: left alone
		feedRewrite(func(q simulator.FeedQuery) (int, bool) {
			return 100, q.HasLimit && q.Limit > 100 && q.Asked <= schemas.MaxPageSize
		})),
	derive("free-pages-short", catalogue.FeedPageDefault, ShapeOtherKey, "without limit, the other key's (the free plan's) pages hold 30 events and a null nextCursor: the rest of its feed is never shown", feedOnly, shortLastPages),
	// Caught, but blamed on another requirement (see blind.go).
	{Name: "free-key-401@" + ShapeOtherKey, Requirement: catalogue.ProGate, Ops: videosOnly, fresh: freeKey401,
		Does: "tracked videos answer a valid key of no Pro plan 401 instead of 403"},
	{Name: "cursor-limit-plus1@" + ShapeCursorPage, Requirement: catalogue.FeedLimit, Ops: feedOnly, fresh: cursorLimitPlus1,
		Does: "on a page reached through a cursor, limit=n gives n+1 events (the walk stays whole)"},
	{Name: "deep-gap@" + ShapeDeepPage, Requirement: catalogue.FeedCursorWalk, Ops: feedOnly, fresh: deepGap,
		Does: "from a walk's third page on, a page leaves out one event (it still holds limit events)"},
	{Name: "url-cache-one-second@" + ShapeFirstPage, Requirement: catalogue.FeedTenant, Ops: feedOnly, fresh: urlCacheOneSecond,
		Does: "feed pages are cached by their query for one second of the server's clock, whatever the key"},
}, escapedProbes...)

// Escaped reports whether a fault is one of those that escaped the suite
// before its probes were generated: the kill matrix judges it with them.
func Escaped(name string) bool {
	return slices.ContainsFunc(survivors, func(m Mutant) bool { return m.Name == name })
}

// Profile names, for the faults that hide where only --profile thorough
// looks (a walk past 100 cursors, lockouts that measure the window, the
// operations interleaved under the limit, hundreds of requests of a
// throttled key that cross a limiter's housekeeping), that profile; "" for
// the rest.
func Profile(name string) string {
	switch name {
	case "cursor-store-fills@" + ShapeLongWalk, "window-half-minute@" + ShapeAfterBurst, "videos-resets-window@" + ShapeVideos, "limiter-reset-every-100":
		return "thorough"
	}
	return ""
}

// credentialName names the bad credential of a 401's code in fault names.
var credentialName = map[string]string{
	simulator.CodeRevokedKey:   "revoked",
	simulator.CodeUnknownKey:   "unknown",
	simulator.CodeMalformedKey: "malformed",
	simulator.CodeMissingKey:   "no-key",
}

// rawTokenLimiter is a limiter in front of authentication, keyed by the
// raw Authorization value: a credential refused with code is answered 429
// once it was sent 20 times. The mutants know no clock: for a token the
// server refuses, the window never turns over.
func rawTokenLimiter(id catalogue.ID, code, what string) Mutant {
	return Mutant{Name: "raw-token-limiter-" + credentialName[code] + "@" + ShapeAfterBurst, Requirement: id, Ops: keyed,
		Does: fmt.Sprintf("a limiter before authentication, keyed by the raw token: the %dth request of %s gets 429 instead of 401", schemas.FeedRequestsPerMinute+1, what),
		fresh: func() serveFunc {
			var (
				mu   sync.Mutex
				sent memo[int]
			)
			return func(x *exchange) *answer {
				mu.Lock()
				n, _ := sent.get(x.auth())
				sent.put(x.auth(), n+1)
				mu.Unlock()
				a := x.serve()
				if refused(x, a, code) && n >= schemas.FeedRequestsPerMinute {
					a.setHeader("Retry-After", "60")
					a.setError(http.StatusTooManyRequests, simulator.CodeRateLimited, "rate limit exceeded", nil)
				}
				return a
			}
		}}
}

// edgeCache is a cache by URL in front of authentication: a request the
// server refuses with code, for the URL (and body) the server answered
// 200 just before, gets that answer.
func edgeCache(id catalogue.ID, code, what string) Mutant {
	return Mutant{Name: "edge-cache-" + credentialName[code] + "@" + ShapeReadByOther, Requirement: id, Ops: keyed,
		Does:  fmt.Sprintf("a cache by URL before authentication: %s asking for the URL another key was just answered 200 gets that answer", what),
		fresh: func() serveFunc { return urlCache(code) }}
}

func urlCache(code string) serveFunc {
	var (
		mu       sync.Mutex
		lastURL  string
		lastBody []byte
	)
	return func(x *exchange) *answer {
		url := urlOf(x)
		a := x.serve()
		mu.Lock()
		defer mu.Unlock()
		switch {
		case a.Status == http.StatusOK:
			lastURL, lastBody = url, a.Body
		case refused(x, a, code) && url == lastURL:
			return replay(lastBody)
		default:
			lastURL = ""
		}
		return a
	}
}

// videosResetsWindow: a tracked-videos request (not refused for its key)
// of a key whose last feed answer was a 200 lets up to 20 of the key's
// throttled feed requests through (the page asked for, uncounted).
func videosResetsWindow() serveFunc {
	var (
		mu     sync.Mutex
		last   memo[[]byte]
		under  memo[bool] // the key's last feed answer was a 200
		credit memo[int]
	)
	return func(x *exchange) *answer {
		a := x.serve()
		mu.Lock()
		defer mu.Unlock()
		if x.r.URL.Path != schemas.PathFeed {
			if ok, _ := under.get(x.auth()); ok && a.Status != http.StatusUnauthorized && a.Status != http.StatusTooManyRequests {
				credit.put(x.auth(), schemas.FeedRequestsPerMinute)
			}
			return a
		}
		switch a.Status {
		case http.StatusOK:
			last.put(x.auth(), a.Body)
			under.put(x.auth(), true)
		case http.StatusTooManyRequests:
			if n, _ := credit.get(x.auth()); n > 0 {
				if _, ok := last.get(x.auth()); ok {
					credit.put(x.auth(), n-1)
					return x.serveUncounted()
				}
			}
			under.put(x.auth(), false)
		}
		return a
	}
}

// halfMinuteWindow plays a window of 30 s on top of the server's minute:
// the first 429 of a lockout says Retry-After 30 (half the server's
// wait); a key that comes back gets its next 20 throttled requests
// through (the pages asked for, uncounted), then a 429 that says 30 again.
func halfMinuteWindow() serveFunc {
	var (
		mu    sync.Mutex
		last  memo[[]byte]
		armed memo[bool] // the key was told to come back in 30 s
		left  memo[int]  // throttled requests still let through
	)
	const half = 30
	return func(x *exchange) *answer {
		a := x.serve()
		mu.Lock()
		defer mu.Unlock()
		k := x.auth()
		switch a.Status {
		case http.StatusOK:
			last.put(k, a.Body)
			return a
		case http.StatusTooManyRequests:
		default:
			return a
		}
		_, seen := last.get(k)
		n, _ := left.get(k)
		if was, _ := armed.get(k); was && n == 0 && seen {
			armed.put(k, false)
			n = schemas.FeedRequestsPerMinute
		}
		if n > 0 && seen {
			left.put(k, n-1)
			return x.serveUncounted()
		}
		if ra, err := strconv.Atoi(a.Header.Get("Retry-After")); err == nil && ra > half {
			a.setHeader("Retry-After", strconv.Itoa(half))
		}
		armed.put(k, true)
		return a
	}
}

// cursorStoreSize is how many cursors cursor-store-fills keeps per key:
// past 100, where a walk of the suite's quick profile does not reach.
const cursorStoreSize = 100

// cursorStoreFills answers a cursor that was handed out after its key's
// store filled as an unknown one: 400 naming cursor.
func cursorStoreFills() serveFunc {
	var (
		mu     sync.Mutex
		issued memo[int]  // Authorization → cursors handed out
		lost   memo[bool] // cursors handed out once the store was full
	)
	return func(x *exchange) *answer {
		if q, ok := x.feed(); ok && q.Cursor != "" {
			if gone, _ := lost.get(q.Cursor); gone {
				return refuseCursor(x, q.Cursor)
			}
		}
		a := x.serve()
		if pg, ok := readPage(a); ok && pg.next != "" {
			mu.Lock()
			n, _ := issued.get(x.auth())
			issued.put(x.auth(), n+1)
			mu.Unlock()
			if n >= cursorStoreSize {
				lost.put(pg.next, true)
			}
		}
		return a
	}
}

// shortLastPages serves a request without limit with 30 events and a
// null nextCursor.
var shortLastPages = stateless(func(x *exchange) *answer {
	q, ok := x.feed()
	if !ok || q.HasLimit {
		return x.serve()
	}
	a := x.feedAs(30, q.Cursor)
	if pg, ok := readPage(a); ok && pg.next != "" {
		pg.next = ""
		pg.set(a)
	}
	return a
})

// refuseCursor answers a feed request as the simulator answers a cursor it
// never handed out: a 400 naming the cursor, authenticated and counted
// like any page (a request it would refuse anyway keeps its own answer).
func refuseCursor(x *exchange, cursor string) *answer {
	a := x.feedAs(1, "")
	if a.Status == http.StatusOK {
		problem := simulator.QueryProblem{Parameter: "cursor", Value: cursor, Rule: "must be the nextCursor of a page"}
		a.setError(http.StatusBadRequest, simulator.CodeInvalidQuery, "invalid query parameter: cursor",
			map[string]any{"invalid": []string{"cursor"}, "problems": []simulator.QueryProblem{problem}})
	}
	return a
}
