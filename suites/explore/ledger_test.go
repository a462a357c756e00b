package explore_test

import (
	"slices"
	"testing"

	"github.com/tcmkit/tcmkit/schemas/catalogue"
	"github.com/tcmkit/tcmkit/suites/explore"
)

// The ledger and the explorer name the same transformations: each the
// ledger says judges a statement is sent, and each sent judges one.
func TestTransformationsAreTheLedgers(t *testing.T) {
	l, err := catalogue.LoadLedger()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tr := range explore.Transformations() {
		names = append(names, tr.Name)
	}
	for _, name := range l.Transformations() {
		if !slices.Contains(names, name) {
			t.Errorf("the ledger names %q, which the explorer does not send", name)
		}
	}
	for _, name := range names {
		if !slices.Contains(l.Transformations(), name) {
			t.Errorf("the explorer sends %q, which judges no statement of the ledger", name)
		}
	}
}
