package conformance

import (
	"net/http"

	. "github.com/onsi/ginkgo/v2"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/schemas/catalogue"
)

// healthSpecs: POST /api/public/health answers {"status":"ok"}.
func (s *suite) healthSpecs() {
	It("answers {} with 200 and {\"status\":\"ok\"}", requires(catalogue.HealthOK), func(ctx SpecContext) {
		resp := s.fetch(ctx, healthRequest())
		s.expect(resp).To(HaveStatus(http.StatusOK))
		s.expect(resp).To(ConformTo(schemas.HealthBody))
	})
}
