package clienttest

import (
	"context"
	"net/http"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// In a Ginkgo suite, Start takes GinkgoT(): its Cleanup is DeferCleanup,
// so the verdicts are checked when the spec ends.
func TestGinkgo(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "clienttest in Ginkgo")
}

var _ = Describe("a client's spec", func() {
	var checked bool
	It("judges the client when the spec ends", func() {
		sim := Start(GinkgoT(), Options{})
		DeferCleanup(func() {
			// Registered after Start's: runs before it. The verdicts are
			// still to be read, and will pass.
			v, err := sim.Verdicts(context.Background(), true)
			Expect(err).NotTo(HaveOccurred())
			Expect(v.Clients).To(HaveLen(1))
			checked = v.Passed
		})
		req, _ := http.NewRequest(http.MethodGet, sim.URL+"/api/public-feed?limit=1", nil)
		req.Header.Set("Authorization", "Bearer "+sim.Keys.Pro)
		resp, err := http.DefaultClient.Do(req)
		Expect(err).NotTo(HaveOccurred())
		resp.Body.Close()
		Expect(resp.StatusCode).To(Equal(http.StatusOK))
	})
	It("ran the check of the spec before", func() {
		Expect(checked).To(BeTrue())
	})
})
