package selftest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tcmkit/tcmkit/simulator"
	"github.com/tcmkit/tcmkit/suites/bundled"
)

// TestRefusesARunThatWouldMeanNothing: a key in the wrong role, a focus
// Ginkgo cannot read or a setting out of range exits 2 with one line,
// before Ginkgo prints anything, and leaves the last report as it was.
func TestRefusesARunThatWouldMeanNothing(t *testing.T) {
	t.Parallel()
	const lastGood = `{"outcome":"passed"}`
	tg := startTarget(t, simulator.Config{}, nil)
	base := []string{"--target", tg.url, "--control-clock", "--revoked-key", tg.keys.Revoked}
	for _, tc := range []struct {
		name string
		args []string
		says string
	}{
		{"the free key as --pro-key", append([]string{"--pro-key", tg.keys.Free, "--free-key", tg.keys.Pro}, base...), "--pro-key and --free-key are swapped"},
		{"the free key as --pro-key, no free key", append([]string{"--pro-key", tg.keys.Free}, base...), "--pro-key: the key is a free account's (tracked videos answered 403"},
		{"a focus that is no regular expression", append([]string{"--pro-key", tg.keys.Pro, "--ginkgo.focus", "["}, base...), `--focus "[": not a regular expression`},
		{"a negative wait", append([]string{"--pro-key", tg.keys.Pro, "--max-wait", "-5s"}, base...), "--max-wait -5s: must be more than 0"},
		{"a target that is not HTTP", []string{"--target", "ftp://x", "--pro-key", tg.keys.Pro}, `--target "ftp://x": not an http:// or https:// URL`},
		{"no Pro key", []string{"--target", tg.url, "--pro-key", ""}, "no Pro key: give --pro-key"},
		{"a profile that is none", append([]string{"--pro-key", tg.keys.Pro, "--profile", "thoro"}, base...), `--profile "thoro": want quick (the default) or thorough (did you mean thorough?)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			os.MkdirAll(filepath.Join(dir, "reports"), 0o755)
			os.WriteFile(filepath.Join(dir, "reports", "conformance-report.json"), []byte(lastGood), 0o644)
			cmd := exec.Command(suiteBinary, append([]string{"--report-dir", filepath.Join(dir, "reports"), "--ginkgo.no-color"}, tc.args...)...)
			cmd.Env = append(os.Environ(), "TCM_TARGET=", "TCM_PRO_KEY=", "TCM_FREE_KEY=", "TCM_REVOKED_KEY=")
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			err := cmd.Run()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			}
			lines := strings.Split(strings.TrimSpace(out.String()), "\n")
			last := lines[len(lines)-1]
			if code != 2 || !strings.HasPrefix(last, "the run was refused: ") || !strings.Contains(last, tc.says) {
				t.Errorf("exit %d, want 2 and one line saying %q:\n%s", code, tc.says, out.String())
			}
			for _, l := range lines {
				// waits may show; Ginkgo's banner and specs may not
				if !strings.HasPrefix(l, "the run was refused: ") && !strings.HasPrefix(l, "waiting ") {
					t.Errorf("more than the one line: %q", l)
				}
			}
			// The last good report stays: a refusal judged nothing.
			if raw, err := os.ReadFile(filepath.Join(dir, "reports", "conformance-report.json")); err != nil || string(raw) != lastGood {
				t.Errorf("the last report was replaced: %v %.200s", err, raw)
			}
			for _, k := range []string{tg.keys.Pro, tg.keys.Free, tg.keys.Revoked} {
				secret := k[strings.IndexByte(k, '_')+1:][:8]
				if strings.Contains(out.String(), secret) {
					t.Errorf("a key's secret in the output")
				}
			}
		})
	}
}

// TestBodyNotJSONFailsItsRequirement: a feed page that is not JSON, or
// not UTF-8, fails the page's requirement (FEED-PAGE-SCHEMA), with the
// request's evidence; the run is failed, not errored.
func TestBodyNotJSONFailsItsRequirement(t *testing.T) {
	t.Parallel()
	for name, body := range map[string]string{
		"not JSON":  `{"events":[`,
		"not UTF-8": "{\"events\":[],\"nextCursor\":\"\xff\xfe\"}",
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			tg := startTarget(t, simulator.Config{}, func(h http.Handler, keys *bundled.Keys) http.Handler {
				return rewrite(h, func(r *http.Request, rec *httptest.ResponseRecorder) {
					if r.URL.Path == "/api/public-feed" && r.URL.Query().Get("cursor") != "" && rec.Code == http.StatusOK {
						rec.Body = bytes.NewBufferString(body)
					}
				})
			})
			r := runSuite(t, tg, "--ginkgo.label-filter", "FEED-PAGE-SCHEMA || FEED-CURSOR-WALK")
			raw, err := os.ReadFile(filepath.Join(r.dir, "reports", "conformance-report.json"))
			if err != nil {
				t.Fatal(err)
			}
			var rep struct {
				Outcome      string
				Requirements []struct{ ID, Result string }
				Specs        []struct {
					State   string
					Failure *struct {
						Problems []struct{ Requirement string }
						Evidence []struct{ Curl, Transcript string }
						Rerun    string
					}
				}
			}
			if err := json.Unmarshal(raw, &rep); err != nil {
				t.Fatal(err)
			}
			if rep.Outcome != "failed" || t.Failed() {
				t.Errorf("outcome %q, want failed (the server's body, not the suite's error)\n%s", rep.Outcome, failures(r))
			}
			for _, q := range rep.Requirements {
				if q.ID == "FEED-PAGE-SCHEMA" && q.Result != "failed" || q.ID == "FEED-CURSOR-WALK" && q.Result == "failed" {
					t.Errorf("%s: %s\n%s", q.ID, q.Result, failures(r))
				}
			}
			for _, s := range rep.Specs {
				if s.State == "errored" {
					t.Errorf("a spec errored")
				}
				if f := s.Failure; f != nil && (len(f.Evidence) == 0 || f.Evidence[0].Transcript == "" || !strings.HasPrefix(f.Evidence[0].Curl, "curl ") || f.Rerun == "") {
					t.Errorf("a failure without its evidence: %+v", f)
				}
			}
		})
	}
}

// TestLimiterThatDoesNotRelease: a key whose 429 does not end when its
// Retry-After said stops the run with that finding (incomplete), instead of
// failing the requirements whose specs use the key. A whole run: no spec
// whose key is locked out may fail for it.
func TestLimiterThatDoesNotRelease(t *testing.T) {
	t.Parallel()
	tg := startTarget(t, simulator.Config{}, func(h http.Handler, keys *bundled.Keys) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if keys.Free != "" && r.Header.Get("Authorization") == "Bearer "+keys.Free {
				w.Header().Set("Content-Type", "application/json")
				w.Header().Set("Retry-After", "1")
				w.WriteHeader(http.StatusTooManyRequests)
				w.Write([]byte(`{"error":"rate_limited","message":"later"}`))
				return
			}
			h.ServeHTTP(w, r)
		})
	})
	r := runSuite(t, tg, "--max-wait", "1s")
	raw, err := os.ReadFile(filepath.Join(r.dir, "reports", "conformance-report.json"))
	var rep struct {
		Outcome string
		Errors  []string
	}
	if err != nil || json.Unmarshal(raw, &rep) != nil {
		t.Fatalf("no report: %v", err)
	}
	if r.exitCode != 3 || rep.Outcome != "incomplete" || len(rep.Errors) == 0 || !strings.Contains(rep.Errors[0], "the rate limiter does not release") {
		t.Errorf("exit %d, outcome %q, errors %q; want 3, incomplete, saying the limiter does not release", r.exitCode, rep.Outcome, rep.Errors)
	}
	if f := r.failed(); len(f) > 0 && f[0].LeafNodeType.String() == "It" {
		t.Errorf("specs failed: %s", failures(r))
	}
}
