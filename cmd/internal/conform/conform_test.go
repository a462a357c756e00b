package conform

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConformsTheBundledSimulator runs the command as tcmkit conform does,
// against the bundled simulator, with a label filter and a relative report
// directory (Ginkgo runs once in a process: this is the package's only run).
func TestConformsTheBundledSimulator(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	var stdout, stderr bytes.Buffer
	code := Run("tcmkit conform", []string{"-v", "--label-filter", "health || auth", "--report-dir", "out", "--no-color", "--junit-report", filepath.Join(dir, "junit.xml")}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, stderr.String())
	}
	raw, err := os.ReadFile(filepath.Join(dir, "out", "conformance-report.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Outcome string `json:"outcome"`
	}
	if err := json.Unmarshal(raw, &rep); err != nil || rep.Outcome != "passed" {
		t.Errorf("report: %v %s", err, raw[:min(len(raw), 300)])
	}
	if want := "report: " + filepath.Join(dir, "out", "conformance-report.html"); !strings.Contains(stderr.String(), want) {
		t.Errorf("the summary does not print the absolute path %q:\n%s", want, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "junit.xml")); err != nil {
		t.Errorf("Ginkgo's JUnit report: %v", err)
	}
}

func TestBadSettingsExit2(t *testing.T) {
	const key = "tcm_ABCDEFGHIJKLMNOPQRSTUVWXYZ012345"
	// The last ones pass the flags' parse and are refused by the suite
	// before it declares a spec: one line, the reports left alone.
	dir := t.TempDir()
	for _, args := range [][]string{{"--prokey", "x"}, {"--max-wait", "soon"}, {"stray"},
		{"--report-dir", dir, "--max-wait", "-5s"}, {"--report-dir", dir, "--target", "ftp://x", "--pro-key", "k"},
		{"--report-dir", dir, "--target", "http://127.0.0.1:9", "--pro-key", "", "--run-deadline", "-1s"},
		// a key in the target's URL, as record refuses it: never sent
		{"--report-dir", dir, "--target", "http://u:" + key + "@127.0.0.1:9", "--pro-key", key},
		{"--report-dir", dir, "--target", "http://127.0.0.1:9/?key=" + key, "--pro-key", key},
		{"--report-dir", dir, "--target", "http://127.0.0.1:9/#" + key, "--pro-key", key},
		{"--report-dir", dir, "--target", "http://" + key + ".localhost:9", "--pro-key", key}} {
		var stderr bytes.Buffer
		if code := Run("tcmkit conform", args, &bytes.Buffer{}, &stderr); code != 2 || strings.Count(stderr.String(), "\n") != 1 {
			t.Errorf("%v: exit %d, %q", args, code, stderr.String())
		}
		if strings.Contains(stderr.String(), key[4:12]) {
			t.Errorf("%v: the key in the message: %q", args, stderr.String())
		}
	}
}

// TestBadProfileExit2: a --profile that is none of the profiles is refused
// in one line that names the nearest, by a run and by --list alike, before
// Ginkgo starts.
func TestBadProfileExit2(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{{"--report-dir", dir, "--profile", "thoro"}, {"--list", "--profile", "thoro"}, {"--list", "--profile", "fast"}} {
		var stdout, stderr bytes.Buffer
		code := Run("tcmkit conform", args, &stdout, &stderr)
		want := "did you mean thorough?"
		if args[len(args)-1] == "fast" {
			want = "want quick (the default) or thorough"
		}
		if code != 2 || strings.Count(stderr.String(), "\n") != 1 || !strings.Contains(stderr.String(), `--profile "`) || !strings.Contains(stderr.String(), want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and one line with %q", args, code, stderr.String(), want)
		}
		if stdout.Len() != 0 {
			t.Errorf("%v: a list or a run began: %q", args, stdout.String())
		}
	}
}

// TestHelpSaysTheExitStatuses: --help names each exit status and what it
// means, and --require-all with its variable.
func TestHelpSaysTheExitStatuses(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := Run("tcmkit conform", []string{"--help"}, &stdout, &stderr); code != 0 {
		t.Fatalf("--help: exit %d", code)
	}
	help := strings.Join(strings.Fields(stdout.String()), " ")
	for _, want := range []string{"0 passed:", "1 failed:", "2 refused:", "3 incomplete:", "never passed", "--require-all", "TCM_"} {
		if !strings.Contains(help, want) {
			t.Errorf("--help does not say %q:\n%s", want, stdout.String())
		}
	}
}

// TestRefusedRunLeavesTheReports: a refused run (a profile that is none,
// an empty --pro-key) leaves the report directory byte-identical: the last
// good report stays.
func TestRefusedRunLeavesTheReports(t *testing.T) {
	dir := t.TempDir()
	good := map[string]string{"conformance-report.json": `{"outcome":"passed"}`, "conformance-report.md": "# passed\n", "conformance-report.html": "<p>passed</p>"}
	for name, body := range good {
		os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644)
	}
	for _, args := range [][]string{{"--profile", "quik"}, {"--target", "http://127.0.0.1:9", "--pro-key", ""}} {
		var stderr bytes.Buffer
		if code := Run("tcmkit conform", append([]string{"--report-dir", dir}, args...), &bytes.Buffer{}, &stderr); code != 2 {
			t.Errorf("%v: exit %d, %q", args, code, stderr.String())
		}
		entries, _ := os.ReadDir(dir)
		if len(entries) != len(good) {
			t.Errorf("%v: %d entries in the report directory, want %d", args, len(entries), len(good))
		}
		for name, body := range good {
			if got, _ := os.ReadFile(filepath.Join(dir, name)); string(got) != body {
				t.Errorf("%v: %s became %.100q", args, name, got)
			}
		}
	}
	// Nor is a directory made for a refused run.
	fresh := filepath.Join(t.TempDir(), "reports")
	Run("tcmkit conform", []string{"--report-dir", fresh, "--profile", "quik"}, &bytes.Buffer{}, &bytes.Buffer{})
	if _, err := os.Stat(fresh); err == nil {
		t.Error("a refused run made the report directory")
	}
}

// TestParallelFlagSuggestsGinkgo: -p, which needs Ginkgo's own command,
// is refused in one line that says how to run in parallel.
func TestParallelFlagSuggestsGinkgo(t *testing.T) {
	for _, args := range [][]string{{"-p"}, {"--procs=3"}, {"--label-filter", "auth", "-p"}} {
		var stderr bytes.Buffer
		code := Run("tcmkit conform", args, &bytes.Buffer{}, &stderr)
		if code != 2 || strings.Count(stderr.String(), "\n") != 1 || !strings.Contains(stderr.String(), "go tool ginkgo -p ./suites") {
			t.Errorf("%v: exit %d, %q", args, code, stderr.String())
		}
	}
}
