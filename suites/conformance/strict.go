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
	"github.com/tcmkit/tcmkit/suites/client"
)

// simulatorChoices declares the strict specs: what the bundled simulator
// chose where the spec is silent (the open requirements of the catalogue).
// A conforming server may choose otherwise, so they run only when the label
// filter names strict; they keep the simulator to its documentation.
func (s *suite) simulatorChoices() {
	Describe("where the spec is silent, as the simulator chose", Label("strict"), func() {
		It("answers health with a key as without one", Label("health", "HEALTH-AUTH"), func(ctx SpecContext) {
			resp := s.fetch(ctx, client.PostJSON(schemas.PathHealth, "{}", client.Bearer(s.cfg.ProKey)))
			s.expect(resp).To(HaveStatus(http.StatusOK))
			s.expect(resp).To(ConformTo(schemas.HealthBody))
		})
		It("answers another method on the health path with 405 and an ErrorBody", Label("health", "HEALTH-ERROR-STATUS"), func(ctx SpecContext) {
			resp := s.fetch(ctx, client.Get(schemas.PathHealth, nil, ""))
			s.errorAnswer(resp, http.StatusMethodNotAllowed)
		})
		It("orders a VideoEntry's events newest first and its statSamples oldest first", Label("videos", "ENTRY-ORDER"), func(ctx SpecContext) {
			s.noneOf("simulator's choice: events newest first, statSamples oldest first", entryOrder(s.entries(ctx)))
		})
		It("gives a Pro account a history window of 30 days", Label("videos", "ENTRY-WINDOW-MEANING"), func(ctx SpecContext) {
			var wrong []string
			for _, e := range s.entries(ctx) {
				if d, _ := e.doc["historyWindowDays"].(json.Number); d.String() != "30" {
					wrong = append(wrong, fmt.Sprintf("%s %s/historyWindowDays: %s, want 30", e.req, e.ptr, d))
				}
			}
			s.noneOf("simulator's choice: historyWindowDays is 30 for Pro", wrong)
		})
		It("answers a duplicated id once", Label("videos", "VIDEOS-MISSING-CONDITION"), func(ctx SpecContext) {
			known := s.r.knownVideoIDs(ctx, 1)
			if len(known) == 0 {
				Skip("the feed shows no video to ask for")
			}
			resp := s.fetch(ctx, s.r.videos([]string{known[0], known[0]}, s.cfg.ProKey))
			s.expect(resp).To(HaveStatus(http.StatusOK))
			s.noneOf("simulator's choice: a duplicated id is answered once", partition(resp, known))
		})
		DescribeTable("names the cause in error", Label("errors", "ERROR-STRINGS"),
			func(ctx SpecContext, want string, req func(s *suite) client.Request) {
				resp := s.fetch(ctx, req(s))
				doc, _ := resp.JSON()
				obj, _ := doc.(map[string]any)
				s.expect(obj["error"]).To(BeEquivalentTo(want), "%s (status %d): /error", resp.Request, resp.Status)
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
				return s.r.videos([]string{inventedID(0, 24)}, s.needFree())
			}),
			Entry("invalid_body for a bad body", "invalid_body", func(s *suite) client.Request { return s.r.videosRaw(`{}`, s.cfg.ProKey) }),
			Entry("invalid_query for limit=0", "invalid_query", func(s *suite) client.Request { return s.r.feedLimit("0", s.cfg.paramKey()) }),
			Entry("not_found for an unknown path", "not_found", func(s *suite) client.Request {
				return client.Get("/api/no-such-operation", nil, client.Bearer(s.cfg.ProKey))
			}),
		)
		DescribeTable("answers the first error that applies: 401, then 403, then 400", Label("errors", "ERROR-PRECEDENCE"),
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
				return s.r.videosRaw(`{}`, s.needFree())
			}),
		)
	})
}

// needFree returns the free key, or skips the spec.
func (s *suite) needFree() string {
	GinkgoHelper()
	needKey(s.cfg.FreeKey, "free-key", "TCM_FREE_KEY")
	return s.cfg.FreeKey
}

// entry is one VideoEntry of a tracked-videos answer.
type entry struct {
	req string
	ptr string
	doc map[string]any
}

// entries are the VideoEntries of the answer for the ids seen in the feed.
func (s *suite) entries(ctx context.Context) []entry {
	GinkgoHelper()
	ids := s.r.knownVideoIDs(ctx, schemas.MaxVideoIDs)
	if len(ids) == 0 {
		Skip("the feed shows no video to ask for")
	}
	resp := s.fetch(ctx, s.r.videos(ids, s.cfg.ProKey))
	s.expect(resp).To(HaveStatus(http.StatusOK))
	doc, _ := resp.JSON()
	obj, _ := doc.(map[string]any)
	videos, _ := obj["videos"].([]any)
	var out []entry
	for i, v := range videos {
		if m, ok := v.(map[string]any); ok {
			out = append(out, entry{req: resp.Request.String(), ptr: fmt.Sprintf("/videos/%d", i), doc: m})
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
			items, _ := e.doc[f.field].([]any)
			var times []int64
			for _, it := range items {
				m, _ := it.(map[string]any)
				n, _ := m["createdAt"].(json.Number)
				t, err := n.Int64()
				if err != nil {
					continue
				}
				times = append(times, t)
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
