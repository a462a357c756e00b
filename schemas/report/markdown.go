package report

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/tcmkit/tcmkit/schemas/catalogue"
)

// MaxMarkdown is the size the Markdown form keeps to: a merge-request
// comment holds 65,536 characters.
const MaxMarkdown = 60_000

// mdShape is how much of the failures the Markdown form shows.
type mdShape struct {
	transcript int  // bytes of each transcript's end; 0 leaves them out
	lines      int  // lines of each failure message; 0 for all
	failures   int  // failures shown in full; the rest are named; 0 for all
	allSpecs   bool // the specs table lists every spec, not only those that did not pass
	note       string
}

// mdShapes are tried in turn until the Markdown fits MaxMarkdown.
var mdShapes = []mdShape{
	{transcript: MaxTranscript, allSpecs: true},
	{transcript: 2 << 10, lines: 40, allSpecs: true, note: "transcripts cut to their last 2 KiB"},
	{lines: 25, allSpecs: true, note: "transcripts left out"},
	{lines: 12, failures: 40, note: "transcripts left out, messages cut, passed and skipped specs not listed"},
	{lines: 4, failures: 15, note: "transcripts left out, messages cut, only the first failures in full, passed and skipped specs not listed"},
}

// Markdown renders the report for a merge request or a CI job summary: the
// whole of it when it fits MaxMarkdown, else shortened step by step, saying
// so (the HTML and JSON forms keep everything).
func (r Report) Markdown() ([]byte, error) {
	var out []byte
	for _, shape := range mdShapes {
		if out = r.markdown(shape); len(out) <= MaxMarkdown {
			break
		}
	}
	return out, nil
}

func (r Report) markdown(shape mdShape) []byte {
	var b bytes.Buffer
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	prefix := r.commonPrefix()
	short := func(name string) string { return strings.TrimPrefix(name, prefix) }
	r.mdHead(p, shape)
	// Failures first: what to fix, with what to send again, comes before
	// the tables.
	r.mdFailures(p, shape, short)
	r.mdRequirements(p, short)
	r.mdSpecs(p, shape, prefix, short)
	r.mdConfig(p)
	return b.Bytes()
}

// mdHead is the outcome, what it does not vouch for (first), the
// requirements not met, the run's summary table and its errors.
func (r Report) mdHead(p func(string, ...any), shape mdShape) {
	p("# %s: %s\n\n", r.Title(), strings.ToUpper(string(r.Outcome)))
	p("**%s** %s\n\n", outcomeMark(r.Outcome), r.Headline())
	if head := r.UnverifiedHead(); head != "" {
		p("**%s**\n\n", head)
		for _, g := range r.UnverifiedGroups() {
			ids := make([]string, len(g.IDs))
			for i, id := range g.IDs {
				ids[i] = "`" + id + "`"
			}
			p("- %s: %s\n", strings.Join(ids, ", "), cell(g.Line))
		}
		p("\n")
	}
	if line := r.LedgerLine(); line != "" {
		p("%s\n\n", line)
	}
	if shape.note != "" {
		files := r.files()
		p("> Shortened to fit a merge-request comment: %s. The HTML and JSON reports (%s, %s) hold everything.\n\n", shape.note, files[2].name, files[0].name)
	}
	var notMet []string
	for _, q := range r.Requirements {
		if q.Result == ResultFailed {
			notMet = append(notMet, "`"+q.ID+"`")
		}
	}
	if len(notMet) > 0 {
		p("Not met: %s (see [Failures](#failures)).\n\n", strings.Join(notMet, ", "))
	}
	p("| | |\n|---|---|\n")
	p("| Target | %s |\n", cell(r.Target))
	p("| Date | %s |\n", cell(r.Started.Format(time.RFC3339)))
	p("| Duration | %s |\n", cell(fmt.Sprintf("%.1f s", r.DurationSeconds)))
	p("| %s | %s |\n", r.VersionLabel(), cell(r.SuiteVersion))
	p("| Catalogue | version %d: [the contract, in the kit's words](%s) |\n", r.CatalogueVersion, catalogue.DocURL)
	p("| Specs | %s |\n", r.SpecLine())
	p("| HTTP requests | %d |\n\n", r.Totals.Requests)

	if len(r.Errors) > 0 {
		p("## %s\n\n%s\n\n", r.ErrorsTitle(), r.ErrorsNote())
		for _, e := range r.Errors {
			p("%s\n", fence(e))
		}
	}
	if len(r.UnknownRequirements) > 0 {
		p("## Unknown requirement ids\n\nSpecs name ids the catalogue does not hold: %s\n\n", cell(strings.Join(r.UnknownRequirements, ", ")))
	}
}

// mdFailures is each failure: what it breaks, where, its rerun line, its
// message and the requests it rests on (as many as the shape keeps).
func (r Report) mdFailures(p func(string, ...any), shape mdShape, short func(string) string) {
	failures := r.Failures()
	if len(failures) == 0 {
		return
	}
	p("## Failures\n\n")
	for i, s := range failures {
		if shape.failures > 0 && i == shape.failures {
			p("And %d more failures, named in the table of specs below.\n\n", len(failures)-i)
			break
		}
		p("### %s\n\n", cell(short(s.Name)))
		if blamed := s.Failure.Blamed(); len(blamed) > 0 {
			p("- Breaks: %s\n", cell(strings.Join(blamed, ", ")))
		} else if len(s.Requirements) > 0 {
			p("- Requirements: %s\n", cell(strings.Join(s.Requirements, ", ")))
		}
		if s.Node != "" {
			p("- Node: %s\n", cell(s.Node))
		}
		if s.Failure.Location != "" {
			p("- Location: `%s`\n", s.Failure.Location)
		}
		if n := len(s.Failure.Evidence); n > 0 {
			p("- Requests: %d sent by the spec; the %d it rests on below (a shared walk's pages too)\n", s.Requests, n)
		} else {
			p("- Requests: %d\n", s.Requests)
		}
		if s.Failure.Rerun != "" {
			p("- Rerun: `%s`\n", strings.ReplaceAll(s.Failure.Rerun, "`", "'"))
		}
		p("\n%s\n", fence(headLines(s.Failure.Message, shape.lines)))
		for i, x := range s.Failure.Evidence {
			if shape.transcript == 0 && i > 0 {
				break // shortened: the first request's curl line only
			}
			if x.Curl != "" {
				p("%s\n", fence(x.Curl))
			}
			if x.Transcript != "" && shape.transcript > 0 {
				p("<details><summary>%s (keys redacted)</summary>\n\n%s\n</details>\n\n", cell(x.Request), fence(lastLines(x.Transcript, shape.transcript)))
			}
		}
		if s.Failure.Transcript != "" && shape.transcript > 0 {
			// Folded: a summary page with many failures stays readable.
			p("<details><summary>HTTP transcript, %d %s (keys redacted)</summary>\n\n%s\n</details>\n\n",
				s.Requests, plural(s.Requests, "request", "requests"), fence(lastLines(s.Failure.Transcript, shape.transcript)))
		}
	}
}

// mdRequirements is the table of requirements and the specs that checked
// each.
func (r Report) mdRequirements(p func(string, ...any), short func(string) string) {
	p("## Requirements\n\n")
	p("Each id is a heading of [the contract, in the kit's words](%s): its id in lower case is its anchor.\n\n", catalogue.DocURL)
	p("| Result | Id | Requirement | Section | Checked by |\n|---|---|---|---|---|\n")
	for _, q := range r.Requirements {
		text := q.Text
		if q.Reason != "" {
			text += " — *" + q.Reason + "*"
		}
		if q.SimulatorChoice != "" {
			text += " — simulator: " + q.SimulatorChoice
		}
		checked := make([]string, len(q.Specs))
		for i, name := range q.Specs {
			checked[i] = short(name)
		}
		p("| %s %s | `%s` | %s | %s | %s |\n", resultMark(q.Result), q.Result, q.ID, cell(text), cell(q.Section), cell(strings.Join(checked, "; ")))
	}
	p("\n")
}

// mdSpecs is the table of features and the table of specs (those that did
// not pass or skip, when the shape is short).
func (r Report) mdSpecs(p func(string, ...any), shape mdShape, prefix string, short func(string) string) {
	if len(r.Features) > 0 {
		p("## Features\n\n| Feature | Specs | Passed | Failed | Skipped | Requests |\n|---|---|---|---|---|---|\n")
		for _, f := range r.Features {
			p("| %s | %d | %d | %d | %d | %d |\n", cell(f.Feature), f.Specs, f.Passed, f.Failed, f.Skipped, f.Requests)
		}
		p("\n")
	}

	p("## Specs\n\n")
	if prefix != "" {
		p("Names leave out the common %q.\n\n", strings.TrimSpace(prefix))
	}
	if !shape.allSpecs {
		p("Only the specs that did not pass or skip; the HTML and JSON reports list all %d.\n\n", len(r.Specs))
	}
	p("| State | Spec | Requirements | Duration | Requests | Note |\n|---|---|---|---|---|---|\n")
	for _, s := range r.Specs {
		if !shape.allSpecs && (s.State == ResultPassed || s.State == ResultSkipped) {
			continue
		}
		note := s.SkipReason
		if s.Failure != nil {
			note = firstLine(s.Failure.Message)
		}
		p("| %s %s | %s | %s | %.3f s | %d | %s |\n", resultMark(s.State), s.State, cell(short(s.Name)), cell(strings.Join(s.Requirements, ", ")), s.DurationSeconds, s.Requests, cell(note))
	}
	p("\n")
}

// mdConfig is the run's settings, keys redacted.
func (r Report) mdConfig(p func(string, ...any)) {
	if len(r.Config) == 0 {
		return
	}
	p("## Configuration\n\nKeys are redacted.\n\n| Setting | Value |\n|---|---|\n")
	keys := make([]string, 0, len(r.Config))
	for k := range r.Config {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		p("| %s | %s |\n", cell(k), cell(r.Config[k]))
	}
	p("\n")
}

// headLines keeps the first n lines of s (all when n is 0), saying how
// many it left out.
func headLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if n == 0 || len(lines) <= n {
		return s
	}
	return strings.Join(lines[:n], "\n") + fmt.Sprintf("\n… (%d more lines in the HTML and JSON reports)", len(lines)-n)
}

// Title names the report: a server's conformance report, or a client's.
func (r Report) Title() string {
	if r.Kind == KindClient {
		return "Client conformance report"
	}
	return "Conformance report"
}

// Subject is what the report judges: a server, or clients.
func (r Report) Subject() string {
	if r.Kind == KindClient {
		return "client"
	}
	return "server"
}

// VersionLabel names what SuiteVersion is the version of: the suite, or
// the simulator that judged the clients.
func (r Report) VersionLabel() string {
	if r.Kind == KindClient {
		return "Judged by"
	}
	return "Suite version"
}

// Headline is the one-sentence summary of the outcome. That of a run that
// did not finish never says it passed.
func (r Report) Headline() string {
	why := ""
	if len(r.Errors) > 0 {
		why = ": " + strings.TrimSuffix(firstLine(r.Errors[0]), ":")
	}
	switch r.Outcome {
	case Errored:
		return "The run errored, the target was not fully judged" + why + "."
	case Incomplete:
		line := "The run is incomplete, the target was not fully judged" + why + "."
		if n := r.notMet(); r.Totals.Failed > 0 {
			line += fmt.Sprintf(" Before it ended %d %s failed; %d %s not met.", r.Totals.Failed, plural(r.Totals.Failed, "spec", "specs"), n, plural(n, "requirement", "requirements"))
		}
		return line
	case Failed:
		if r.Totals.Failed == 0 {
			n := len(r.Unverified)
			return fmt.Sprintf("No spec failed, but %d must %s not verified, and --require-all asks for every one.",
				n, plural(n, "requirement was", "requirements were"))
		}
		n := r.notMet()
		return fmt.Sprintf("%d of the %d specs that ran failed (%d skipped); %d %s not met.",
			r.Totals.Failed, r.Totals.Ran(), r.Totals.Skipped, n, plural(n, "requirement", "requirements"))
	default:
		return fmt.Sprintf("All %d specs that ran passed (%d skipped).", r.Totals.Passed, r.Totals.Skipped)
	}
}

// notMet counts the requirements a problem blames.
func (r Report) notMet() int {
	n := 0
	for _, q := range r.Requirements {
		if q.Result == ResultFailed {
			n++
		}
	}
	return n
}

// ErrorsTitle heads the reasons the run did not finish.
func (r Report) ErrorsTitle() string {
	if r.Kind == KindClient {
		return "Why the run errored"
	}
	return "Why the run is incomplete"
}

// ErrorsNote says what the reasons mean for the results.
func (r Report) ErrorsNote() string {
	if r.Kind == KindClient {
		return "The suite could not judge the target; the results below are incomplete."
	}
	return "The run did not finish: the target was not fully judged, and the results below are partial."
}

// UnverifiedHead is the line that heads the must requirements no spec
// verified, or says that every one was; "" for a client report.
func (r Report) UnverifiedHead() string {
	if r.Kind == KindClient {
		return ""
	}
	musts := 0
	for _, q := range r.Requirements {
		if q.Kind == catalogue.Must {
			musts++
		}
	}
	if len(r.Unverified) == 0 {
		// What was judged, not a verdict: the outcome says how.
		return fmt.Sprintf("Judged: all %d must requirements, each by a spec (the outcome above says with what result).", musts)
	}
	then := "--require-all makes them fail the run"
	if r.RequireAll {
		then = "--require-all: they fail the run"
	}
	return fmt.Sprintf("Not verified: %d of the %d must requirements (no spec judged them; %s):", len(r.Unverified), musts, then)
}

// UnverifiedGroup is the requirements of one line of the unverified.
type UnverifiedGroup struct {
	IDs  []string
	Line string
}

// UnverifiedGroups are the unverified must requirements, those with the
// same line together, in catalogue order.
func (r Report) UnverifiedGroups() []UnverifiedGroup {
	var out []UnverifiedGroup
	at := map[string]int{}
	for _, u := range r.Unverified {
		line := u.Line()
		i, ok := at[line]
		if !ok {
			i = len(out)
			at[line] = i
			out = append(out, UnverifiedGroup{Line: line})
		}
		out[i].IDs = append(out[i].IDs, u.ID)
	}
	return out
}

// Failures lists the specs and suite nodes that failed, in report order.
func (r Report) Failures() []Spec {
	var out []Spec
	for _, s := range r.Specs {
		if s.Failure != nil {
			out = append(out, s)
		}
	}
	return out
}

func outcomeMark(o Outcome) string {
	switch o {
	case Passed:
		return "✅ PASSED"
	case Failed:
		return "❌ FAILED"
	case Incomplete:
		return "⚠️ INCOMPLETE"
	default:
		return "⚠️ ERRORED"
	}
}

func resultMark(r Result) string {
	switch r {
	case ResultPassed:
		return "✅"
	case ResultFailed:
		return "❌"
	case ResultSkipped:
		return "⏭️"
	case ResultBlocked:
		return "⛔"
	case ResultErrored:
		return "⚠️"
	default:
		return "➖"
	}
}

// cell makes s safe inside one Markdown table cell.
func cell(s string) string {
	s = strings.TrimSpace(s)
	s = strings.NewReplacer("\\", "\\\\", "|", "\\|", "<", "&lt;", ">", "&gt;", "\r\n", "<br>", "\n", "<br>").Replace(s)
	return s
}

// fence wraps s in a code fence longer than any backtick run inside it.
func fence(s string) string {
	longest, run := 0, 0
	for _, c := range s {
		if c == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	f := strings.Repeat("`", max(3, longest+1))
	return f + "text\n" + strings.TrimRight(s, "\n") + "\n" + f + "\n"
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Ran is how many specs ran: passed, failed or stopped while running.
func (c Counts) Ran() int { return c.Passed + c.Failed + c.Errored }

// SpecLine counts the specs by state, and says how many were meant to run.
func (r Report) SpecLine() string {
	line := fmt.Sprintf("%d ran: %d passed, %d failed", r.Totals.Ran(), r.Totals.Passed, r.Totals.Failed)
	if r.Totals.Errored > 0 {
		line += fmt.Sprintf(", %d stopped by the run's end", r.Totals.Errored)
	}
	if r.Totals.Blocked > 0 {
		line += fmt.Sprintf("; %d blocked (a precondition failed)", r.Totals.Blocked)
	}
	line += fmt.Sprintf("; %d skipped", r.Totals.Skipped)
	if r.Planned.InSuite > 0 {
		line += fmt.Sprintf("; %d selected of %d in the suite", r.Planned.Selected, r.Planned.InSuite)
	}
	if r.Totals.Specs == 0 && r.Planned.Selected > 0 {
		line += "; none ran"
	}
	return line
}
