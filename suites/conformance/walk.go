package conformance

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"

	"github.com/tcmkit/tcmkit/schemas/jsondoc"
	"github.com/tcmkit/tcmkit/suites/client"
	"github.com/tcmkit/tcmkit/suites/oracle"
)

// walkEvent is what a walk keeps of one event: enough to judge order,
// repeats and gaps. The schema judges the rest.
type walkEvent struct {
	ID        string
	Channel   string // channel.id
	Video     string // video.platformVideoId, "" for channel-level events
	Type      string
	CreatedAt int64
	HasTime   bool // createdAt was an integer
	Page      int
	Index     int
}

// where names the event's place for messages.
func (e walkEvent) where(w *walk) string {
	return fmt.Sprintf("page %d (%s) /events/%d", e.Page+1, w.Pages[e.Page].Resp.Request, e.Index)
}

// walkPage is one page of a walk.
type walkPage struct {
	Resp   *client.Response
	Events []walkEvent
	Next   string // "" when nextCursor was null or absent
	NoNext bool   // nextCursor was absent (FEED-PAGE-SCHEMA's to judge)
}

// walk is a cursor walk of the feed at one page size, bounded.
type walk struct {
	Limit    string // the limit query value, "" for the default
	Pages    []walkPage
	Complete bool             // reached a page whose nextCursor is null
	Bounded  bool             // stopped at the page bound with a cursor still to follow
	Err      error            // what stopped the walk early: an error answer, a cycle...
	Stopped  *client.Response // the answer the walk stopped at, when it was no readable FeedPage
	endErr   error            // Err, when it is about where the walk ends (a cycle, an empty-string nextCursor)
	owners   sync.Map         // other *walk → owner, once both walks are done (ownerOf)
}

// fetchPage sends one feed request for a cursor ("" = first page).
type fetchPage func(ctx context.Context, cursor string) (*client.Response, error)

// walkFeed follows nextCursor from the first page for at most maxPages
// pages (0: just what maxEvents asks for) or until it has seen maxEvents
// events (0: no bound). It detects a cursor cycle (a nextCursor seen
// before) and stops at the first answer that is not a readable FeedPage.
func walkFeed(ctx context.Context, limit string, fetch fetchPage, maxPages, maxEvents int) *walk {
	w := &walk{Limit: limit}
	seen := map[string]int{}
	cursor, events := "", 0
	for {
		if maxPages > 0 && len(w.Pages) >= maxPages || maxEvents > 0 && events >= maxEvents {
			w.Bounded = true
			return w
		}
		resp, err := fetch(ctx, cursor)
		if err != nil {
			w.Err, w.Stopped = err, resp // a page refused for its size is kept
			return w
		}
		page, err := readPage(resp, len(w.Pages))
		if err != nil {
			w.Err, w.Stopped = err, resp
			if errors.Is(err, errEmptyCursor) {
				w.endErr = err
			}
			return w
		}
		w.Pages = append(w.Pages, page)
		events += len(page.Events)
		if page.Next == "" {
			w.Complete = true
			return w
		}
		if first, ok := seen[page.Next]; ok {
			w.Err = fmt.Errorf("cursor cycle: page %d (%s) returned the nextCursor that page %d returned, %q",
				len(w.Pages), resp.Request, first+1, page.Next)
			w.endErr = w.Err
			return w
		}
		seen[page.Next] = len(w.Pages) - 1
		cursor = page.Next
	}
}

// readPage picks what a walk needs out of a feed answer.
func readPage(resp *client.Response, n int) (walkPage, error) {
	p := walkPage{Resp: resp}
	if resp.Status != http.StatusOK {
		return p, fmt.Errorf("page %d: %s, want 200; body: %s", n+1, resp, resp.Excerpt())
	}
	doc, err := resp.JSON()
	if err != nil {
		return p, fmt.Errorf("page %d: %s: the body is not JSON: %w", n+1, resp, err)
	}
	if jsondoc.Object(doc, "") == nil {
		return p, fmt.Errorf("page %d: %s: the body is not a JSON object", n+1, resp)
	}
	events := jsondoc.Items(doc, "/events") // nil unless an array: [] decodes to an empty slice
	if events == nil {
		return p, fmt.Errorf("page %d: %s: /events is not an array", n+1, resp)
	}
	for i, raw := range events {
		e := walkEvent{Page: n, Index: i}
		e.ID, _ = jsondoc.String(raw, "/id")
		e.Channel, _ = jsondoc.String(raw, "/channel/id")
		e.Video, _ = jsondoc.String(raw, "/video/platformVideoId")
		e.Type, _ = jsondoc.String(raw, "/type")
		e.CreatedAt, e.HasTime = jsondoc.Int(raw, "/createdAt")
		p.Events = append(p.Events, e)
	}
	next, present := jsondoc.Get(doc, "/nextCursor")
	p.NoNext = !present
	switch next := next.(type) {
	case nil:
	case string:
		if next == "" {
			return p, fmt.Errorf("page %d: %s: %w", n+1, resp, errEmptyCursor)
		}
		p.Next = next
	default:
		return p, fmt.Errorf("page %d: %s: /nextCursor is neither a string nor null", n+1, resp)
	}
	return p, nil
}

// errEmptyCursor: "" is no cursor to follow, and not the null that ends a walk.
var errEmptyCursor = errors.New(`/nextCursor is an empty string; null marks the end`)

// Events lists every event of the walk, in order.
func (w *walk) Events() []walkEvent {
	var out []walkEvent
	for _, p := range w.Pages {
		out = append(out, p.Events...)
	}
	return out
}

// IDs lists the event ids of the walk, in order.
func (w *walk) IDs() []string {
	var out []string
	for _, e := range w.Events() {
		out = append(out, e.ID)
	}
	return out
}

// SharedIDs names every id that two different events carry (another
// channel, video or createdAt): the ids' fault, not the walk's.
func (w *walk) SharedIDs() []string {
	var out []string
	first := map[string]walkEvent{}
	for _, e := range w.Events() {
		if e.ID == "" {
			continue // a missing id is the schema's finding
		}
		if f, ok := first[e.ID]; ok {
			// two events of one video at one time (a title and a
			// thumbnail changed together) differ in type
			if f.Channel != e.Channel || f.Video != e.Video || f.CreatedAt != e.CreatedAt || f.Type != e.Type {
				out = append(out, fmt.Sprintf("event id %q at %s repeats %s", e.ID, e.where(w), f.where(w)))
			}
			continue
		}
		first[e.ID] = e
	}
	return out
}

// OrderBreaks names every event that is newer than the one before it:
// createdAt must not increase along the walk, page boundaries included.
func (w *walk) OrderBreaks() []string {
	var out []string
	var prev *walkEvent
	seen := map[string]bool{}
	for _, e := range w.Events() {
		if !e.HasTime || e.CreatedAt < oracle.EpochFloor.UnixMilli() {
			continue // not epoch milliseconds: TIMESTAMP-EPOCH-MS's
		}
		if e.ID != "" && seen[e.ID] {
			continue // an event shown again is the walk's repeat, not an order
		}
		seen[e.ID] = true
		if prev != nil && e.CreatedAt > prev.CreatedAt {
			edge := ""
			if e.Page != prev.Page {
				edge = " (across a page boundary)"
			}
			out = append(out, fmt.Sprintf("createdAt %d at %s is newer than %d at %s before it%s",
				e.CreatedAt, e.where(w), prev.CreatedAt, prev.where(w), edge))
		}
		prev = &e
	}
	return out
}

// SizeProblems names every page whose size breaks the page-size rule: a
// page holds exactly want events unless it is the last one, which holds at
// most want and is empty only when it is the first.
func (w *walk) SizeProblems(want int) []string {
	var out []string
	for i, p := range w.Pages {
		// a page whose cursor leads only to an empty last page is the last
		// in what it holds (where the walk ends is FEED-CURSOR-END's)
		last := p.Next == "" || i == len(w.Pages)-2 && w.Complete && len(w.Pages[i+1].Events) == 0 ||
			i == len(w.Pages)-1 && w.endErr != nil // a cycle or "" ends it
		switch {
		case len(p.Events) > want:
			out = append(out, fmt.Sprintf("page %d (%s) holds %d events, more than %d", i+1, p.Resp.Request, len(p.Events), want))
		case !last && len(p.Events) != want:
			out = append(out, fmt.Sprintf("page %d (%s) holds %d events and a nextCursor; only the last page may hold fewer than %d", i+1, p.Resp.Request, len(p.Events), want))
		}
	}
	return out
}

func (w *walk) name() string {
	if w.Limit == "" {
		return "the default page size"
	}
	return "limit=" + w.Limit
}
