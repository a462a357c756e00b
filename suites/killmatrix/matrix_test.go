package killmatrix

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/tcmkit/tcmkit/schemas/catalogue"
	"github.com/tcmkit/tcmkit/schemas/report"
)

// verdict is what one run of the suite with one fault on says about it.
type verdict struct {
	Fault       string
	Requirement string
	// KilledBy are the failed specs that carry the requirement's label.
	KilledBy []string
	// Others are the failed specs that do not: collateral, or a spec that
	// names the wrong requirement.
	Others []string
	// Named: some killing spec's failure names the request it judged
	// (method and path), so a reader knows what to send again.
	Named bool
	// Misblamed are the requirements other than the broken one that the
	// failures blame (their problems' requirements): one fault, one blame.
	Misblamed []string
	// Unproven are the failures without their evidence: a transcript and
	// a curl line of a request, and a rerun line.
	Unproven []string
	// Errored says why the run could not judge the target (the suite's
	// setup failed, or there is no report); "" if it judged it.
	Errored string
	Took    time.Duration
}

// Killed reports whether a spec that checks the broken requirement failed.
func (v verdict) Killed() bool { return len(v.KilledBy) > 0 && v.Errored == "" }

// Result is the verdict in one word, for the matrix.
func (v verdict) Result() string {
	switch {
	case v.Errored != "":
		return "ERRORED"
	case v.Killed():
		return "killed"
	case len(v.Others) > 0:
		return "SURVIVED (other specs failed)"
	}
	return "SURVIVED"
}

// namesRequest reports whether a failure message names a request of the
// API: a method and one of its paths.
func namesRequest(msg string) bool {
	for _, m := range []string{"GET /api/", "POST /api/"} {
		if strings.Contains(msg, m) {
			return true
		}
	}
	return false
}

// setupNodes are the nodes whose failure means the run errored: the suite
// never judged the target.
const setupNodes = types.NodeTypeBeforeSuite | types.NodeTypeSynchronizedBeforeSuite

// judge reads a run's Ginkgo report for a fault that breaks requirement.
func judge(fault, requirement string, reports []types.Report) verdict {
	v := verdict{Fault: fault, Requirement: requirement}
	if len(reports) == 0 {
		v.Errored = "the run wrote no Ginkgo report"
		return v
	}
	for _, r := range reports {
		for _, s := range r.SpecReports {
			if !s.Failed() {
				continue
			}
			if s.LeafNodeType.Is(setupNodes) {
				v.Errored = firstLine(s.FailureMessage())
				continue
			}
			if !s.LeafNodeType.Is(types.NodeTypeIt) {
				continue // a ReportAfterSuite or cleanup node: not a spec
			}
			blamed, structured := blames(s)
			if !structured {
				blamed = s.Labels() // a failure that says nothing structured: its labels
			}
			for _, b := range blamed {
				if b != requirement && catalogue.IsID(b) && !slices.Contains(v.Misblamed, b) && structured {
					v.Misblamed = append(v.Misblamed, b)
				}
			}
			if !proven(s) {
				v.Unproven = append(v.Unproven, s.FullText())
			}
			if slices.Contains(blamed, requirement) {
				v.KilledBy = append(v.KilledBy, s.FullText())
				v.Named = v.Named || namesRequest(s.FailureMessage())
			} else {
				v.Others = append(v.Others, s.FullText())
			}
		}
	}
	return v
}

// blames reads the requirements a failed spec's problems blame, and
// whether it recorded problems at all.
func blames(s types.SpecReport) ([]string, bool) {
	var out []string
	found := false
	for _, e := range s.ReportEntries {
		if e.Name != report.EntryProblems {
			continue
		}
		found = true
		var ps []report.Problem
		if json.Unmarshal([]byte(entryText(e)), &ps) == nil {
			for _, p := range ps {
				if !slices.Contains(out, p.Requirement) {
					out = append(out, p.Requirement)
				}
			}
		}
	}
	return out, found
}

// proven reports whether a failed spec carries its evidence: an exchange
// with a transcript and a curl line, and a rerun line.
func proven(s types.SpecReport) bool {
	var evidence, rerun bool
	for _, e := range s.ReportEntries {
		switch e.Name {
		case report.EntryEvidence:
			var xs []report.Exchange
			if json.Unmarshal([]byte(entryText(e)), &xs) == nil {
				for _, x := range xs {
					evidence = evidence || x.Transcript != "" && strings.HasPrefix(x.Curl, "curl ")
				}
			}
		case report.EntryRerun:
			rerun = strings.Contains(entryText(e), "--focus")
		}
	}
	return evidence && rerun
}

// entryText is a report entry's string value, as a JSON report holds it.
func entryText(e types.ReportEntry) string {
	var s string
	if json.Unmarshal([]byte(e.Value.AsJSON), &s) == nil {
		return s
	}
	return e.Value.Representation
}

// failures lists every failed node of a run, setup nodes included: what a
// faultless run must not have.
func failures(reports []types.Report) []string {
	var out []string
	for _, r := range reports {
		for _, s := range r.SpecReports {
			if s.Failed() {
				text := s.FullText()
				if text == "" {
					text = s.LeafNodeType.String()
				}
				out = append(out, text+": "+firstLine(s.FailureMessage()))
			}
		}
		if len(r.SpecReports) == 0 && !r.SuiteSucceeded {
			out = append(out, "the suite did not succeed: "+strings.Join(r.SpecialSuiteFailureReasons, "; "))
		}
	}
	return out
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// matrix is the outcome of a kill-matrix run.
type matrix struct {
	Mode      string // how the faults were turned on
	Subset    string // "" for every registered fault, else what chose them
	Started   time.Time
	Took      time.Duration
	Clean     []string // failures of the faultless run (none expected)
	CleanTook time.Duration
	Verdicts  []verdict
}

// Rate is the kill rate: killed faults over all faults.
func (m matrix) Rate() (killed, all int) {
	for _, v := range m.Verdicts {
		if v.Killed() {
			killed++
		}
	}
	return killed, len(m.Verdicts)
}

func (m matrix) RateLine() string {
	k, n := m.Rate()
	pct := 0.0
	if n > 0 {
		pct = 100 * float64(k) / float64(n)
	}
	return fmt.Sprintf("kill rate: %d of %d faults killed (%.1f%%)", k, n, pct)
}

// Markdown renders the matrix: one row per fault, then the faultless run
// and the collateral failures.
func (m matrix) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Kill matrix of the conformance suite\n\n")
	fmt.Fprintf(&b, "Each named fault of the simulator (package simulator/mutants) breaks one requirement; the suite ran once per fault (%s) and once without faults.\n\n", m.Mode)
	fmt.Fprintf(&b, "- started: %s, wall time %s\n", m.Started.UTC().Format(time.RFC3339), m.Took.Round(time.Millisecond))
	if m.Subset != "" {
		fmt.Fprintf(&b, "- faults: %d, chosen by %s (not every registered fault)\n", len(m.Verdicts), m.Subset)
	}
	if len(m.Clean) == 0 {
		fmt.Fprintf(&b, "- faultless run: no failure (%s)\n", m.CleanTook.Round(time.Millisecond))
	} else {
		fmt.Fprintf(&b, "- faultless run: %d FAILURE(S)\n", len(m.Clean))
		for _, f := range m.Clean {
			fmt.Fprintf(&b, "  - %s\n", cell(f))
		}
	}
	fmt.Fprintf(&b, "- %s\n\n", m.RateLine())
	fmt.Fprintf(&b, "| fault | requirement | result | killed by |\n|---|---|---|---|\n")
	for _, v := range m.Verdicts {
		by := strings.Join(v.KilledBy, "<br>")
		if v.Errored != "" {
			by = v.Errored
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", cell(v.Fault), cell(v.Requirement), v.Result(), cell(by))
	}
	var collateral []verdict
	for _, v := range m.Verdicts {
		if len(v.Others) > 0 {
			collateral = append(collateral, v)
		}
	}
	if len(collateral) > 0 {
		fmt.Fprintf(&b, "\n## Other specs that failed\n\nSpecs without the fault's requirement label that failed too: consequences of the fault, or specs that should carry the label.\n\n")
		fmt.Fprintf(&b, "| fault | requirement | other failed specs |\n|---|---|---|\n")
		for _, v := range collateral {
			fmt.Fprintf(&b, "| %s | %s | %s |\n", cell(v.Fault), cell(v.Requirement), cell(strings.Join(v.Others, "<br>")))
		}
	}
	return b.String()
}

// Text renders the matrix for the test log: one line per fault.
func (m matrix) Text() string {
	var b strings.Builder
	width := len("fault")
	for _, v := range m.Verdicts {
		width = max(width, len(v.Fault))
	}
	fmt.Fprintf(&b, "%-*s  %-22s  %s\n", width, "fault", "requirement", "result / killed by")
	for _, v := range m.Verdicts {
		detail := strings.Join(v.KilledBy, " | ")
		if v.Errored != "" {
			detail = v.Errored
		} else if !v.Killed() {
			detail = v.Result()
			if len(v.Others) > 0 {
				detail += ": " + strings.Join(v.Others, " | ")
			}
		}
		fmt.Fprintf(&b, "%-*s  %-22s  %s\n", width, v.Fault, v.Requirement, detail)
	}
	if len(m.Clean) == 0 {
		fmt.Fprintf(&b, "faultless run: no failure\n")
	} else {
		fmt.Fprintf(&b, "faultless run: %d failure(s): %s\n", len(m.Clean), strings.Join(m.Clean, " | "))
	}
	fmt.Fprintf(&b, "%s; wall time %s\n", m.RateLine(), m.Took.Round(time.Millisecond))
	return b.String()
}

// cell makes a string safe for one Markdown table cell.
func cell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ", "\r", "").Replace(s)
}
