package explore_test

import (
	"net/http/httptest"
	"testing"

	"github.com/tcmkit/tcmkit/simulator"
)

func startServer(t *testing.T, sim *simulator.Server) string {
	t.Helper()
	srv := httptest.NewServer(sim.Handler())
	t.Cleanup(srv.Close)
	return srv.URL
}
