// Package killmatrix proves the conformance suite: it runs the suite once
// against the faultless simulator, which must pass, and once per named
// fault of the simulator (simulator/breakers.go), which must fail in a
// spec labelled with the requirement the fault breaks. It prints the
// matrix (fault, requirement, the specs that killed it) and the kill rate,
// and writes it as Markdown to reports/killmatrix.md.
//
// It is a test-only package, part of `go test ./...`, skipped under -short:
//
//	go test ./suites/killmatrix -v -count=1
//	TCM_KILLMATRIX_FAULTS=oldest-first,no-pro-gate go test ./suites/killmatrix -v   # some faults only
package killmatrix

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/tcmkit/tcmkit/simulator"
	"github.com/tcmkit/tcmkit/suites/bundled"
)

// Parallel is how many suite runs go at once (the machine has 2 cores).
const Parallel = 2

// runTimeout bounds one run of the suite: against the simulator's manual
// clock a run takes seconds.
const runTimeout = 3 * time.Minute

// FaultsEnv is how the suite's bundled mode is told to turn faults on:
// comma-separated names, passed into simulator.Config.Faults.
const FaultsEnv = "TCM_SIM_FAULTS"

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

// mode is how a run turns its faults on.
type mode int

const (
	// bundledEnv: the suite starts its bundled simulator, with the faults
	// of FaultsEnv.
	bundledEnv mode = iota
	// ownTarget: the kill matrix starts the simulator with the faults
	// itself, provisions the suite's accounts like the bundled mode does,
	// and runs the suite against it with --target and --control-clock.
	ownTarget
)

func (m mode) String() string {
	if m == bundledEnv {
		return "the suite's bundled simulator, faults turned on through " + FaultsEnv
	}
	return "a simulator started by the kill matrix, judged through --target with --control-clock"
}

// runner runs the compiled suite.
type runner struct {
	binary string
	dir    string
	mode   mode
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
	env := append(os.Environ(), "TCM_REPORT_DIR="+filepath.Join(dir, "reports"))
	for _, k := range []string{"TCM_TARGET", "TCM_PRO_KEY", "TCM_FREE_KEY", "TCM_REVOKED_KEY", "TCM_CONTROL_CLOCK", FaultsEnv} {
		env = slices.DeleteFunc(env, func(kv string) bool { return strings.HasPrefix(kv, k+"=") })
	}
	switch rn.mode {
	case bundledEnv:
		if len(faults) > 0 {
			env = append(env, FaultsEnv+"="+strings.Join(faults, ","))
		}
	case ownTarget:
		sim, err := simulator.New(simulator.Config{Seed: bundled.Seed, Faults: faults})
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
		env = append(env, "TCM_TARGET="+srv.URL, "TCM_PRO_KEY="+keys.Pro, "TCM_FREE_KEY="+keys.Free,
			"TCM_REVOKED_KEY="+keys.Revoked, "TCM_CONTROL_CLOCK=true")
	}
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

// build compiles the suite's test binary once.
func build(t *testing.T, dir string) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("the go command is not on PATH: %v", err)
	}
	binary := filepath.Join(dir, "suite.test")
	cmd := exec.Command(goTool, "test", "-c", "-o", binary, "./suites")
	cmd.Dir = filepath.Join("..", "..")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the suite: %v\n%s", err, out)
	}
	return binary
}

// bundledHonoursFaults asks the suite itself: with health-not-ok turned on
// through FaultsEnv, does its health spec fail? If not, the entry point
// does not read FaultsEnv (yet), and the kill matrix starts the simulator.
func bundledHonoursFaults(ctx context.Context, rn *runner) (bool, string) {
	probe := &runner{binary: rn.binary, dir: rn.dir, mode: bundledEnv}
	o, err := probe.run(ctx, "probe-bundled", []string{"health-not-ok"}, "--ginkgo.label-filter=HEALTH-OK")
	if err != nil {
		return false, err.Error()
	}
	if v := judge("health-not-ok", "HEALTH-OK", o.reports); v.Killed() {
		return true, ""
	}
	return false, FaultsEnv + " is not read by the suite's bundled mode"
}

// selectedFaults are the faults to run: all, or those TCM_KILLMATRIX_FAULTS names.
func selectedFaults(t *testing.T) []string {
	all := simulator.FaultNames()
	only := os.Getenv("TCM_KILLMATRIX_FAULTS")
	if only == "" {
		return all
	}
	var out []string
	for _, name := range strings.Split(only, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		if !slices.Contains(all, name) {
			t.Fatalf("TCM_KILLMATRIX_FAULTS names %q, which is no fault (known: %s)", name, strings.Join(all, ", "))
		}
		out = append(out, name)
	}
	return out
}

func TestKillMatrix(t *testing.T) {
	if testing.Short() {
		t.Skip("the kill matrix runs the whole suite once per fault; skipped with -short")
	}
	started := time.Now()
	dir := t.TempDir()
	ctx := t.Context()
	rn := &runner{binary: build(t, dir), dir: dir, mode: ownTarget}
	if ok, why := bundledHonoursFaults(ctx, rn); ok {
		rn.mode = bundledEnv
	} else {
		t.Logf("%s: using %s", why, ownTarget)
	}

	faults := selectedFaults(t)
	m := matrix{Mode: rn.mode.String(), Started: started, Verdicts: make([]verdict, len(faults))}
	if os.Getenv("TCM_KILLMATRIX_FAULTS") != "" {
		m.Subset = "TCM_KILLMATRIX_FAULTS"
	}
	var (
		wg       sync.WaitGroup
		sem      = make(chan struct{}, Parallel)
		mu       sync.Mutex
		problems []error
	)
	fail := func(err error) {
		mu.Lock()
		problems = append(problems, err)
		mu.Unlock()
	}
	wg.Go(func() {
		sem <- struct{}{}
		defer func() { <-sem }()
		o, err := rn.run(ctx, "faultless", nil)
		if err != nil {
			fail(err)
			m.Clean = []string{err.Error()}
			return
		}
		m.Clean, m.CleanTook = failures(o.reports), o.took
		if len(o.reports) == 0 {
			m.Clean = append(m.Clean, "no Ginkgo report; output:\n"+tail(o.output))
		}
	})
	for i, name := range faults {
		requirement, ok := simulator.FaultRequirement(name)
		if !ok {
			// A fault registered elsewhere, without a requirement: it
			// cannot be judged by label.
			m.Verdicts[i] = verdict{Fault: name, Errored: "the fault names no requirement (FaultRequirement)"}
			continue
		}
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			o, err := rn.run(ctx, name, []string{name})
			if err != nil {
				fail(err)
				m.Verdicts[i] = verdict{Fault: name, Requirement: requirement, Errored: err.Error()}
				return
			}
			v := judge(name, requirement, o.reports)
			v.Took = o.took
			if v.Errored != "" && len(o.reports) == 0 {
				v.Errored += "; output: " + firstLine(tail(o.output))
			}
			m.Verdicts[i] = v
		})
	}
	wg.Wait()
	m.Took = time.Since(started)

	t.Logf("kill matrix (%s):\n%s", m.Mode, m.Text())
	writeMatrix(t, dir, m)
	for _, err := range problems {
		t.Error(err)
	}
	if len(m.Clean) > 0 {
		t.Errorf("the faultless simulator fails the suite:\n  %s", strings.Join(m.Clean, "\n  "))
	}
	for _, v := range m.Verdicts {
		if !v.Killed() {
			t.Errorf("%s (breaks %s) is not killed: %s", v.Fault, v.Requirement, v.Result())
		}
	}
}

// writeMatrix writes killmatrix.md into the test's directory and into
// reports/ at the module root (git-ignored), where a person finds it.
func writeMatrix(t *testing.T, dir string, m matrix) {
	t.Helper()
	md := []byte(m.Markdown())
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
