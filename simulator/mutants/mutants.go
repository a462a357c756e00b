// Package mutants holds the named faults of the simulator: each one breaks
// one "must" requirement of the catalogue (schemas/catalogue), observably
// over HTTP, and keeps every other rule it can. The kill matrix
// (suites/killmatrix) runs the conformance suite once per mutant and
// expects a failed spec labelled with the mutant's requirement; client
// developers turn one on (cmd/simulator --fault NAME) to see how their
// client copes with a server that misbehaves in one precise way.
//
// A mutant is a layer around one operation's handler
// (simulator.Config.Layers): it serves the request with the real
// handler, so authentication, rate limits and the order of the checks stay
// the server's, and changes the answer or the request in one way. Outages
// that break no rule (an error status, a delay, a cut body) are not
// mutants: they are the simulator's injected faults.
//
// The faults are derived from a table of requirement × request shape
// (the catalogue's rows, read by Applies in grid.go; the shapes, Shapes, in
// derived.go): the hand-written ones (table.go) break a
// requirement on every request they touch or on one named shape; the
// derived ones (derived.go, named FAULT@SHAPE) confine a fault to one shape
// with the combinator on, starting where one-rule breaks written blind
// passed the suite; and each requirement's base fault is generated for
// every applicable cell nothing else covers, so that the kill matrix shows
// each cell with its verdict, and any cell without a fault as a hole.
package mutants

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tcmkit/tcmkit/schemas/catalogue"
	"github.com/tcmkit/tcmkit/schemas/settings"
	"github.com/tcmkit/tcmkit/simulator"
)

// Mutant is one named fault.
type Mutant struct {
	Name        string
	Requirement catalogue.ID // the must requirement it breaks
	Does        string       // what it does, for people
	Ops         []simulator.Operation
	fresh       func() serveFunc
}

var (
	feedOnly   = []simulator.Operation{simulator.OpFeed}
	videosOnly = []simulator.Operation{simulator.OpVideos}
	healthOnly = []simulator.Operation{simulator.OpHealth}
	keyed      = []simulator.Operation{simulator.OpFeed, simulator.OpVideos}
)

// All lists every mutant, grouped by requirement.
func All() []Mutant { return slices.Clone(table) }

// Names lists every mutant's name, sorted.
func Names() []string {
	names := make([]string, len(table))
	for i, m := range table {
		names[i] = m.Name
	}
	slices.Sort(names)
	return names
}

// Lookup returns the mutant of a name.
func Lookup(name string) (Mutant, bool) {
	i := slices.IndexFunc(table, func(m Mutant) bool { return m.Name == name })
	if i < 0 {
		return lookupCell(name)
	}
	return table[i], true
}

// unknown is the error for a fault name that is none: the nearest name, not
// the whole list (--list-faults prints that).
// A name of a cell fault's form (FAULT@ROLE.SHAPE.CLASS) gets the nearest
// cell fault, and how one is named.
func unknown(name string) error {
	trimmed := strings.TrimSpace(name)
	if _, _, cell := splitCell(trimmed); cell {
		if s := suggestCell(trimmed); s != "" {
			return fmt.Errorf("unknown fault %q (did you mean %s? --list-faults says how cell faults are named)", name, s)
		}
		return fmt.Errorf("unknown cell fault %q (FAULT@ROLE.SHAPE.CLASS; --list-faults lists each part's names)", name)
	}
	if s := settings.Suggest(trimmed, Names()); s != "" {
		return fmt.Errorf("unknown fault %q (did you mean %s? --list-faults lists the %d)", name, s, len(table))
	}
	return fmt.Errorf("unknown fault %q (--list-faults lists the %d)", name, len(table))
}

// Layers turns the named mutants on, for simulator.Config.Layers of one
// server: one layer a fault, named after it. Their state (what a mutant
// remembers of the requests it saw) is made here, shared by the
// operations of that server.
func Layers(names ...string) ([]simulator.Layer, error) {
	var layers []simulator.Layer
	for _, name := range names {
		m, ok := Lookup(strings.TrimSpace(name))
		if !ok {
			return nil, unknown(name)
		}
		layers = append(layers, m.Layer())
	}
	return layers, nil
}

// Layer is the mutant as a layer of one server, with its own state.
func (m Mutant) Layer() simulator.Layer {
	serve := m.fresh()
	return simulator.Layer{Name: m.Name, Fault: true, Wrap: func(s *simulator.Server, op simulator.Operation, next simulator.Answerer) simulator.Answerer {
		if !slices.Contains(m.Ops, op) {
			return next
		}
		return wrap(s, serve, next)
	}}
}
