package mutants

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/schemas/jsondoc"
	"github.com/tcmkit/tcmkit/simulator"
)

// The mutants of the rate limit. Their state is per key (the
// Authorization value), in bounded memos.

// replay is a 200 with the bytes of an earlier answer.
func replay(body []byte) *answer {
	return &answer{simulator.Answer{Status: http.StatusOK, Body: body}}
}

// noRateLimit answers a throttled feed request with the last 200 the same
// key got for the same query: the client sees no limit as long as it
// repeats itself, and stale-but-valid data.
func noRateLimit() serveFunc {
	var last memo[[]byte]
	return func(x *exchange) *answer {
		key := heldKey(x)
		a := x.serve()
		switch a.Status {
		case http.StatusOK:
			last.put(key, a.Body)
		case http.StatusTooManyRequests:
			if body, ok := last.get(key); ok {
				return replay(body)
			}
		}
		return a
	}
}

// rateLimitOneMore lets the first request over the limit pass, answered
// with the last 200 of the same key and query; the next one gets the 429
// (with a truthful Retry-After).
func rateLimitOneMore() serveFunc {
	var (
		last   memo[[]byte]
		passed memo[bool] // the key's last answer was a 200
	)
	return func(x *exchange) *answer {
		a := x.serve()
		switch a.Status {
		case http.StatusOK:
			last.put(heldKey(x), a.Body)
			passed.put(x.auth(), true)
		case http.StatusTooManyRequests:
			body, ok := last.get(heldKey(x))
			if was, _ := passed.take(x.auth()); ok && was {
				return replay(body)
			}
		}
		return a
	}
}

func rateLimit503(a *answer) {
	a.Status = http.StatusServiceUnavailable
	if doc := a.doc(); doc != nil {
		msg, _ := jsondoc.String(doc, "/message")
		details, _ := jsondoc.Get(doc, "/details")
		a.setError(http.StatusServiceUnavailable, simulator.CodeUnavailable, msg, details)
	}
}

// counted reports whether the server counted a request against its key's
// budget: it does for every authenticated request it did not refuse.
func counted(status int) bool {
	return status != http.StatusUnauthorized && status != http.StatusTooManyRequests
}

// rateLimitOneLess spends one request of the key's budget itself after
// every limit-1 requests the client got through: a fast client gets its
// 429 one request early, with a truthful Retry-After, and a client that
// waited what Retry-After said is let through (the spent request came
// with the others, and leaves the window with them).
func rateLimitOneLess() serveFunc {
	var (
		mu     sync.Mutex // one key's count and spending go together
		passed memo[int]
	)
	return func(x *exchange) *answer {
		mu.Lock()
		if n, _ := passed.get(x.auth()); n >= schemas.FeedRequestsPerMinute-1 {
			x.serve() // spent by the server itself
			passed.put(x.auth(), 0)
		}
		mu.Unlock()
		a := x.serve()
		mu.Lock()
		defer mu.Unlock()
		switch n, _ := passed.get(x.auth()); {
		case a.Status == http.StatusTooManyRequests:
			passed.put(x.auth(), 0)
		case counted(a.Status):
			passed.put(x.auth(), n+1)
		}
		return a
	}
}

// retryAfterEarly says one second less than the truth (0 for 1).
func retryAfterEarly(a *answer) {
	n, err := strconv.Atoi(a.Header.Get("Retry-After"))
	if err != nil || n < 1 {
		return
	}
	a.setHeader("Retry-After", strconv.Itoa(n-1))
	if code := a.code(); code != "" {
		a.setError(a.Status, code, fmt.Sprintf("rate limit exceeded; retry after %d s", n-1), map[string]any{"retryAfterSeconds": n - 1})
	}
}

// rateLimitShared throttles every key while one is throttled: a request is
// answered with the 429 of a key whose last answer was 429, as long as a
// probe of that key (a copy of the request with its key) still gets one.
// The probe is a real request: when the other key is free again, it uses
// up one of that key's requests.
func rateLimitShared() serveFunc {
	var throttled memo[bool] // Authorization values whose last answer was 429
	return func(x *exchange) *answer {
		for _, other := range throttled.others(x.auth()) {
			// Only a request with a well-formed key (of the same prefix)
			// is throttled; the others keep their 401.
			_, key, _ := strings.Cut(strings.TrimSpace(other), " ")
			prefix, _, _ := strings.Cut(strings.TrimSpace(key), "_")
			if _, bad := simulator.ParseBearer(x.r.Header.Values("Authorization"), prefix); bad != nil {
				break
			}
			probe := x.serveAs(x.withAuth(other), nil)
			if probe.Status == http.StatusTooManyRequests {
				return probe
			}
			throttled.take(other)
		}
		a := x.serve()
		if a.Status == http.StatusTooManyRequests {
			throttled.put(x.auth(), true)
		} else {
			throttled.take(x.auth())
		}
		return a
	}
}

// retryAfterTruncated says, in a 429 of the feed, the wait truncated to
// whole seconds, as a limiter that divides milliseconds by 1000 does: a
// wait of 59.3 s says 59, and the request made after it still gets 429.
// It keeps each key's admitted feed requests by the server's rate clock to
// know the wait; a whole-second wait is said as the server says it.
func retryAfterTruncated() serveFunc {
	var admitted memo[[]time.Time]
	return func(x *exchange) *answer {
		a := x.serve()
		now, key := x.srv.RateNow(), x.auth()
		ts, _ := admitted.get(key)
		for len(ts) > 0 && !ts[0].Add(schemas.RateWindow).After(now) {
			ts = ts[1:]
		}
		switch a.Status {
		case http.StatusOK:
			admitted.put(key, append(ts, now))
		case http.StatusTooManyRequests:
			if n := len(ts); n >= schemas.FeedRequestsPerMinute {
				wait := ts[n-schemas.FeedRequestsPerMinute].Add(schemas.RateWindow).Sub(now)
				secs := int64(wait / time.Second)
				a.setHeader("Retry-After", strconv.FormatInt(secs, 10))
				if code := a.code(); code != "" {
					a.setError(a.Status, code, fmt.Sprintf("rate limit exceeded; retry after %d s", secs), map[string]any{"retryAfterSeconds": secs})
				}
			}
		}
		return a
	}
}

// lastPageUncounted lets a last page of the feed (nextCursor null) through
// uncounted, as a limiter that counts only the requests that lead on: a
// key that asks for its feed's end is never throttled there, and its
// other requests find room the last pages should have taken.
var lastPageUncounted = stateless(func(x *exchange) *answer {
	if p, ok := readPage(x.serveUncounted()); ok && p.next == "" && x.r.URL.Query().Has("cursor") {
		return x.serveUncounted()
	}
	return x.serve()
})

// housekeepingEvery is how many requests of a key limiter-reset-every-100
// lets pass before its housekeeping clears the key's window.
const housekeepingEvery = 100

// limiterResetEvery keeps the feed's limit itself, as the server does (a
// sliding log of 20 grants a minute per key, refused requests not counted,
// a Retry-After that is never early), but its housekeeping clears a key's
// log at every nth request of the key (either operation, whatever its
// answer): the request after it finds a fresh window, at once. A run that
// paces its requests under the limit never sees it; one that keeps
// asking while throttled, past the nth request, gets a window's worth
// more (LemmyNet/lemmy#4560: a sweep that removed every bucket).
func limiterResetEvery(n int) func() serveFunc {
	return func() serveFunc {
		var (
			mu    sync.Mutex
			asked memo[int]
			logs  memo[*simulator.RateLimiter]
		)
		return func(x *exchange) *answer {
			if x.r.URL.Path != schemas.PathFeed {
				a := x.serve()
				if a.Status != http.StatusUnauthorized {
					mu.Lock()
					housekeeping(&asked, &logs, tokenOf(x), n)
					mu.Unlock()
				}
				return a
			}
			a := x.serveUncounted() // the server's own limit counts nothing of the feed here
			if a.Status == http.StatusUnauthorized {
				return a // no key, no window
			}
			mu.Lock()
			defer mu.Unlock()
			key := tokenOf(x)
			lim := housekeeping(&asked, &logs, key, n)
			ok, wait := lim.Allow(key, x.srv.RateNow())
			if ok {
				return a
			}
			secs := int64((wait + time.Second - 1) / time.Second)
			a.Header = nil
			a.setError(http.StatusTooManyRequests, simulator.CodeRateLimited, fmt.Sprintf("rate limit of %d requests per minute per API key exceeded; retry after %d s", schemas.FeedRequestsPerMinute, secs), map[string]any{"retryAfterSeconds": secs})
			a.setHeader("Retry-After", strconv.FormatInt(secs, 10))
			return a
		}
	}
}

// housekeeping counts a request of the key and returns its log: a fresh
// one at every nth request, as a sweep that drops live entries leaves it.
func housekeeping(asked *memo[int], logs *memo[*simulator.RateLimiter], key string, n int) *simulator.RateLimiter {
	c, _ := asked.get(key)
	asked.put(key, c+1)
	lim, ok := logs.get(key)
	if !ok || (c+1)%n == 0 {
		lim = simulator.NewRateLimiter(schemas.FeedRequestsPerMinute, schemas.RateWindow)
		logs.put(key, lim)
	}
	return lim
}

// tokenOf is the key a request carries, whatever the form of its
// Authorization (the scheme's case, spaces): one key, one window.
func tokenOf(x *exchange) string {
	f := strings.Fields(x.auth())
	if len(f) == 0 {
		return ""
	}
	return f[len(f)-1]
}

// cursorLostOn429 forgets a key's cursors when its feed is throttled: a
// cursor handed out before the key's latest feed 429 is answered as an
// unknown one (400 naming cursor), as a server that keeps a key's walks in
// state its limiter drops. A walk that waits out a 429 cannot go on.
func cursorLostOn429() serveFunc {
	var (
		mu     sync.Mutex
		epoch  memo[int] // key → its feed 429s so far
		handed memo[int] // key and cursor → the key's epoch when handed out
	)
	return func(x *exchange) *answer {
		key := tokenOf(x)
		if q, ok := x.feed(); ok && q.Cursor != "" {
			mu.Lock()
			now, _ := epoch.get(key)
			then, known := handed.get(key + "\x00" + q.Cursor)
			mu.Unlock()
			if known && then < now {
				return refuseCursor(x, q.Cursor)
			}
		}
		a := x.serve()
		mu.Lock()
		defer mu.Unlock()
		n, _ := epoch.get(key)
		switch a.Status {
		case http.StatusTooManyRequests:
			epoch.put(key, n+1)
		case http.StatusOK:
			if pg, ok := readPage(a); ok && pg.next != "" {
				handed.put(key+"\x00"+pg.next, n)
			}
		}
		return a
	}
}
