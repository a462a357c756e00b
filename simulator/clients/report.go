package clients

import (
	"fmt"
	"maps"
	"strings"

	"github.com/tcmkit/tcmkit/schemas/catalogue"
	"github.com/tcmkit/tcmkit/schemas/redact"
	"github.com/tcmkit/tcmkit/schemas/report"
)

// Exit statuses of a simulator run with a client report (cmd/simulator
// --client-report), by the report's outcome. The binary's own are 1 (it
// could not serve, or write the report) and 2 (a usage error).
const (
	ExitPassed = 0
	// ExitFailed: a client failed a client requirement or its scenario.
	ExitFailed = 3
	// ExitErrored: no client was judged (none sent a request), or some
	// key that sent one was not (past the judge's bound), whatever the
	// keys judged did: the report's outcome is errored, never passed.
	ExitErrored = 4
)

// ExitStatus is the exit status of a run whose client report has outcome o.
func ExitStatus(o report.Outcome) int {
	switch o {
	case report.Passed:
		return ExitPassed
	case report.Failed:
		return ExitFailed
	}
	return ExitErrored
}

// WriteReport judges the run as ended and writes its client report into
// dir (client-report.{json,md,html,junit.xml}), every string through the
// key redactors: keys of the simulator's prefix whole, and any fragment
// of its seeded keys. m.Kind is set; m.Errored is the verdicts'.
func (j *Judge) WriteReport(dir string, m report.Meta) (Verdicts, report.Report, error) {
	cat, err := catalogue.Load()
	if err != nil {
		return Verdicts{}, report.Report{}, err
	}
	v := j.Snapshot(true)
	m.Kind = report.KindClient
	r := Report(v, cat, m)
	keys := j.srv.Seeded()
	fragments := redact.New(keys.Pro, keys.Free, keys.Revoked)
	scrub := func(s string) string { return fragments.String(j.srv.RedactKeys(s)) }
	return v, r, r.WriteFiles(dir, scrub)
}

// Report maps the verdicts to a client report: a spec per key and client
// requirement (its finding is the failure), and one per key for the
// scenario. Verdicts that are errored (no client came, or keys were not
// judged) make an errored report: the outcome is the verdicts'.
func Report(v Verdicts, cat catalogue.Catalogue, m report.Meta) report.Report {
	v = v.ForReport() // the caps of the suite's reports
	if v.ClientsLeftOut > 0 {
		if m.Config == nil {
			m.Config = map[string]string{}
		}
		m.Config["clients left out"] = fmt.Sprintf("%d more clients are not shown (those that failed come first); GET /_control/clients has them all", v.ClientsLeftOut)
	}
	for _, c := range v.Clients {
		if c.Keyless != "" { // the same on every key's verdicts
			cfg := maps.Clone(m.Config)
			if cfg == nil {
				cfg = map[string]string{}
			}
			cfg["requests without a key"] = c.Keyless
			m.Config = cfg
			break
		}
	}
	var specs []report.Spec
	for _, c := range v.Clients {
		for _, r := range c.Requirements {
			if c.Key == "" && r.Result == NotExercised {
				continue // the requests without a key are no client: only what they did
			}
			s := report.Spec{Name: c.Name() + ": " + r.Must, Features: []string{"client"}, Requirements: []string{string(r.ID)}, Requests: r.Checked}
			switch r.Result {
			case Passed:
				s.State = report.ResultPassed
			case Failed:
				s.State = report.ResultFailed
				s.Failure = failureOf(c, r)
			default:
				s.State, s.SkipReason = report.ResultSkipped, "not exercised: "+r.Note
			}
			s.GinkgoState = string(s.State)
			specs = append(specs, s)
		}
		if sc := c.Scenario; sc != nil {
			s := report.Spec{Name: c.Name() + ": scenario " + sc.Name, Features: []string{"scenario"}, Requests: c.Requests}
			switch sc.Result {
			case Passed:
				s.State = report.ResultPassed
			case Failed:
				s.State, s.Failure = report.ResultFailed, &report.Failure{Message: "scenario " + sc.Name + " failed: " + sc.Behaviour}
			default:
				s.State, s.SkipReason = report.ResultSkipped, sc.Behaviour
			}
			s.GinkgoState = string(s.State)
			specs = append(specs, s)
		}
	}
	if v.Errored != "" {
		m.Errored = v.Errored
	}
	if v.Scenario != nil {
		cfg := make(map[string]string, len(m.Config)+1)
		for k, val := range m.Config {
			cfg[k] = val
		}
		cfg["scenario"] = v.Scenario.Name + ": " + v.Scenario.Does + "; a good client: " + v.Scenario.Expect
		m.Config = cfg
	}
	r := report.FromSpecs(specs, cat, m)
	// A spec counts the requests its requirement was checked on; the run,
	// and the feature, the requests judged.
	r.Totals.Requests = v.Requests
	for i := range r.Features {
		if r.Features[i].Feature == "client" {
			r.Features[i].Requests = v.Requests
		}
	}
	return r
}

// failureOf is the failure of a key on one requirement: its finding (the
// first request that broke it, how many did, the last), and the requests
// it names as the transcript.
func failureOf(c Client, r Verdict) *report.Failure {
	var f *Finding
	for i := range c.Findings {
		if c.Findings[i].Requirement == r.ID {
			f = &c.Findings[i]
		}
	}
	if f == nil { // cannot happen: a failed requirement has its finding
		return &report.Failure{Message: fmt.Sprintf("%d %s broke it: %s", r.Count, plural(r.Count, "request", "requests"), r.Must)}
	}
	msg := []string{fmt.Sprintf("1 finding, %d %s: %s", f.Count, plural(f.Count, "request", "requests"), r.Must), "", f.Request.String(), "    " + f.Evidence}
	transcript := []string{f.Request.String()}
	if f.Related != nil {
		transcript[0] = f.Related.String() + "\n" + transcript[0]
	}
	if f.Last != nil {
		msg = append(msg, fmt.Sprintf("… and %d more, the last:", f.Count-1), f.Last.String())
		if f.LastEvidence != "" {
			msg = append(msg, "    "+f.LastEvidence)
		}
		transcript = append(transcript, f.Last.String())
	}
	return &report.Failure{Message: strings.Join(msg, "\n"), Transcript: strings.Join(transcript, "\n\n")}
}
