package selftest

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/tcmkit/tcmkit/simulator"
	"github.com/tcmkit/tcmkit/simulator/variant"
	"github.com/tcmkit/tcmkit/suites/probe"
)

// probeSpecs counts the generated probes' specs by state, and the skip
// reasons of the skipped ones.
func probeSpecs(r result) (passed, skipped int, reasons []string) {
	for _, rep := range r.reports {
		for _, sr := range rep.SpecReports {
			if !sr.LeafNodeType.Is(types.NodeTypeIt) || !strings.Contains(strings.Join(sr.Labels(), " "), "probe") {
				continue
			}
			switch {
			case sr.State.Is(types.SpecStatePassed):
				passed++
			case sr.State.Is(types.SpecStateSkipped):
				skipped++
				reasons = append(reasons, sr.Failure.Message)
			}
		}
	}
	return passed, skipped, reasons
}

// TestProfiles: the unbroken simulator passes the suite under both
// profiles, and a second time at once. Quick (the default) leaves probes
// untried and says what thorough would cost; thorough runs every probe
// against the simulator on its manual clock in seconds, a 20-a-minute
// server's 20 minutes: an exhaustive sweep of the probes (two thirds of
// this test's CPU), so it runs where CI runs the thorough draws
// (TCM_THOROUGH_DRAWS set), not in go test ./... Each run is a whole one:
// a profile is what every spec and probe of a run sends. The second quick run, started at once against the
// same simulator, passes too: the suite makes the rate-limit window it
// needs fresh (on the simulator's clock a whole window passes before the
// burst), whatever the first run left in it. (In real time,
// ci/field-runs.sh runs the suite twice against one simulator process, and
// once while another client spends the keys.)
func TestProfiles(t *testing.T) {
	// Not parallel, and its memory handed back when it ends: the hostile
	// targets' test reads each child's peak memory, which on Linux starts
	// from this process's own at the fork.
	t.Cleanup(debug.FreeOSMemory)
	tg := startTarget(t, simulator.Config{}, nil)
	quick := runSuite(t, tg)
	if quick.exitCode != 0 || len(quick.failed()) > 0 {
		t.Fatalf("the unbroken simulator failed (exit %d):\n%s", quick.exitCode, failures(quick))
	}
	if quick.passed() < 60 {
		t.Errorf("only %d specs passed", quick.passed())
	}
	for _, f := range []string{"conformance-report.json", "conformance-report.md", "conformance-report.html"} {
		if _, err := os.Stat(filepath.Join(quick.dir, "reports", f)); err != nil {
			t.Errorf("report file: %v", err)
		}
	}
	qp, qs, reasons := probeSpecs(quick)
	if qs == 0 || !strings.Contains(strings.Join(reasons, "\n"), "untried under --profile quick") {
		t.Errorf("quick left no probe untried, or did not say so (%d passed, %d skipped)", qp, qs)
	}
	for _, want := range []string{"probes: profile quick", "left untried", "--profile thorough runs all"} {
		if !strings.Contains(quick.output, want) {
			t.Errorf("the quick run does not say %q", want)
		}
	}
	// The second run and the thorough one go at once, after this function.
	t.Run("a second run at once", func(t *testing.T) {
		t.Parallel()
		if r := runSuite(t, tg); r.exitCode != 0 || len(r.failed()) > 0 {
			t.Fatalf("the second run failed (exit %d):\n%s", r.exitCode, failures(r))
		}
	})
	t.Run("thorough", func(t *testing.T) {
		if os.Getenv("TCM_THOROUGH_DRAWS") == "" {
			t.Skip("every probe, seconds of CPU: CI runs it beside the thorough draws (TCM_THOROUGH_DRAWS)")
		}
		t.Parallel()
		tg := startTarget(t, simulator.Config{}, nil)
		clock := simulator.Control{URL: tg.url}
		began, err := clock.Now(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		thorough := runSuite(t, tg, "--profile", "thorough")
		ended, err := clock.Now(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if thorough.exitCode != 0 || len(thorough.failed()) > 0 {
			t.Errorf("--profile thorough fails the faultless simulator (exit %d):\n%s", thorough.exitCode, failures(thorough))
		}
		// What thorough waits in real time is what it moved the manual
		// clock by, less the moves of the world it says it made (new
		// events, not waits): within its bound, and what the run itself
		// says it waited.
		m := virtualTime.FindStringSubmatch(thorough.output)
		if m == nil {
			t.Fatalf("the thorough run does not say its virtual time:\n%s", tail(thorough.output, 20))
		}
		said, _ := time.ParseDuration(m[1] + "s")
		world, _ := time.ParseDuration(m[2] + "s")
		waited := ended.Sub(began) - world
		if waited > probe.ThoroughWait {
			t.Errorf("--profile thorough moved the manual clock by %s for rate windows: a 20-a-minute server makes it wait that long, more than %s", waited, probe.ThoroughWait)
		}
		if d := waited - said; d < -time.Second || d > time.Second {
			t.Errorf("the thorough run says it waited %s for rate windows, but moved the clock by %s besides the world's %s", said, waited, world)
		}
		tp, ts, reasons := probeSpecs(thorough)
		for _, why := range reasons {
			if strings.Contains(why, "untried") {
				t.Errorf("thorough left a probe untried: %s", why)
			}
		}
		if tp <= qp || tp < 250 {
			t.Errorf("thorough judged %d probe specs (quick %d): want every applicable one", tp, qp)
		}
		t.Logf("quick: %d probe specs passed, %d skipped, %s; thorough: %d passed, %d skipped (blocked), %s, %s of virtual time waiting for rate windows", qp, qs, quick.wall, tp, ts, thorough.wall, waited)
	})
}

// virtualTime is the summary's line of what a run on a manual clock
// moved the clock by.
var virtualTime = regexp.MustCompile(`virtual time: ([0-9.]+) s waiting for rate windows.*, ([0-9.]+) s moving the world`)

// Conforming draws pass the thorough profile too (the quick one:
// TestConformingDrawsPass): every oracle of the generated probes accepts
// every choice a conforming server may make. TCM_THOROUGH_DRAWS=first-last
// (or one number) judges those draws; CI judges ten (ci/check.sh). Without
// it the test is skipped: a draw under thorough is two seconds of CPU, and
// go test ./... keeps within its minute (TestProfiles runs thorough
// against the simulator's own choices where this test runs).
func TestConformingDrawsPassThorough(t *testing.T) {
	v := os.Getenv("TCM_THOROUGH_DRAWS")
	if v == "" {
		t.Skip("two seconds of CPU a draw: TCM_THOROUGH_DRAWS=101-110 runs ten (CI does)")
	}
	t.Cleanup(debug.FreeOSMemory) // as TestProfiles
	a, b, _ := strings.Cut(v, "-")
	first, _ := strconv.ParseUint(a, 10, 64)
	last := first
	if b != "" {
		last, _ = strconv.ParseUint(b, 10, 64)
	}
	for n := first; n <= last; n++ {
		t.Run(variantName(n), func(t *testing.T) {
			t.Parallel()
			d := variant.New(n)
			r := runSuite(t, startDraw(t, d), "--profile", "thorough", "--ginkgo.label-filter=probe")
			if r.exitCode != 0 || len(r.failed()) > 0 {
				t.Errorf("conforming draw %d fails --profile thorough: a false failure of the probes\n%s\n%s", n, d, failures(r))
			}
		})
	}
}

func variantName(n uint64) string { return "draw" + strconv.FormatUint(n, 10) }
