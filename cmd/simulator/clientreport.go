package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/tcmkit/tcmkit/schemas/catalogue"
	"github.com/tcmkit/tcmkit/schemas/redact"
	"github.com/tcmkit/tcmkit/schemas/report"
	"github.com/tcmkit/tcmkit/simulator"
	"github.com/tcmkit/tcmkit/simulator/clients"
)

// The client judge of the binary: --scenario, --list-scenarios,
// --client-report, --no-client-judge.

// printScenarios lists the scenarios: name, moment, what the simulator
// does, what a good client does.
func printScenarios(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SCENARIO\tWHEN\tWHAT THE SIMULATOR DOES\tWHAT A GOOD CLIENT DOES")
	for _, s := range clients.Scenarios() {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", s.Name, s.When, s.Does, s.Expect)
	}
	tw.Flush()
}

// judging says at start how clients are judged.
func judging(o options, info simulator.Info) string {
	if o.noJudge {
		return "not judged (--no-client-judge)"
	}
	parts := []string{"judged on the client requirements: GET " + info.ControlURL + "/clients"}
	if info.ControlURL == "" {
		parts[0] = "judged on the client requirements"
	}
	if o.scenario != "" {
		parts = append(parts, "scenario "+o.scenario+" armed")
	}
	if o.clientReport != "" {
		parts = append(parts, "report at exit in "+o.clientReport)
	}
	return strings.Join(parts, "; ")
}

// writeClientReport writes the final verdicts as a client report, every
// string through the key redactors: keys of the simulator's prefix whole,
// and any fragment of the seeded keys.
func writeClientReport(o options, sim *simulator.Server, info simulator.Info, started time.Time, stdout io.Writer) error {
	judge, ok := o.cfg.Clients.(*clients.Judge)
	if !ok {
		return fmt.Errorf("--client-report: no client judge")
	}
	cat, err := catalogue.Load()
	if err != nil {
		return err
	}
	v := judge.Snapshot(true)
	r := clientReport(v, cat, report.Meta{
		Kind:         report.KindClient,
		Target:       "the clients of " + info.URL,
		SuiteVersion: "the tcmkit simulator's client judge",
		Started:      started,
		Finished:     time.Now(),
		Config:       reportConfig(o),
	})
	keys := sim.Seeded()
	fragments := redact.New(keys.Pro, keys.Free, keys.Revoked)
	if err := r.WriteFiles(o.clientReport, func(s string) string { return fragments.String(sim.RedactKeys(s)) }); err != nil {
		return err
	}
	failed := 0
	for _, c := range v.Clients {
		if !c.Passed {
			failed++
		}
	}
	fmt.Fprintf(stdout, "client report: %s (%s: %d %s, %d failed)\n", filepath.Join(o.clientReport, report.ClientHTMLFile), r.Outcome,
		len(v.Clients), plural(len(v.Clients), "client", "clients"), failed)
	return nil
}

func reportConfig(o options) map[string]string {
	cfg := map[string]string{
		"seed":         strconv.FormatInt(o.cfg.Seed, 10),
		"speed":        strconv.FormatFloat(o.cfg.Speed, 'g', -1, 64),
		"feed-limit":   strconv.Itoa(max(o.cfg.FeedLimit, 0)),
		"videos-limit": strconv.Itoa(max(o.cfg.VideosLimit, 0)),
	}
	if o.scenario != "" {
		cfg["scenario"] = o.scenario
	}
	if len(o.faults) > 0 {
		cfg["faults"] = strings.Join(o.faults, ",")
	}
	return cfg
}

// clientReport maps the verdicts to a report: a spec per key and client
// requirement (its findings are the failure), and one per key for the
// scenario. A run no client came to errored: there was nothing to judge.
func clientReport(v clients.Verdicts, cat catalogue.Catalogue, m report.Meta) report.Report {
	v = v.ForReport() // the caps of the suite's reports
	if v.ClientsLeftOut > 0 {
		m.Config["clients left out"] = fmt.Sprintf("%d more clients are not shown (those that failed come first); GET /_control/clients has them all", v.ClientsLeftOut)
	}
	var specs []report.Spec
	for _, c := range v.Clients {
		for _, r := range c.Requirements {
			if c.Key == "" && r.Result == clients.NotExercised {
				continue // the requests without a key are no client: only what they did
			}
			s := report.Spec{Name: c.Name() + ": " + r.Must, Features: []string{"client"}, Requirements: []string{string(r.ID)}, Requests: r.Checked}
			switch r.Result {
			case clients.Passed:
				s.State = report.ResultPassed
			case clients.Failed:
				s.State = report.ResultFailed
				s.Failure = findingsOf(c, r)
			default:
				s.State, s.SkipReason = report.ResultSkipped, "not exercised: "+r.Note
			}
			s.GinkgoState = string(s.State)
			specs = append(specs, s)
		}
		if sc := c.Scenario; sc != nil {
			s := report.Spec{Name: c.Name() + ": scenario " + sc.Name, Features: []string{"scenario"}, Requests: c.Requests}
			switch sc.Result {
			case clients.Passed:
				s.State = report.ResultPassed
			case clients.Failed:
				s.State, s.Failure = report.ResultFailed, &report.Failure{Message: "scenario " + sc.Name + " failed: " + sc.Behaviour}
			default:
				s.State, s.SkipReason = report.ResultSkipped, sc.Behaviour
			}
			s.GinkgoState = string(s.State)
			specs = append(specs, s)
		}
	}
	if len(v.Clients) == 0 {
		m.Errored = "no client sent a request: there was nothing to judge"
	}
	if v.Scenario != nil {
		m.Config["scenario"] = v.Scenario.Name + ": " + v.Scenario.Does + "; a good client: " + v.Scenario.Expect
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

// findingsOf is the failure of a key on one requirement: its findings, and
// the requests they name as the transcript.
func findingsOf(c clients.Client, r clients.Verdict) *report.Failure {
	var msg, transcript []string
	for _, f := range c.Findings {
		if f.Requirement != r.ID {
			continue
		}
		msg = append(msg, f.Request.String()+"\n    "+f.Evidence)
		line := f.Request.String()
		if f.Related != nil {
			line = f.Related.String() + "\n" + line
		}
		transcript = append(transcript, line)
	}
	if kept := len(msg); kept < r.Findings {
		msg = append(msg, fmt.Sprintf("… and %d more (the findings kept per client are bounded)", r.Findings-kept))
	}
	return &report.Failure{
		Message:    fmt.Sprintf("%d %s: %s\n\n%s", r.Findings, plural(r.Findings, "finding", "findings"), r.Must, strings.Join(msg, "\n")),
		Transcript: strings.Join(transcript, "\n\n"),
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
