package variant_test

import (
	"testing"

	"github.com/tcmkit/tcmkit/simulator"
	"github.com/tcmkit/tcmkit/simulator/clienttest"
	"github.com/tcmkit/tcmkit/simulator/variant"
)

// A client's test against a conforming draw, judged by the simulator: a
// client that depends on what the contract does not promise (an error
// string, a cursor's shape, Content-Length, the order of keys) breaks on
// some draw.
func Example_clientTest() {
	var t *testing.T // your test's
	for n := range uint64(20) {
		var cfg simulator.Config
		variant.New(n).Apply(&cfg)
		sim := clienttest.Start(t, clienttest.Options{Config: cfg})
		_ = sim.URL // point your client at sim.URL with sim.Keys.Pro
	}
}
