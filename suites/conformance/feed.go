package conformance

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	. "github.com/onsi/ginkgo/v2"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/schemas/catalogue"
	"github.com/tcmkit/tcmkit/schemas/jsondoc"
	"github.com/tcmkit/tcmkit/suites/client"
)

// paginationSpecs: GET /api/public-feed pages (default 50, limit capped at
// 200), newest first, walked through nextCursor to its null end; bad
// parameters are clamped or rejected with details.
func (s *suite) paginationSpecs() {
	s.pageSizeSpecs()
	s.walkSpecs()
	s.feedParamSpecs()
}

// pageSizeSpecs: every page a FeedPage, 50 events by default, limit
// honoured and capped at 200.
func (s *suite) pageSizeSpecs() {
	It("answers with a FeedPage on every page of a walk", requires(catalogue.FeedPageSchema), func(ctx SpecContext) {
		// the oracle judges every page, and the answer the walk stopped at
		s.walkOK(s.fullWalk(ctx))
	})

	// the oracle judges the size of every page, of these walks and requests
	// as of every other, against the limit each asked
	It("returns 50 events a page by default, fewer only on the last page", requires(catalogue.FeedPageDefault), func(ctx SpecContext) {
		s.walkOK(s.walk(ctx, ""))
	})

	It("honours limit", requires(catalogue.FeedLimit), func(ctx SpecContext) {
		s.walkOK(s.fullWalk(ctx))
		s.need(s.fetch(ctx, limitRequest("1", s.tg.Pro)), http.StatusOK)
	})

	It("caps limit at 200, on pages reached through a cursor too", requires(catalogue.FeedLimitCap), func(ctx SpecContext) {
		over := strconv.Itoa(schemas.MaxPageSize + 1)
		resp := s.fetch(ctx, pageRequest(over, "", s.tg.Pro))
		s.need(resp, http.StatusOK)
		if _, next := pageShape(resp); next != "" {
			s.fetch(ctx, pageRequest(over, next, s.tg.Pro))
		}
	})
}

// walkSpecs: the walk through nextCursor visits the whole feed once,
// newest first, whatever the page size, to its null end.
func (s *suite) walkSpecs() {
	It("visits the whole feed through nextCursor, each event once", requires(catalogue.FeedCursorWalk, catalogue.EventIDUnique), func(ctx SpecContext) {
		w := s.fullWalk(ctx)
		switch {
		case w.Stopped != nil && w.Stopped.Status == http.StatusOK:
			// a 200 that is no FeedPage is FEED-PAGE-SCHEMA's, one of a
			// thousand events FEED-LIMIT's
			s.Block(fmt.Sprintf("the walk stopped at a page it could not follow (judged by FEED-PAGE-SCHEMA and FEED-LIMIT): %v", w.Err))
		case w.Stopped != nil:
			// a refused key, a throttled one: those rules' answers
			if id, block := s.statusCause(w.Stopped); block != "" {
				s.Block(block)
			} else if id != "" {
				s.Fail(fmt.Sprintf("the walk stopped: %v", w.Err), Problem{Requirement: string(id), Request: w.Stopped.Request.String(),
					Expected: "status 200", Actual: fmt.Sprintf("status %d", w.Stopped.Status)})
			}
			fallthrough
		case w.Err != nil && !errors.Is(w.Err, errEmptyCursor) && w.endErr == nil:
			if w.endErr == nil {
				s.failf("the walk stopped: %v", w.Err)
			}
		}
		s.walkOK(w)
		s.freeWalk(ctx) // the oracle judges each cursor's page against its walk
		s.skipBounded(w, "the walk stopped there (raise --max-pages to walk it all)")
	})

	It("shows the same sequence of events whatever the page size", requires(catalogue.FeedCursorWalk), func(ctx SpecContext) {
		// the oracle compares each whole walk with the earlier ones
		s.walkOK(s.fullWalk(ctx))
		s.walkOK(s.walk(ctx, ""))
	})

	It("orders events newest first, across page boundaries too", requires(catalogue.FeedOrder), func(ctx SpecContext) {
		// the oracle judges the order within each page and across each
		// cursor of these walks
		s.walkOK(s.fullWalk(ctx))
		s.walk(ctx, "")
		s.freeWalk(ctx)
	})

	It("keeps events that share a createdAt apart at a page boundary", requires(catalogue.FeedCursorWalk), func(ctx SpecContext) {
		w := s.fullWalk(ctx)
		s.walkOK(w)
		s.newestFirst(w)
		s.limitHonoured(w)
		s.tieBoundary(ctx, w)
	})

	It("ends a walk on a last page that is exactly full", requires(catalogue.FeedCursorEnd), func(ctx SpecContext) {
		w := s.fullWalk(ctx)
		s.walkOK(w)
		s.skipBounded(w, "the end was not reached (raise --max-pages to walk it all)")
		if w.Err != nil && w.endErr == nil {
			s.Block(fmt.Sprintf("the walk did not reach its end: %v", w.Err))
		}
		s.limitHonoured(w)
		s.fullLastPage(ctx, w)
	})

	It("walks the feed once while new events arrive at its head", requires(catalogue.FeedCursorWalk), func(ctx SpecContext) {
		if !s.virtualClock() {
			skipFor("--control-clock", "needs --control-clock (a tcmkit simulator whose clock the suite moves) to make events arrive during a walk; against another target the walks above are judged under whatever arrives while they run")
		}
		s.walkWhileGrowing(ctx)
	})

	It("sets nextCursor to null exactly at the end", requires(catalogue.FeedCursorEnd), func(ctx SpecContext) {
		w := s.fullWalk(ctx) // the oracle judges where each walk ends
		s.walkOK(w)
		s.skipBounded(w, "the end was not reached (raise --max-pages to walk it all)")
	})
}

// feedParamSpecs: a bad limit or an unknown cursor is clamped or rejected
// with details.
func (s *suite) feedParamSpecs() {
	DescribeTable("answers a limit below 1 or not an integer with a page, or with 400 and an ErrorBody whose details name limit",
		requires(catalogue.FeedBadParam, catalogue.FeedLimitInvalid, catalogue.ErrorBody),
		func(ctx SpecContext, limit string) {
			s.clampOrReject(s.fetch(ctx, limitRequest(limit, s.tg.paramKey())), "limit")
		},
		badLimits(),
	)

	It("answers an unknown cursor with a page, or with 400 and an ErrorBody whose details name cursor", requires(catalogue.FeedBadParam, catalogue.FeedCursorUnknown, catalogue.ErrorBody), func(ctx SpecContext) {
		s.clampOrReject(s.fetch(ctx, unknownCursorRequest(s.tg.paramKey())), "cursor")
	})

	Describe(silent, Label(strict), s.strictFeedParams)
}

// freeWalk is the free key's walk (the isolation specs' too), or an empty
// walk when no free key was given: a feed of another plan and account,
// where a break may hide.
func (s *suite) freeWalk(ctx context.Context) *walk {
	if s.tg.Free == "" {
		return &walk{}
	}
	return s.walkOf(ctx, s.tg.Free, freeWalkLimit)
}

// badLimits are the values of limit below 1 or not an integer.
func badLimits() []TableEntry {
	// one a line: Ginkgo orders entries by line, then by text
	return []TableEntry{
		Entry("limit=0", "0"),
		Entry("limit=-1", "-1"),
		Entry("limit=abc", "abc"),
		Entry("limit=1.5", "1.5"),
	}
}

// unknownCursor is a cursor no server handed out.
const unknownCursor = "tcmkit-no-such-cursor"

func unknownCursorRequest(key string) client.Request {
	return feedRequest(url.Values{"cursor": {unknownCursor}}, key)
}

// walkOK blocks the spec when a walk could not be made at all: it has
// nothing to judge, and why the walk failed is the walk's specs' to say.
func (s *suite) walkOK(w *walk) {
	GinkgoHelper()
	if len(w.Pages) == 0 && w.Err != nil {
		s.Block(fmt.Sprintf("the feed could not be walked: %v", w.Err))
	}
}

// newestFirst blocks a spec that compares places in walks whose events
// are not newest first: where a page boundary falls then says nothing of
// the cursors, and the order is FEED-ORDER's to judge. So do pages without
// a nextCursor (FEED-PAGE-SCHEMA's: the walk cannot know where it ends)
// and ids that two events share (EVENT-ID-UNIQUE's: places are by id).
func (s *suite) newestFirst(ws ...*walk) {
	GinkgoHelper()
	for _, w := range ws {
		for i, p := range w.Pages {
			if p.NoNext {
				s.Block(fmt.Sprintf("page %d of the walk at %s (%s) has no nextCursor (judged by FEED-PAGE-SCHEMA), so where it ends is not known", i+1, w.name(), p.Resp.Request))
			}
		}
		if shared := w.SharedIDs(); len(shared) > 0 {
			s.Block(fmt.Sprintf("two events of the walk at %s share an id (judged by EVENT-ID-UNIQUE), so places in it cannot be compared: %s", w.name(), shared[0]))
		}
		if breaks := w.OrderBreaks(); len(breaks) > 0 {
			s.Block(fmt.Sprintf("the walk at %s is not newest first (judged by FEED-ORDER), so places in it cannot be compared: %s", w.name(), breaks[0]))
		}
	}
}

// skipBounded skips a spec whose walk stopped at --max-pages: it saw only
// part of the feed.
func (s *suite) skipBounded(w *walk, what string) {
	GinkgoHelper()
	if w.Bounded {
		skipFor("--max-pages", fmt.Sprintf("the feed is longer than --max-pages=%d pages of %d events; %s", s.cfg.MaxPages, schemas.MaxPageSize, what))
	}
}

// clampOrReject asks a bad parameter: a page (clamped or ignored) or a
// 400 ErrorBody whose details name it both conform, as the oracle judges.
func (s *suite) clampOrReject(resp *client.Response, param string) {
	GinkgoHelper()
	s.need(resp, http.StatusOK, http.StatusBadRequest)
}

// detailsMention reports whether /details names the parameter anywhere (as
// a key or in a string), whatever its shape.
func detailsMention(resp *client.Response, param string) bool {
	doc, err := resp.JSON()
	if err != nil {
		return false
	}
	d, ok := jsondoc.Get(doc, "/details")
	return ok && strings.Contains(string(jsondoc.Encode(d)), param)
}

// pageShape reads the size and nextCursor of a feed page ("" for null).
func pageShape(resp *client.Response) (int, string) {
	doc, _ := resp.JSON()
	next, _ := jsondoc.String(doc, "/nextCursor")
	return len(jsondoc.Items(doc, "/events")), next
}
