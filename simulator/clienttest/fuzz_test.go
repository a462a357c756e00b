package clienttest_test

import (
	"os"
	"slices"
	"testing"
	"time"

	"github.com/tcmkit/tcmkit/simulator/clienttest"
	"github.com/tcmkit/tcmkit/simulator/clienttest/internal/planted"
)

// syncTwice is a client's own fuzz test: sync the feed, let ten minutes
// pass, sync again; the client must hold every event served, once.
func syncTwice(bug planted.Bug) func(t *testing.T, sim *clienttest.Sim) {
	return func(t *testing.T, sim *clienttest.Sim) {
		c := planted.New(sim.URL, sim.Keys.Pro, sim, bug)
		c.Limit = 20
		err := c.Sync(t.Context())
		if err == nil {
			if err = sim.Sleep(t.Context(), 10*time.Minute); err == nil {
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

// calm is an input of a world with events and no trouble: the planted
// fuzz targets replay it in go test (their bugs are for go test -fuzz to
// find).
var calm = []byte{0, 1, 3, 3, 0, 0, 0}

// The correct client passes every input, answers that break the contract
// included.
func FuzzPlantedNone(f *testing.F) {
	clienttest.FuzzWith(f, clienttest.FuzzOptions{Break: true}, syncTwice(planted.None))
}

func planted1(f *testing.F, bug planted.Bug, breaking bool) {
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
