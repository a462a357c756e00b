package selftest

import (
	"context"
	"os"
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

// Quick leaves probes untried and says what thorough would cost; thorough
// runs every probe against the simulator on its manual clock in seconds,
// a 20-a-minute server's 20 minutes.
func TestProfiles(t *testing.T) {
	// Not parallel, and its memory handed back when it ends: the hostile
	// targets' test reads each child's peak memory, which on Linux starts
	// from this process's own at the fork.
	t.Cleanup(debug.FreeOSMemory)
	quick := runSuite(t, startTarget(t, simulator.Config{}, nil))
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
	// What thorough waits in real time is what it moved the manual clock
	// by, less the moves of the world it says it made (new events, not
	// waits): within its bound, and what the run itself says it waited.
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
	for name, r := range map[string]result{"quick": quick, "thorough": thorough} {
		if r.exitCode != 0 || len(r.failed()) > 0 {
			t.Errorf("--profile %s fails the faultless simulator (exit %d):\n%s", name, r.exitCode, failures(r))
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
}

// virtualTime is the summary's line of what a run on a manual clock
// moved the clock by.
var virtualTime = regexp.MustCompile(`virtual time: ([0-9.]+) s waiting for rate windows.*, ([0-9.]+) s moving the world`)

// Conforming draws pass the thorough profile too (the quick one:
// TestConformingDrawsPass): every oracle of the generated probes accepts
// every choice a conforming server may make. Two draws by default, to keep
// go test ./... within its minute; TCM_THOROUGH_DRAWS=first-last judges
// others (CI: ci/check.sh).
func TestConformingDrawsPassThorough(t *testing.T) {
	t.Cleanup(debug.FreeOSMemory) // as TestProfiles
	first, last := uint64(17), uint64(17)
	if v := os.Getenv("TCM_THOROUGH_DRAWS"); v != "" {
		a, b, _ := strings.Cut(v, "-")
		first, _ = strconv.ParseUint(a, 10, 64)
		last = first
		if b != "" {
			last, _ = strconv.ParseUint(b, 10, 64)
		}
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
