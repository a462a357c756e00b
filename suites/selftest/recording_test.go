package selftest

import (
	"context"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tcmkit/tcmkit/simulator"
	"github.com/tcmkit/tcmkit/suites/bundled"
	"github.com/tcmkit/tcmkit/suites/record"
)

// simClock is a simulator's manual clock: the recorder's waits move it.
type simClock struct{ sim *simulator.Server }

func (c simClock) Now() time.Time { return c.sim.RateNow() }
func (c simClock) Sleep(ctx context.Context, d time.Duration) error {
	c.sim.Advance(d)
	return ctx.Err()
}

// TestSuitePassesARecording records the simulator (tcmkit record) and runs
// the whole suite against the recording served (tcmkit simulate --world):
// a recorded world is served with the whole contract, in the kit's shape.
func TestSuitePassesARecording(t *testing.T) {
	t.Parallel()
	orig, err := simulator.New(simulator.Config{Seed: bundled.Seed, Channels: 6, History: 10 * 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	osrv := httptest.NewServer(orig.Handler())
	defer func() { osrv.Close(); orig.Close() }()
	out := filepath.Join(t.TempDir(), "world.json")
	k := orig.Seeded()
	r := &record.Recorder{Target: osrv.URL, ProKey: k.Pro, FreeKey: k.Free, Out: out, Clock: simClock{orig}, Log: io.Discard}
	if _, err := r.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	w, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	sim, err := simulator.New(simulator.Config{World: w})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(sim.Handler())
	t.Cleanup(func() { srv.Close(); sim.Close() })
	keys, err := bundled.Provision(context.Background(), nil, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	res := runSuite(t, target{url: srv.URL, keys: keys})
	if res.exitCode != 0 || len(res.failed()) > 0 || res.passed() < 60 {
		t.Fatalf("the suite failed the served recording (exit %d, %d passed):\n%s", res.exitCode, res.passed(), failures(res))
	}
	// Served in the kit's own shape: the checks of the kit's own choices
	// where the contract is silent pass too.
	res = runSuite(t, target{url: srv.URL, keys: keys}, "--ginkgo.label-filter=strict")
	if res.exitCode != 0 || len(res.failed()) > 0 || res.passed() == 0 {
		t.Fatalf("the strict specs failed the served recording (exit %d, %d passed):\n%s", res.exitCode, res.passed(), failures(res))
	}
}
