package killmatrix

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tcmkit/tcmkit/schemas/catalogue"
	"github.com/tcmkit/tcmkit/simulator/mutants"
)

// grid is the kill matrix as the table of requirement × request shape it
// was derived from (the catalogue's rows, "shapes" in
// schemas/catalogue/requirements.json, as mutants.Applies reads them): for each must requirement, each
// shape on which it can be broken, and what the faults there did. A cell
// that applies and has no fault is a hole.
type grid struct {
	shapes []string
	rows   []gridRow
}

type gridRow struct {
	req   string
	cells []gridCell
}

// gridCell is one requirement on one shape.
type gridCell struct {
	applies             bool
	faults, ran, killed int // ran: a subset of the faults may run
}

func (c gridCell) String() string {
	switch {
	case !c.applies:
		return ""
	case c.faults == 0:
		return "·" // a hole
	case c.ran == 0:
		return "-"
	case c.killed == c.ran:
		return fmt.Sprintf("✓%d", c.killed)
	}
	return fmt.Sprintf("✗%d/%d", c.ran-c.killed, c.ran)
}

// makeGrid places every mutant, and the verdicts of those that ran.
func makeGrid(musts []catalogue.ID, verdicts []verdict) grid {
	g := grid{}
	for _, s := range mutants.Shapes {
		g.shapes = append(g.shapes, s.Name)
	}
	ran := map[string]verdict{}
	for _, v := range verdicts {
		ran[v.Fault] = v
	}
	index := map[string]int{}
	for i, s := range g.shapes {
		index[s] = i
	}
	for _, id := range musts {
		row := gridRow{req: string(id), cells: make([]gridCell, len(g.shapes))}
		for _, s := range mutants.Applies(id) {
			row.cells[index[s]].applies = true
		}
		for _, m := range mutants.All() {
			if m.Requirement != id {
				continue
			}
			c := &row.cells[index[m.Shape()]]
			c.applies = true
			c.faults++
			if v, ok := ran[m.Name]; ok {
				c.ran++
				if v.Killed() {
					c.killed++
				}
			}
		}
		g.rows = append(g.rows, row)
	}
	return g
}

// Size counts the applicable cells and the holes among them.
func (g grid) Size() (cells, holes int) {
	for _, r := range g.rows {
		for _, c := range r.cells {
			if c.applies {
				cells++
				if c.faults == 0 {
					holes++
				}
			}
		}
	}
	return cells, holes
}

// Holes names the cells that apply and have no fault.
func (g grid) Holes() []string {
	var out []string
	for _, r := range g.rows {
		for i, c := range r.cells {
			if c.applies && c.faults == 0 {
				out = append(out, r.req+" × "+g.shapes[i])
			}
		}
	}
	return out
}

func (g grid) SizeLine() string {
	cells, holes := g.Size()
	return fmt.Sprintf("table: %d must requirements × %d shapes; %d cells apply, %d of them have faults, %d holes", len(g.rows), len(g.shapes), cells, cells-holes, holes)
}

// Markdown renders the grid: ✓n every fault of the cell killed, ✗k/n k
// survived, · a hole (applies, no fault), - not run, blank: does not apply.
func (g grid) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "## Requirement × request shape\n\n%s. ✓n: the cell's n faults that ran all killed; ✗k/n: k of the n that ran survived; ·: a hole (the shape applies, no fault); -: not run; blank: the shape does not apply.\n\n", g.SizeLine())
	fmt.Fprintf(&b, "| requirement | %s |\n|---|%s\n", strings.Join(g.shapes, " | "), strings.Repeat("---|", len(g.shapes)))
	for _, r := range g.rows {
		cells := make([]string, len(r.cells))
		for i, c := range r.cells {
			cells[i] = c.String()
		}
		fmt.Fprintf(&b, "| %s | %s |\n", r.req, strings.Join(cells, " | "))
	}
	b.WriteString("\nShapes:\n\n")
	for _, s := range mutants.Shapes {
		fmt.Fprintf(&b, "- %s: %s\n", s.Name, s.Says)
	}
	if holes := g.Holes(); len(holes) > 0 {
		fmt.Fprintf(&b, "\nHoles: %s\n", strings.Join(holes, "; "))
	}
	return b.String()
}

// Text renders the grid for the test log, one row a requirement.
func (g grid) Text() string {
	var b strings.Builder
	width := 0
	for _, r := range g.rows {
		width = max(width, len(r.req))
	}
	fmt.Fprintf(&b, "%-*s", width, "")
	for i := range g.shapes {
		fmt.Fprintf(&b, " %-5s", fmt.Sprintf("s%d", i))
	}
	b.WriteString("\n")
	for _, r := range g.rows {
		fmt.Fprintf(&b, "%-*s", width, r.req)
		for _, c := range r.cells {
			fmt.Fprintf(&b, " %-5s", c.String())
		}
		b.WriteString("\n")
	}
	for i, s := range g.shapes {
		fmt.Fprintf(&b, "s%d=%s ", i, s)
	}
	fmt.Fprintf(&b, "\n%s\n", g.SizeLine())
	return b.String()
}

// mustIDs are the catalogue's must requirements, in file order.
func mustIDs(t *testing.T) []catalogue.ID {
	t.Helper()
	cat, err := catalogue.Load()
	if err != nil {
		t.Fatal(err)
	}
	var out []catalogue.ID
	for _, r := range cat.OfKind(catalogue.Must) {
		out = append(out, r.ID)
	}
	return out
}

// Every must requirement has a row whose applicable shapes the table knows,
// and every mutant sits in a cell that applies.
func TestGridCoversEveryMust(t *testing.T) {
	musts := mustIDs(t)
	for _, id := range musts {
		if mutants.Applies(id) == nil {
			t.Errorf(`%s: the table says nothing of the shapes it applies to ("shapes" in schemas/catalogue/requirements.json)`, id)
		}
	}
	for _, m := range mutants.All() {
		applies := mutants.Applies(m.Requirement)
		found := false
		for _, s := range applies {
			found = found || s == m.Shape()
		}
		if !found {
			t.Errorf("%s breaks %s on %s, a shape the table does not apply it to", m.Name, m.Requirement, m.Shape())
		}
	}
	g := makeGrid(musts, []verdict{{Fault: "oldest-first", Requirement: "FEED-ORDER", KilledBy: []string{"x"}}})
	md := g.Markdown()
	if !strings.Contains(md, "| FEED-ORDER | ✓1 |") {
		t.Errorf("the grid does not show oldest-first killed under FEED-ORDER × any:\n%s", md)
	}
	t.Logf("%s; holes: %s", g.SizeLine(), strings.Join(g.Holes(), "; "))
}
