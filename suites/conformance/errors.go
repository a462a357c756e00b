package conformance

import (
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/schemas/catalogue"
	"github.com/tcmkit/tcmkit/suites/client"
)

// exchange names a request whose answer the errors specs judge again.
type exchange struct {
	name string
	req  func(t Target) (client.Request, string) // the request, or why to skip
}

func exchanges() []exchange {
	return []exchange{
		{"health (200)", func(Target) (client.Request, string) { return healthRequest(), "" }},
		{"the feed (200)", func(t Target) (client.Request, string) { return feedRequest(nil, t.Pro), "" }},
		{"tracked videos (200)", func(t Target) (client.Request, string) {
			return videosRequest([]string{inventedID(0, 24)}, t.Pro), ""
		}},
		{"the feed without a key (401)", func(Target) (client.Request, string) { return client.Get(schemas.PathFeed, nil, ""), "" }},
		{"tracked videos without a key (401)", func(Target) (client.Request, string) {
			return client.PostJSON(schemas.PathVideos, oneInventedID(), ""), ""
		}},
		{"tracked videos with a bad body (400)", func(t Target) (client.Request, string) { return videosBody(`{}`, t.Pro), "" }},
		{"tracked videos for a free key (403)", func(t Target) (client.Request, string) {
			if t.Free == "" {
				return client.Request{}, needs("free-key")
			}
			return videosRequest([]string{inventedID(0, 24)}, t.Free), ""
		}},
	}
}

// errorSpecs judge again the answers other specs fetched: every one has a
// JSON Content-Type, every error an ErrorBody.
func (s *suite) errorSpecs() {
	// exchanged fetches the answer to ex, or skips the spec.
	exchanged := func(ctx SpecContext, ex exchange) *client.Response {
		GinkgoHelper()
		req, skip := ex.req(s.tg)
		if skip != "" {
			skipMissing(skip)
		}
		return s.fetch(ctx, req)
	}
	// the oracle judges each answer's media type and error body
	for _, ex := range exchanges() {
		It("sends a JSON Content-Type with "+ex.name, requires(catalogue.ContentTypeJSON), func(ctx SpecContext) { exchanged(ctx, ex) })
	}
	It("sends a JSON Content-Type on every page of a walk", requires(catalogue.ContentTypeJSON), func(ctx SpecContext) {
		s.walkOK(s.fullWalk(ctx))
	})
	for _, ex := range exchanges() {
		if strings.HasSuffix(ex.name, "(200)") {
			continue
		}
		It("sends an ErrorBody with error and message strings with "+ex.name, requires(catalogue.ErrorBody), func(ctx SpecContext) {
			if resp := exchanged(ctx, ex); resp.Status < 300 {
				// the status is the rule of the spec that asked for it
				s.Block(fmt.Sprintf("%s answered %d, not an error: no ErrorBody to judge", resp.Request, resp.Status))
			}
		})
	}
	s.strictUnknownPath()
}
