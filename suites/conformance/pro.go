package conformance

import (
	"net/http"

	. "github.com/onsi/ginkgo/v2"

	"github.com/tcmkit/tcmkit/schemas/catalogue"
)

// proSpecs: tracked videos need a Pro plan (403 without); the feed does not.
func (s *suite) proSpecs() {
	It("answers tracked videos for a free key with 403 and an ErrorBody", requires(catalogue.ProGate, catalogue.ErrorBody), func(ctx SpecContext) {
		s.need(s.fetch(ctx, videosRequest([]string{inventedID(0, 24)}, s.needFree())), http.StatusForbidden)
	})
	It("serves the feed to a free key", requires(catalogue.ProGate), func(ctx SpecContext) {
		// the body's schema is the pagination specs' concern
		s.need(s.fetch(ctx, feedRequest(nil, s.needFree())), http.StatusOK)
	})
	s.hiddenProSpecs()
}
