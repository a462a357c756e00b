package catalogue

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// The ledger: every normative statement the kit answers to, each with an
// id, its text and how the kit judges it. Its statements are every
// sentence and table row of the contract (a copy of the API owner's
// document is embedded, so a test can hold the ledger to it) and the
// statements of the standards the contract names (HTTP, Bearer tokens,
// JSON, URIs) that bear on a request or an answer of its three operations.
// The requirements are the ledger's checkable part; the ledger says, for
// each statement, which requirements judge it, which request
// transformations send it, or why it is out of the kit's scope.

// ContractPath is where the copy of the contract lives in the repository;
// SharedContract is the API owner's document beside a clone, which the copy
// must equal.
const (
	ContractPath   = "schemas/catalogue/tracked-channel-monitoring-api.md"
	SharedContract = "../shared/spec/tracked-channel-monitoring-api.md"
)

//go:embed tracked-channel-monitoring-api.md
var contractText []byte

//go:embed ledger.json
var ledgerJSON []byte

// Contract is the embedded copy of the contract.
func Contract() []byte { return slices.Clone(contractText) }

// How a statement is judged.
const (
	// ByRule: the oracle's rules of its must requirements judge every answer.
	ByRule = "rule"
	// ByOpen: the contract leaves it open; every reading the entry names passes.
	ByOpen = "open"
	// ByClient: a client's duty, judged by the simulator's client judge.
	ByClient = "client"
	// ByTransformation: two requests the statement says mean the same (or
	// differ) are both sent, and their answers compared.
	ByTransformation = "transformation"
	// OutOfScope: not judged, with the reason.
	OutOfScope = "out-of-scope"
)

// Source is a document the ledger quotes.
type Source struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	Where string `json:"where"`
}

// Statement is one normative statement and how the kit judges it.
type Statement struct {
	ID      string `json:"id"`
	Source  string `json:"source"`
	Section string `json:"section"`
	// Text is the statement: for the contract, the sentence or table row
	// exactly as the contract's units read (ContractUnits); for a standard,
	// its words, quoted or closely paraphrased.
	Text   string `json:"text"`
	Judged string `json:"judged"`
	// Requirements judge it (rule, open, client; a transformation's answer
	// is judged by them too).
	Requirements []ID `json:"requirements,omitempty"`
	// Transformations are the explorer's, by name (ByTransformation).
	Transformations []string `json:"transformations,omitempty"`
	// Readings: where the contract or a standard leaves a reading open,
	// which readings pass.
	Readings string `json:"readings,omitempty"`
	// Reason: why it is out of scope, or a note on how it is judged.
	Reason string `json:"reason,omitempty"`
	// Cites: public reports of servers that got it wrong.
	Cites []string `json:"cites,omitempty"`
}

// Ledger is the loaded, validated ledger.
type Ledger struct {
	Version    int         `json:"version"`
	Sources    []Source    `json:"sources"`
	Statements []Statement `json:"statements"`
}

var ledgerIDPattern = regexp.MustCompile(`^[A-Z][A-Z0-9]*(-[A-Z0-9.]+)+$`)

// LoadLedger is the embedded ledger, validated against the catalogue:
// parsed once (every report and run asks for it); its slices are shared,
// not to be changed.
func LoadLedger() (Ledger, error) { return loadLedger() }

var loadLedger = sync.OnceValues(func() (Ledger, error) {
	c, err := Load()
	if err != nil {
		return Ledger{}, err
	}
	return ParseLedger(ledgerJSON, c)
})

// ParseLedger decodes a ledger and validates it: ids well-formed and
// unique, every source known, every statement judged one of the five ways
// with what that way needs (requirements the catalogue knows and of the
// right kind, transformations, a reason). All problems are reported
// together.
func ParseLedger(raw []byte, c Catalogue) (Ledger, error) {
	var l Ledger
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&l); err != nil {
		return Ledger{}, fmt.Errorf("ledger: decode: %w", err)
	}
	var errs []error
	sources := map[string]bool{}
	for _, s := range l.Sources {
		sources[s.ID] = true
	}
	seen := map[string]bool{}
	for i, s := range l.Statements {
		at := fmt.Sprintf("statements[%d] %q", i, s.ID)
		if !ledgerIDPattern.MatchString(s.ID) || seen[s.ID] {
			errs = append(errs, fmt.Errorf("%s: id malformed or repeated", at))
		}
		seen[s.ID] = true
		if !sources[s.Source] {
			errs = append(errs, fmt.Errorf("%s: unknown source %q", at, s.Source))
		}
		if strings.TrimSpace(s.Text) == "" || s.Section == "" {
			errs = append(errs, fmt.Errorf("%s: no text or no section", at))
		}
		errs = append(errs, s.check(c, at)...)
	}
	if len(errs) > 0 {
		return Ledger{}, fmt.Errorf("ledger: %w", errors.Join(errs...))
	}
	return l, nil
}

// mainKind is the kind of requirement each way of judging must name at
// least one of (a statement may name requirements of other kinds beside:
// a client's side of a server's rule).
var mainKind = map[string]Kind{
	ByRule:           Must,
	ByOpen:           Open,
	ByClient:         Client,
	ByTransformation: "",
	OutOfScope:       "",
}

func (s Statement) check(c Catalogue, at string) []error {
	var errs []error
	want, ok := mainKind[s.Judged]
	if !ok {
		return []error{fmt.Errorf("%s: judged %q: rule, open, client, transformation or out-of-scope", at, s.Judged)}
	}
	named := false
	for _, id := range s.Requirements {
		r, ok := c.Lookup(id)
		if !ok {
			errs = append(errs, fmt.Errorf("%s: requirement %s is not in the catalogue", at, id))
		}
		named = named || r.Kind == want
	}
	if want != "" && !named {
		errs = append(errs, fmt.Errorf("%s: judged by %s, and names no %s requirement", at, s.Judged, want))
	}
	switch s.Judged {
	case ByOpen:
		if s.Readings == "" {
			errs = append(errs, fmt.Errorf("%s: open, and says no reading that passes", at))
		}
	case ByTransformation:
		if len(s.Transformations) == 0 {
			errs = append(errs, fmt.Errorf("%s: judged by transformation, and names none", at))
		}
	case OutOfScope:
		if s.Reason == "" || len(s.Requirements) > 0 {
			errs = append(errs, fmt.Errorf("%s: out of scope needs a reason and no requirement", at))
		}
	}
	return errs
}

// Of lists the statements of one source, in ledger order.
func (l Ledger) Of(source string) []Statement {
	var out []Statement
	for _, s := range l.Statements {
		if s.Source == source {
			out = append(out, s)
		}
	}
	return out
}

// Transformations lists every transformation the ledger names, once each,
// in ledger order.
func (l Ledger) Transformations() []string {
	var out []string
	for _, s := range l.Statements {
		for _, t := range s.Transformations {
			if !slices.Contains(out, t) {
				out = append(out, t)
			}
		}
	}
	return out
}

// Unit is one sentence or table row of the contract, under its section.
type Unit struct {
	Section string
	Text    string
}

// ContractUnits cuts a Markdown contract into its statements: every data
// row of a table (its cells joined by " | "), and every sentence of a
// paragraph or list item (a sentence ends at a full stop followed by a
// space and a capital letter or a backquote). Headings name the section
// and are not statements; a table's header row names its columns.
func ContractUnits(md []byte) []Unit {
	var out []Unit
	var h2, h3 string
	section := func() string {
		if h2 == "" {
			return "Preamble"
		}
		if h3 != "" {
			return h2 + " > " + h3
		}
		return h2
	}
	var para []string
	flush := func() {
		if len(para) > 0 {
			for _, s := range sentences(strings.Join(para, " ")) {
				out = append(out, Unit{section(), s})
			}
			para = nil
		}
	}
	header := false
	for _, line := range strings.Split(string(md), "\n") {
		t := strings.TrimSpace(line)
		switch {
		case t == "":
			flush()
			header = false
		case strings.HasPrefix(t, "#"):
			flush()
			level := len(t) - len(strings.TrimLeft(t, "#"))
			name := strings.TrimSpace(t[level:])
			switch level {
			case 2:
				h2, h3 = name, ""
			case 3:
				h3 = name
			}
		case strings.HasPrefix(t, "|"):
			flush()
			cells := tableCells(t)
			switch {
			case !header:
				header = true // the columns' names
			case isSeparator(cells):
			default:
				out = append(out, Unit{section(), strings.TrimSpace(strings.Join(cells, " | "))})
			}
		case listItem.MatchString(t):
			flush()
			para = append(para, listItem.ReplaceAllString(t, ""))
		default:
			para = append(para, t)
		}
	}
	flush()
	return out
}

var listItem = regexp.MustCompile(`^([-*]|\d+\.)\s+`)

func tableCells(row string) []string {
	row = strings.TrimSuffix(strings.TrimPrefix(row, "|"), "|")
	cells := strings.Split(row, "|")
	for i := range cells {
		cells[i] = strings.TrimSpace(cells[i])
	}
	return cells
}

func isSeparator(cells []string) bool {
	for _, c := range cells {
		if strings.Trim(c, "-: ") != "" {
			return false
		}
	}
	return true
}

// sentences cuts a paragraph after a full stop that a space and a capital
// letter or a backquote follow ("i.e. an object" stays whole).
func sentences(p string) []string {
	var out []string
	rs := []rune(p)
	start := 0
	for i := 0; i+2 < len(rs); i++ {
		if rs[i] == '.' && rs[i+1] == ' ' && (rs[i+2] == '`' || rs[i+2] >= 'A' && rs[i+2] <= 'Z') {
			out = append(out, strings.TrimSpace(string(rs[start:i+1])))
			start = i + 2
		}
	}
	if rest := strings.TrimSpace(string(rs[start:])); rest != "" {
		out = append(out, rest)
	}
	return out
}

// Uncovered holds the ledger to the contract's units: the units no
// statement of the contract quotes (in its section), and the contract's
// statements that quote no unit (stale after the contract changed).
func (l Ledger) Uncovered(units []Unit) (missing []Unit, stale []Statement) {
	quoted := map[Unit]int{}
	for _, s := range l.Of("contract") {
		quoted[Unit{s.Section, s.Text}]++
	}
	have := map[Unit]bool{}
	for _, u := range units {
		have[u] = true
		if quoted[u] == 0 {
			missing = append(missing, u)
		}
	}
	for _, s := range l.Of("contract") {
		if !have[Unit{s.Section, s.Text}] {
			stale = append(stale, s)
		}
	}
	return missing, stale
}
