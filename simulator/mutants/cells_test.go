package mutants

import (
	"slices"
	"strings"
	"testing"

	"github.com/tcmkit/tcmkit/schemas/catalogue"
)

// Every base fault names one requirement, so a cell fault's name says
// which requirement it breaks (lookupCell reads a map in any order).
func TestCellFaultNamesOneRequirement(t *testing.T) {
	by := map[string]string{}
	for id, b := range cellBases {
		if other, ok := by[b.fault]; ok {
			t.Errorf("cell fault %s breaks %s and %s", b.fault, other, id)
		}
		by[b.fault] = string(id)
	}
}

// Layers (--fault) accepts every cell fault by name and refuses a cell
// whose part is no probe's name (a fault that would never fire), with the
// nearest cell fault; the derived faults, whose names hold an @ too, keep
// their suggestion.
func TestLayersKnowTheCellFaults(t *testing.T) {
	for id, b := range cellBases {
		name := b.fault + "@free.cursor-page.n+1"
		layers, err := Layers(name)
		if err != nil || len(layers) != 1 || layers[0].Name != name || !layers[0].Fault {
			t.Fatalf("%s (%s): %v", name, id, err)
		}
		m, _ := Lookup(name)
		if m.Requirement != id {
			t.Errorf("%s breaks %s, want %s", name, m.Requirement, id)
		}
	}
	for name, want := range map[string]string{
		"events-without-channel@pro.frist-page.default":   "did you mean events-without-channel@pro.first-page.default?",
		"events-without-chanel@Pro.first-page.n+2":        "did you mean events-without-channel@pro.first-page.n+1?",
		"events-without-channel@pro.first-page.nope-nope": "unknown cell fault",
		"accept-malformed-key@cursor-pagx":                "did you mean accept-malformed-key@cursor-page?",
	} {
		_, err := Layers(name)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", name, err, want)
			continue
		}
		if strings.Contains(err.Error(), "did you mean") && strings.Contains(want, "unknown cell") {
			t.Errorf("%s: a suggestion for a part near no name: %v", name, err)
		}
	}
}

// A cell fault's name takes every request shape of the catalogue's probe
// grid, and the tracker tells each of them, and none else: a cell of a
// shape it did not tell would never fire.
func TestCellShapesAreTracked(t *testing.T) {
	for _, s := range catalogue.GridShapes() {
		if cellShaped[s] == nil {
			t.Errorf("cell faults do not tell the shape %s (cellShaped, cells.go)", s)
		}
	}
	for s := range cellShaped {
		if !slices.Contains(catalogue.GridShapes(), s) {
			t.Errorf("cell faults tell %s, no shape of the probe grid (schemas/catalogue/grid.go)", s)
		}
	}
}
