package killmatrix

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/tcmkit/tcmkit/schemas/catalogue"
	"github.com/tcmkit/tcmkit/simulator/mutants"
	"github.com/tcmkit/tcmkit/suites/probe"
)

// The probe grid: requirement × key role × request shape × input class,
// the cells the suite's generated probes visit (suites/probe). Each cell
// wants a fault that a probe of the cell kills: a named fault whose role,
// shape and class are the cell's, or else the cell's own fault
// (mutants.CellFault: the requirement's base fault confined to the cell).
// A hole is a cell with no fault, a fault of no probe's cell, or, once
// the faults ran, a cell whose faults all survived.

// cellGrid is the grid and the faults of each cell.
type cellGrid struct {
	cells  []mutants.Cell
	faults map[mutants.Cell][]string // fault names
	// stray are named faults whose cell no probe visits
	stray []string
}

// faultRole, faultShape and faultClass place a named fault in the grid:
// by its requirement (a bad credential's), its shape, and for the faults of
// one input class, by name.
func faultRole(m mutants.Mutant) probe.Role {
	if r, ok := roleOf[baseName(m.Name)]; ok {
		return r
	}
	switch m.Requirement {
	case catalogue.HealthOK, catalogue.AuthMissing:
		return probe.None
	case catalogue.AuthMalformed:
		return probe.Malformed
	case catalogue.AuthUnknown:
		return probe.Unknown
	case catalogue.AuthRevoked:
		return probe.Revoked
	case catalogue.ProGate, catalogue.RateAllows20, catalogue.FeedTenant:
		return probe.Free
	case catalogue.RateLimit429, catalogue.RateRetryAfter, catalogue.RatePerKey:
		if m.Shape() == mutants.ShapeVideos {
			return probe.Pro // the operations interleaved
		}
		return probe.Free // the lockouts
	}
	if m.Shape() == mutants.ShapeOtherKey {
		return probe.Free
	}
	return probe.Pro
}

// roleOf are the faults of error answers, by the role that gets them.
var roleOf = map[string]probe.Role{
	"error-not-errorbody": probe.None, "errors-not-errorbody": probe.Revoked, "error-body-missing-message": probe.Free,
	"rate-limit-no-errorbody": probe.Free, "error-content-type": probe.None,
	"health-keyed-wrapped": probe.Pro, // with a key: the authenticated variant
}

// baseName is a fault's name without its shape.
func baseName(name string) string {
	base, _, _ := strings.Cut(name, "@")
	return base
}

func faultShape(m mutants.Mutant) probe.Shape {
	s := m.Shape()
	switch {
	case strings.HasPrefix(string(m.Requirement), "RATE-") || baseName(m.Name) == "rate-limit-no-errorbody":
		if s == mutants.ShapeVideos {
			return probe.BothOps
		}
		return probe.AfterBurst
	case m.Requirement == catalogue.FeedTenant && s != mutants.ShapeCursorPage:
		return probe.ReadByKey
	case m.Requirement == catalogue.FeedCursorEnd && (s == mutants.ShapeAny || s == mutants.ShapeFirstPage):
		return probe.DeepPage // where a walk ends
	case (m.Requirement == catalogue.FeedCursorWalk || m.Requirement == catalogue.EventIDUnique) && s != mutants.ShapeDeepPage && s != mutants.ShapeLongWalk && s != mutants.ShapeLiveHead:
		return probe.CursorPage
	}
	switch s {
	case mutants.ShapeCursorPage, mutants.ShapeDeepPage, mutants.ShapeLongWalk, mutants.ShapeAfterBurst, mutants.ShapeReadByOther:
		return probe.Shape(s)
	case mutants.ShapeLiveHead:
		return probe.LiveHead
	}
	return probe.FirstPage
}

// classOf are the faults of one input class, by base name.
var classOf = map[string]probe.Class{
	"limit-ignored": probe.At, "limit-off-by-one": probe.At, "limit-not-capped": probe.Above, "cap-first-page-only": probe.Above,
	"limit-above-max-rejected": probe.Above, "bad-limit-500": probe.JSONType, "bad-param-no-details": probe.JSONType,
	"accept-empty-ids": probe.Below, "reject-single-id": probe.At, "reject-max-ids": probe.At, "accept-too-many-ids": probe.Above,
	"reject-longest-id": probe.At, "accept-too-long-id": probe.Above, "accept-empty-id": probe.Below,
	"bad-body-200": probe.JSONType, "number-ids-accepted": probe.JSONType, "id-length-in-bytes": probe.Unicode,
	"id-length-utf16": probe.Unicode, "count-after-dedupe": probe.Above, "small-body-limit": probe.Unicode,
	"free-limit-100": probe.At, "reject-duplicates": probe.At,
	"videos-trailing-garbage": probe.Trailing, "videos-stub-shaped": probe.Shaped, "videos-trim-ids": probe.Whitespace,
}

func faultCell(m mutants.Mutant) mutants.Cell {
	class := probe.Default
	if c, ok := classOf[baseName(m.Name)]; ok {
		class = c
	}
	if faultShape(m) == probe.LongWalk {
		class = probe.At // the long walk is at limit=1
	}
	return mutants.Cell{Requirement: m.Requirement, Role: faultRole(m), Shape: faultShape(m), Class: class}
}

// makeCellGrid places the named faults, and a cell fault in every cell
// no named fault sits in.
func makeCellGrid(t *testing.T) cellGrid {
	t.Helper()
	cat, err := catalogue.Load()
	if err != nil {
		t.Fatal(err)
	}
	probes, err := probe.Generate(cat)
	if err != nil {
		t.Fatal(err)
	}
	g := cellGrid{faults: map[mutants.Cell][]string{}}
	seen := map[mutants.Cell]bool{}
	for _, p := range probes {
		c := mutants.Cell{Requirement: p.Requirement, Role: p.Role, Shape: p.Shape, Class: p.Input.Class}
		if !seen[c] {
			seen[c] = true
			g.cells = append(g.cells, c)
		}
	}
	for _, m := range mutants.All() {
		c := faultCell(m)
		if !seen[c] {
			g.stray = append(g.stray, fmt.Sprintf("%s (%s × %s)", m.Name, m.Requirement, c))
			continue
		}
		g.faults[c] = append(g.faults[c], m.Name)
	}
	for _, c := range g.cells {
		if len(g.faults[c]) > 0 {
			continue
		}
		if m, ok := mutants.CellFault(c); ok {
			g.faults[c] = append(g.faults[c], m.Name)
		}
	}
	return g
}

// cellFaults are the faults made for cells no named fault sits in.
func (g cellGrid) cellFaults() []string {
	var out []string
	for _, c := range g.cells {
		for _, f := range g.faults[c] {
			if _, named := namedFault(f); !named {
				out = append(out, f)
			}
		}
	}
	return out
}

// escapedCellsFile names the cell faults that survived a run of the whole
// grid once (fixed since): the sample runs each of them every time.
const escapedCellsFile = "testdata/escaped-cells.txt"

// worldSeeds: the cell faults judged in a world of another seed than the
// bundled one, where their cell holds something to break. The free key's
// pages 2 and 3 at limit 50 hold, in the bundled world, two
// members_only_changed events of two videos with no other in its feed, both
// already members-only: no fault confined to those pages changes what any
// rule can see (measured 2026-12-02). In the world of seed 1 they do.
var worldSeeds = map[string]int64{
	"members-only-always-on@free.cursor-page.default": 1,
}

// unstruckCellsFile names the cell faults that cannot strike observably in
// the bundled world (each with why): the whole grid runs them and fails on
// them, as it should, and the sample leaves them out until the world gives
// their cell something to break.
const unstruckCellsFile = "testdata/unstruck-cells.txt"

// cellsPerRequirement is how many cells of each requirement the sample
// takes, spread over its cells in grid order: one keeps the step within a
// minute (two took 85 s on 2 cores at load 5).
const cellsPerRequirement = 1

// sampledCells is the grid's part that CI runs (TCM_KILLMATRIX=cell-sample):
// of each requirement's cell faults, cellsPerRequirement spread evenly over
// them in grid order (the middle of each share), and every cell fault that
// ever escaped; the same cells on every run.
func (g cellGrid) sampledCells(escaped, unstruck map[string]bool) []string {
	byReq := map[catalogue.ID][]string{}
	var reqs []catalogue.ID
	for _, f := range g.cellFaults() {
		if unstruck[f] {
			continue
		}
		m, _ := mutants.Lookup(f)
		if _, ok := byReq[m.Requirement]; !ok {
			reqs = append(reqs, m.Requirement)
		}
		byReq[m.Requirement] = append(byReq[m.Requirement], f)
	}
	var out []string
	for _, id := range reqs {
		fs := byReq[id]
		for i := range min(cellsPerRequirement, len(fs)) {
			out = append(out, fs[(2*i+1)*len(fs)/(2*cellsPerRequirement)])
		}
		for _, f := range fs {
			if escaped[f] && !slices.Contains(out, f) {
				out = append(out, f)
			}
		}
	}
	return out
}

func namedFault(name string) (mutants.Mutant, bool) {
	m, ok := mutants.Lookup(name)
	return m, ok && slices.Contains(mutants.Names(), name)
}

// holes are the cells with no fault, or (with verdicts) none killed.
func (g cellGrid) holes(verdicts []verdict) []string {
	ran := map[string]verdict{}
	for _, v := range verdicts {
		ran[v.Fault] = v
	}
	var out []string
	for _, c := range g.cells {
		fs := g.faults[c]
		if len(fs) == 0 {
			out = append(out, fmt.Sprintf("%s × %s: no fault", c.Requirement, c))
			continue
		}
		tried, killed := 0, 0
		for _, f := range fs {
			if v, ok := ran[f]; ok {
				tried++
				if v.Killed() {
					killed++
				}
			}
		}
		if tried > 0 && killed == 0 {
			out = append(out, fmt.Sprintf("%s × %s: no fault killed (%s)", c.Requirement, c, strings.Join(fs, ", ")))
		}
	}
	return out
}

// Markdown renders the grid by requirement: its cells, and how many of
// them have a named fault, a cell fault, a kill.
func (g cellGrid) Markdown(verdicts []verdict) string {
	ran := map[string]verdict{}
	for _, v := range verdicts {
		ran[v.Fault] = v
	}
	var b strings.Builder
	named, made := 0, 0
	type row struct{ cells, named, made, killed, ran int }
	rows := map[catalogue.ID]*row{}
	var order []catalogue.ID
	for _, c := range g.cells {
		r, ok := rows[c.Requirement]
		if !ok {
			r = &row{}
			rows[c.Requirement] = r
			order = append(order, c.Requirement)
		}
		r.cells++
		isNamed, tried, killed := false, false, false
		for _, f := range g.faults[c] {
			if _, ok := namedFault(f); ok {
				isNamed = true
			}
			if v, ok := ran[f]; ok {
				tried = true
				killed = killed || v.Killed()
			}
		}
		if isNamed {
			r.named++
			named++
		} else {
			r.made++
			made++
		}
		if tried {
			r.ran++
		}
		if killed {
			r.killed++
		}
	}
	fmt.Fprintf(&b, "## Requirement × role × shape × input class\n\n%d cells that the generated probes visit (%d with a named fault, %d with a cell fault); killed counts the cells whose faults ran.\n\n| requirement | cells | named fault | cell fault | ran | killed |\n|---|---|---|---|---|---|\n", len(g.cells), named, made)
	for _, id := range order {
		r := rows[id]
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d | %d |\n", id, r.cells, r.named, r.made, r.ran, r.killed)
	}
	holes := g.holes(verdicts)
	fmt.Fprintf(&b, "\nHoles: %d", len(holes))
	if len(holes) > 0 {
		fmt.Fprintf(&b, ": %s", strings.Join(holes, "; "))
	}
	if len(g.stray) > 0 {
		fmt.Fprintf(&b, "\n\nNamed faults outside the probe grid (%d; the hand-written specs kill them): %s", len(g.stray), strings.Join(g.stray, "; "))
	}
	b.WriteString("\n")
	return b.String()
}

// The sample of the grid takes cells of every requirement that has cell
// faults, and every cell fault that escaped once, each of them a fault of
// the grid.
func TestCellSample(t *testing.T) {
	g := makeCellGrid(t)
	escaped, unstruck := listedFaults(t, escapedCellsFile), listedFaults(t, unstruckCellsFile)
	all := g.cellFaults()
	sample := g.sampledCells(escaped, unstruck)
	for f := range unstruck {
		if !slices.Contains(all, f) {
			t.Errorf("%s names %s, no cell fault of the grid", unstruckCellsFile, f)
		}
		if slices.Contains(sample, f) {
			t.Errorf("the sample takes %s, which cannot strike", f)
		}
	}
	in := map[catalogue.ID]bool{}
	for _, f := range sample {
		m, _ := mutants.Lookup(f)
		in[m.Requirement] = true
		if !slices.Contains(all, f) {
			t.Errorf("the sample takes %s, no cell fault of the grid", f)
		}
	}
	for _, f := range all {
		if m, _ := mutants.Lookup(f); !in[m.Requirement] {
			t.Errorf("no cell of %s in the sample", m.Requirement)
		}
	}
	for f := range escaped {
		if !slices.Contains(sample, f) {
			t.Errorf("%s escaped once and is not in the sample (or is no cell fault any more: %s)", f, escapedCellsFile)
		}
	}
	if !slices.Equal(sample, g.sampledCells(escaped, unstruck)) {
		t.Error("the sample is not the same on every call")
	}
	t.Logf("%d of %d cell faults sampled", len(sample), len(all))
}

// Every cell of the probe grid has a fault, and every fault's name finds
// it again; the grid and its holes are printed.
func TestProbeGrid(t *testing.T) {
	g := makeCellGrid(t)
	for _, c := range g.cells {
		for _, f := range g.faults[c] {
			m, ok := mutants.Lookup(f)
			if !ok || m.Requirement != c.Requirement {
				t.Errorf("%s × %s: fault %q is not found by its name", c.Requirement, c, f)
			}
		}
	}
	for _, h := range g.holes(nil) {
		t.Errorf("hole: %s", h)
	}
	t.Logf("%s", g.Markdown(nil))
}
