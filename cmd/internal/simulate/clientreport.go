package simulate

import (
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

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
func judging(o Settings, info simulator.Info) string {
	if o.NoClientJudge {
		return "not judged (--no-client-judge)"
	}
	parts := []string{"judged on the client requirements: GET " + info.ControlURL + "/clients"}
	if info.ControlURL == "" {
		parts[0] = "judged on the client requirements"
	}
	if o.Scenario != "" {
		parts = append(parts, "scenario "+o.Scenario+" armed")
	}
	if o.ClientReport != "" {
		parts = append(parts, "report at exit in "+o.ClientReport)
	}
	return strings.Join(parts, "; ")
}

// writeClientReport writes the final verdicts as a client report (see
// clients.Judge.WriteReport) and returns its outcome.
func writeClientReport(o Settings, judge *clients.Judge, info simulator.Info, started time.Time, stdout io.Writer) (report.Outcome, error) {
	if judge == nil {
		return report.Errored, fmt.Errorf("--client-report: no client judge")
	}
	v, r, err := judge.WriteReport(o.ClientReport, report.Meta{
		Target:       "the clients of " + info.URL,
		SuiteVersion: "the tcmkit simulator's client judge",
		Started:      started,
		Finished:     time.Now(),
		Config:       reportConfig(o),
	})
	if err != nil {
		return report.Errored, err
	}
	failed := 0
	for _, c := range v.Clients {
		if !c.Passed {
			failed++
		}
	}
	fmt.Fprintf(stdout, "client report: %s (%s: %d %s, %d failed)\n", filepath.Join(o.ClientReport, report.ClientHTMLFile), r.Outcome,
		len(v.Clients), plural(len(v.Clients), "client", "clients"), failed)
	if v.Errored != "" {
		fmt.Fprintf(stdout, "client report: errored: %s\n", v.Errored)
	}
	return r.Outcome, nil
}

func reportConfig(o Settings) map[string]string {
	cfg := map[string]string{
		"seed":         strconv.FormatInt(o.Sim.Seed, 10),
		"speed":        strconv.FormatFloat(o.Sim.Speed, 'g', -1, 64),
		"feed-limit":   strconv.Itoa(max(o.Sim.FeedLimit, 0)),
		"videos-limit": strconv.Itoa(max(o.Sim.VideosLimit, 0)),
	}
	if o.World != "" {
		cfg["world"] = o.World // its data, not the seed's
	}
	if o.Scenario != "" {
		cfg["scenario"] = o.Scenario
	}
	if len(o.faults) > 0 {
		cfg["faults"] = strings.Join(o.faults, ",")
	}
	return cfg
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
