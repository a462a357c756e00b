// Package catalogue is the requirement catalogue of the conformance suite:
// every statement of the Tracked-Channel Monitoring API spec that a server
// must honour, with a stable id, its text and its section, and the
// statements the spec leaves open, with what the simulator chose.
//
// The catalogue is one embedded file, requirements.json; ids.go names each
// id as a typed constant (go generate), so that a spec of the suite, a
// named fault of the simulator or a client check names a requirement the
// compiler knows; CONTRACT.md, also generated, is the catalogue as a
// document that the README and the reports link to. Specs carry the ids
// they check as Ginkgo labels (upper case); lower-case labels are features.
// Coverage checks that every "must" requirement has a spec and that no spec
// names an unknown id.
package catalogue

//go:generate go run gen_ids.go
//go:generate go run gen_contract.go

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Kind says whether a server must honour a requirement or may choose.
type Kind string

const (
	// Must is a statement of the spec that every server must honour.
	Must Kind = "must"
	// Open is a statement the spec leaves open ("not shown"): a conforming
	// server (or client) may choose; the simulator's choice is recorded.
	Open Kind = "open"
	// Client is a statement of the spec that a client must honour; the
	// simulator judges the clients that talk to it by these.
	Client Kind = "client"
)

// ID is the stable id of a requirement, such as "FEED-ORDER".
type ID string

// All lists every id of the catalogue, in file order.
func All() []ID { return slices.Clone(all) }

// Requirement is one entry of the catalogue.
type Requirement struct {
	ID      ID     `json:"id"`
	Kind    Kind   `json:"kind"`
	Feature string `json:"feature"` // the suite's lower-case label it belongs to
	Section string `json:"section"` // the heading of the spec it comes from
	Text    string `json:"text"`    // quote or close paraphrase of the spec
	// SimulatorChoice says what the bundled simulator does where the spec
	// is open; empty for Must requirements.
	SimulatorChoice string `json:"simulatorChoice,omitempty"`
}

// Catalogue is the loaded, validated list of requirements, in file order.
// The zero value is an empty catalogue.
type Catalogue struct {
	Version      int
	Spec         string
	requirements []Requirement
	byID         map[ID]int
	shapes       map[ID][]Shape // the rows of the grid (grid.go)
}

//go:embed requirements.json
var embedded []byte

// Load parses and validates the embedded catalogue.
func Load() (Catalogue, error) { return Parse(embedded) }

// idPattern is the shape of a requirement id: upper-case words joined by
// hyphens. Ginkgo labels in upper case are read as ids, so the shape is what
// tells an id from a feature label.
var idPattern = regexp.MustCompile(`^[A-Z][A-Z0-9]*(-[A-Z0-9]+)*$`)

// IsID reports whether a label has the shape of a requirement id (as opposed
// to a lower-case feature label). It does not say the id exists.
func IsID(label string) bool { return idPattern.MatchString(label) }

// entry is a requirement as requirements.json writes it: the requirement
// and, for a must requirement, its row of the grid.
type entry struct {
	Requirement
	Shapes []Shape `json:"shapes"`
}

// Parse decodes a catalogue and validates it: ids well-formed and unique,
// text, section and feature present, kind must or open, a simulator
// choice for every open requirement, and shapes only on must requirements,
// each a shape of the grid, once. All problems are reported together.
func Parse(raw []byte) (Catalogue, error) {
	var file struct {
		Version      int     `json:"version"`
		Spec         string  `json:"spec"`
		Requirements []entry `json:"requirements"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields() // a misspelt field would silently drop data
	if err := dec.Decode(&file); err != nil {
		return Catalogue{}, fmt.Errorf("catalogue: decode: %w", err)
	}
	var errs []error
	if file.Version != 1 {
		errs = append(errs, fmt.Errorf("version %d, want 1", file.Version))
	}
	if len(file.Requirements) == 0 {
		errs = append(errs, errors.New("no requirements"))
	}
	c := Catalogue{Version: file.Version, Spec: file.Spec, byID: map[ID]int{}, shapes: map[ID][]Shape{}}
	for i, e := range file.Requirements {
		r := e.Requirement
		c.requirements = append(c.requirements, r)
		at := fmt.Sprintf("requirements[%d] %q", i, r.ID)
		if !IsID(string(r.ID)) {
			errs = append(errs, fmt.Errorf("%s: id must be upper-case words joined by hyphens", at))
		}
		if j, dup := c.byID[r.ID]; dup {
			errs = append(errs, fmt.Errorf("%s: duplicate id (first at requirements[%d])", at, j))
		} else {
			c.byID[r.ID] = i
		}
		if strings.TrimSpace(r.Text) == "" {
			errs = append(errs, fmt.Errorf("%s: empty text", at))
		}
		if strings.TrimSpace(r.Section) == "" {
			errs = append(errs, fmt.Errorf("%s: empty section", at))
		}
		if strings.TrimSpace(r.Feature) == "" || strings.ToLower(r.Feature) != r.Feature {
			errs = append(errs, fmt.Errorf("%s: feature %q must be a non-empty lower-case label", at, r.Feature))
		}
		switch r.Kind {
		case Must, Client:
			if r.SimulatorChoice != "" {
				errs = append(errs, fmt.Errorf("%s: simulatorChoice is only for open requirements", at))
			}
		case Open:
			if strings.TrimSpace(r.SimulatorChoice) == "" {
				errs = append(errs, fmt.Errorf("%s: open requirement without simulatorChoice", at))
			}
		default:
			errs = append(errs, fmt.Errorf("%s: kind %q, want %q, %q or %q", at, r.Kind, Must, Open, Client))
		}
		if e.Shapes == nil {
			continue
		}
		if r.Kind != Must {
			errs = append(errs, fmt.Errorf("%s: shapes are only for must requirements", at))
		}
		for j, s := range e.Shapes {
			if !slices.Contains(shapes, s) {
				errs = append(errs, fmt.Errorf("%s: shapes[%d] %q is no shape of the grid (%s)", at, j, s, joinShapes(shapes)))
			} else if slices.Index(e.Shapes, s) < j {
				errs = append(errs, fmt.Errorf("%s: shapes[%d] %q twice", at, j, s))
			}
		}
		if _, dup := c.shapes[r.ID]; !dup {
			c.shapes[r.ID] = e.Shapes
		}
	}
	if err := errors.Join(errs...); err != nil {
		return Catalogue{}, fmt.Errorf("catalogue: invalid: %w", err)
	}
	return c, nil
}

// Lookup returns the requirement with the given id.
func (c Catalogue) Lookup(id ID) (Requirement, bool) {
	i, ok := c.byID[id]
	if !ok {
		return Requirement{}, false
	}
	return c.requirements[i], true
}

// List returns every requirement, in file order. The slice is a copy.
func (c Catalogue) List() []Requirement { return slices.Clone(c.requirements) }

// Len is the number of requirements.
func (c Catalogue) Len() int { return len(c.requirements) }

// OfKind returns the requirements of one kind, in file order.
func (c Catalogue) OfKind(k Kind) []Requirement {
	var out []Requirement
	for _, r := range c.requirements {
		if r.Kind == k {
			out = append(out, r)
		}
	}
	return out
}

// IDs picks the requirement ids out of a spec's labels: every label with
// the shape of an id, in order, without duplicates. Feature labels are left out.
func IDs(labels []string) []string {
	var out []string
	for _, l := range labels {
		if IsID(l) && !slices.Contains(out, l) {
			out = append(out, l)
		}
	}
	return out
}

// Coverage is what a set of specs says about the catalogue.
type Coverage struct {
	// Uncovered lists Must requirements that no spec names, in file order.
	Uncovered []string
	// Unknown lists ids named by specs that the catalogue does not hold,
	// sorted, each with the specs that name it.
	Unknown map[string][]string
	// Specs maps each known id to the specs that name it.
	Specs map[string][]string
}

// Check relates specs (name → labels) to the catalogue.
func (c Catalogue) Check(specs map[string][]string) Coverage {
	cov := Coverage{Unknown: map[string][]string{}, Specs: map[string][]string{}}
	names := make([]string, 0, len(specs))
	for name := range specs {
		names = append(names, name)
	}
	slices.Sort(names) // deterministic order of spec names in the result
	for _, name := range names {
		for _, id := range IDs(specs[name]) {
			if _, ok := c.byID[ID(id)]; ok {
				cov.Specs[id] = append(cov.Specs[id], name)
			} else {
				cov.Unknown[id] = append(cov.Unknown[id], name)
			}
		}
	}
	for _, r := range c.requirements {
		if r.Kind == Must && len(cov.Specs[string(r.ID)]) == 0 {
			cov.Uncovered = append(cov.Uncovered, string(r.ID))
		}
	}
	return cov
}

// Err says what is wrong with the coverage, or nil when every Must
// requirement has a spec and every named id exists.
func (cov Coverage) Err() error {
	var errs []error
	if len(cov.Uncovered) > 0 {
		errs = append(errs, fmt.Errorf("requirements without a spec: %s", strings.Join(cov.Uncovered, ", ")))
	}
	unknown := make([]string, 0, len(cov.Unknown))
	for id := range cov.Unknown {
		unknown = append(unknown, id)
	}
	slices.Sort(unknown)
	for _, id := range unknown {
		errs = append(errs, fmt.Errorf("unknown requirement %s named by: %s", id, strings.Join(cov.Unknown[id], "; ")))
	}
	return errors.Join(errs...)
}
