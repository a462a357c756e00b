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
		// the oracle judges both: 200 and {"status":"ok"} without a key, and
		// with a valid one (whether health takes a key is open)
		s.need(s.fetch(ctx, healthRequest()), http.StatusOK)
		s.need(s.fetch(ctx, client.PostJSON(schemas.PathHealth, "{}", client.Bearer(s.tg.Pro))), http.StatusOK, http.StatusTooManyRequests)
	})
}
