package tcmclient_test

import (
	"testing"
	"time"

	"github.com/tcmkit/tcmkit/ci/examples/clients/tcmclient"
	"github.com/tcmkit/tcmkit/simulator/clienttest"
)

// The test of the README's walkthrough: the client against the simulator
// in this process, through a 429 storm; the simulator judges it when the
// test ends.
func TestSync(t *testing.T) {
	sim := clienttest.Start(t, clienttest.Options{Scenario: "429-storm"})
	c := tcmclient.New(sim.URL, sim.Keys.Pro)
	c.Clock = sim // Now and Sleep: a wait moves the simulator's clock, a 60 s Retry-After takes no time
	feed := &tcmclient.Feed{Client: c}
	if _, err := feed.Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
	// More than the feed's rate allows in a minute, paced: and then the
	// new events once.
	for range 25 {
		if err := sim.Sleep(t.Context(), time.Second); err != nil {
			t.Fatal(err)
		}
		if _, err := feed.Sync(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
}
