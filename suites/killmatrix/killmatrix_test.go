// Package killmatrix proves the conformance suite: it runs the suite once
// against the faultless simulator, which must pass, and once per named
// fault of the simulator (package simulator/mutants), which must fail in a
// spec labelled with the requirement the fault breaks (only those specs
// run), and name the request it judged. Each run judges its
// own in-process simulator through --target and --control-clock, several
// at once. It prints the matrix (fault, requirement, the specs that killed
// it), the kill rate, and the table of requirement × request shape the
// faults were derived from, each cell with its verdict and the holes (a
// shape that applies with no fault), and writes them as Markdown to
// reports/killmatrix.md.
//
// It is a test-only package, part of `go test ./...`, skipped under -short:
//
//	go test ./suites/killmatrix -v -count=1
//	TCM_KILLMATRIX_FAULTS=oldest-first,no-pro-gate go test ./suites/killmatrix -v   # some faults only
//	TCM_KILLMATRIX=cells go test ./suites/killmatrix -timeout 80m   # a fault in every cell of the probe grid
//	TCM_KILLMATRIX=generated,cell-sample go test ./suites/killmatrix   # CI's: the generated faults, a cell of each requirement and the cells that escaped once
//	TCM_KILLMATRIX=named-unsampled go test ./suites/killmatrix   # CI's: the hand-written and derived faults the default run (go test ./...) leaves out
//	TCM_KILLMATRIX_RECORD=1 go test ./suites/killmatrix -run TestKillMatrix   # record new faults, once killed (testdata/judged-faults.txt)
package killmatrix

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/tcmkit/tcmkit/ci/testbin"
	"github.com/tcmkit/tcmkit/simulator"
	"github.com/tcmkit/tcmkit/simulator/mutants"
	"github.com/tcmkit/tcmkit/suites/bundled"
)

// parallel is how many suite runs go at once: a run waits on its
// simulator as much as it computes, so twice the cores keeps them busy.
var parallel = 2 * runtime.GOMAXPROCS(0)

// runTimeout bounds one run of the suite: against the simulator's manual
// clock a run takes seconds.
const runTimeout = 3 * time.Minute

// readReport reads a Ginkgo JSON report (--ginkgo.json-report).
func readReport(path string) ([]types.Report, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("killmatrix: %w", err)
	}
	var reports []types.Report
	if err := json.Unmarshal(raw, &reports); err != nil {
		return nil, fmt.Errorf("killmatrix: %s: %w", path, err)
	}
	return reports, nil
}

// runner runs the compiled suite.
type runner struct {
	binary string
	dir    string
}

// outcome is one run of the suite.
type outcome struct {
	reports []types.Report
	output  []byte // combined output, for diagnostics
	err     error  // the process's error: a failing suite exits 1
	took    time.Duration
}

// run runs the suite once with faults on; name names its files.
func (rn *runner) run(ctx context.Context, name string, faults []string, extra ...string) (*outcome, error) {
	ctx, cancel := context.WithTimeout(ctx, runTimeout)
	defer cancel()
	dir := filepath.Join(rn.dir, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	reportPath := filepath.Join(dir, "ginkgo.json")
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "TCM_") })
	layers, err := mutants.Layers(faults...)
	if err != nil {
		return nil, err
	}
	seed := int64(bundled.Seed)
	for _, f := range faults {
		if s, ok := worldSeeds[f]; ok {
			seed = s
		}
	}
	sim, err := simulator.New(simulator.Config{Seed: seed, Layers: layers})
	if err != nil {
		return nil, err
	}
	defer sim.Close()
	srv := httptest.NewServer(sim.Handler())
	defer srv.Close()
	keys, err := bundled.Provision(ctx, srv.Client(), srv.URL)
	if err != nil {
		return nil, err
	}
	// No run's memory is judged here: a larger GC target than Go's
	// default spends a fifth less CPU.
	env = append(env, "GOGC=400", "TCM_REPORT_DIR="+filepath.Join(dir, "reports"), "TCM_TARGET="+srv.URL, "TCM_PRO_KEY="+keys.Pro,
		"TCM_FREE_KEY="+keys.Free, "TCM_REVOKED_KEY="+keys.Revoked, "TCM_CONTROL_CLOCK=true")
	args := append([]string{"--ginkgo.json-report=" + reportPath, "--ginkgo.no-color"}, extra...)
	cmd := exec.CommandContext(ctx, rn.binary, args...)
	cmd.Dir, cmd.Env = dir, env
	start := time.Now()
	out, err := cmd.CombinedOutput()
	o := &outcome{output: out, err: err, took: time.Since(start)}
	if ctx.Err() != nil {
		return o, fmt.Errorf("killmatrix: run %s: %w", name, ctx.Err())
	}
	if reports, rerr := readReport(reportPath); rerr == nil {
		o.reports = reports
	}
	return o, nil
}

// tail is the end of a run's output, for a failure message.
func tail(out []byte) string {
	const n = 3000
	if len(out) > n {
		out = out[len(out)-n:]
	}
	return string(bytes.TrimSpace(out))
}

// build compiles the suite's test binary once, where an unchanged suite
// is not linked again (package testbin).
func build(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skipf("the go command is not on PATH: %v", err)
	}
	binary, err := testbin.Test("./suites")
	if err != nil {
		t.Fatalf("building the suite: %v", err)
	}
	return binary
}

// selectedFaults are the faults to run: those TCM_KILLMATRIX_FAULTS names,
// else as TCM_KILLMATRIX says: "all", "generated" (the faults generated
// to fill the grid's cells), or by default the hand-written and derived
// ones, which keeps go test ./... within its minute (CI runs the
// generated ones too: ci/check.sh).
func selectedFaults(t *testing.T) []string {
	all := mutants.Names()
	only := os.Getenv("TCM_KILLMATRIX_FAULTS")
	if only == "" {
		// modes joined by commas run the faults of each
		var out []string
		for _, mode := range strings.Split(os.Getenv("TCM_KILLMATRIX"), ",") {
			for _, f := range modeFaults(t, mode, slices.Clone(all)) {
				if !slices.Contains(out, f) {
					out = append(out, f)
				}
			}
		}
		return out
	}
	var out []string
	for _, name := range strings.Split(only, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		if _, ok := mutants.Lookup(name); !ok {
			t.Fatalf("TCM_KILLMATRIX_FAULTS names %q, which is no fault (known: %s)", name, strings.Join(all, ", "))
		}
		out = append(out, name)
	}
	return out
}

// modeFaults are the faults of one TCM_KILLMATRIX mode.
func modeFaults(t *testing.T, mode string, all []string) []string {
	switch mode {
	case "all":
		return append(all, makeCellGrid(t).cellFaults()...)
	case "cells":
		return makeCellGrid(t).cellFaults()
	case "cell-sample":
		return makeCellGrid(t).sampledCells(listedFaults(t, escapedCellsFile), listedFaults(t, unstruckCellsFile))
	case "generated", "named":
		return slices.DeleteFunc(all, func(n string) bool { return mutants.Generated(n) != (mode == "generated") })
	case "named-unsampled":
		// the named faults go test ./... leaves out: CI runs both
		inSample := sampled(slices.Clone(all), judgedFaults(t))
		return slices.DeleteFunc(all, func(n string) bool { return mutants.Generated(n) || slices.Contains(inSample, n) })
	case "":
		return sampled(all, judgedFaults(t))
	}
	t.Fatalf("TCM_KILLMATRIX=%q: all, named, named-unsampled, generated, cells, cell-sample (joined by commas) or unset", mode)
	return nil
}

// judgedFile records the hand-written and derived faults that the kill
// matrix has judged, one a line: a fault that is not in it is new, and the
// default matrix (go test ./suites/killmatrix) runs it, so that it fails
// until the suite catches a new fault. TCM_KILLMATRIX_RECORD=1 writes the
// record once every fault of its run was killed; TestEveryFaultRecorded
// fails until then.
const judgedFile = "testdata/judged-faults.txt"

// judgedFaults reads the record (no file: no fault judged yet).
func judgedFaults(t testing.TB) map[string]bool { return listedFaults(t, judgedFile) }

// listedFaults reads a file of fault names, one a line ('#' starts a
// comment line; no file: none).
func listedFaults(t testing.TB, path string) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for line := range strings.SplitSeq(string(b), "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			listed[line] = true
		}
	}
	return listed
}

// recordJudged writes the record: the faults judged before that still
// exist, and the ones this run killed.
func recordJudged(t *testing.T, killed []string) {
	t.Helper()
	judged := judgedFaults(t)
	var names []string
	for _, n := range mutants.Names() {
		if !mutants.Generated(n) && (judged[n] || slices.Contains(killed, n)) {
			names = append(names, n)
		}
	}
	head := "# The hand-written and derived faults the kill matrix has judged (killed), one a line;\n" +
		"# a fault not listed here is new, and go test ./suites/killmatrix runs it by default.\n" +
		"# Written by TCM_KILLMATRIX_RECORD=1 go test ./suites/killmatrix once its run killed every fault.\n"
	if err := os.WriteFile(judgedFile, []byte(head+strings.Join(names, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %d faults recorded", judgedFile, len(names))
}

// sampled is the matrix of go test ./..., which keeps within its time:
// for every family of requirements (AUTH, FEED, RATE…) its first
// hand-written or derived fault, which proves the matrix judges, and
// every fault not yet judged (not in judgedFile: a new one). ci/check.sh
// runs them all (TCM_KILLMATRIX=named, and generated).
func sampled(all []string, judged map[string]bool) []string {
	seen := map[string]bool{}
	return slices.DeleteFunc(all, func(n string) bool {
		if mutants.Generated(n) {
			return true
		}
		if !judged[n] {
			return false // new: run until it is recorded
		}
		m, _ := mutants.Lookup(n)
		family, _, _ := strings.Cut(string(m.Requirement), "-")
		first := !seen[family]
		seen[family] = true
		return !first
	})
}

func TestKillMatrix(t *testing.T) {
	if testing.Short() {
		t.Skip("the kill matrix runs the whole suite once per fault; skipped with -short")
	}
	started := time.Now()
	dir := t.TempDir()
	ctx := t.Context()
	rn := &runner{binary: build(t), dir: dir}

	faults := selectedFaults(t)
	m := matrix{Mode: "each run judges its own in-process simulator through --target with --control-clock", Started: started, Verdicts: make([]verdict, len(faults))}
	switch {
	case os.Getenv("TCM_KILLMATRIX_FAULTS") != "":
		m.Subset = "TCM_KILLMATRIX_FAULTS"
	case os.Getenv("TCM_KILLMATRIX") != "all":
		m.Subset = "TCM_KILLMATRIX=" + os.Getenv("TCM_KILLMATRIX") + " (all: every fault)"
	}
	var (
		wg       sync.WaitGroup
		sem      = make(chan struct{}, parallel)
		mu       sync.Mutex
		problems []error
		done     atomic.Int32
	)
	fail := func(err error) {
		mu.Lock()
		problems = append(problems, err)
		mu.Unlock()
	}
	// progress says how far the matrix is, one line a run (seen with -v).
	progress := func(name, result string) {
		t.Logf("[%d/%d %s] %s: %s", done.Add(1), len(faults)+1, time.Since(started).Round(100*time.Millisecond), name, result)
	}
	wg.Go(func() {
		sem <- struct{}{}
		defer func() { <-sem }()
		o, err := rn.run(ctx, "faultless", nil)
		if err != nil {
			fail(err)
			m.Clean = []string{err.Error()}
			progress("faultless", "ERRORED")
			return
		}
		m.Clean, m.CleanTook = failures(o.reports), o.took
		if len(o.reports) == 0 {
			m.Clean = append(m.Clean, "no Ginkgo report; output:\n"+tail(o.output))
		}
		progress("faultless", fmt.Sprintf("%d failure(s)", len(m.Clean)))
	})
	for i, name := range faults {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			v, err := runFault(ctx, rn, name)
			if err != nil {
				fail(err)
				m.Verdicts[i] = v
				progress(name, "ERRORED")
				return
			}
			m.Verdicts[i] = v
			progress(name, v.Result())
		})
	}
	wg.Wait()
	m.Took = time.Since(started)

	g := makeGrid(mustIDs(t), m.Verdicts)
	cg := makeCellGrid(t)
	t.Logf("kill matrix (%s):\n%s", m.Mode, m.Text())
	t.Logf("requirement × shape:\n%s", g.Text())
	t.Logf("%s", cg.Markdown(m.Verdicts))
	writeMatrix(t, dir, m.Markdown()+"\n"+g.Markdown()+"\n"+cg.Markdown(m.Verdicts))
	for _, h := range cg.holes(m.Verdicts) {
		t.Errorf("hole in requirement × role × shape × input class: %s", h)
	}
	for _, err := range problems {
		t.Error(err)
	}
	checkVerdicts(t, m, problems)
}

// runFault runs the suite against a simulator broken by one fault and
// judges what it found.
func runFault(ctx context.Context, rn *runner, name string) (verdict, error) {
	mutant, _ := mutants.Lookup(name)
	requirement := string(mutant.Requirement)
	// Only the specs of the broken requirement run: the kill is
	// judged by them alone, and the rest would cost the time of a
	// whole run per fault (the faultless run runs every spec).
	// A fault that hides where only the thorough profile looks (a
	// long walk, lockouts) is judged under it, on the manual clock.
	// The generated probes judge the faults that escaped the suite
	// before them and the cells' faults; the other named faults are
	// the hand-written specs' (the cells' run proves the probes),
	// which keeps the default matrix within its time.
	_, named := namedFault(name)
	filter := requirement
	if named && !mutants.Escaped(name) {
		filter += " && !probe"
	}
	args := []string{"--ginkgo.label-filter=" + filter}
	if p := mutants.Profile(name); p != "" {
		args = append(args, "--profile="+p)
	} else if !named {
		args = append(args, "--profile=thorough") // a cell's fault: every probe of its requirement
	}
	o, err := rn.run(ctx, name, []string{name}, args...)
	if err != nil {
		return verdict{Fault: name, Requirement: requirement, Errored: err.Error()}, err
	}
	v := judge(name, requirement, o.reports)
	v.Took = o.took
	if v.Errored != "" && len(o.reports) == 0 {
		v.Errored += "; output: " + firstLine(tail(o.output))
	}
	return v, nil
}

// checkVerdicts fails the test for a faultless run that failed, and for
// every fault not killed, killed without naming its request, blamed on
// another requirement as well, or failed without its evidence; with
// TCM_KILLMATRIX_RECORD=1 it records the faults killed cleanly.
func checkVerdicts(t *testing.T, m matrix, problems []error) {
	t.Helper()
	if len(m.Clean) > 0 {
		t.Errorf("the faultless simulator fails the suite:\n  %s", strings.Join(m.Clean, "\n  "))
	}
	if os.Getenv("TCM_KILLMATRIX_RECORD") == "1" {
		var killed []string
		for _, v := range m.Verdicts {
			if v.Killed() && v.Named && len(v.Misblamed) == 0 && len(v.Unproven) == 0 {
				killed = append(killed, v.Fault)
			}
		}
		if len(killed) == len(m.Verdicts) && len(problems) == 0 && len(m.Clean) == 0 {
			recordJudged(t, killed)
		} else {
			t.Errorf("TCM_KILLMATRIX_RECORD=1: %s not written: %d of %d faults killed cleanly (see below)", judgedFile, len(killed), len(m.Verdicts))
		}
	}
	for _, v := range m.Verdicts {
		if !v.Killed() {
			t.Errorf("%s (breaks %s) is not killed: %s", v.Fault, v.Requirement, v.Result())
		} else if !v.Named {
			t.Errorf("%s (breaks %s) is killed, but no failure names the request it judged (method and path): %s", v.Fault, v.Requirement, strings.Join(v.KilledBy, " | "))
		}
		if len(v.Misblamed) > 0 {
			t.Errorf("%s (breaks %s): its failures blame %s too (one fault, one requirement)", v.Fault, v.Requirement, strings.Join(v.Misblamed, ", "))
		}
		if len(v.Unproven) > 0 {
			t.Errorf("%s (breaks %s): failures without a transcript, a curl line and a rerun line: %s", v.Fault, v.Requirement, strings.Join(v.Unproven, " | "))
		}
	}
}

// writeMatrix writes killmatrix.md into the test's directory and into
// reports/ at the module root (git-ignored), where a person finds it.
func writeMatrix(t *testing.T, dir string, markdown string) {
	t.Helper()
	md := []byte(markdown)
	paths := []string{filepath.Join(dir, "killmatrix.md")}
	root := filepath.Join("..", "..", "reports")
	if err := os.MkdirAll(root, 0o755); err == nil {
		paths = append(paths, filepath.Join(root, "killmatrix.md"))
	}
	for _, p := range paths {
		if err := os.WriteFile(p, md, 0o644); err != nil && !errors.Is(err, os.ErrPermission) {
			t.Errorf("writing the matrix: %v", err)
		}
	}
	abs, _ := filepath.Abs(paths[len(paths)-1])
	t.Logf("matrix written to %s", abs)
}

// TestEveryFaultRecorded: every hand-written and derived fault is in the
// record of judged faults, and the record names no fault that is gone. A
// new fault fails it until the kill matrix has killed it and recorded it.
func TestEveryFaultRecorded(t *testing.T) {
	judged := judgedFaults(t)
	var missing []string
	for _, n := range mutants.Names() {
		if !mutants.Generated(n) && !judged[n] {
			missing = append(missing, n)
		}
		delete(judged, n)
	}
	if len(missing) > 0 {
		t.Errorf("new faults, not yet judged: %s; go test ./suites/killmatrix runs them (it fails until the suite kills each, naming the request); then TCM_KILLMATRIX_RECORD=1 go test ./suites/killmatrix -run TestKillMatrix records them in %s", strings.Join(missing, ", "), judgedFile)
	}
	if len(judged) > 0 {
		t.Errorf("%s names faults that are gone: %s (TCM_KILLMATRIX_RECORD=1 go test ./suites/killmatrix -run TestKillMatrix writes it again)", judgedFile, strings.Join(slices.Sorted(maps.Keys(judged)), ", "))
	}
}

// The sample of go test ./... judges every requirement, and every fault
// not yet judged (a new one: it runs by default).
func TestSampleCoversEveryFamily(t *testing.T) {
	all := mutants.Names()
	judged := judgedFaults(t)
	in := map[string]bool{}
	for _, n := range sampled(slices.Clone(all), judged) {
		in[n] = true
	}
	// A fault added now, of a requirement that has faults: unjudged, it
	// is in the sample; judged, the sample leaves it to CI.
	var fresh string
	for _, n := range all {
		if m, _ := mutants.Lookup(n); !mutants.Generated(n) && !in[n] && m.Requirement != "" {
			fresh = n
			break
		}
	}
	if fresh != "" {
		without := maps.Clone(judged)
		delete(without, fresh)
		if !slices.Contains(sampled(slices.Clone(all), without), fresh) {
			t.Errorf("a fault not yet judged (%s, as if new) is not in the default matrix", fresh)
		}
	}
	families := map[string]bool{}
	for n := range in {
		m, _ := mutants.Lookup(n)
		family, _, _ := strings.Cut(string(m.Requirement), "-")
		families[family] = true
	}
	for _, n := range all {
		m, _ := mutants.Lookup(n)
		if family, _, _ := strings.Cut(string(m.Requirement), "-"); !mutants.Generated(n) && !families[family] {
			t.Errorf("no fault of the %s requirements in the sample", family)
		}
	}
	if fresh == "" || len(in) >= len(all) {
		t.Errorf("%d of %d faults sampled, every judged one", len(in), len(all))
	}
}

// CI's two runs of the named faults, go test's sample and
// TCM_KILLMATRIX=named-unsampled, are every named fault once.
func TestSampleAndTheRestAreNamed(t *testing.T) {
	all := mutants.Names()
	sample, rest, named := modeFaults(t, "", slices.Clone(all)), modeFaults(t, "named-unsampled", slices.Clone(all)), modeFaults(t, "named", slices.Clone(all))
	both := slices.Concat(sample, rest)
	slices.Sort(both)
	slices.Sort(named)
	if !slices.Equal(both, named) || len(slices.Compact(slices.Clone(both))) != len(both) {
		t.Errorf("the sample (%d) and the rest (%d) are not the %d named faults, each once", len(sample), len(rest), len(named))
	}
}
