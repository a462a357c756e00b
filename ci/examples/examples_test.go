// Package examples holds no code: its tests keep the CI examples in this
// directory honest. Every flag they mention must exist (in Ginkgo, in the
// suite, in tcmkit conform or in tcmkit simulate), and with-simulator.sh
// must start the
// simulator, hand its URL and keys to the command, pass on the command's
// exit status, and stop the simulator.
package examples

import (
	"bufio"
	"bytes"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/tcmkit/tcmkit/ci/testbin"
	"github.com/tcmkit/tcmkit/schemas/settings"
	"github.com/tcmkit/tcmkit/suites/conformance"
)

// The files users copy.
var exampleFiles = []string{
	"README.md",
	"with-simulator.sh",
	"github/conformance.yml",
	"github/client-tests-with-simulator.yml",
	"gitlab/.gitlab-ci.yml",
	"compose/compose.yaml",
}

// outsideFlags are flags the examples use that this module does not
// declare: the Ginkgo CLI's, docker compose's, and --help.
var outsideFlags = map[string]bool{
	"help":         true,
	"junit-report": true, "json-report": true, "output-dir": true,
	"label-filter": true, "focus": true,
	"build": true, "rm": true, "network": true, // docker compose, docker run
}

// envToken is a variable of the simulator, which its --help lists (the
// compose example sets them).
var envToken = regexp.MustCompile(`TCM_SIM_[A-Z0-9_]+`)

var flagToken = regexp.MustCompile(`(^|[\s"'(\x60])--([a-z][a-z0-9-]*)`)

// buildTcmkit builds cmd/tcmkit once (package testbin: not linked again
// while unchanged).
func buildTcmkit(t *testing.T) string {
	t.Helper()
	bin, err := testbin.Command("./cmd/tcmkit")
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

func TestExamplesNameOnlyFlagsThatExist(t *testing.T) {
	known := map[string]string{}
	for f := range outsideFlags {
		known[f] = "ginkgo"
	}
	fs := flag.NewFlagSet("suite", flag.ContinueOnError)
	conformance.NewConfig().BindFlags(fs)
	fs.VisitAll(func(f *flag.Flag) { known[f.Name] = "suite" })
	if known["target"] != "suite" {
		t.Fatalf("the suite has no --target flag; BindFlags changed?")
	}

	tcmkit := buildTcmkit(t)
	conform, _ := exec.Command(tcmkit, "conform", "--help").CombinedOutput()
	for _, m := range regexp.MustCompile(`(?m)^\s+(?:-[a-z], )?--([a-z][a-z0-9-]*)`).FindAllSubmatch(conform, -1) {
		if _, dup := known[string(m[1])]; !dup {
			known[string(m[1])] = "conform"
		}
	}
	if known["no-color"] != "conform" {
		t.Fatalf("no --no-color in tcmkit conform --help:\n%s", conform)
	}
	help, _ := exec.Command(tcmkit, "simulate", "--help").CombinedOutput()
	sc := bufio.NewScanner(bytes.NewReader(help))
	simFlags := 0
	simVars := map[string]bool{} // each flag's variable (package schemas/settings)
	for sc.Scan() {
		if m := regexp.MustCompile(`^\s+--([a-z][a-z0-9-]*)`).FindStringSubmatch(sc.Text()); m != nil {
			if _, dup := known[m[1]]; !dup {
				known[m[1]] = "simulator"
			}
			simVars[settings.EnvName("TCM_SIM", m[1])] = true
			simFlags++
		}
	}
	if simFlags == 0 {
		t.Fatalf("no flags in the simulator's --help:\n%s", help)
	}

	for _, name := range exampleFiles {
		raw, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(raw), "\n") {
			for _, v := range envToken.FindAllString(line, -1) {
				// with-simulator.sh exports a TCM_SIM_INFO of its own.
				if strings.HasPrefix(name, "compose/") && !simVars[v] {
					t.Errorf("%s:%d: %s is no variable of the simulator (see its --help)", name, i+1, v)
				}
			}
			for _, m := range flagToken.FindAllStringSubmatch(line, -1) {
				if _, ok := known[m[2]]; !ok {
					t.Errorf("%s:%d: --%s is a flag of neither Ginkgo, the suite, tcmkit conform nor tcmkit simulate", name, i+1, m[2])
				}
			}
		}
	}
}

func TestWithSimulator(t *testing.T) {
	for _, tool := range []string{"bash", "jq", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("with-simulator.sh needs %s, which is not installed here", tool)
		}
	}
	out := filepath.Join(t.TempDir(), "seen")
	// The command records what it was given, checks that the port answers
	// (bash's /dev/tcp: no curl needed), and exits 7.
	script := `set -e
printf '%s\n%s\n%s\n' "$TCM_BASE_URL" "$TCM_PRO_KEY" "$TCM_CONTROL_URL" > "$OUT"
port="${TCM_BASE_URL##*:}"
exec 3<>"/dev/tcp/127.0.0.1/$port" && echo open >> "$OUT"
exit 7`
	cmd := exec.Command("./with-simulator.sh", "--seed", "3", "--", "bash", "-c", script)
	cmd.Env = append(os.Environ(), "OUT="+out, "TCMKIT_DIR="+filepath.Join("..", ".."))
	if os.Getenv("TCM_SCRIPTS") == "" {
		// The tcmkit on PATH, built once (ci/testbin), as after go
		// install: what the script exports and how it ends are the same
		// either way, and its build from a checkout (TCMKIT_DIR) links
		// tcmkit afresh each run, seconds of CPU: CI runs that
		// (TCM_SCRIPTS=1, ci/check.sh).
		env := slices.DeleteFunc(os.Environ(), func(kv string) bool {
			return strings.HasPrefix(kv, "TCMKIT_DIR=") || strings.HasPrefix(kv, "PATH=")
		})
		cmd.Env = append(env, "OUT="+out, "PATH="+filepath.Dir(buildTcmkit(t))+string(os.PathListSeparator)+os.Getenv("PATH"))
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 7 {
		t.Fatalf("exit: %v, want status 7 (the command's)\nstderr:\n%s", err, stderr.String())
	}
	seen, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("the command did not run: %v\nstderr:\n%s", err, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(string(seen)), "\n")
	if len(lines) != 4 {
		t.Fatalf("the command saw %q", lines)
	}
	url, key, control := lines[0], lines[1], lines[2]
	if !regexp.MustCompile(`^http://127\.0\.0\.1:\d+$`).MatchString(url) {
		t.Errorf("TCM_BASE_URL = %q, want http://127.0.0.1:PORT", url)
	}
	if !regexp.MustCompile(`^tcm_[A-Za-z0-9]{32}$`).MatchString(key) {
		t.Errorf("TCM_PRO_KEY does not look like a key (%d characters)", len(key))
	}
	if control != url+"/_control" {
		t.Errorf("TCM_CONTROL_URL = %q, want %q", control, url+"/_control")
	}
	if lines[3] != "open" {
		t.Errorf("the simulator's port did not answer")
	}
	if strings.Contains(stderr.String(), key) {
		t.Errorf("the script printed the key")
	}
	// The script waited for the simulator to exit before it returned.
	port := url[strings.LastIndexByte(url, ':')+1:]
	probe := exec.Command("bash", "-c", `exec 3<>"/dev/tcp/127.0.0.1/$1"`, "probe", port)
	if probe.Run() == nil {
		t.Errorf("the simulator still listens on %s after the script ended", url)
	}
}

// TestWithSimulatorVerdict: once the command ends, with-simulator.sh exits
// on the client judge's verdict and prints it: a command that passes but
// whose client put its key in a URL makes it exit 3, naming the broken
// requirement, with no key in what it prints.
func TestWithSimulatorVerdict(t *testing.T) {
	for _, tool := range []string{"bash", "jq", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("with-simulator.sh needs %s, which is not installed here", tool)
		}
	}
	// One HTTP request with bash's /dev/tcp, the key in the query.
	script := `port="${TCM_BASE_URL##*:}"
exec 3<>"/dev/tcp/127.0.0.1/$port"
printf 'GET /api/public-feed?key=%s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' "$TCM_PRO_KEY" >&3
cat <&3 >/dev/null
printf '%s' "$TCM_PRO_KEY" > "$OUT"`
	out := filepath.Join(t.TempDir(), "key")
	cmd := exec.Command("./with-simulator.sh", "--speed", "0", "--", "bash", "-c", script)
	// The tcmkit on PATH, as after go install (TestWithSimulator has the
	// script build one from TCMKIT_DIR under TCM_SCRIPTS=1).
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "TCMKIT_DIR=") || strings.HasPrefix(kv, "PATH=")
	})
	cmd.Env = append(env, "OUT="+out, "PATH="+filepath.Dir(buildTcmkit(t))+string(os.PathListSeparator)+os.Getenv("PATH"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 3 {
		t.Fatalf("exit: %v, want 3 (a client failed)\nstderr:\n%s", err, stderr.String())
	}
	for _, want := range []string{"client verdict: failed", "broke CLIENT-KEY-NOT-IN-URL", "a client broke a client requirement"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
	key, err := os.ReadFile(out)
	if err != nil || len(key) < 8 {
		t.Fatalf("the command did not run: %v", err)
	}
	if strings.Contains(stderr.String(), string(key)) {
		t.Error("the verdict printed the key")
	}
}
