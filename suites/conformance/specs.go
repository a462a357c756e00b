package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/suites/client"
	"github.com/tcmkit/tcmkit/suites/report"
)

// Register declares every spec of the suite under one top-level container,
// so that they keep their declared order (the rate-limit specs first, while
// the burst key's window is fresh) unless the user asks for
// --randomize-all. Call it at the top level of a Ginkgo suite; cfg may be
// filled later, before the first spec runs (a BeforeSuite may do it).
//
// Labels: lower-case ones are features (health, auth, pro, pagination,
// events, videos, rate-limit, errors, strict); upper-case ones are the ids
// of the requirements a spec checks, from schemas/catalogue.
func Register(cfg *Config) bool {
	s := &suite{cfg: cfg}
	Describe("Tracked-Channel Monitoring API", func() {
		BeforeEach(s.start)
		AfterEach(s.finish)
		s.rateLimit()
		s.healthSpecs()
		s.authSpecs()
		s.proSpecs()
		s.paginationSpecs()
		s.eventSpecs()
		s.videoSpecs()
		s.errorSpecs()
		s.simulatorChoices()
	})
	return true
}

// suite is what the spec bodies share.
type suite struct {
	cfg *Config
	r   *run
}

func (s *suite) start(ctx SpecContext) {
	s.r = s.cfg.state()
	if err := s.cfg.Preflight(ctx); err != nil {
		AbortSuite(s.r.red.String("the run errored (the target was not judged): " + err.Error()))
	}
}

// finish records what the spec sent, as report entries, already redacted.
func (s *suite) finish() {
	if s.r == nil {
		return
	}
	n, transcript := s.r.c.Take()
	AddReportEntry(report.EntryRequests, n, ReportEntryVisibilityFailureOrVerbose)
	if transcript != "" {
		AddReportEntry(report.EntryTranscript, transcript, ReportEntryVisibilityNever)
	}
}

// expect asserts through the redacting Gomega of the run.
func (s *suite) expect(actual any, extra ...any) Assertion {
	GinkgoHelper()
	return s.r.g.Expect(actual, extra...)
}

func (s *suite) fetch(ctx context.Context, req client.Request) *client.Response {
	GinkgoHelper()
	return s.r.fetch(ctx, req)
}

// fail fails the spec with findings, if there are any.
func (s *suite) none(rule string, fs []finding) {
	GinkgoHelper()
	if len(fs) > 0 {
		Fail(s.r.red.String(describeFindings(rule, fs)))
	}
}

// noneOf fails the spec with plain problems, if there are any.
func (s *suite) noneOf(rule string, problems []string) {
	GinkgoHelper()
	if len(problems) > 0 {
		Fail(s.r.red.String(rule + "\n  " + strings.Join(problems, "\n  ")))
	}
}

// needKey skips a spec whose key was not given, saying how to give it.
func needKey(key, flag, env string) {
	GinkgoHelper()
	if key == "" {
		Skip(fmt.Sprintf("needs --%s (or %s)", flag, env))
	}
}

// errorAnswer checks a response that must be an error of one status.
func (s *suite) errorAnswer(resp *client.Response, status int) {
	GinkgoHelper()
	s.expect(resp).To(HaveStatus(status))
	s.expect(resp).To(BeErrorBody())
}

// ---------------------------------------------------------------- health

func (s *suite) healthSpecs() {
	Describe("POST /api/public/health", Label("health"), func() {
		It("answers {} with 200 and {\"status\":\"ok\"}", Label("HEALTH-OK"), func(ctx SpecContext) {
			resp := s.fetch(ctx, s.r.health())
			s.expect(resp).To(HaveStatus(http.StatusOK))
			s.expect(resp).To(ConformTo(schemas.HealthBody))
		})
	})
}

// ---------------------------------------------------------------- auth

// credential is one Authorization header a spec sends.
type credential struct {
	name  string
	label string                             // the requirement it checks
	auth  func(cfg *Config) (string, string) // header value, or a skip reason
}

// The credentials that must get 401; strict specs pick some by name.
const (
	noHeader   = "no Authorization header"
	noPrefix   = "a token without the key prefix"
	unknownKey = "a well-formed key that belongs to no account"
)

func credentials() []credential {
	return []credential{
		{noHeader, "AUTH-MISSING", func(*Config) (string, string) { return "", "" }},
		{"an empty bearer token", "AUTH-MALFORMED", func(*Config) (string, string) { return "Bearer ", "" }},
		{"a scheme other than Bearer (with the valid Pro key)", "AUTH-MALFORMED", func(cfg *Config) (string, string) {
			return "Token " + cfg.ProKey, ""
		}},
		{noPrefix, "AUTH-MALFORMED", func(cfg *Config) (string, string) { return "Bearer " + cfg.unprefixedToken(), "" }},
		{unknownKey, "AUTH-UNKNOWN", func(cfg *Config) (string, string) { return "Bearer " + cfg.unknownKey(), "" }},
		{"the revoked key", "AUTH-REVOKED", func(cfg *Config) (string, string) {
			if cfg.RevokedKey == "" {
				return "", "needs --revoked-key (or TCM_REVOKED_KEY)"
			}
			return client.Bearer(cfg.RevokedKey), ""
		}},
	}
}

func credentialNamed(name string) credential {
	for _, c := range credentials() {
		if c.name == name {
			return c
		}
	}
	panic("no credential " + name)
}

// authRequest is the request of one operation with one credential.
func (s *suite) authRequest(op string, cr credential) (client.Request, string) {
	auth, skip := cr.auth(s.cfg)
	var req client.Request
	if op == "feed" {
		req = client.Get(schemas.PathFeed, nil, auth)
	} else {
		// a valid body, so that the key is the only thing wrong
		req = client.PostJSON(schemas.PathVideos, `{"videoIds":["`+inventedID(0, 24)+`"]}`, auth)
	}
	return req, skip
}

func (s *suite) authSpecs() {
	Describe("authentication", Label("auth"), func() {
		for _, op := range []string{"feed", "videos"} {
			path := map[string]string{"feed": "GET " + schemas.PathFeed, "videos": "POST " + schemas.PathVideos}[op]
			Describe(path, func() {
				for _, cr := range credentials() {
					It("answers "+cr.name+" with 401 and an ErrorBody", Label(cr.label, "ERROR-BODY"), func(ctx SpecContext) {
						req, skip := s.authRequest(op, cr)
						if skip != "" {
							Skip(skip)
						}
						s.errorAnswer(s.fetch(ctx, req), http.StatusUnauthorized)
					})
				}
				It("answers the valid Pro key with 200", Label("AUTH-VALID"), func(ctx SpecContext) {
					var req client.Request
					if op == "feed" {
						req = s.r.feed(nil, s.cfg.ProKey)
					} else {
						req = s.r.videos([]string{inventedID(0, 24)}, s.cfg.ProKey)
					}
					s.expect(s.fetch(ctx, req)).To(HaveStatus(http.StatusOK))
				})
			})
		}
	})
}

// ---------------------------------------------------------------- pro

func (s *suite) proSpecs() {
	Describe("the Pro plan", Label("pro"), func() {
		It("answers tracked videos for a free key with 403 and an ErrorBody", Label("PRO-GATE", "ERROR-BODY"), func(ctx SpecContext) {
			needKey(s.cfg.FreeKey, "free-key", "TCM_FREE_KEY")
			s.errorAnswer(s.fetch(ctx, s.r.videos([]string{inventedID(0, 24)}, s.cfg.FreeKey)), http.StatusForbidden)
		})
		It("serves the feed to a free key", Label("PRO-GATE"), func(ctx SpecContext) {
			needKey(s.cfg.FreeKey, "free-key", "TCM_FREE_KEY")
			// the body's schema is the pagination specs' concern
			s.expect(s.fetch(ctx, s.r.feed(nil, s.cfg.FreeKey))).To(HaveStatus(http.StatusOK))
		})
	})
}

// ---------------------------------------------------------------- pagination

// walkOK fails the spec when a walk could not be made at all.
func (s *suite) walkOK(w *walk) {
	GinkgoHelper()
	if len(w.Pages) == 0 && w.Err != nil {
		Fail(s.r.red.String("the feed could not be walked: " + w.Err.Error()))
	}
}

func (s *suite) paginationSpecs() {
	maxSize := strconv.Itoa(schemas.MaxPageSize)
	Describe("GET /api/public-feed pagination", Label("pagination"), func() {
		It("answers with a FeedPage on every page of a walk", Label("FEED-PAGE-SCHEMA"), func(ctx SpecContext) {
			w := s.r.fullWalk(ctx)
			s.walkOK(w)
			for _, p := range w.Pages {
				s.expect(p.Resp).To(ConformTo(schemas.FeedPage))
			}
			if w.Err != nil && w.endErr == nil { // where a walk ends is FEED-CURSOR-END's concern
				Fail(s.r.red.String("the walk stopped: " + w.Err.Error()))
			}
		})

		It("returns 50 events a page by default, fewer only on the last page", Label("FEED-PAGE-DEFAULT"), func(ctx SpecContext) {
			w := s.r.walk(ctx, "")
			s.walkOK(w)
			s.noneOf(fmt.Sprintf("rule: without limit a page holds %d events; only the last page (null nextCursor) may hold fewer", schemas.DefaultPageSize),
				w.SizeProblems(schemas.DefaultPageSize))
		})

		It("honours limit", Label("FEED-LIMIT"), func(ctx SpecContext) {
			w := s.r.fullWalk(ctx)
			s.walkOK(w)
			s.noneOf(fmt.Sprintf("rule: limit=%s gives pages of %s events; only the last page may hold fewer", maxSize, maxSize),
				w.SizeProblems(schemas.MaxPageSize))
			one := s.fetch(ctx, s.r.feedLimit("1", s.cfg.ProKey))
			s.expect(one).To(HaveStatus(http.StatusOK))
			size, next := pageShape(one)
			if size != 1 && !(size == 0 && next == "") {
				Fail(s.r.red.String(fmt.Sprintf("%s: %d events, want 1 (rule: limit sets the number of events per page)", one.Request, size)))
			}
		})

		It("caps limit at 200", Label("FEED-LIMIT-CAP"), func(ctx SpecContext) {
			over := strconv.Itoa(schemas.MaxPageSize + 1)
			resp := s.fetch(ctx, s.r.feedLimit(over, s.cfg.ProKey))
			s.expect(resp).To(HaveStatus(http.StatusOK), "rule: larger values of limit are capped, not rejected")
			size, next := pageShape(resp)
			switch {
			case size > schemas.MaxPageSize:
				Fail(s.r.red.String(fmt.Sprintf("%s: %d events, want at most %d (rule: limit is capped at %d)", resp.Request, size, schemas.MaxPageSize, schemas.MaxPageSize)))
			case size < schemas.MaxPageSize && next != "":
				Fail(s.r.red.String(fmt.Sprintf("%s: %d events and a nextCursor, want %d (rule: a limit above %d is capped at %d)", resp.Request, size, schemas.MaxPageSize, schemas.MaxPageSize, schemas.MaxPageSize)))
			}
		})

		It("visits the whole feed through nextCursor, each event once", Label("FEED-CURSOR-WALK", "EVENT-ID-UNIQUE"), func(ctx SpecContext) {
			w := s.r.fullWalk(ctx)
			s.walkOK(w)
			if w.Err != nil && !errors.Is(w.Err, errEmptyCursor) {
				Fail(s.r.red.String("the walk stopped: " + w.Err.Error()))
			}
			s.noneOf("rule: a cursor walk visits each event once", w.Repeats())
			if w.Bounded {
				Skip(fmt.Sprintf("the feed is longer than --max-pages=%d pages of %d events; the walk stopped there (raise --max-pages to walk it all)", s.cfg.MaxPages, schemas.MaxPageSize))
			}
		})

		It("shows the same sequence of events whatever the page size", Label("FEED-CURSOR-WALK"), func(ctx SpecContext) {
			full, small := s.r.fullWalk(ctx), s.r.walk(ctx, "")
			s.walkOK(full)
			s.walkOK(small)
			s.noneOf("rule: walks with different page sizes see the same events (new ones may only arrive at the head)", compareWalks(full, small))
		})

		It("orders events newest first, across page boundaries too", Label("FEED-ORDER"), func(ctx SpecContext) {
			full, small := s.r.fullWalk(ctx), s.r.walk(ctx, "")
			s.walkOK(full)
			s.noneOf("rule: events are newest first by createdAt (ties allowed)", append(full.OrderBreaks(), small.OrderBreaks()...))
		})

		It("sets nextCursor to null exactly at the end", Label("FEED-CURSOR-END"), func(ctx SpecContext) {
			w := s.r.fullWalk(ctx)
			s.walkOK(w)
			s.noneOf("rule: nextCursor is null when there are no more pages, and only then", w.EndProblems())
			if w.Bounded {
				Skip(fmt.Sprintf("the feed is longer than --max-pages=%d pages of %d events; the end was not reached (raise --max-pages to walk it all)", s.cfg.MaxPages, schemas.MaxPageSize))
			}
		})

		DescribeTable("answers a limit below 1 or not an integer with a page, or with 400 and an ErrorBody whose details name limit",
			Label("FEED-BAD-PARAM", "FEED-LIMIT-INVALID"),
			func(ctx SpecContext, limit string) {
				s.clampOrReject(s.fetch(ctx, s.r.feedLimit(limit, s.cfg.paramKey())), "limit")
			},
			Entry("limit=0", "0"),
			Entry("limit=-1", "-1"),
			Entry("limit=abc", "abc"),
			Entry("limit=1.5", "1.5"),
		)

		It("answers an unknown cursor with a page, or with 400 and an ErrorBody whose details name cursor", Label("FEED-BAD-PARAM", "FEED-CURSOR-UNKNOWN"), func(ctx SpecContext) {
			s.clampOrReject(s.fetch(ctx, s.r.feed(url.Values{"cursor": {unknownCursor}}, s.cfg.paramKey())), "cursor")
		})

		Describe("where the spec is silent, as the simulator chose", Label("strict"), func() {
			DescribeTable("rejects a limit below 1 or not an integer with 400",
				Label("FEED-LIMIT-INVALID", "FEED-BAD-PARAM"),
				func(ctx SpecContext, limit string) {
					resp := s.fetch(ctx, s.r.feedLimit(limit, s.cfg.paramKey()))
					s.errorAnswer(resp, http.StatusBadRequest)
					s.expect(detailsMention(resp, "limit")).To(BeTrue(), "%s: details do not name limit: %s", resp.Request, resp.Excerpt())
				},
				Entry("limit=0", "0"),
				Entry("limit=-1", "-1"),
				Entry("limit=abc", "abc"),
				Entry("limit=1.5", "1.5"),
			)
			It("rejects an unknown cursor with 400", Label("FEED-CURSOR-UNKNOWN", "FEED-BAD-PARAM"), func(ctx SpecContext) {
				resp := s.fetch(ctx, s.r.feed(url.Values{"cursor": {unknownCursor}}, s.cfg.paramKey()))
				s.errorAnswer(resp, http.StatusBadRequest)
				s.expect(detailsMention(resp, "cursor")).To(BeTrue(), "%s: details do not name cursor: %s", resp.Request, resp.Excerpt())
			})
		})
	})
}

// unknownCursor is a cursor no server handed out.
const unknownCursor = "tcmkit-no-such-cursor"

// clampOrReject accepts either answer the spec allows to a bad parameter: a
// page (the server clamped or ignored it), or a 400 ErrorBody whose details
// say which parameter is invalid.
func (s *suite) clampOrReject(resp *client.Response, param string) {
	GinkgoHelper()
	switch resp.Status {
	case http.StatusOK:
		s.expect(resp).To(ConformTo(schemas.FeedPage))
		if size, _ := pageShape(resp); size > schemas.MaxPageSize {
			Fail(s.r.red.String(fmt.Sprintf("%s: %d events, more than %d", resp.Request, size, schemas.MaxPageSize)))
		}
	case http.StatusBadRequest:
		s.expect(resp).To(BeErrorBody())
		if !detailsMention(resp, param) {
			Fail(s.r.red.String(fmt.Sprintf("%s (status 400): /details does not name the parameter %q (rule: for 400 on the feed, details says which query parameters are invalid)\nresponse body: %s",
				resp.Request, param, resp.Excerpt())))
		}
	default:
		Fail(s.r.red.String(fmt.Sprintf("%s: status %d, want 200 (the parameter clamped or ignored) or 400 (rejected)\nresponse body: %s", resp.Request, resp.Status, resp.Excerpt())))
	}
}

// detailsMention reports whether /details names the parameter anywhere (as
// a key or in a string), whatever its shape.
func detailsMention(resp *client.Response, param string) bool {
	doc, err := resp.JSON()
	if err != nil {
		return false
	}
	obj, _ := doc.(map[string]any)
	d, ok := obj["details"]
	if !ok {
		return false
	}
	raw, _ := json.Marshal(d)
	return strings.Contains(string(raw), param)
}

// pageShape reads the size and nextCursor of a feed page ("" for null).
func pageShape(resp *client.Response) (int, string) {
	doc, _ := resp.JSON()
	obj, _ := doc.(map[string]any)
	evs, _ := obj["events"].([]any)
	next, _ := obj["nextCursor"].(string)
	return len(evs), next
}

// ---------------------------------------------------------------- events

// eventSources are the responses whose events the event specs judge: every
// page of the full walk and the tracked-videos answer for up to 20 ids
// seen in the feed.
func (s *suite) eventSources(ctx context.Context) []judged {
	GinkgoHelper()
	w := s.r.fullWalk(ctx)
	s.walkOK(w)
	var js []judged
	for _, p := range w.Pages {
		js = append(js, judged{p.Resp, schemas.FeedPage})
	}
	if ids := s.r.knownVideoIDs(ctx, schemas.MaxVideoIDs); len(ids) > 0 {
		if resp := s.fetch(ctx, s.r.videos(ids, s.cfg.ProKey)); resp.Status == http.StatusOK {
			js = append(js, judged{resp, schemas.VideosResponse})
		}
	}
	return js
}

func (s *suite) eventSpecs() {
	Describe("events, in the feed and in VideoEntries", Label("events"), func() {
		It("validate against the schema of their type", Label("EVENT-SCHEMA"), func(ctx SpecContext) {
			s.none("rule: every event has the fields of the Event table for its type", schemaFindings(s.eventSources(ctx), inEvent))
		})
		It("have one of the 11 types and no other", Label("EVENT-TYPES"), func(ctx SpecContext) {
			s.none("rule: type is one of "+strings.Join(schemas.EventTypes, ", "), schemaFindings(s.eventSources(ctx), isTypeRule))
		})
		It("carry a video unless they are channel-level, and then none", Label("EVENT-CHANNEL-NO-VIDEO"), func(ctx SpecContext) {
			s.none("rule: subscriber_change, channel_renamed and channel_avatar_changed carry no video; the other types carry one",
				schemaFindings(s.eventSources(ctx), isVideoPresenceRule))
		})
		It("have timestamps that are integers of epoch milliseconds", Label("TIMESTAMP-EPOCH-MS"), func(ctx SpecContext) {
			js := s.eventSources(ctx)
			fs := schemaFindings(js, func(v schemas.Violation) bool { return about(v, timestampFields...) })
			fs = append(fs, timestampFindings(js, s.now(ctx))...)
			s.none("rule: createdAt, publishedAt and firstSeenAt are integers of Unix epoch milliseconds", fs)
		})
		It("have counts that are integers >= 0 or null", Label("COUNT-NONNEG-OR-NULL"), func(ctx SpecContext) {
			s.none("rule: viewCount, likeCount, commentCount and oldSubscriberCount are integers >= 0 or null, and present; newSubscriberCount is an integer >= 0",
				schemaFindings(s.eventSources(ctx), isCountRule))
		})
		It("have URIs where the contract says URI", Label("URI-FORMAT"), func(ctx SpecContext) {
			s.none("rule: fields typed URI hold URIs (ChannelRef.thumbnailUrl may be null)", schemaFindings(s.eventSources(ctx), isURIRule))
		})
		It("have ids that are unique in the feed and in each VideoEntry", Label("EVENT-ID-UNIQUE"), func(ctx SpecContext) {
			js := s.eventSources(ctx)
			s.noneOf("rule: no two events of the feed share an id", s.r.fullWalk(ctx).Repeats())
			s.noneOf("rule: no two events of a VideoEntry share an id", entryEventRepeats(js))
		})
		It("show all 11 types in the feed", Label("strict", "EVENT-TYPES"), func(ctx SpecContext) {
			seen := map[string]bool{}
			for _, j := range s.eventSources(ctx) {
				doc, _ := j.resp.JSON()
				visit(doc, "", func(ptr string, v any) {
					if lastToken(ptr) == "type" && strings.Contains(ptr, "/events/") {
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
	})
}

// now is the later of the wall clock and the target's clock.
func (s *suite) now(ctx context.Context) time.Time {
	now := time.Now()
	if s.cfg.Clock != nil {
		if t, err := s.cfg.Clock.Now(ctx); err == nil && t.After(now) {
			now = t
		}
	}
	return now
}

// entryEventRepeats names event ids repeated inside one VideoEntry.
func entryEventRepeats(js []judged) []string {
	var out []string
	for _, j := range js {
		if j.res != schemas.VideosResponse {
			continue
		}
		doc, _ := j.resp.JSON()
		obj, _ := doc.(map[string]any)
		videos, _ := obj["videos"].([]any)
		for i, v := range videos {
			entry, _ := v.(map[string]any)
			evs, _ := entry["events"].([]any)
			seen := map[string]int{}
			for k, e := range evs {
				m, _ := e.(map[string]any)
				id, _ := m["id"].(string)
				if id == "" {
					continue
				}
				if first, ok := seen[id]; ok {
					out = append(out, fmt.Sprintf("%s: /videos/%d/events/%d repeats the id %q of /videos/%d/events/%d", j.resp.Request, i, k, id, i, first))
					continue
				}
				seen[id] = k
			}
		}
	}
	return out
}

// ---------------------------------------------------------------- videos

// partition checks that every requested id is answered in exactly one of
// videos and missingVideoIds, and nothing else appears.
func partition(resp *client.Response, requested []string) []string {
	doc, err := resp.JSON()
	if err != nil {
		return []string{fmt.Sprintf("%s: the body is not JSON", resp.Request)}
	}
	obj, _ := doc.(map[string]any)
	count := map[string]int{}
	var out []string
	videos, _ := obj["videos"].([]any)
	for i, v := range videos {
		entry, _ := v.(map[string]any)
		video, _ := entry["video"].(map[string]any)
		id, ok := video["platformVideoId"].(string)
		if !ok {
			out = append(out, fmt.Sprintf("%s: /videos/%d/video/platformVideoId is missing", resp.Request, i))
			continue
		}
		count[id]++
	}
	missing, _ := obj["missingVideoIds"].([]any)
	for _, m := range missing {
		if id, ok := m.(string); ok {
			count[id]++
		}
	}
	for _, id := range requested {
		switch n := count[id]; {
		case n == 0:
			out = append(out, fmt.Sprintf("%s: %q is in neither videos nor missingVideoIds", resp.Request, id))
		case n > 1:
			out = append(out, fmt.Sprintf("%s: %q is answered %d times across videos and missingVideoIds", resp.Request, id, n))
		}
	}
	for id := range count {
		if !slices.Contains(requested, id) {
			out = append(out, fmt.Sprintf("%s: %q was not requested but is answered", resp.Request, id))
		}
	}
	slices.Sort(out)
	return out
}

// listed reports where an id is answered: "videos", "missing", or "".
func listed(resp *client.Response, id string) string {
	doc, _ := resp.JSON()
	obj, _ := doc.(map[string]any)
	videos, _ := obj["videos"].([]any)
	for _, v := range videos {
		entry, _ := v.(map[string]any)
		video, _ := entry["video"].(map[string]any)
		if video["platformVideoId"] == id {
			return "videos"
		}
	}
	missing, _ := obj["missingVideoIds"].([]any)
	for _, m := range missing {
		if m == id {
			return "missing"
		}
	}
	return ""
}

func (s *suite) videoSpecs() {
	Describe("POST /api/public/videos", Label("videos"), func() {
		// The requests, as functions, so that each spec builds them when it
		// runs (the known ids come from the feed).
		one := func(ctx context.Context) []string {
			if ids := s.r.knownVideoIDs(ctx, 1); len(ids) == 1 {
				return ids
			}
			return []string{inventedID(1, 24)}
		}
		twenty := func(ctx context.Context) (ids, known []string) {
			known = s.r.knownVideoIDs(ctx, schemas.MaxVideoIDs)
			ids = slices.Clone(known)
			for i := len(ids); i < schemas.MaxVideoIDs; i++ {
				ids = append(ids, inventedID(i, 24))
			}
			return ids, known
		}
		longest := []string{inventedID(schemas.MaxVideoIDLen, schemas.MaxVideoIDLen)}

		It("accepts 1 id", Label("VIDEOS-IDS-MIN"), func(ctx SpecContext) {
			resp := s.fetch(ctx, s.r.videos(one(ctx), s.cfg.ProKey))
			s.expect(resp).To(HaveStatus(http.StatusOK))
		})
		It("rejects an empty videoIds with 400", Label("VIDEOS-IDS-MIN", "ERROR-BODY"), func(ctx SpecContext) {
			s.errorAnswer(s.fetch(ctx, s.r.videos([]string{}, s.cfg.ProKey)), http.StatusBadRequest)
		})
		It("accepts 20 ids", Label("VIDEOS-IDS-MAX"), func(ctx SpecContext) {
			ids, _ := twenty(ctx)
			resp := s.fetch(ctx, s.r.videos(ids, s.cfg.ProKey))
			s.expect(resp).To(HaveStatus(http.StatusOK))
		})
		It("rejects 21 ids with 400", Label("VIDEOS-IDS-MAX", "ERROR-BODY"), func(ctx SpecContext) {
			ids := make([]string, schemas.MaxVideoIDs+1)
			for i := range ids {
				ids[i] = inventedID(i, 24)
			}
			s.errorAnswer(s.fetch(ctx, s.r.videos(ids, s.cfg.ProKey)), http.StatusBadRequest)
		})
		It("accepts an id of 32 characters", Label("VIDEOS-ID-LEN"), func(ctx SpecContext) {
			resp := s.fetch(ctx, s.r.videos(longest, s.cfg.ProKey))
			s.expect(resp).To(HaveStatus(http.StatusOK))
		})
		It("rejects an id of 33 characters with 400", Label("VIDEOS-ID-LEN", "ERROR-BODY"), func(ctx SpecContext) {
			ids := []string{inventedID(schemas.MaxVideoIDLen+1, schemas.MaxVideoIDLen+1)}
			s.errorAnswer(s.fetch(ctx, s.r.videos(ids, s.cfg.ProKey)), http.StatusBadRequest)
		})
		It("rejects an empty id with 400", Label("VIDEOS-ID-LEN", "ERROR-BODY"), func(ctx SpecContext) {
			s.errorAnswer(s.fetch(ctx, s.r.videos([]string{""}, s.cfg.ProKey)), http.StatusBadRequest)
		})
		DescribeTable("rejects an invalid body with 400", Label("VIDEOS-BAD-BODY", "ERROR-BODY"),
			func(ctx SpecContext, body string) {
				s.errorAnswer(s.fetch(ctx, s.r.videosRaw(body, s.cfg.ProKey)), http.StatusBadRequest)
			},
			Entry("not JSON", `{"videoIds": [`),
			Entry("not an object", `["abc"]`),
			Entry("without videoIds", `{}`),
			Entry("videoIds not an array", `{"videoIds":"abc"}`),
			Entry("an id that is not a string", `{"videoIds":[42]}`),
		)
		It("lists ids that cannot exist in missingVideoIds", Label("VIDEOS-MISSING"), func(ctx SpecContext) {
			ids, _ := twenty(ctx)
			for _, ids := range [][]string{longest, ids} {
				resp := s.fetch(ctx, s.r.videos(ids, s.cfg.ProKey))
				s.expect(resp).To(HaveStatus(http.StatusOK))
				var wrong []string
				for _, id := range ids {
					if strings.HasPrefix(id, "~no~such~video~") && listed(resp, id) != "missing" {
						wrong = append(wrong, fmt.Sprintf("%s: %q (an id that cannot exist) is not in missingVideoIds", resp.Request, id))
					}
				}
				s.noneOf("rule: only videos of tracked channels are served; other ids go to missingVideoIds", wrong)
			}
		})
		It("returns the videos seen in the feed as VideoEntries", Label("VIDEOS-SERVED"), func(ctx SpecContext) {
			ids, known := twenty(ctx)
			if len(known) == 0 {
				Skip("the feed shows no video to ask for")
			}
			resp := s.fetch(ctx, s.r.videos(ids, s.cfg.ProKey))
			s.expect(resp).To(HaveStatus(http.StatusOK))
			var wrong []string
			for _, id := range known {
				if where := listed(resp, id); where != "videos" {
					wrong = append(wrong, fmt.Sprintf("%s: %q, seen in the feed, is not a VideoEntry (found in: %q)", resp.Request, id, where))
				}
			}
			s.noneOf("rule: a video of a tracked channel, seen in the account's feed, comes back as a VideoEntry", wrong)
		})
		It("returns VideoEntries that validate", Label("VIDEOS-ENTRY-SCHEMA"), func(ctx SpecContext) {
			ids, _ := twenty(ctx)
			resp := s.fetch(ctx, s.r.videos(ids, s.cfg.ProKey))
			s.expect(resp).To(HaveStatus(http.StatusOK))
			s.expect(resp).To(ConformTo(schemas.VideosResponse))
		})
		It("answers every requested id in exactly one of videos and missingVideoIds", Label("VIDEOS-PARTITION"), func(ctx SpecContext) {
			ids, _ := twenty(ctx)
			for _, req := range [][]string{one(ctx), ids, longest} {
				resp := s.fetch(ctx, s.r.videos(req, s.cfg.ProKey))
				s.expect(resp).To(HaveStatus(http.StatusOK))
				s.noneOf("rule: every requested id is answered once, as a VideoEntry or in missingVideoIds, and nothing else", partition(resp, req))
			}
		})
	})
}

// ---------------------------------------------------------------- errors

// exchange names a request whose answer the errors specs judge again.
type exchange struct {
	name string
	req  func(s *suite) (client.Request, string) // the request, or why to skip
}

func exchanges() []exchange {
	pro := func(s *suite) string { return s.cfg.ProKey }
	return []exchange{
		{"health (200)", func(s *suite) (client.Request, string) { return s.r.health(), "" }},
		{"the feed (200)", func(s *suite) (client.Request, string) { return s.r.feed(nil, pro(s)), "" }},
		{"tracked videos (200)", func(s *suite) (client.Request, string) {
			return s.r.videos([]string{inventedID(0, 24)}, pro(s)), ""
		}},
		{"the feed without a key (401)", func(s *suite) (client.Request, string) { return client.Get(schemas.PathFeed, nil, ""), "" }},
		{"tracked videos without a key (401)", func(s *suite) (client.Request, string) {
			return client.PostJSON(schemas.PathVideos, `{"videoIds":["`+inventedID(0, 24)+`"]}`, ""), ""
		}},
		{"tracked videos with a bad body (400)", func(s *suite) (client.Request, string) { return s.r.videosRaw(`{}`, pro(s)), "" }},
		{"tracked videos for a free key (403)", func(s *suite) (client.Request, string) {
			if s.cfg.FreeKey == "" {
				return client.Request{}, "needs --free-key (or TCM_FREE_KEY)"
			}
			return s.r.videos([]string{inventedID(0, 24)}, s.cfg.FreeKey), ""
		}},
	}
}

func (s *suite) errorSpecs() {
	Describe("errors and media types", Label("errors"), func() {
		for _, ex := range exchanges() {
			It("sends a JSON Content-Type with "+ex.name, Label("CONTENT-TYPE-JSON"), func(ctx SpecContext) {
				req, skip := ex.req(s)
				if skip != "" {
					Skip(skip)
				}
				s.expect(s.fetch(ctx, req)).To(HaveJSONContentType())
			})
		}
		for _, ex := range exchanges() {
			if strings.HasSuffix(ex.name, "(200)") {
				continue
			}
			It("sends an ErrorBody with a non-empty error and message with "+ex.name, Label("ERROR-BODY"), func(ctx SpecContext) {
				req, skip := ex.req(s)
				if skip != "" {
					Skip(skip)
				}
				resp := s.fetch(ctx, req)
				s.expect(resp.Status >= 300).To(BeTrue(), "%s: status %d, want an error status", resp.Request, resp.Status)
				s.expect(resp).To(BeErrorBody())
			})
		}
		It("answers an unknown path with an ErrorBody", Label("strict", "ERROR-BODY"), func(ctx SpecContext) {
			resp := s.fetch(ctx, client.Get("/api/no-such-operation", nil, client.Bearer(s.cfg.ProKey)))
			s.errorAnswer(resp, http.StatusNotFound)
			s.expect(resp).To(HaveJSONContentType())
		})
	})
}
