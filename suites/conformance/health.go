package conformance

import (
	"net/http"

	. "github.com/onsi/ginkgo/v2"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/schemas/catalogue"
	"github.com/tcmkit/tcmkit/suites/client"
)

// healthSpecs: POST /api/public/health answers {"status":"ok"}. Whether
// it needs a key is not shown (HEALTH-AUTH): a 401 without one is
// conforming, and then the Pro key must get the answer.
func (s *suite) healthSpecs() {
	It("answers {} with 200 and {\"status\":\"ok\"}", requires(catalogue.HealthOK), func(ctx SpecContext) {
		resp := s.fetch(ctx, healthRequest())
		if resp.Status == http.StatusUnauthorized {
			s.expect(resp).To(BeErrorBody())
			resp = s.fetch(ctx, client.PostJSON(schemas.PathHealth, "{}", client.Bearer(s.tg.Pro)))
		}
		s.expect(resp).To(HaveStatus(http.StatusOK))
		s.expect(resp).To(ConformTo(schemas.HealthBody))
	})
}
