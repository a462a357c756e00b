package mutants

import (
	"fmt"
	"net/http"
	"slices"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/schemas/jsondoc"
	"github.com/tcmkit/tcmkit/simulator"
)

// The mutants of the feed's pages and cursors.

func omitNullCursor(_ *http.Request, doc any) bool {
	obj, _ := doc.(map[string]any)
	if next, present := obj["nextCursor"]; present && next == nil {
		delete(obj, "nextCursor")
		return true
	}
	return false
}

func reversePage(_ *http.Request, doc any) bool {
	obj, _ := doc.(map[string]any)
	evs, _ := obj["events"].([]any)
	slices.Reverse(evs)
	return len(evs) > 1
}

// defaultPageSize serves a request without limit as if it asked for size.
func defaultPageSize(size int) func() serveFunc {
	return feedRewrite(func(q simulator.FeedQuery) (int, bool) { return size, !q.HasLimit })
}

var limitIgnored = feedRewrite(func(q simulator.FeedQuery) (int, bool) {
	return schemas.DefaultPageSize, q.HasLimit && q.Asked <= schemas.MaxPageSize
})

var limitOffByOne = feedRewrite(func(q simulator.FeedQuery) (int, bool) {
	return q.Asked - 1, q.HasLimit && q.Asked >= 2 && q.Asked <= schemas.MaxPageSize
})

// notCapped answers a limit above the cap with two pages joined: always,
// or only on pages reached through a cursor.
func notCapped(onlyWithCursor bool) func() serveFunc {
	return func() serveFunc { return limitNotCapped(onlyWithCursor) }
}

func limitNotCapped(onlyWithCursor bool) serveFunc {
	var firsts held
	return func(x *exchange) *answer {
		q, ok := x.feed()
		if !ok || q.Asked <= schemas.MaxPageSize || onlyWithCursor && q.Cursor == "" {
			return x.serve()
		}
		a := firsts.first(x)
		first, ok := readPage(a)
		if !ok || first.next == "" {
			return a
		}
		more := min(q.Asked, 2*schemas.MaxPageSize) - schemas.MaxPageSize
		b, ok := firsts.second(x, a, func() *answer { return x.feedAs(more, first.next) })
		if !ok {
			return b
		}
		if second, ok := readPage(b); ok {
			first.events = append(first.events, second.events...)
			first.next = second.next
			first.set(a)
		}
		return a
	}
}

var limitAboveMaxRejected = stateless(func(x *exchange) *answer {
	q, ok := x.feed()
	a := x.serve()
	if ok && a.Status == http.StatusOK && q.Asked > schemas.MaxPageSize {
		problem := simulator.QueryProblem{Parameter: "limit", Value: jsondoc.Excerpt(x.r.URL.Query().Get("limit"), 64), Rule: fmt.Sprintf("must be at most %d", schemas.MaxPageSize)}
		a.setError(http.StatusBadRequest, simulator.CodeInvalidQuery, "invalid query parameter: limit",
			map[string]any{"invalid": []string{"limit"}, "problems": []simulator.QueryProblem{problem}})
	}
	return a
})

// cursorRepeats starts a page reached through a cursor with the last event
// of the page before, and holds one event fewer after it: the page size
// stays right, the walk sees one event twice.
func cursorRepeats() serveFunc {
	var lastOf memo[any] // nextCursor handed out → the last event of its page
	remember := func(a *answer) *answer {
		if pg, ok := readPage(a); ok && pg.next != "" && len(pg.events) > 0 {
			lastOf.put(pg.next, pg.events[len(pg.events)-1])
		}
		return a
	}
	return func(x *exchange) *answer {
		q, ok := x.feed()
		prev, known := lastOf.get(q.Cursor)
		if !ok || q.Cursor == "" || !known || q.Limit < 2 {
			return remember(x.serve())
		}
		a := remember(x.feedAs(q.Limit-1, q.Cursor))
		if pg, ok := readPage(a); ok {
			pg.events = append([]any{prev}, pg.events...)
			pg.set(a)
		}
		return a
	}
}

// cursorSkips reads one event more than asked through a cursor and leaves
// out the first: the page size stays right, the walk misses one event at
// every page boundary.
func cursorSkips() serveFunc {
	var firsts held
	return func(x *exchange) *answer {
		q, ok := x.feed()
		if !ok || q.Cursor == "" {
			return x.serve()
		}
		var a *answer
		if q.Limit < schemas.MaxPageSize {
			a = x.feedAs(q.Limit+1, q.Cursor)
		} else {
			a = firsts.first(x)
		}
		pg, ok := readPage(a)
		if !ok || len(pg.events) == 0 {
			return a
		}
		if q.Limit == schemas.MaxPageSize && pg.next != "" {
			b, ok := firsts.second(x, a, func() *answer { return x.feedAs(1, pg.next) })
			if !ok {
				return b
			}
			if more, ok := readPage(b); ok {
				pg.events = append(pg.events, more.events...)
				pg.next = more.next
			}
		}
		pg.events = pg.events[1:]
		pg.set(a)
		return a
	}
}

func cursorNullEarly(r *http.Request, doc any) bool {
	obj, _ := doc.(map[string]any)
	if next, _ := obj["nextCursor"].(string); next == "" || r.URL.Query().Get("cursor") == "" {
		return false
	}
	obj["nextCursor"] = nil
	return true
}

func emptyCursorAtEnd(_ *http.Request, doc any) bool {
	obj, _ := doc.(map[string]any)
	if next, present := obj["nextCursor"]; !present || next != nil {
		return false
	}
	obj["nextCursor"] = ""
	return true
}

func cursorCycles(r *http.Request, doc any) bool {
	obj, _ := doc.(map[string]any)
	cursor := r.URL.Query().Get("cursor")
	if next, present := obj["nextCursor"]; !present || next != nil || cursor == "" {
		return false
	}
	obj["nextCursor"] = cursor
	return true
}

// endCursor is the nextCursor cursor-end-late hands out on the last page.
const endCursor = "end-of-feed"

// cursorEndLate gives the last page a nextCursor that leads to an empty
// page with a null one.
var cursorEndLate = stateless(func(x *exchange) *answer {
	if q, ok := x.feed(); ok && q.Cursor == endCursor {
		// Authenticate and count the request like any other page.
		a := x.feedAs(1, "")
		if a.Status == http.StatusOK {
			a.setJSON(http.StatusOK, map[string]any{"events": []any{}, "nextCursor": nil})
		}
		return a
	}
	a := x.serve()
	if pg, ok := readPage(a); ok && pg.next == "" && len(pg.events) > 0 {
		pg.next = endCursor
		pg.set(a)
	}
	return a
})

var badParam500 = editStatus(http.StatusBadRequest, func(a *answer) {
	a.setError(http.StatusInternalServerError, simulator.CodeInternal, "the query could not be processed", nil)
})

var badParamNoDetails = editStatus(http.StatusBadRequest, func(a *answer) {
	if code := a.code(); code != "" {
		a.setError(http.StatusBadRequest, code, "invalid query", nil)
	}
})
