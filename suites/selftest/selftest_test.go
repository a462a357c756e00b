// Package selftest proves the conformance suite beyond the kill matrix
// (which breaks the simulator one requirement at a time): the unbroken
// simulator passes, strict specs too, and twice in a row; targets that echo
// the API key everywhere leave no key in any output or report; hostile
// targets end the run in bounded time and memory with a verdict that names
// the problem.
//
// The suite binary is built once (go test -c, package testbin); each run uses the
// simulator's control API to move time, so a run takes about a second.
package selftest

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/tcmkit/tcmkit/ci/testbin"
	"github.com/tcmkit/tcmkit/schemas/jsondoc"
	"github.com/tcmkit/tcmkit/simulator"
	"github.com/tcmkit/tcmkit/suites/bundled"
)

var suiteBinary string

func TestMain(m *testing.M) {
	// The simulators of this process: a fifth less CPU with a larger GC
	// target. (A child's peak memory, VmHWM after its exec, is its own.)
	debug.SetGCPercent(400)
	// Most tests wait: on a suite run in a child process, on a deadline or
	// a Retry-After in real time. Twice as many at once as there are cores
	// keep the cores busy while some wait (go test's default is as many;
	// -parallel given wins).
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		flag.Set("test.parallel", strconv.Itoa(2*runtime.GOMAXPROCS(0)))
	}
	var err error
	// built where an unchanged suite is not linked again (package testbin)
	if suiteBinary, err = testbin.Test("./suites"); err != nil {
		fmt.Fprintf(os.Stderr, "building the suite: %v\n", err)
		os.Exit(2)
	}
	os.Exit(m.Run())
}

// target is a simulator behind a wrapper that breaks it, and its keys.
type target struct {
	url  string
	keys bundled.Keys
}

// startTarget starts a simulator (with cfg) behind wrap and provisions keys.
func startTarget(t *testing.T, cfg simulator.Config, wrap func(h http.Handler, keys *bundled.Keys) http.Handler) target {
	t.Helper()
	cfg.Seed = bundled.Seed
	sim, err := simulator.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var keys bundled.Keys
	h := sim.Handler()
	if wrap != nil {
		h = wrap(h, &keys)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(func() { srv.Close(); sim.Close() })
	// the control API passes every wrapper unchanged
	k, err := bundled.Provision(context.Background(), nil, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	keys = k
	return target{url: srv.URL, keys: keys}
}

// result is a finished run of the suite.
type result struct {
	exitCode int
	output   string
	reports  []report
	dir      string
	wall     time.Duration
	maxRSS   int64 // bytes
}

// report is what these tests read of a Ginkgo JSON report (types.Report):
// decoding all of it took three times the CPU, a second across the package.
type report struct{ SpecReports []specReport }

// specReport is what these tests read of a types.SpecReport.
type specReport struct {
	ContainerHierarchyTexts  []string
	ContainerHierarchyLabels [][]string
	LeafNodeType             types.NodeType
	LeafNodeText             string
	LeafNodeLabels           []string
	State                    types.SpecState
	Failure                  struct{ Message string }
}

func (sr specReport) ginkgo() types.SpecReport {
	return types.SpecReport{ContainerHierarchyTexts: sr.ContainerHierarchyTexts, ContainerHierarchyLabels: sr.ContainerHierarchyLabels,
		LeafNodeType: sr.LeafNodeType, LeafNodeText: sr.LeafNodeText, LeafNodeLabels: sr.LeafNodeLabels, State: sr.State}
}

// FullText and Labels are those of types.SpecReport.
func (sr specReport) FullText() string { return sr.ginkgo().FullText() }
func (sr specReport) Labels() []string { return sr.ginkgo().Labels() }

// failed lists the specs that failed.
func (r result) failed() []specReport {
	var out []specReport
	for _, rep := range r.reports {
		for _, sr := range rep.SpecReports {
			if sr.State.Is(types.SpecStateFailureStates) {
				out = append(out, sr)
			}
		}
	}
	return out
}

func (r result) passed() int {
	n := 0
	for _, rep := range r.reports {
		for _, sr := range rep.SpecReports {
			if sr.LeafNodeType.Is(types.NodeTypeIt) && sr.State.Is(types.SpecStatePassed) {
				n++
			}
		}
	}
	return n
}

// lessGC is the environment of a run whose memory no test judges: a
// larger GC target than Go's default spends a fifth less CPU. The runs
// whose peak memory is judged (hostile targets') keep the default.
var lessGC = []string{"GOGC=400"}

// runSuite runs the suite binary against a target with the given keys.
func runSuite(t *testing.T, tg target, extra ...string) result {
	t.Helper()
	return runArgs(t, runOptions{env: lessGC}, targetArgs(tg, extra))
}

// runSearched is runSuite for a run whose every output is searched for a
// key: Ginkgo's JUnit report is written too.
func runSearched(t *testing.T, tg target, extra ...string) result {
	t.Helper()
	return runArgs(t, runOptions{env: lessGC, junit: true}, targetArgs(tg, extra))
}

func targetArgs(tg target, extra []string) []string {
	return append([]string{
		"--target", tg.url,
		"--pro-key", tg.keys.Pro,
		"--free-key", tg.keys.Free,
		"--revoked-key", tg.keys.Revoked,
		"--control-clock",
	}, extra...)
}

// runOptions: what runArgs adds to a run's environment, and whether it
// asks for Ginkgo's JUnit report (only runs whose outputs are searched
// read it: a twentieth of a run's CPU).
type runOptions struct {
	env   []string
	junit bool
}

// runArgs runs the suite binary with the reports in a fresh directory,
// and reads its Ginkgo JSON report; the result has the run's wall time and
// the binary's peak memory.
func runArgs(t *testing.T, o runOptions, args []string) result {
	t.Helper()
	dir := t.TempDir()
	args = append([]string{
		"--report-dir", filepath.Join(dir, "reports"),
		"--ginkgo.json-report", filepath.Join(dir, "ginkgo.json"),
		"--ginkgo.no-color",
	}, args...)
	if o.junit {
		args = append([]string{"--ginkgo.junit-report", filepath.Join(dir, "junit.xml")}, args...)
	}
	cmd := exec.Command(suiteBinary, args...)
	cmd.Env = append(append(os.Environ(), "TCM_TARGET=", "TCM_PRO_KEY=", "TCM_FREE_KEY=", "TCM_REVOKED_KEY="), o.env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Start()
	var hwm int64
	if err == nil {
		hwm = watchPeak(cmd.Process.Pid, func() { err = cmd.Wait() })
	}
	r := result{output: out.String(), dir: dir, wall: time.Since(start), maxRSS: hwm}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok && hwm == 0 {
		r.maxRSS = ru.Maxrss << 10 // KiB on Linux
	}
	if ee, ok := err.(*exec.ExitError); ok {
		r.exitCode = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("running the suite: %v", err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "ginkgo.json"))
	if err != nil {
		t.Fatalf("no Ginkgo JSON report: %v\n%s", err, r.output)
	}
	if err := json.Unmarshal(raw, &r.reports); err != nil {
		t.Fatalf("Ginkgo JSON report: %v\n%s", err, tail(r.output, 3000))
	}
	return r
}

// rewrite runs h and lets edit change the recorded response before it is
// sent. Requests to the control API pass unchanged.
func rewrite(h http.Handler, edit func(r *http.Request, rec *httptest.ResponseRecorder)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/_control/") {
			h.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		edit(r, rec)
		forward(w, rec)
	})
}

// forward sends a recorded response.
func forward(w http.ResponseWriter, rec *httptest.ResponseRecorder) {
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.Header().Del("Content-Length")
	w.WriteHeader(rec.Code)
	w.Write(rec.Body.Bytes())
}

// editJSON decodes a recorded JSON body, lets f change it, and encodes it.
func editJSON(rec *httptest.ResponseRecorder, f func(doc any) any) {
	doc, err := jsondoc.Decode(rec.Body.Bytes())
	if err != nil {
		return
	}
	raw, _ := json.Marshal(f(doc))
	rec.Body = bytes.NewBuffer(raw)
}

// events returns the events array of a feed page.
func events(doc any) []any {
	obj, _ := doc.(map[string]any)
	evs, _ := obj["events"].([]any)
	return evs
}

// The unbroken simulator passes (quick and thorough, twice in a row):
// TestProfiles.

func TestStrictSpecsPassOnTheSimulator(t *testing.T) {
	t.Parallel()
	r := runSuite(t, startTarget(t, simulator.Config{}, nil), "--ginkgo.label-filter=strict")
	if r.exitCode != 0 || len(r.failed()) > 0 || r.passed() == 0 {
		t.Fatalf("the strict specs did not pass on the simulator (exit %d, %d passed):\n%s", r.exitCode, r.passed(), failures(r))
	}
}

// failures lists the failed specs of a run and their messages, for test logs.
func failures(r result) string {
	var b strings.Builder
	for _, sr := range r.failed() {
		fmt.Fprintf(&b, "- %s %v\n  %s\n", sr.FullText(), sr.Labels(), strings.ReplaceAll(firstLines(sr.Failure.Message, 4), "\n", "\n  "))
	}
	if b.Len() == 0 {
		return "(none)\n" + tail(r.output, 3000)
	}
	return b.String()
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	return strings.Join(lines[:min(n, len(lines))], "\n")
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[len(s)-n:]
}

// watchPeak runs wait while it reads the peak memory of process pid
// (VmHWM, Linux) every 10 ms, and returns the last reading, 0 without
// /proc. The rusage of a child is no measure here: Go starts it from a
// vfork of this test process, whose own high-water mark it inherits.
func watchPeak(pid int, wait func()) int64 {
	done := make(chan struct{})
	var peak atomic.Int64
	go func() {
		status := fmt.Sprintf("/proc/%d/status", pid)
		for {
			if b, err := os.ReadFile(status); err == nil {
				for _, line := range strings.Split(string(b), "\n") {
					if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
						var kib int64
						fmt.Sscan(strings.TrimSuffix(strings.TrimSpace(v), " kB"), &kib)
						if kib<<10 > peak.Load() {
							peak.Store(kib << 10)
						}
					}
				}
			}
			select {
			case <-done:
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	}()
	wait()
	close(done)
	return peak.Load()
}
