// Command prismcheck puts Prism's validating proxy (prism proxy --errors),
// loaded with schemas/openapi.yaml, in front of the simulator and shows
// that it judges what the simulator serves as our validator does:
//
//   - on the faultless simulator, no answer is flagged: feed walks, tracked
//     videos, the health check and every error status (400, 401, 403, 429
//     and 500);
//   - each hand-written named fault (simulator --list-faults; not the
//     NAME@SHAPE ones, which confine a kind of fault to one request shape
//     and break no schema rule that a hand-written one does not) runs the
//     same requests against a simulator of its own. Which faults break a schema rule is
//     not a list kept by hand: an answer breaks one when package schemas
//     rejects the body the simulator sent. Prism must flag every such answer
//     (so it flags every fault that breaks a schema rule), and must not flag
//     a body that package schemas accepts;
//   - for every answer, the document's schemas compiled in Go
//     (package schemas/openapi) and package schemas agree.
//
// Between Prism and the simulators sits a small recording proxy, so that
// the body each simulator sent is judged as sent, and requests of several
// runs can share one Prism process (a header names the run).
//
// The faultless run's feed pages and tracked-videos answers are written to
// --capture, for the code-generator checks of ci/openapi-tools.sh.
//
//	go run ./ci/prismcheck --prism ci/node_modules/.bin/prism --capture DIR
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/schemas/catalogue"
	"github.com/tcmkit/tcmkit/schemas/jsondoc"
	"github.com/tcmkit/tcmkit/schemas/openapi"
)

func main() {
	var cfg config
	flag.StringVar(&cfg.prism, "prism", "ci/node_modules/.bin/prism", "the Prism CLI")
	flag.StringVar(&cfg.doc, "doc", "schemas/openapi.yaml", "the OpenAPI document Prism loads")
	flag.StringVar(&cfg.simulator, "simulator", "", "the simulator binary (default: go build ./cmd/simulator into a temporary directory)")
	flag.StringVar(&cfg.capture, "capture", "", "directory to write the faultless run's feed pages and tracked-videos answers to")
	flag.StringVar(&cfg.only, "faults", "", "comma-separated faults to run (default: every fault of --list-faults but the NAME@SHAPE ones)")
	flag.IntVar(&cfg.parallel, "parallel", 2, "runs at once (each has its own simulator; all share one Prism)")
	flag.DurationVar(&cfg.timeout, "timeout", 15*time.Minute, "give up after this long")
	flag.BoolVar(&cfg.verbose, "v", false, "print every answer of every run")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), cfg.timeout)
	defer cancel()
	if err := run(ctx, cfg, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "prismcheck:", err)
		os.Exit(1)
	}
}

type config struct {
	prism, doc, simulator, capture, only string
	parallel                             int
	timeout                              time.Duration
	verbose                              bool
}

// Headers that carry a request's run and number through Prism to the
// recording proxy.
const (
	headerRun = "X-Tcmkit-Run"
	headerSeq = "X-Tcmkit-Seq"
)

func run(ctx context.Context, cfg config, out io.Writer) error {
	start := time.Now()
	tmp, err := os.MkdirTemp("", "prismcheck-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)

	if cfg.simulator == "" {
		cfg.simulator = filepath.Join(tmp, "simulator")
		if err := buildSimulator(ctx, cfg.simulator); err != nil {
			return err
		}
	}
	faults, err := chooseFaults(ctx, cfg.simulator, cfg.only)
	if err != nil {
		return err
	}
	j, err := newJudge()
	if err != nil {
		return err
	}

	rec := newRecorder()
	recURL, stopRec, err := rec.serve()
	if err != nil {
		return err
	}
	defer stopRec()
	prismURL, stopPrism, err := startPrism(ctx, cfg.prism, cfg.doc, recURL, filepath.Join(tmp, "prism.log"))
	if err != nil {
		return err
	}
	defer stopPrism()
	version := toolVersion(ctx, cfg.prism)
	fmt.Fprintf(out, "Prism %s proxy --errors %s in front of the simulator; %d named faults\n", version, cfg.doc, len(faults))

	runs := exerciseAll(ctx, cfg, prismURL, rec, faults, tmp)

	var failures []string
	for _, r := range runs {
		failures = append(failures, j.evaluate(r)...)
	}
	if cfg.capture != "" {
		if err := capture(cfg.capture, runs[0]); err != nil {
			failures = append(failures, "capture: "+err.Error())
		}
	}
	report(out, runs, cfg.verbose)
	for _, f := range failures {
		fmt.Fprintln(out, "FAIL:", f)
	}
	fmt.Fprintf(out, "prismcheck: %s in %.0f s\n", summary(runs), time.Since(start).Seconds())
	if len(failures) > 0 {
		return fmt.Errorf("%d failure(s)", len(failures))
	}
	return nil
}

// listFaults reads the FAULT column of simulator --list-faults.
// buildSimulator builds ./cmd/simulator into bin, for a run given no
// simulator binary.
func buildSimulator(ctx context.Context, bin string) error {
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/simulator")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("go build ./cmd/simulator: %w", err)
	}
	return nil
}

// chooseFaults is the faults to run: those of --faults (only), each of
// which the simulator must know, else its hand-written ones.
func chooseFaults(ctx context.Context, sim, only string) ([]string, error) {
	faults, err := listFaults(ctx, sim)
	if err != nil {
		return nil, err
	}
	if only != "" {
		want := strings.Split(only, ",")
		for _, f := range want {
			if !slices.Contains(faults, f) {
				return nil, fmt.Errorf("--faults: %q is not a fault of %s --list-faults", f, sim)
			}
		}
		return want, nil
	}
	return handWritten(faults), nil
}

// newJudge compiles the OpenAPI document's components and names each
// resource's component, for the judge's messages.
func newJudge() (judge, error) {
	comps, err := openapi.Build(schemas.FS())
	if err != nil {
		return judge{}, err
	}
	doc, err := openapi.Compile(comps)
	if err != nil {
		return judge{}, err
	}
	j := judge{doc: doc, names: map[schemas.Resource]string{}}
	for _, c := range comps {
		if c.EventType == "" {
			j.names[c.Resource] = c.Name
		}
	}
	return j, nil
}

// exerciseAll runs the faultless run, then one run a fault, cfg.parallel
// at once, all through the one Prism, and returns them in that order.
func exerciseAll(ctx context.Context, cfg config, prismURL string, rec *recorder, faults []string, tmp string) []*runResult {
	// The faultless run first: its answers are the captures, and a flag
	// there means the document or the simulator is wrong.
	runs := []*runResult{{name: ""}}
	for _, f := range faults {
		runs = append(runs, &runResult{name: f})
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, max(1, cfg.parallel))
	for i, r := range runs {
		if i == 0 {
			r.err = exercise(ctx, cfg.simulator, prismURL, rec, r, tmp)
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			r.err = exercise(ctx, cfg.simulator, prismURL, rec, r, tmp)
		}()
	}
	wg.Wait()
	return runs
}

func listFaults(ctx context.Context, sim string) ([]string, error) {
	raw, err := exec.CommandContext(ctx, sim, "--list-faults").Output()
	if err != nil {
		return nil, fmt.Errorf("%s --list-faults: %w", sim, err)
	}
	faults := parseFaults(string(raw))
	if len(faults) == 0 {
		return nil, fmt.Errorf("%s --list-faults listed no fault:\n%s", sim, raw)
	}
	return faults, nil
}

// parseFaults reads the first column of the table under its FAULT header:
// the rows whose second column is a requirement id (what follows the table
// says how cell faults are named).
func parseFaults(table string) []string {
	var faults []string
	header := false
	for _, line := range strings.Split(table, "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		if !header {
			header = fields[0] == "FAULT"
			continue
		}
		if len(fields) > 1 && catalogue.IsID(fields[1]) {
			faults = append(faults, fields[0])
		}
	}
	return faults
}

// handWritten are the faults that are not NAME@SHAPE confinements.
func handWritten(faults []string) []string {
	return slices.DeleteFunc(faults, func(f string) bool { return strings.Contains(f, "@") })
}

func toolVersion(ctx context.Context, bin string) string {
	raw, err := exec.CommandContext(ctx, bin, "--version").Output()
	if err != nil {
		return "(version unknown)"
	}
	return strings.TrimSpace(string(raw))
}

// capture writes the faultless run's 200 bodies of the feed and the
// tracked videos, one file each.
func capture(dir string, r *runResult) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	n := map[string]int{}
	for _, ex := range r.exchanges {
		if ex.Upstream == nil || ex.Upstream.Status != http.StatusOK || ex.Operation == "health" {
			continue
		}
		kind := map[string]string{"feed": "feed-page", "videos": "videos-response"}[ex.Operation]
		n[kind]++
		var pretty bytes.Buffer
		if err := json.Indent(&pretty, ex.Upstream.Body, "", "  "); err != nil {
			return fmt.Errorf("%s %s: %w", ex.Method, ex.Target, err)
		}
		name := filepath.Join(dir, fmt.Sprintf("%s-%02d.json", kind, n[kind]))
		if err := os.WriteFile(name, pretty.Bytes(), 0o644); err != nil {
			return err
		}
	}
	if n["feed-page"] == 0 || n["videos-response"] == 0 {
		return fmt.Errorf("captured %d feed pages and %d tracked-videos answers; want some of each", n["feed-page"], n["videos-response"])
	}
	return nil
}

// report prints one line per run.
func report(out io.Writer, runs []*runResult, verbose bool) {
	tw := tabwriter.NewWriter(out, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tANSWERS\tSCHEMA (package schemas)\tPRISM\tFIRST FLAG")
	for _, r := range runs {
		name := r.name
		if name == "" {
			name = "(no fault)"
		}
		if r.err != nil {
			fmt.Fprintf(tw, "%s\t-\t-\t-\terror: %v\n", name, r.err)
			continue
		}
		broken, flagged, bodyFlagged := 0, 0, 0
		first := ""
		for _, ex := range r.exchanges {
			if ex.ValidatorErr != nil {
				broken++
			}
			if ex.Flagged {
				flagged++
				if slices.ContainsFunc(ex.Violations, violation.inBody) {
					bodyFlagged++
				}
				if first == "" {
					first = ex.Label + ": " + describe(ex.Violations)
				}
			}
		}
		schema := "valid"
		if broken > 0 {
			schema = fmt.Sprintf("breaks it in %d", broken)
		}
		prism := "clean"
		if flagged > 0 {
			prism = fmt.Sprintf("flags %d (%d body)", flagged, bodyFlagged)
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\n", name, len(r.exchanges), schema, prism, jsondoc.Excerpt(first, 110))
		if verbose {
			for _, ex := range r.exchanges {
				up := "-"
				if ex.Upstream != nil {
					up = fmt.Sprint(ex.Upstream.Status)
				}
				fmt.Fprintf(tw, "  %s %s\t%s\tsimulator %s, prism %d\t%v\t%s\n", ex.Method, ex.Target, ex.Label, up, ex.Status, ex.Flagged, describeAll(ex.Violations))
			}
		}
	}
	tw.Flush()
}

// summary is the closing line: what Prism did on the faultless run and on
// the faults that break a schema rule.
func summary(runs []*runResult) string {
	var clean, answers, schemaFaults, schemaFlagged, otherFlagged, others int
	for i, r := range runs {
		broken, flagged := false, false
		for _, ex := range r.exchanges {
			broken = broken || ex.ValidatorErr != nil
			flagged = flagged || ex.Flagged
		}
		switch {
		case i == 0:
			answers = len(r.exchanges)
			if !flagged && r.err == nil {
				clean = 1
			}
		case broken:
			schemaFaults++
			if flagged {
				schemaFlagged++
			}
		default:
			others++
			if flagged {
				otherFlagged++
			}
		}
	}
	state := "FLAGGED"
	if clean == 1 {
		state = "clean"
	}
	return fmt.Sprintf("faultless simulator %s (%d answers); %d of %d faults that break a schema rule flagged; %d of %d other faults flagged too (headers, content type, status)",
		state, answers, schemaFlagged, schemaFaults, otherFlagged, others)
}
