package mutants

import (
	"slices"
	"testing"

	"github.com/tcmkit/tcmkit/schemas/catalogue"
)

// Every shape a requirement's row of the catalogue names is one a fault
// can be confined to here (Applies would drop it without a word: a cell
// of the table with no fault and no hole), and every shape here but "any"
// is the catalogue's.
func TestShapesAreTheCatalogues(t *testing.T) {
	cat, err := catalogue.Load()
	if err != nil {
		t.Fatal(err)
	}
	ours := map[string]bool{}
	for _, s := range Shapes {
		ours[s.Name] = true
		if s.Name != ShapeAny && !slices.Contains(catalogue.Shapes(), catalogue.Shape(s.Name)) {
			t.Errorf("shape %s is not the catalogue's (schemas/catalogue/grid.go)", s.Name)
		}
	}
	for _, r := range cat.OfKind(catalogue.Must) {
		row, _ := cat.ShapesOf(r.ID)
		for _, s := range row {
			if !ours[string(s)] {
				t.Errorf("%s: its shapes name %s, a shape no fault can be confined to (Shapes, derived.go)", r.ID, s)
			}
		}
		if applies := Applies(r.ID); len(applies) != len(row)+1 {
			t.Errorf("%s: Applies = %v, for the row %v", r.ID, applies, row)
		}
	}
}
