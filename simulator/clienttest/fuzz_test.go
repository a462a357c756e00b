package clienttest_test

import (
	"os"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/tcmkit/tcmkit/simulator/clienttest"
	"github.com/tcmkit/tcmkit/simulator/clienttest/internal/planted"
	"github.com/tcmkit/tcmkit/simulator/fuzz"
)

// syncTwice is a client's own fuzz test: sync the feed, let ten minutes
// pass (TCM_FUZZ_PAUSE, for a simulator in real time), sync again; the
// client must hold every event served, once.
func syncTwice(bug planted.Bug) func(t *testing.T, sim *clienttest.Sim) {
	pause := 10 * time.Minute
	if d, err := time.ParseDuration(os.Getenv("TCM_FUZZ_PAUSE")); err == nil {
		pause = d
	}
	return func(t *testing.T, sim *clienttest.Sim) {
		c := planted.New(sim.URL, sim.Keys.Pro, sim, bug)
		c.Limit = 20
		err := c.Sync(t.Context())
		if err == nil {
			if err = sim.Sleep(t.Context(), pause); err == nil {
				err = c.Sync(t.Context())
			}
		}
		if err != nil {
			if sim.MayFail() {
				return // a key revoked, an answer that broke the contract
			}
			t.Fatalf("sync: %v", err)
		}
		served := sim.ServedEventIDs()
		if c.Count() != len(served) || !slices.Equal(c.IDs(), slices.Sorted(slices.Values(served))) {
			t.Fatalf("the client holds %d events (%d distinct), the simulator served %d", c.Count(), len(c.IDs()), len(served))
		}
	}
}

// calm is an input of a world with events and no trouble (no lead step,
// then the world): the planted fuzz targets replay it in go test (their
// bugs are for go test -fuzz to find).
var calm = []byte{0, 0, 1, 3, 3, 0, 0, 0}

// The correct client passes every input, answers that break the contract
// included.
func FuzzPlantedNone(f *testing.F) {
	clienttest.FuzzWith(f, clienttest.FuzzOptions{Break: true}, syncTwice(planted.None))
}

// planted1 fuzzes the planted client; TCM_FUZZ_BREAK=1 serves answers
// that break the contract to every target (ci/fuzz-planted.sh MODE=break:
// a bug within the contract is found in either mode).
func planted1(f *testing.F, bug planted.Bug, breaking bool) {
	breaking = breaking || os.Getenv("TCM_FUZZ_BREAK") == "1"
	clienttest.FuzzWith(f, clienttest.FuzzOptions{Break: breaking, Seeds: -1, Inputs: [][]byte{calm}}, syncTwice(bug))
}

func FuzzPlantedPanicOnNull(f *testing.F)   { planted1(f, planted.PanicOnNull, false) }
func FuzzPlantedCountTwiceTie(f *testing.F) { planted1(f, planted.CountTwiceTie, false) }
func FuzzPlantedTightRetry(f *testing.F)    { planted1(f, planted.TightRetry, false) }
func FuzzPlantedLoopOnCycle(f *testing.F)   { planted1(f, planted.LoopOnCycle, true) }
func FuzzPlantedDropUnknown(f *testing.F)   { planted1(f, planted.DropUnknown, true) }

// TestPlantedClient is the planted client's own test against a running
// simulator, for ci/fuzz-seeds.sh: TCM_BASE_URL is the simulator (started
// with --fuzz-seed N), TCM_PLANTED_BUG the bug (none: the correct client).
func TestPlantedClient(t *testing.T) {
	url := os.Getenv("TCM_BASE_URL")
	if url == "" {
		t.Skip("set TCM_BASE_URL to a simulator started with --fuzz-seed N (ci/fuzz-seeds.sh does)")
	}
	sim := clienttest.Start(t, clienttest.Options{URL: url})
	syncTwice(planted.Bug(os.Getenv("TCM_PLANTED_BUG")))(t, sim)
}

// The same input serves the same answers to the same requests: what a
// failing input saved under testdata/fuzz replays.
func TestFuzzReplaysExactly(t *testing.T) {
	for n := int64(1); n <= 6; n++ {
		p := fuzz.FromSeed(n, fuzz.Options{Break: true})
		var runs [2]fuzz.Report
		for i := range runs {
			t.Run("", func(t *testing.T) {
				clienttest.RunPlan(t, p, clienttest.FuzzOptions{Break: true}, func(t *testing.T, sim *clienttest.Sim) {
					syncTwice(planted.None)(t, sim)
					runs[i] = sim.Schedule.Snapshot()
				})
			})
		}
		if !reflect.DeepEqual(runs[0], runs[1]) {
			t.Errorf("seed %d served two ways:\n%s\n---\n%s", n, runs[0], runs[1])
		}
		if runs[0].Requests == 0 || len(runs[0].EventIDs) == 0 && p.World.History > time.Hour && p.World.FeedCap != 0 {
			t.Errorf("seed %d: %d requests, %d events", n, runs[0].Requests, len(runs[0].EventIDs))
		}
	}
}
