package tcmclient_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/tcmkit/tcmkit/ci/examples/clients/tcmclient"
	"github.com/tcmkit/tcmkit/simulator"
	"github.com/tcmkit/tcmkit/simulator/clienttest"
	"github.com/tcmkit/tcmkit/simulator/variant"
)

// The client depends on nothing the contract leaves open: it syncs against
// conforming servers whose every open choice is drawn (package
// simulator/variant: error strings, cursor shapes, layout, framing, rate
// accounting...), and the simulator's judge, reading each draw, finds no
// fault in it.
func TestSyncOnConformingDraws(t *testing.T) {
	draws := uint64(20)
	if testing.Short() {
		draws = 5
	}
	for n := range draws {
		t.Run(fmt.Sprint("draw", n), func(t *testing.T) {
			var cfg simulator.Config
			variant.New(n).Apply(&cfg)
			sim := clienttest.Start(t, clienttest.Options{Config: cfg})
			c := tcmclient.New(sim.URL, sim.Keys.Pro)
			c.Clock = sim
			feed := &tcmclient.Feed{Client: c}
			for i := range 10 {
				if _, err := feed.Sync(t.Context()); err != nil {
					t.Fatalf("sync %d: %v\n%s", i+1, err, variant.New(n))
				}
				if err := sim.Sleep(t.Context(), 5*time.Second); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}
