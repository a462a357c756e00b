// Package fuzzseeds tests ci/fuzz-seeds.sh, the seed loop that fuzzes a
// client in any language: it judges its client rather than trusts it.
package fuzzseeds

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestTheSeedLoopJudgesItsClient(t *testing.T) {
	if testing.Short() || os.Getenv("TCM_SCRIPTS") == "" {
		// Real processes and seconds of real time: ci/check.sh runs it
		// (go test ./... keeps within its minute).
		t.Skip("starts simulator processes and waits in real time: TCM_SCRIPTS=1 runs it")
	}
	for _, tool := range []string{"bash", "jq", "setsid", "curl", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("needs %s", tool)
		}
	}
	sim := filepath.Join(t.TempDir(), "simulator")
	if out, err := exec.Command("go", "build", "-o", sim, "../../cmd/simulator").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	marker := filepath.Join(t.TempDir(), "child-alive")
	request := `curl -s -o /dev/null -H "Authorization: Bearer $TCM_PRO_KEY" "$TCM_BASE_URL/api/public-feed"`
	// A command that fails by itself, as npm test without a package.json
	// does: its error (with a number that differs from run to run) on
	// stderr, exit 254, no request.
	broken := `echo "npm error code ENOENT"; echo "npm error enoent Could not read package.json; log in /root/.npm/_logs/$RANDOM$RANDOM-debug-0.log" >&2; exit 254`
	for _, tc := range []struct {
		name  string
		env   []string
		args  []string
		code  int
		wants []string
		lacks []string
	}{
		{"a client that sends nothing fails", nil, []string{"1", "2", "--", "true"}, 1, []string{"seed 1 FAILED: the client sent no API request", "2 of 2 tried failed"}, []string{"jq: error"}},
		{"a command that fails by itself shows its error once, and the loop stops after three seeds", nil, []string{"1", "100", "--", "bash", "-c", broken}, 1,
			[]string{"seed 1 FAILED: the command exited 254; the client sent no API request", "  | npm error enoent Could not read package.json", "(the command's output: as seed 1's, digits aside)",
				"seeds 1..3 failed the same way before any API request, with the same output", "stopped, 97 seeds untried", "3 of 3 tried failed"},
			[]string{"jq: error", "seed 4 "}},
		{"a client that sends a request passes, and says so per seed", nil, []string{"3", "3", "--", "bash", "-c", request}, 0, []string{"seed 3: passed (1 requests"}, nil},
		{"a client that sends a request, then fails, shows its output (its findings are none: no jq error)", nil, []string{"3", "3", "--", "bash", "-c", request + "; echo it broke; exit 1"}, 1,
			[]string{"seed 3 FAILED: the command exited 1", "  | it broke"}, []string{"jq: error"}},
		{"a client that erases its verdicts fails", []string{"FUZZ_BREAK=1"}, []string{"1", "1", "--", "bash", "-c", request + `; curl -s -X DELETE "$TCM_CONTROL_URL/clients"`}, 1,
			[]string{"the verdicts were erased during the run", "replay: FUZZ_BREAK=1 FUZZ_SPEED=0 FUZZ_TIMEOUT=120 "}, []string{"jq: error"}},
		{"a client that never ends fails at its timeout, its children ended", []string{"FUZZ_TIMEOUT=1"}, []string{"1", "1", "--", "bash", "-c", "(sleep 3; touch " + marker + ") & sleep 1000"}, 1,
			[]string{"ran past FUZZ_TIMEOUT=1s"}, nil},
		{"no seed to try is bad usage", nil, []string{"5", "1", "--", "true"}, 2, []string{"FIRST (5) is after LAST (1)"}, nil},
		{"too many seeds is bad usage", nil, []string{"1", "300000000", "--", "true"}, 2, []string{"at most 100000"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, "bash", append([]string{"../fuzz-seeds.sh"}, tc.args...)...)
			cmd.Env = append(append(os.Environ(), "SIMULATOR="+sim), tc.env...)
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			err := cmd.Run()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != tc.code {
				t.Errorf("exit %d, want %d:\n%s", code, tc.code, out.String())
			}
			for _, w := range tc.wants {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, out.String())
				}
			}
			for _, l := range tc.lacks {
				if strings.Contains(out.String(), l) {
					t.Errorf("output holds %q:\n%s", l, out.String())
				}
			}
			if n := strings.Count(out.String(), "npm error enoent"); n > 1 {
				t.Errorf("the command's error shown %d times, want once:\n%s", n, out.String())
			}
		})
	}
	time.Sleep(3 * time.Second) // the child of the client that never ended would have woken by now
	if _, err := os.Stat(marker); err == nil {
		t.Error("a child of the client outlived its seed")
	}
}
