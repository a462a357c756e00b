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
	// The requests, as functions, so that each spec builds them when it
	// runs (the known ids come from the feed).
	one := func(ctx context.Context) []string {
		if ids := s.knownVideoIDs(ctx, 1); len(ids) == 1 {
			return ids
		}
		return []string{inventedID(1, 24)}
	}
	twenty := func(ctx context.Context) (ids, known []string) {
		known = s.knownVideoIDs(ctx, schemas.MaxVideoIDs)
		ids = slices.Clone(known)
		for i := len(ids); i < schemas.MaxVideoIDs; i++ {
			ids = append(ids, inventedID(i, 24))
		}
		return ids, known
	}
	longest := []string{inventedID(schemas.MaxVideoIDLen, schemas.MaxVideoIDLen)}
	twentyLongest := make([]string, schemas.MaxVideoIDs) // a large batch of ids that cannot exist
	for i := range twentyLongest {
		twentyLongest[i] = inventedID(i, schemas.MaxVideoIDLen)
	}
	// answers sends ids with the Pro key and wants a 200.
	answers := func(ctx context.Context, ids []string) *client.Response {
		GinkgoHelper()
		resp := s.fetch(ctx, videosRequest(ids, s.tg.Pro))
		s.need(resp, http.StatusOK)
		return resp
	}
	// answered is answers for specs whose subject is not the body's
	// bounds: a valid body refused with 400 is the bounds' specs' to judge
	answered := func(ctx context.Context, ids []string) *client.Response {
		GinkgoHelper()
		resp := s.fetch(ctx, videosRequest(ids, s.tg.Pro))
		s.need(resp, http.StatusOK)
		return resp
	}
	rejects := func(ctx context.Context, ids []string) {
		GinkgoHelper()
		s.need(s.fetch(ctx, videosRequest(ids, s.tg.Pro)), http.StatusBadRequest)
	}

	It("accepts 1 id", requires(catalogue.VideosIDsMin), func(ctx SpecContext) {
		answers(ctx, one(ctx))
	})
	It("rejects an empty videoIds with 400", requires(catalogue.VideosIDsMin, catalogue.ErrorBody), func(ctx SpecContext) {
		rejects(ctx, []string{})
	})
	It("accepts 20 ids", requires(catalogue.VideosIDsMax), func(ctx SpecContext) {
		ids, _ := twenty(ctx)
		answers(ctx, ids)
	})
	It("rejects 21 ids with 400", requires(catalogue.VideosIDsMax, catalogue.ErrorBody), func(ctx SpecContext) {
		ids := make([]string, schemas.MaxVideoIDs+1)
		for i := range ids {
			ids[i] = inventedID(i, 24)
		}
		rejects(ctx, ids)
	})
	It("rejects 21 ids with 400 also when one is there twice", requires(catalogue.VideosIDsMax, catalogue.ErrorBody), func(ctx SpecContext) {
		ids := make([]string, schemas.MaxVideoIDs, schemas.MaxVideoIDs+1)
		for i := range ids {
			ids[i] = inventedID(i, 24)
		}
		rejects(ctx, append(ids, ids[0]))
	})
	It("accepts 20 ids of 32 characters", requires(catalogue.VideosIDsMax, catalogue.VideosIDLen), func(ctx SpecContext) {
		// one id of 32 characters first: when the batch is refused, the
		// oracle tells the length's fault from the batch's by it
		s.fetch(ctx, videosRequest(longest, s.tg.Pro))
		s.need(s.fetch(ctx, videosRequest(twentyLongest, s.tg.Pro)), http.StatusOK)
	})
	// oneLong wants one id of 32 characters accepted; one id of 24 is
	// asked first, so that the oracle blames the count when both are
	// refused (VIDEOS-IDS-MIN's).
	oneLong := func(ctx context.Context, ids []string) {
		GinkgoHelper()
		s.fetch(ctx, videosRequest([]string{inventedID(0, 24)}, s.tg.Pro))
		answers(ctx, ids)
	}
	It("accepts an id of 32 characters", requires(catalogue.VideosIDLen), func(ctx SpecContext) {
		oneLong(ctx, longest)
	})
	// Characters, not bytes nor UTF-16 code units: é is 2 bytes, 😀 is 4
	// bytes and 2 UTF-16 code units.
	It("accepts an id of 32 characters outside ASCII", requires(catalogue.VideosIDLen), func(ctx SpecContext) {
		oneLong(ctx, []string{strings.Repeat("é", schemas.MaxVideoIDLen)})
	})
	It("accepts an id of 32 characters beyond the Basic Multilingual Plane", requires(catalogue.VideosIDLen), func(ctx SpecContext) {
		oneLong(ctx, []string{strings.Repeat("😀", schemas.MaxVideoIDLen)})
	})
	It("rejects an id of 33 characters with 400", requires(catalogue.VideosIDLen, catalogue.ErrorBody), func(ctx SpecContext) {
		rejects(ctx, []string{inventedID(schemas.MaxVideoIDLen+1, schemas.MaxVideoIDLen+1)})
	})
	It("rejects an empty id with 400", requires(catalogue.VideosIDLen, catalogue.ErrorBody), func(ctx SpecContext) {
		rejects(ctx, []string{""})
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
	It("lists ids that cannot exist in missingVideoIds", requires(catalogue.VideosMissing), func(ctx SpecContext) {
		// the oracle judges each answer: an id the suite invented is
		// listed missing (VIDEOS-MISSING), every id in one list
		ids, _ := twenty(ctx)
		for _, ids := range [][]string{longest, ids, twentyLongest} {
			answered(ctx, ids)
		}
	})
	It("returns the videos seen in the feed as VideoEntries", requires(catalogue.VideosServed), func(ctx SpecContext) {
		ids, known := twenty(ctx)
		if len(known) == 0 {
			Skip("the feed shows no video to ask for")
		}
		answered(ctx, ids) // the oracle judges the answer: VIDEOS-SERVED
	})
	It("returns VideoEntries that validate", requires(catalogue.VideosEntrySchema), func(ctx SpecContext) {
		ids, _ := twenty(ctx)
		answered(ctx, ids) // the oracle judges the answer
	})
	It("answers every requested id in exactly one of videos and missingVideoIds", requires(catalogue.VideosPartition), func(ctx SpecContext) {
		ids, _ := twenty(ctx)
		for _, req := range [][]string{one(ctx), ids, longest} {
			answered(ctx, req) // the oracle judges the partition of each answer
		}
	})
	s.hiddenVideoSpecs()
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
