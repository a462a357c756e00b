package conformance

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/schemas/catalogue"
	"github.com/tcmkit/tcmkit/schemas/jsondoc"
	"github.com/tcmkit/tcmkit/suites/client"
	"github.com/tcmkit/tcmkit/suites/oracle"
)

// Every strict spec of the suite is declared in this file: what the bundled
// simulator chose where the spec is silent (the open requirements of the
// catalogue), and exact figures where the spec allows a range. A conforming
// server may choose otherwise, so they run only when the label filter names
// strict; they keep the simulator to its documentation.
//
// Most stand in their own container at the end of the suite. Those that
// judge what a group of specs fetched (the rate-limit burst, the feed
// parameters, the events, the error answers) are declared at the end of
// that group's container, by the group calling the function here: they
// share its state (the burst runs once, in the rate-limit container's
// Ordered and Serial run) and keep their place and full name in reports.

// strictRateLimit: the 21st request of a fresh window, exactly, gets 429.
func (s *suite) strictRateLimit(rl *rateLimit) {
	It("answers exactly the 21st feed request of a fresh window with 429", Label(strict), requires(catalogue.RateLimit429), func(ctx SpecContext) {
		b := rl.burst(ctx)
		if b.throttled == nil || b.passed != b.apart {
			s.failf("%s: %d feed requests passed before the first 429, want exactly %d", b.describe(), b.passed, b.apart)
		}
	})
}

// strictFeedParams: a bad limit and an unknown cursor are rejected with 400
// and details that name them, not clamped or ignored.
func (s *suite) strictFeedParams() {
	// rejected wants a 400 ErrorBody whose details name param.
	rejected := func(resp *client.Response, param string) {
		GinkgoHelper()
		s.errorAnswer(resp, http.StatusBadRequest)
		s.expect(detailsMention(resp, param)).To(BeTrue(), "%s: details do not name %s: %s", resp.Request, param, resp.Excerpt())
	}
	DescribeTable("rejects a limit below 1 or not an integer with 400",
		requires(catalogue.FeedLimitInvalid, catalogue.FeedBadParam),
		func(ctx SpecContext, limit string) {
			rejected(s.fetch(ctx, limitRequest(limit, s.tg.paramKey())), "limit")
		},
		badLimits(),
	)
	It("rejects an unknown cursor with 400", requires(catalogue.FeedCursorUnknown, catalogue.FeedBadParam), func(ctx SpecContext) {
		rejected(s.fetch(ctx, unknownCursorRequest(s.tg.paramKey())), "cursor")
	})
}

// strictEventTypes: the feed and entries show every event type.
func (s *suite) strictEventTypes() {
	It("show all 11 types in the feed", Label(strict), requires(catalogue.EventTypes), func(ctx SpecContext) {
		seen := map[string]bool{}
		s.eventSources(ctx)
		for _, resp := range s.c.Seen() {
			doc, _ := resp.JSON()
			jsondoc.Walk(doc, func(ptr string, v any) {
				if jsondoc.Last(ptr) == "type" && strings.Contains(ptr, "/events/") {
					if t, ok := v.(string); ok {
						seen[t] = true
					}
				}
			})
		}
		var missing []string
		for _, t := range schemas.EventTypes {
			if !seen[t] {
				missing = append(missing, t)
			}
		}
		s.expect(missing).To(BeEmpty(), "event types the feed and entries never showed")
	})
}

// unknownPath is a path of no operation.
const unknownPath = "/api/no-such-operation"

// strictUnknownPath: an unknown path gets a JSON 404 ErrorBody.
func (s *suite) strictUnknownPath() {
	It("answers an unknown path with an ErrorBody", Label(strict), requires(catalogue.ErrorBody), func(ctx SpecContext) {
		resp := s.fetch(ctx, client.Get(unknownPath, nil, client.Bearer(s.tg.Pro)))
		s.errorAnswer(resp, http.StatusNotFound)
		if ct := resp.Header.Values("Content-Type"); len(ct) != 1 || !oracle.IsJSONMediaType(ct[0]) {
			s.Fail(fmt.Sprintf("%s (status %d): Content-Type %q, want a JSON media type (application/json)", resp.Request, resp.Status, ct),
				Problem{Requirement: string(catalogue.ContentTypeJSON), Request: resp.Request.String(), Expected: "a JSON media type (application/json)", Actual: fmt.Sprintf("Content-Type %q", ct)})
		}
	})
}

// simulatorChoices declares the strict specs that judge requests of their
// own: health, VideoEntries, error strings and the precedence of errors.
func (s *suite) simulatorChoices() {
	It("answers health with a key as without one", Label("health"), requires(catalogue.HealthAuth), func(ctx SpecContext) {
		resp := s.fetch(ctx, client.PostJSON(schemas.PathHealth, "{}", client.Bearer(s.tg.Pro)))
		s.expect(resp).To(HaveStatus(http.StatusOK)) // the oracle judges its HealthBody
	})
	It("answers another method on the health path with 405 and an ErrorBody", Label("health"), requires(catalogue.HealthErrorStatus), func(ctx SpecContext) {
		resp := s.fetch(ctx, client.Get(schemas.PathHealth, nil, ""))
		s.errorAnswer(resp, http.StatusMethodNotAllowed)
	})
	It("orders a VideoEntry's events newest first and its statSamples oldest first", Label("videos"), requires(catalogue.EntryOrder), func(ctx SpecContext) {
		s.noneOf("simulator's choice: events newest first, statSamples oldest first", entryOrder(s.entries(ctx)))
	})
	It("gives a Pro account a history window of 30 days", Label("videos"), requires(catalogue.EntryWindowMeaning), func(ctx SpecContext) {
		var wrong []string
		for _, e := range s.entries(ctx) {
			v, _ := jsondoc.Get(e.doc, "/historyWindowDays")
			if d, _ := v.(json.Number); d.String() != "30" {
				wrong = append(wrong, fmt.Sprintf("%s %s/historyWindowDays: %s, want 30", e.req, e.ptr, d))
			}
		}
		s.noneOf("simulator's choice: historyWindowDays is 30 for Pro", wrong)
	})
	It("answers a duplicated id once", Label("videos"), requires(catalogue.VideosMissingCondition), func(ctx SpecContext) {
		known := s.knownVideoIDs(ctx, 1)
		if len(known) == 0 {
			Skip("the feed shows no video to ask for")
		}
		resp := s.fetch(ctx, videosRequest([]string{known[0], known[0]}, s.tg.Pro))
		s.expect(resp).To(HaveStatus(http.StatusOK))
		if served, _ := answeredIDs(resp); len(served) != 1 {
			s.failf("%s: %d VideoEntries for %q asked twice (simulator's choice: a duplicated id is answered once)", resp.Request, len(served), known[0])
		}
	})
	DescribeTable("names the cause in error", Label("errors"), requires(catalogue.ErrorStrings),
		func(ctx SpecContext, want string, req func(s *suite) client.Request) {
			resp := s.fetch(ctx, req(s))
			doc, _ := resp.JSON()
			got, _ := jsondoc.Get(doc, "/error")
			s.expect(got).To(BeEquivalentTo(want), "%s (status %d): /error", resp.Request, resp.Status)
		},
		Entry("missing_api_key without a key", "missing_api_key", func(s *suite) client.Request { return client.Get(schemas.PathFeed, nil, "") }),
		Entry("malformed_api_key for a token without the prefix", "malformed_api_key", func(s *suite) client.Request {
			req, _ := s.authRequest("feed", credentialNamed(noPrefix))
			return req
		}),
		Entry("invalid_api_key for an unknown key", "invalid_api_key", func(s *suite) client.Request {
			req, _ := s.authRequest("feed", credentialNamed(unknownKey))
			return req
		}),
		Entry("pro_plan_required for a free key", "pro_plan_required", func(s *suite) client.Request {
			return videosRequest([]string{inventedID(0, 24)}, s.needFree())
		}),
		Entry("invalid_body for a bad body", "invalid_body", func(s *suite) client.Request { return videosBody(`{}`, s.tg.Pro) }),
		Entry("invalid_query for limit=0", "invalid_query", func(s *suite) client.Request { return limitRequest("0", s.tg.paramKey()) }),
		Entry("not_found for an unknown path", "not_found", func(s *suite) client.Request {
			return client.Get(unknownPath, nil, client.Bearer(s.tg.Pro))
		}),
	)
	DescribeTable("answers the first error that applies: 401, then 403, then 400", Label("errors"), requires(catalogue.ErrorPrecedence),
		func(ctx SpecContext, want int, req func(s *suite) client.Request) {
			s.errorAnswer(s.fetch(ctx, req(s)), want)
		},
		Entry("no key and a bad body: 401", http.StatusUnauthorized, func(s *suite) client.Request {
			return client.PostJSON(schemas.PathVideos, `{}`, "")
		}),
		Entry("no key and a bad limit: 401", http.StatusUnauthorized, func(s *suite) client.Request {
			return client.Get(schemas.PathFeed, map[string][]string{"limit": {"0"}}, "")
		}),
		Entry("a free key and a bad body: 403", http.StatusForbidden, func(s *suite) client.Request {
			return videosBody(`{}`, s.needFree())
		}),
	)
}

// entry is one VideoEntry of a tracked-videos answer.
type entry struct {
	req string
	ptr string
	doc any
}

// entries are the VideoEntries of the answer for the ids seen in the feed.
func (s *suite) entries(ctx context.Context) []entry {
	GinkgoHelper()
	ids := s.knownVideoIDs(ctx, schemas.MaxVideoIDs)
	if len(ids) == 0 {
		Skip("the feed shows no video to ask for")
	}
	resp := s.fetch(ctx, videosRequest(ids, s.tg.Pro))
	s.expect(resp).To(HaveStatus(http.StatusOK))
	doc, _ := resp.JSON()
	var out []entry
	for i, v := range jsondoc.Items(doc, "/videos") {
		if jsondoc.Object(v, "") != nil {
			out = append(out, entry{req: resp.Request.String(), ptr: jsondoc.Join("/videos", i), doc: v})
		}
	}
	return out
}

// entryOrder names events out of newest-first order and stat samples out
// of oldest-first order.
func entryOrder(es []entry) []string {
	var out []string
	for _, e := range es {
		for _, f := range []struct {
			field  string
			newest bool
		}{{"events", true}, {"statSamples", false}} {
			var times []int64
			for _, it := range jsondoc.Items(e.doc, "/"+f.field) {
				if t, ok := jsondoc.Int(it, "/createdAt"); ok {
					times = append(times, t)
				}
			}
			sorted := slices.IsSorted(times)
			if f.newest {
				sorted = slices.IsSortedFunc(times, func(a, b int64) int { return cmp.Compare(b, a) })
			}
			if !sorted {
				order := map[bool]string{true: "newest first", false: "oldest first"}[f.newest]
				out = append(out, fmt.Sprintf("%s %s/%s: createdAt not %s: %s", e.req, e.ptr, f.field, order, strings.Trim(fmt.Sprint(times), "[]")))
			}
		}
	}
	return out
}
