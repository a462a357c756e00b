package mutants

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"unicode/utf16"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/schemas/jsondoc"
	"github.com/tcmkit/tcmkit/simulator"
)

// The mutants of the bugs real servers have in the field: across accounts,
// at page boundaries and ties, under inserts, with keys compared loosely,
// with lengths counted in another unit.

// videosAnyChannel serves a video whatever channel it belongs to: a query
// that forgets the account. It learns the videos from every feed page it
// passes (the published ones carry their counters) and answers an id the
// server lists as missing with what it learnt.
func videosAnyChannel() serveFunc {
	var known memo[map[string]any] // platformVideoId → the video_published event
	return func(x *exchange) *answer {
		a := x.serve()
		doc := a.doc()
		if x.r.URL.Path == schemas.PathFeed {
			eachEvent(doc, func(ev map[string]any) {
				if id, ok := jsondoc.String(ev, "/video/platformVideoId"); ok && ev["type"] == schemas.TypeVideoPublished {
					known.put(id, ev)
				}
			})
			return a
		}
		if a.Status != http.StatusOK || !isVideosAnswer(doc) {
			return a
		}
		var missing []any
		list := jsondoc.Items(doc, "/videos")
		for _, m := range jsondoc.Items(doc, "/missingVideoIds") {
			id, _ := m.(string)
			ev, ok := known.get(id)
			if !ok {
				missing = append(missing, m)
				continue
			}
			list = append(list, entryOf(ev))
		}
		obj := doc.(map[string]any)
		obj["videos"], obj["missingVideoIds"] = list, append([]any{}, missing...)
		a.Body = jsondoc.Encode(doc)
		return a
	}
}

// entryOf makes a valid VideoEntry of a video_published event.
func entryOf(ev map[string]any) map[string]any {
	video := map[string]any{}
	for k, v := range ev["video"].(map[string]any) {
		video[k] = v
	}
	video["channel"] = ev["channel"]
	return map[string]any{"video": video, "firstSeenAt": ev["createdAt"], "historyWindowDays": json.Number("30"),
		"isGraphLocked": false, "events": []any{ev}, "statSamples": []any{}}
}

// cursorAnyAccount honours a cursor whichever account it was handed to: the
// page comes from the account that got the cursor.
func cursorAnyAccount() serveFunc {
	var owner memo[string] // nextCursor → the Authorization that got it
	return func(x *exchange) *answer {
		var a *answer
		if q, ok := x.feed(); ok && q.Cursor != "" {
			if auth, known := owner.get(q.Cursor); known && auth != x.auth() {
				if a = x.serve(); a.Status == http.StatusBadRequest {
					a = x.serveAs(x.withAuth(auth), nil)
				}
			}
		}
		if a == nil {
			a = x.serve()
		}
		if pg, ok := readPage(a); ok && pg.next != "" {
			owner.put(pg.next, x.auth())
		}
		return a
	}
}

// pageCacheIgnoresKey keeps feed pages by their query alone: a key that
// asks what another key asked before gets the other key's page (after its
// own request was authenticated and counted).
func pageCacheIgnoresKey() serveFunc {
	var pages memo[[]byte]
	return func(x *exchange) *answer {
		a := x.serve()
		if a.Status != http.StatusOK {
			return a
		}
		if body, ok := pages.get(x.r.URL.RawQuery); ok {
			a.Body = body
			return a
		}
		pages.put(x.r.URL.RawQuery, a.Body)
		return a
	}
}

// cursorByTime records createdAt to the second, so that events share it,
// and reads a cursor as "older than the last event's createdAt": events
// that share it with the last one of the page before are lost at the
// boundary.
func cursorByTime() serveFunc {
	var lastAt memo[int64] // nextCursor → createdAt of its page's last event
	toSecond := func(ev map[string]any) bool {
		if t, ok := jsondoc.Int(ev, "/createdAt"); ok {
			ev["createdAt"] = json.Number(strconv.FormatInt(t/1000*1000, 10))
			return true
		}
		return false
	}
	// the events of VideoEntries are recorded to the second too: one
	// event, one createdAt, wherever it is read
	entryEvents := eventEdit(toSecond)()
	return func(x *exchange) *answer {
		if x.r.URL.Path == schemas.PathVideos {
			return entryEvents(x)
		}
		a := x.serve()
		q, _ := x.feed()
		pg, ok := readPage(a)
		if !ok {
			return a
		}
		for _, ev := range pg.events {
			toSecond(ev.(map[string]any))
		}
		if at, known := lastAt.get(q.Cursor); known && q.Cursor != "" {
			for len(pg.events) > 0 {
				if t, _ := jsondoc.Int(pg.events[0], "/createdAt"); t != at {
					break
				}
				pg.events = pg.events[1:]
			}
		}
		pg.set(a)
		if pg.next != "" && len(pg.events) > 0 {
			t, _ := jsondoc.Int(pg.events[len(pg.events)-1], "/createdAt")
			lastAt.put(pg.next, t)
		}
		return a
	}
}

// fullLastPageCursor gives a last page that is exactly full (as many
// events as the limit) a nextCursor, which leads to an empty page: "more
// if the page is full".
var fullLastPageCursor = stateless(func(x *exchange) *answer {
	q, ok := x.feed()
	if ok && q.Cursor == endCursor {
		a := x.feedAs(1, "") // authenticated and counted like any page
		if a.Status == http.StatusOK {
			a.setJSON(http.StatusOK, map[string]any{"events": []any{}, "nextCursor": nil})
		}
		return a
	}
	a := x.serve()
	if pg, isPage := readPage(a); isPage && ok && pg.next == "" && len(pg.events) == q.Limit {
		pg.next = endCursor
		pg.set(a)
	}
	return a
})

// offsetCursor hands out cursors that are offsets into the feed as it is
// when they are used: once new events arrive at the head, the next page
// starts that many events earlier and repeats them.
func offsetCursor() serveFunc {
	type issued struct {
		real string // the server's cursor at the page's end
		head string // the id of the feed's first event when it was handed out
		tail []any  // the page's events
	}
	var cursors memo[issued]
	var n atomic.Int64
	// hand replaces a page's nextCursor by an offset token.
	hand := func(a *answer, head string) *answer {
		if pg, ok := readPage(a); ok && pg.next != "" && head != "" {
			token := "offset-" + strconv.FormatInt(n.Add(1), 10)
			cursors.put(token, issued{real: pg.next, head: head, tail: pg.events})
			pg.next = token
			pg.set(a)
		}
		return a
	}
	return func(x *exchange) *answer {
		q, ok := x.feed()
		c, known := cursors.get(q.Cursor)
		if !ok || !known {
			a := x.serve()
			head := ""
			if pg, ok := readPage(a); ok && q.Cursor == "" && len(pg.events) > 0 {
				head, _ = jsondoc.String(pg.events[0], "/id")
			}
			return hand(a, head)
		}
		// How many events arrived at the head since the cursor was handed
		// out? (asked uncounted: the fault's own request must not use up
		// the key's rate limit, a second rule broken)
		arrived, head := 0, c.head
		if fresh, ok := readPage(x.feedAsUncounted(schemas.MaxPageSize, "")); ok && len(fresh.events) > 0 {
			head, _ = jsondoc.String(fresh.events[0], "/id")
			for i, ev := range fresh.events {
				if id, _ := jsondoc.String(ev, "/id"); id == c.head {
					arrived = i
					break
				}
			}
		}
		arrived = min(arrived, q.Limit-1, len(c.tail))
		a := x.feedAs(q.Limit-arrived, c.real)
		if pg, ok := readPage(a); ok {
			pg.events = append(append([]any{}, c.tail[len(c.tail)-arrived:]...), pg.events...)
			pg.set(a)
		}
		return hand(a, head)
	}
}

// keyLoose accepts a key that the server refused as unknown when it is
// like a key it has seen work: the same but for case, or with a character
// more or less at the end.
func keyLoose(like func(presented, good string) bool) func() serveFunc {
	return func() serveFunc {
		var good memo[bool] // Authorization values that were accepted
		return func(x *exchange) *answer {
			a := x.serve()
			if a.Status != http.StatusUnauthorized {
				if a.Status != http.StatusTooManyRequests {
					good.put(x.auth(), true)
				}
				return a
			}
			if a.code() != simulator.CodeUnknownKey && a.code() != simulator.CodeMalformedKey {
				return a
			}
			for _, auth := range good.others(x.auth()) {
				if like(bearerToken(x.auth()), bearerToken(auth)) {
					return x.serveAs(x.withAuth(auth), x.raw)
				}
			}
			return a
		}
	}
}

func bearerToken(auth string) string {
	_, token, _ := strings.Cut(strings.TrimSpace(auth), " ")
	return strings.TrimSpace(token)
}

func sameButCase(presented, good string) bool {
	return presented != good && strings.EqualFold(presented, good)
}

func prefixMatch(presented, good string) bool {
	return presented != good && len(presented) >= len(good)-1 &&
		(strings.HasPrefix(presented, good) || strings.HasPrefix(good, presented))
}

// idLength rejects ids longer than the maximum in another unit than
// characters (bytes, UTF-16 code units).
func idLength(unit string, length func(string) int) func() serveFunc {
	return stateless(func(x *exchange) *answer {
		a := x.serve()
		ids, ok := x.ids()
		if !ok || a.Status != http.StatusOK {
			return a
		}
		for _, id := range ids {
			if length(id) > schemas.MaxVideoIDLen {
				reject(a, fmt.Sprintf("each video id must be %d to %d %s", schemas.MinVideoIDLen, schemas.MaxVideoIDLen, unit))
				break
			}
		}
		return a
	})
}

func utf16Len(s string) int { return len(utf16.Encode([]rune(s))) }

// countAfterDedupe counts the ids after dropping duplicates: 21 ids with
// one twice pass as 20.
var countAfterDedupe = stateless(func(x *exchange) *answer {
	ids, ok := x.ids()
	if !ok || len(ids) <= schemas.MaxVideoIDs || len(dedupe(ids)) > schemas.MaxVideoIDs {
		return x.serve()
	}
	return x.videosAs(dedupe(ids))
})

// smallBody refuses bodies over 512 bytes: 20 long ids do not fit.
var smallBody = stateless(func(x *exchange) *answer {
	a := x.serve()
	if a.Status == http.StatusOK && len(x.raw) > 512 {
		reject(a, "the request body is larger than 512 bytes")
	}
	return a
})

// laterPagesType sends pages reached through a cursor as text/plain.
var laterPagesType = stateless(func(x *exchange) *answer {
	a := x.serve()
	if q, ok := x.feed(); ok && q.Cursor != "" && a.Status == http.StatusOK {
		a.ContentType = "text/plain; charset=utf-8"
	}
	return a
})
