package catalogue

import (
	"bytes"
	"fmt"
	"strings"
)

// Document is CONTRACT.md: the catalogue as a document, then the ledger.
func Document() ([]byte, error) {
	c, err := Load()
	if err != nil {
		return nil, err
	}
	l, err := ParseLedger(ledgerJSON, c)
	if err != nil {
		return nil, err
	}
	return append(append(c.ContractDoc(), '\n'), l.doc()...), nil
}

var judgedTitles = map[string]string{
	ByRule:           "rule",
	ByTransformation: "transformation",
	ByOpen:           "open",
	ByClient:         "client",
	OutOfScope:       "out of scope",
}

// doc writes the ledger: each source's statements as a table, each with
// how the kit judges it.
func (l Ledger) doc() []byte {
	var b bytes.Buffer
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	count := map[string]int{}
	for _, s := range l.Statements {
		count[s.Judged]++
	}
	p("## The ledger\n\n")
	p("Every sentence and table row of the contract, and the statements of the standards it names that bear\n")
	p("on a request or an answer of its three operations, %d in all, each with an id and how the kit judges it\n", len(l.Statements))
	p("(from [`ledger.json`](ledger.json); `go test ./schemas/catalogue` fails while a sentence or row of the\n")
	p("contract, in its copy [`tracked-channel-monitoring-api.md`](tracked-channel-monitoring-api.md), has no statement here):\n\n")
	for _, j := range []string{ByRule, ByTransformation, ByOpen, ByClient, OutOfScope} {
		p("- **%s** (%d): %s\n", judgedTitles[j], count[j], judgedSays[j])
	}
	p("\n")
	for _, src := range l.Sources {
		stmts := l.Of(src.ID)
		if len(stmts) == 0 {
			continue
		}
		where := src.Where
		if strings.HasPrefix(where, "http") {
			where = "<" + where + ">"
		} else if strings.HasPrefix(where, "schemas/catalogue/") {
			where = "[" + strings.TrimPrefix(where, "schemas/catalogue/") + "](" + strings.TrimPrefix(where, "schemas/catalogue/") + ")"
		}
		p("### %s\n\n%s\n\n", mdText(src.Title), where)
		p("| Id | Section | Statement | Judged | By |\n|---|---|---|---|---|\n")
		for _, s := range stmts {
			p("| %s | %s | %s | %s | %s |\n", s.ID, cell(mdText(s.Section)), cell(mdText(s.Text)), judgedTitles[s.Judged], cell(s.by()))
		}
		p("\n")
	}
	return append(bytes.TrimRight(b.Bytes(), "\n"), '\n')
}

var judgedSays = map[string]string{
	ByRule:           "the oracle's rules of the requirements named judge every answer of a run.",
	ByTransformation: "the explorer sends the request as the statement transforms it, and the answer must be the plain request's (or differ as the statement says).",
	ByOpen:           "the contract leaves it open; every reading named passes.",
	ByClient:         "a client's duty, judged by the simulator's client judge.",
	OutOfScope:       "not judged, for the reason given.",
}

// by says what judges a statement: its requirements (linked), its
// transformations, the readings that pass, the reason or note, the cites.
func (s Statement) by() string {
	var parts []string
	var reqs []string
	for _, id := range s.Requirements {
		reqs = append(reqs, fmt.Sprintf("[%s](#%s)", id, strings.ToLower(string(id))))
	}
	if len(reqs) > 0 {
		parts = append(parts, strings.Join(reqs, ", "))
	}
	if len(s.Transformations) > 0 {
		parts = append(parts, "transformations `"+strings.Join(s.Transformations, "`, `")+"`")
	}
	if s.Readings != "" {
		parts = append(parts, "Readings that pass: "+mdText(s.Readings))
	}
	if s.Reason != "" {
		parts = append(parts, mdText(s.Reason))
	}
	for i, c := range s.Cites {
		parts = append(parts, fmt.Sprintf("[report %d](%s)", i+1, c))
	}
	return strings.Join(parts, "; ")
}

// cell keeps a text inside one table cell: a pipe ends a cell.
func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
