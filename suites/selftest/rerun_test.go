package selftest

import (
	"testing"

	"github.com/tcmkit/tcmkit/simulator"
)

// A second run started at once against the same simulator passes too: the
// suite makes the rate-limit window it needs fresh (on the simulator's
// clock a whole window passes before the burst), whatever the first run
// left in it. (In real time, ci/field-runs.sh runs the suite twice against
// one simulator process, and once while another client spends the keys.)
func TestRunTwiceInARow(t *testing.T) {
	t.Parallel()
	tg := startTarget(t, simulator.Config{}, nil)
	for run := 1; run <= 2; run++ {
		r := runSuite(t, tg)
		if r.exitCode != 0 || len(r.failed()) > 0 {
			t.Fatalf("run %d failed (exit %d):\n%s", run, r.exitCode, failures(r))
		}
	}
}
