package catalogue

import (
	"slices"
	"strings"
	"testing"
)

// Every must requirement has its row of the grid ("shapes" in
// requirements.json, [] for one broken on any request alike); the faults
// of the simulator are confined to the shapes of the row.
func TestEveryMustHasItsShapes(t *testing.T) {
	c, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range c.OfKind(Must) {
		if _, ok := c.ShapesOf(r.ID); !ok {
			t.Errorf(`%s: no "shapes" in requirements.json (the request shapes on which a server can break it; [] for none beyond any request)`, r.ID)
		}
	}
	for _, r := range c.List() {
		if _, ok := c.ShapesOf(r.ID); ok && r.Kind != Must {
			t.Errorf("%s (%s) has shapes", r.ID, r.Kind)
		}
	}
}

// The rows are read as written, and a caller's copy is its own.
func TestShapesOf(t *testing.T) {
	c, err := Parse([]byte(`{"version":1,"requirements":[
		{"id":"A","kind":"must","feature":"auth","section":"S","text":"T","shapes":["videos","first-page"]},
		{"id":"B","kind":"must","feature":"auth","section":"S","text":"T","shapes":[]},
		{"id":"C","kind":"must","feature":"auth","section":"S","text":"T"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	row, ok := c.ShapesOf("A")
	if !ok || !slices.Equal(row, []Shape{ShapeVideos, ShapeFirstPage}) {
		t.Errorf("A: %v, %v", row, ok)
	}
	row[0] = ShapeBigCounts
	if again, _ := c.ShapesOf("A"); again[0] != ShapeVideos {
		t.Errorf("ShapesOf hands out the catalogue's own row")
	}
	if row, ok := c.ShapesOf("B"); !ok || len(row) != 0 {
		t.Errorf("B: %v, %v; want an empty row", row, ok)
	}
	if _, ok := c.ShapesOf("C"); ok {
		t.Errorf("C has no shapes, but ShapesOf says it has")
	}
}

// The names of the grid are parts of a cell fault's name
// (FAULT@ROLE.SHAPE.CLASS): unique in their dimension, lower case, and
// free of the separators.
func TestGridNames(t *testing.T) {
	check := func(dim string, names []string) {
		for i, n := range names {
			if n == "" || strings.ToLower(n) != n || strings.ContainsAny(n, "@. \t") {
				t.Errorf("%s %q: want a lower-case name without @, . or spaces", dim, n)
			}
			if slices.Index(names, n) != i {
				t.Errorf("%s %q twice", dim, n)
			}
		}
	}
	check("role", strs(Roles()))
	check("shape", strs(Shapes()))
	check("class", strs(Classes()))
	for _, s := range GridShapes() {
		if !slices.Contains(Shapes(), s) {
			t.Errorf("grid shape %s is not among Shapes", s)
		}
	}
}

func strs[S ~string](xs []S) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = string(x)
	}
	return out
}
