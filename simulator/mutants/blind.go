package mutants

import (
	"net/http"
	"time"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/simulator"
)

// The one-rule breaks of servers written blind that the suite caught but
// blamed on another requirement (issue 24): each stands for a class the
// blame sweep keeps blamed right.

// freeKey401 answers a valid key of no Pro plan 401 on tracked videos,
// where the plan rule says 403.
var freeKey401 = stateless(func(x *exchange) *answer {
	a := x.serve()
	if a.Status == http.StatusForbidden && a.code() == simulator.CodeProRequired {
		a.setHeader("WWW-Authenticate", `Bearer realm="api"`)
		a.setError(http.StatusUnauthorized, simulator.CodeUnknownKey, "the API key is not valid", nil)
	}
	return a
})

// cursorLimitPlus1 serves limit=n on a page reached through a cursor with
// n+1 events, and the cursor after them: the walk stays whole.
var cursorLimitPlus1 = feedRewrite(func(q simulator.FeedQuery) (int, bool) {
	return q.Limit + 1, q.Cursor != "" && q.HasLimit && q.Limit < schemas.MaxPageSize
})

// deepGap leaves one event out of every page from a walk's third on: the
// page holds limit events, and its cursor leads past the one left out.
func deepGap() serveFunc {
	var depth memo[int] // a cursor handed out → the page it leads to
	return func(x *exchange) *answer {
		q, ok := x.feed()
		if !ok {
			return x.serve()
		}
		d := 1
		if q.Cursor != "" {
			d, _ = depth.get(q.Cursor)
			d = max(d, 2)
		}
		a := x.serve()
		pg, ok := readPage(a)
		if !ok {
			return a
		}
		if d >= 3 && len(pg.events) > 1 {
			mid := len(pg.events) / 2
			kept := append(append([]any{}, pg.events[:mid]...), pg.events[mid+1:]...)
			if pg.next != "" {
				// one more event, and the cursor after it, in place of the one left out
				if more, ok := readPage(x.feedAsUncounted(1, pg.next)); ok {
					kept = append(kept, more.events...)
					pg.next = more.next
				}
			}
			pg.events = kept
			pg.set(a)
		}
		if pg.next != "" {
			depth.put(pg.next, d+1)
		}
		return a
	}
}

// urlCacheOneSecond caches a feed page by its query for one second of the
// server's clock, whatever the key: a key that asks what another key
// asked within that second gets the other's page.
func urlCacheOneSecond() serveFunc {
	type kept struct {
		body []byte
		auth string
		at   time.Time
	}
	var pages memo[kept]
	return func(x *exchange) *answer {
		a := x.serve()
		if a.Status != http.StatusOK {
			return a
		}
		now := x.srv.Now()
		if k, ok := pages.get(x.r.URL.RawQuery); ok && now.Sub(k.at) < time.Second && k.auth != x.auth() {
			a.Body = k.body
			return a
		}
		pages.put(x.r.URL.RawQuery, kept{a.Body, x.auth(), now})
		return a
	}
}
