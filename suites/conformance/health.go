package conformance

import (
	"net/http"

	. "github.com/onsi/ginkgo/v2"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/schemas/catalogue"
	"github.com/tcmkit/tcmkit/suites/client"
)

// healthSpecs: POST /api/public/health answers {"status":"ok"}.
func (s *suite) healthSpecs() {
	It("answers {} with 200 and {\"status\":\"ok\"}", requires(catalogue.HealthOK), func(ctx SpecContext) {
		resp := s.fetch(ctx, healthRequest())
		// Whether health needs a key is open (HEALTH-AUTH): a server that
		// refuses the usage shown, without one, is asked again with the
		// Pro key, and judged by that answer.
		if resp.Status == http.StatusUnauthorized || resp.Status == http.StatusForbidden {
			resp = s.fetch(ctx, client.PostJSON(schemas.PathHealth, "{}", client.Bearer(s.tg.Pro)))
		}
		s.expect(resp).To(HaveStatus(http.StatusOK))
		s.expect(resp).To(ConformTo(schemas.HealthBody))
	})
}
