package conformance

import (
	"context"
	"net/http"
	"slices"
	"strings"

	. "github.com/onsi/ginkgo/v2"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/schemas/catalogue"
	"github.com/tcmkit/tcmkit/schemas/jsondoc"
	"github.com/tcmkit/tcmkit/suites/client"
)

// videoSpecs: POST /api/public/videos takes 1 to 20 ids of 1 to 32
// characters, rejects other bodies with 400, and answers each id once, as a
// VideoEntry or in missingVideoIds.
func (s *suite) videoSpecs() {
	v := s.videoAsks()
	s.videoBoundSpecs(v)
	s.videoListSpecs(v)
	s.hiddenVideoSpecs()
}

// videoAsks are the requests of the tracked-videos specs, built when a spec
// runs (the known ids come from the feed).
type videoAsks struct {
	s             *suite
	longest       []string // one id of 32 characters
	twentyLongest []string // a large batch of ids that cannot exist
}

func (s *suite) videoAsks() videoAsks {
	v := videoAsks{s: s, longest: []string{inventedID(schemas.MaxVideoIDLen, schemas.MaxVideoIDLen)}, twentyLongest: make([]string, schemas.MaxVideoIDs)}
	for i := range v.twentyLongest {
		v.twentyLongest[i] = inventedID(i, schemas.MaxVideoIDLen)
	}
	return v
}

// one is an id the feed shows, else an invented one.
func (v videoAsks) one(ctx context.Context) []string {
	if ids := v.s.knownVideoIDs(ctx, 1); len(ids) == 1 {
		return ids
	}
	return []string{inventedID(1, 24)}
}

// twenty is 20 ids: those the feed shows (known), and invented ones.
func (v videoAsks) twenty(ctx context.Context) (ids, known []string) {
	known = v.s.knownVideoIDs(ctx, schemas.MaxVideoIDs)
	ids = slices.Clone(known)
	for i := len(ids); i < schemas.MaxVideoIDs; i++ {
		ids = append(ids, inventedID(i, 24))
	}
	return ids, known
}

// answers sends ids with the Pro key and wants a 200.
func (v videoAsks) answers(ctx context.Context, ids []string) *client.Response {
	GinkgoHelper()
	resp := v.s.fetch(ctx, videosRequest(ids, v.s.tg.Pro))
	v.s.need(resp, http.StatusOK)
	return resp
}

// rejects sends ids with the Pro key and wants a 400.
func (v videoAsks) rejects(ctx context.Context, ids []string) {
	GinkgoHelper()
	v.s.need(v.s.fetch(ctx, videosRequest(ids, v.s.tg.Pro)), http.StatusBadRequest)
}

// oneLong wants one id of 32 characters accepted; one id of 24 is asked
// first, so that the oracle blames the count when both are refused
// (VIDEOS-IDS-MIN's).
func (v videoAsks) oneLong(ctx context.Context, ids []string) {
	GinkgoHelper()
	v.s.fetch(ctx, videosRequest([]string{inventedID(0, 24)}, v.s.tg.Pro))
	v.answers(ctx, ids)
}

// videoBoundSpecs: 1 to 20 ids of 1 to 32 characters, other bodies 400.
func (s *suite) videoBoundSpecs(v videoAsks) {
	It("accepts 1 id", requires(catalogue.VideosIDsMin), func(ctx SpecContext) {
		v.answers(ctx, v.one(ctx))
	})
	It("rejects an empty videoIds with 400", requires(catalogue.VideosIDsMin, catalogue.ErrorBody), func(ctx SpecContext) {
		v.rejects(ctx, []string{})
	})
	It("accepts 20 ids", requires(catalogue.VideosIDsMax), func(ctx SpecContext) {
		ids, _ := v.twenty(ctx)
		v.answers(ctx, ids)
	})
	It("rejects 21 ids with 400", requires(catalogue.VideosIDsMax, catalogue.ErrorBody), func(ctx SpecContext) {
		ids := make([]string, schemas.MaxVideoIDs+1)
		for i := range ids {
			ids[i] = inventedID(i, 24)
		}
		v.rejects(ctx, ids)
	})
	It("rejects 21 ids with 400 also when one is there twice", requires(catalogue.VideosIDsMax, catalogue.ErrorBody), func(ctx SpecContext) {
		ids := make([]string, schemas.MaxVideoIDs, schemas.MaxVideoIDs+1)
		for i := range ids {
			ids[i] = inventedID(i, 24)
		}
		v.rejects(ctx, append(ids, ids[0]))
	})
	It("accepts 20 ids of 32 characters", requires(catalogue.VideosIDsMax, catalogue.VideosIDLen), func(ctx SpecContext) {
		// one id of 32 characters first: when the batch is refused, the
		// oracle tells the length's fault from the batch's by it
		s.fetch(ctx, videosRequest(v.longest, s.tg.Pro))
		v.answers(ctx, v.twentyLongest)
	})
	It("accepts an id of 32 characters", requires(catalogue.VideosIDLen), func(ctx SpecContext) {
		v.oneLong(ctx, v.longest)
	})
	// Characters, not bytes nor UTF-16 code units: é is 2 bytes, 😀 is 4
	// bytes and 2 UTF-16 code units.
	It("accepts an id of 32 characters outside ASCII", requires(catalogue.VideosIDLen), func(ctx SpecContext) {
		v.oneLong(ctx, []string{strings.Repeat("é", schemas.MaxVideoIDLen)})
	})
	It("accepts an id of 32 characters beyond the Basic Multilingual Plane", requires(catalogue.VideosIDLen), func(ctx SpecContext) {
		v.oneLong(ctx, []string{strings.Repeat("😀", schemas.MaxVideoIDLen)})
	})
	It("rejects an id of 33 characters with 400", requires(catalogue.VideosIDLen, catalogue.ErrorBody), func(ctx SpecContext) {
		v.rejects(ctx, []string{inventedID(schemas.MaxVideoIDLen+1, schemas.MaxVideoIDLen+1)})
	})
	It("rejects an empty id with 400", requires(catalogue.VideosIDLen, catalogue.ErrorBody), func(ctx SpecContext) {
		v.rejects(ctx, []string{""})
	})
	DescribeTable("rejects an invalid body with 400", requires(catalogue.VideosBadBody, catalogue.ErrorBody),
		func(ctx SpecContext, body string) {
			s.need(s.fetch(ctx, videosBody(body, s.tg.Pro)), http.StatusBadRequest)
		},
		Entry("not JSON", `{"videoIds": [`),
		Entry("not an object", `["abc"]`),
		Entry("without videoIds", `{}`),
		Entry("videoIds not an array", `{"videoIds":"abc"}`),
		Entry("an id that is not a string", `{"videoIds":[42]}`),
	)
}

// videoListSpecs: each id answered once, as a VideoEntry or in
// missingVideoIds. A valid body refused is the bounds' specs' to judge.
func (s *suite) videoListSpecs(v videoAsks) {
	It("lists ids that cannot exist in missingVideoIds", requires(catalogue.VideosMissing), func(ctx SpecContext) {
		// the oracle judges each answer: an id the suite invented is
		// listed missing (VIDEOS-MISSING), every id in one list
		ids, _ := v.twenty(ctx)
		for _, ids := range [][]string{v.longest, ids, v.twentyLongest} {
			v.answers(ctx, ids)
		}
	})
	It("returns the videos seen in the feed as VideoEntries", requires(catalogue.VideosServed), func(ctx SpecContext) {
		ids, known := v.twenty(ctx)
		if len(known) == 0 {
			Skip("the feed shows no video to ask for")
		}
		v.answers(ctx, ids) // the oracle judges the answer: VIDEOS-SERVED
	})
	It("returns VideoEntries that validate", requires(catalogue.VideosEntrySchema), func(ctx SpecContext) {
		ids, _ := v.twenty(ctx)
		v.answers(ctx, ids) // the oracle judges the answer
	})
	It("answers every requested id in exactly one of videos and missingVideoIds", requires(catalogue.VideosPartition), func(ctx SpecContext) {
		ids, _ := v.twenty(ctx)
		for _, req := range [][]string{v.one(ctx), ids, v.longest} {
			v.answers(ctx, req) // the oracle judges the partition of each answer
		}
	})
}

// answeredIDs are the ids a tracked-videos answer serves as VideoEntries
// and those it lists as missing.
func answeredIDs(resp *client.Response) (videos, missing []string) {
	doc, _ := resp.JSON()
	for _, entry := range jsondoc.Items(doc, "/videos") {
		if id, ok := jsondoc.String(entry, "/video/platformVideoId"); ok {
			videos = append(videos, id)
		}
	}
	for _, m := range jsondoc.Items(doc, "/missingVideoIds") {
		if id, ok := m.(string); ok {
			missing = append(missing, id)
		}
	}
	return videos, missing
}

// listed reports where an id is answered: "videos", "missing", or "".
func listed(resp *client.Response, id string) string {
	videos, missing := answeredIDs(resp)
	switch {
	case slices.Contains(videos, id):
		return "videos"
	case slices.Contains(missing, id):
		return "missing"
	}
	return ""
}
