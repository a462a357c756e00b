package conformance

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	. "github.com/onsi/ginkgo/v2"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/schemas/jsondoc"
	"github.com/tcmkit/tcmkit/suites/client"
)

// The pagination checks that place a page boundary where servers get it
// wrong: inside events that share a createdAt, at the end of a last page
// that is exactly full, and while new events arrive at the head.

// tieBoundary asks for a page that ends inside a run of neighbouring
// events with the same createdAt, and for the next page, which must go on
// with the rest of the run: each event once, none skipped (the oracle
// judges both pages against the walk: FEED-CURSOR-WALK). The order of
// events that share a createdAt is the server's (the contract shows none),
// so the page may end on any of them, and the next page may give the rest
// in any order. A page reached through a cursor is preferred: it does not
// move while new events arrive at the head.
func (s *suite) tieBoundary(ctx context.Context, w *walk) {
	GinkgoHelper()
	events := w.Events()
	at := -1
	for i := 1; i < len(events); i++ {
		e, f := events[i-1], events[i]
		if e.HasTime && f.HasTime && e.CreatedAt == f.CreatedAt && e.ID != "" && f.ID != "" {
			if at < 0 || events[at].Page == 0 && e.Page > 0 {
				at = i - 1
			}
			if e.Page > 0 {
				break
			}
		}
	}
	if at < 0 {
		Skip("no two neighbouring events of the feed share a createdAt: there is no tie to place a page boundary in")
	}
	e := events[at]
	tie := map[string]bool{} // every event of the walk with that createdAt
	for _, x := range events {
		if x.HasTime && x.CreatedAt == e.CreatedAt && x.ID != "" {
			tie[x.ID] = true
		}
	}
	cursor := ""
	if e.Page > 0 {
		cursor = w.Pages[e.Page-1].Next
	}
	first := s.fetch(ctx, pageRequest(strconv.Itoa(e.Index+1), cursor, s.tg.Pro))
	s.feedPage(first)
	doc, _ := first.JSON()
	items := jsondoc.Items(doc, "/events")
	shown := map[string]bool{}
	for _, it := range items {
		if id, _ := jsondoc.String(it, "/id"); tie[id] {
			shown[id] = true
		}
	}
	if len(items) == 0 || !tie[lastID(items)] {
		if cursor == "" {
			Skip("the feed's head moved since it was walked, so a first page cannot end on the tie found; no later page has one")
		}
		s.Block(fmt.Sprintf("%s: the page does not end inside the events that share createdAt %d, as the walk's page did (at %s): no boundary inside the tie", first.Request, e.CreatedAt, e.where(w)))
	}
	next, _ := jsondoc.String(doc, "/nextCursor")
	rest := len(tie) - len(shown)
	if rest == 0 || next == "" {
		// the page held the whole tie, or ended the walk above the rest
		// of it (the oracle judges a walk that ends above events the feed
		// showed: FEED-CURSOR-END)
		return
	}
	// the rest of the tie and one event more: a cursor that keeps its
	// place gives the rest first, in any order
	s.feedPage(s.fetch(ctx, pageRequest(strconv.Itoa(min(rest+1, schemas.MaxPageSize)), next, s.tg.Pro)))
}

// feedPage blocks a spec whose answer is no page to judge: a 200 that is
// no FeedPage (FEED-PAGE-SCHEMA judges it), or another status (a 429 the
// suite could not wait out, a 5xx: the specs of those rules judge them),
// or a page two of whose events share an id (EVENT-ID-UNIQUE's: places
// in it are by id). A page longer than its limit fails, as FEED-LIMIT's.
func (s *suite) feedPage(resp *client.Response) {
	GinkgoHelper()
	page, err := readPage(resp, 0)
	if err == nil {
		if shared := (&walk{Pages: []walkPage{page}}).SharedIDs(); len(shared) > 0 {
			s.Block(fmt.Sprintf("two events of %s share an id (judged by EVENT-ID-UNIQUE), so places in it cannot be compared: %s", resp.Request, shared[0]))
		}
		// a page longer than its limit ends elsewhere than asked: its
		// boundary cannot be compared with a walk's (the oracle judges the
		// page: FEED-LIMIT)
		q, _ := url.ParseQuery(resp.Request.Query)
		if n, err := strconv.Atoi(q.Get("limit")); err == nil && n >= 1 && len(page.Events) > min(n, schemas.MaxPageSize) {
			s.Block(fmt.Sprintf("%s holds %d events, more than its limit (judged by FEED-LIMIT): no boundary to compare", resp.Request, len(page.Events)))
		}
	}
	switch {
	case err != nil && resp.Status == http.StatusOK:
		s.Block(fmt.Sprintf("%s answered 200 with no FeedPage (judged by FEED-PAGE-SCHEMA): %v", resp.Request, err))
	case resp.Status != http.StatusOK:
		// a limiter's answer, or an error: no page to place a boundary in
		why := ""
		if resp.Note != "" { // the client's own word (a wait past --max-wait)
			why = " (" + resp.Note + ")"
		}
		s.Block(fmt.Sprintf("%s answered %d%s, no page to judge: %s", resp.Request, resp.Status, why, resp.Excerpt()))
	}
}

// limitHonoured blocks a spec that asks for pages of a size where the
// walk's own pages are not of the size asked (FEED-LIMIT judges it).
func (s *suite) limitHonoured(w *walk) {
	GinkgoHelper()
	if size, err := strconv.Atoi(w.Limit); err == nil {
		if problems := w.SizeProblems(size); len(problems) > 0 {
			s.Block("the feed does not give the page size asked (judged by FEED-LIMIT): " + problems[0])
		}
	}
}

// isPrefix reports whether the page's events are, by id, the first of the
// walk's page.
func isPrefix(items []any, events []walkEvent) bool {
	if len(items) > len(events) {
		return false
	}
	for i, it := range items {
		if id, _ := jsondoc.String(it, "/id"); id != events[i].ID {
			return false
		}
	}
	return true
}

func lastID(items []any) string {
	id, _ := jsondoc.String(items[len(items)-1], "/id")
	return id
}

// fullLastPage asks for the walk's last page again with exactly as many
// events as it holds: the page is full, and it is the last. A cursor it
// hands out is followed: the oracle judges where it leads (an empty last
// page behind a handed-out cursor, a walk that ends above events the feed
// showed: FEED-CURSOR-END).
func (s *suite) fullLastPage(ctx context.Context, w *walk) {
	GinkgoHelper()
	last := w.Pages[len(w.Pages)-1]
	if len(last.Events) == 0 {
		Skip("the walk's last page is empty: the spec on where a walk ends judges it")
	}
	cursor := ""
	if len(w.Pages) > 1 {
		cursor = w.Pages[len(w.Pages)-2].Next
	}
	resp := s.fetch(ctx, pageRequest(strconv.Itoa(len(last.Events)), cursor, s.tg.Pro))
	s.feedPage(resp)
	doc, _ := resp.JSON()
	items := jsondoc.Items(doc, "/events")
	next, _ := jsondoc.String(doc, "/nextCursor")
	if len(items) != len(last.Events) || lastID(items) != last.Events[len(last.Events)-1].ID {
		if cursor == "" {
			Skip("the feed's head moved since it was walked, and the feed is one page long")
		}
		if next == "" && isPrefix(items, last.Events) {
			// the same first events, then a null nextCursor before the
			// events the walk saw after them: the walk ended too soon
			// (the oracle judges it: FEED-CURSOR-END)
			return
		}
		// the same cursor read twice gave other events: whether a walk
		// shows each event once is FEED-CURSOR-WALK's to judge, and this
		// page is not the exactly full last page this spec needs
		s.Block(fmt.Sprintf("%s: %d events, not the %d the walk's last page held after the same cursor (judged by FEED-CURSOR-WALK)", resp.Request, len(items), len(last.Events)))
	}
	if next != "" {
		s.fetch(ctx, pageRequest(strconv.Itoa(len(items)), next, s.tg.Pro))
	}
}

// walkWhileGrowing reads the feed's first page, lets two hours pass on the
// target's clock (new events are recorded at the head meanwhile), and
// follows the cursor for a few pages: the oracle judges each page against
// its walk (an event twice, or new ones behind the cursor, as when a
// cursor is an offset into the feed).
func (s *suite) walkWhileGrowing(ctx context.Context) {
	GinkgoHelper()
	const size, pages = "50", 5
	first := s.fetch(ctx, pageRequest(size, "", s.tg.Pro))
	if err := s.targetClock().Wait(ctx, 2*time.Hour); err != nil {
		s.failf("moving the target's clock: %v", err)
	}
	w := walkFeed(ctx, size, func(ctx context.Context, cursor string) (*client.Response, error) {
		if cursor == "" {
			return first, nil
		}
		return s.c.Cached(ctx, pageRequest(size, cursor, s.tg.Pro))
	}, pages, 0)
	s.walkOK(w)
}
