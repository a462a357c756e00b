// Package selftest proves the conformance suite: it runs the suite binary
// against the bundled simulator made to break one rule at a time, and checks
// that the run fails, in the spec that checks that rule; the unbroken
// simulator must pass. It also runs the suite against a target that echoes
// the API key everywhere and checks that the key appears in no output and no
// report file.
//
// The suite binary is built once (go test -c); each run uses the
// simulator's control API to move time, so a run takes about a second.
package selftest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/schemas/jsondoc"
	"github.com/tcmkit/tcmkit/simulator"
	"github.com/tcmkit/tcmkit/suites/bundled"
)

var suiteBinary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "selftest")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	suiteBinary = filepath.Join(dir, "suite.test")
	build := exec.Command("go", "test", "-c", "-o", suiteBinary, ".")
	build.Dir = ".." // the suites package
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building the suite: %v\n%s", err, out)
		os.Exit(2)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
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
	reports  []types.Report
	dir      string
	wall     time.Duration
	maxRSS   int64 // bytes
}

// failed lists the full texts of the specs that failed, with their labels.
func (r result) failed() []types.SpecReport {
	var out []types.SpecReport
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

// runSuite runs the suite binary against a target with the given keys.
func runSuite(t *testing.T, tg target, extra ...string) result {
	t.Helper()
	return runArgs(t, append([]string{
		"--target", tg.url,
		"--pro-key", tg.keys.Pro,
		"--free-key", tg.keys.Free,
		"--revoked-key", tg.keys.Revoked,
		"--control-clock",
	}, extra...))
}

// runArgs runs the suite binary with the reports in a fresh directory and
// reads its Ginkgo JSON report; the result has the run's wall time and the
// binary's peak memory.
func runArgs(t *testing.T, args []string) result {
	t.Helper()
	dir := t.TempDir()
	args = append([]string{
		"--report-dir", filepath.Join(dir, "reports"),
		"--ginkgo.json-report", filepath.Join(dir, "ginkgo.json"),
		"--ginkgo.junit-report", filepath.Join(dir, "junit.xml"),
		"--ginkgo.no-color",
	}, args...)
	cmd := exec.Command(suiteBinary, args...)
	cmd.Env = append(os.Environ(), "TCM_TARGET=", "TCM_PRO_KEY=", "TCM_FREE_KEY=", "TCM_REVOKED_KEY=")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	r := result{output: out.String(), dir: dir, wall: time.Since(start)}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
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
		t.Fatalf("Ginkgo JSON report: %v", err)
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

func isFeed(r *http.Request) bool   { return r.URL.Path == schemas.PathFeed }
func isVideos(r *http.Request) bool { return r.URL.Path == schemas.PathVideos }

// swapKey makes the handler see another key when the request carries from.
func swapKey(h http.Handler, when func(r *http.Request) bool, from, to func() string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "Bearer "+from() && when(r) {
			r.Header.Set("Authorization", "Bearer "+to())
		}
		h.ServeHTTP(w, r)
	})
}

// timestampsToSeconds divides every timestamp of a document by 1000.
func timestampsToSeconds(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			if n, ok := x.(json.Number); ok && (k == "createdAt" || k == "publishedAt" || k == "firstSeenAt") {
				ms, _ := n.Int64()
				t[k] = json.Number(strconv.FormatInt(ms/1000, 10))
				continue
			}
			t[k] = timestampsToSeconds(x)
		}
	case []any:
		for i := range t {
			t[i] = timestampsToSeconds(t[i])
		}
	}
	return v
}

// A broken server and the spec that must catch it.
type breakage struct {
	name string
	// label is a requirement id; some spec carrying it must fail.
	label string
	// text is part of the text of a spec that must fail.
	text string
	cfg  simulator.Config
	wrap func(h http.Handler, keys *bundled.Keys) http.Handler
}

func breakages() []breakage {
	return []breakage{
		{name: "answers the revoked key with 200", label: "AUTH-REVOKED", text: "the revoked key with 401",
			wrap: func(h http.Handler, k *bundled.Keys) http.Handler {
				return swapKey(h, func(*http.Request) bool { return true }, func() string { return k.Revoked }, func() string { return k.Pro })
			}},
		{name: "ignores the Pro gate", label: "PRO-GATE", text: "tracked videos for a free key with 403",
			wrap: func(h http.Handler, k *bundled.Keys) http.Handler {
				return swapKey(h, isVideos, func() string { return k.Free }, func() string { return k.Pro })
			}},
		{name: "returns events oldest first", label: "FEED-ORDER", text: "newest first",
			wrap: func(h http.Handler, _ *bundled.Keys) http.Handler {
				return rewrite(h, func(r *http.Request, rec *httptest.ResponseRecorder) {
					if isFeed(r) && rec.Code == 200 {
						editJSON(rec, func(doc any) any { slices.Reverse(events(doc)); return doc })
					}
				})
			}},
		{name: "does not cap limit", label: "FEED-LIMIT-CAP", text: "caps limit at 200",
			wrap: func(h http.Handler, _ *bundled.Keys) http.Handler {
				// a limit above 200 gets 200 events and the first of the next page
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					n, _ := strconv.Atoi(r.URL.Query().Get("limit"))
					if !isFeed(r) || n <= schemas.MaxPageSize {
						h.ServeHTTP(w, r)
						return
					}
					first := httptest.NewRecorder()
					q := r.URL.Query()
					q.Set("limit", strconv.Itoa(schemas.MaxPageSize))
					r.URL.RawQuery = q.Encode()
					h.ServeHTTP(first, r)
					if first.Code != http.StatusOK {
						forward(w, first)
						return
					}
					doc, _ := jsondoc.Decode(first.Body.Bytes())
					if next, ok := doc.(map[string]any)["nextCursor"].(string); ok {
						q.Set("limit", "1")
						q.Set("cursor", next)
						r2 := r.Clone(r.Context())
						r2.URL.RawQuery = q.Encode()
						second := httptest.NewRecorder()
						h.ServeHTTP(second, r2)
						if second.Code != http.StatusOK { // such as a 429: the client will retry
							forward(w, second)
							return
						}
						doc2, _ := jsondoc.Decode(second.Body.Bytes())
						obj := doc.(map[string]any)
						obj["events"] = append(events(doc), events(doc2)...)
						obj["nextCursor"] = doc2.(map[string]any)["nextCursor"]
					}
					w.Header().Set("Content-Type", "application/json")
					json.NewEncoder(w).Encode(doc)
				})
			}},
		{name: "repeats an event across pages", label: "FEED-CURSOR-WALK", text: "each event once",
			wrap: func(h http.Handler, _ *bundled.Keys) http.Handler {
				var mu sync.Mutex
				lastOf := map[string]any{} // nextCursor → the last event of the page that gave it
				return rewrite(h, func(r *http.Request, rec *httptest.ResponseRecorder) {
					if !isFeed(r) || rec.Code != 200 {
						return
					}
					editJSON(rec, func(doc any) any {
						mu.Lock()
						defer mu.Unlock()
						obj := doc.(map[string]any)
						evs := events(doc)
						if prev, ok := lastOf[r.URL.Query().Get("cursor")]; ok && len(evs) > 0 {
							evs = append([]any{prev}, evs[:len(evs)-1]...)
							obj["events"] = evs
						}
						if next, ok := obj["nextCursor"].(string); ok && len(evs) > 0 {
							lastOf[next] = evs[len(evs)-1]
						}
						return doc
					})
				})
			}},
		{name: "skips an event at every page boundary", label: "FEED-CURSOR-WALK", text: "the same sequence of events whatever the page size",
			wrap: func(h http.Handler, _ *bundled.Keys) http.Handler {
				return rewrite(h, func(r *http.Request, rec *httptest.ResponseRecorder) {
					if isFeed(r) && rec.Code == 200 && r.URL.Query().Get("cursor") != "" {
						editJSON(rec, func(doc any) any {
							if evs := events(doc); len(evs) > 0 {
								doc.(map[string]any)["events"] = evs[1:]
							}
							return doc
						})
					}
				})
			}},
		{name: "omits Retry-After", label: "RATE-RETRY-AFTER", text: "sends Retry-After",
			wrap: func(h http.Handler, _ *bundled.Keys) http.Handler {
				return rewrite(h, func(_ *http.Request, rec *httptest.ResponseRecorder) { rec.Header().Del("Retry-After") })
			}},
		{name: "has no rate limit", label: "RATE-LIMIT-429", text: "answers 429",
			cfg: simulator.Config{FeedLimit: -1}},
		{name: "sends timestamps in seconds", label: "TIMESTAMP-EPOCH-MS", text: "epoch milliseconds",
			wrap: func(h http.Handler, _ *bundled.Keys) http.Handler {
				return rewrite(h, func(r *http.Request, rec *httptest.ResponseRecorder) {
					if rec.Code == 200 && (isFeed(r) || isVideos(r)) {
						editJSON(rec, timestampsToSeconds)
					}
				})
			}},
		{name: "puts a video on channel_renamed", label: "EVENT-CHANNEL-NO-VIDEO", text: "carry a video unless they are channel-level",
			wrap: func(h http.Handler, _ *bundled.Keys) http.Handler {
				video := map[string]any{"platformVideoId": "v1", "currentTitle": "t", "currentThumbnailUrl": "https://i.example/v1.jpg", "publishedAt": 1767225600000}
				return rewrite(h, func(r *http.Request, rec *httptest.ResponseRecorder) {
					if isFeed(r) && rec.Code == 200 {
						editJSON(rec, func(doc any) any {
							for _, e := range events(doc) {
								if m := e.(map[string]any); m["type"] == schemas.TypeChannelRenamed {
									m["video"] = video
								}
							}
							return doc
						})
					}
				})
			}},
		{name: "answers 401 without an ErrorBody", label: "ERROR-BODY", text: "sends an ErrorBody with a non-empty error and message",
			wrap: func(h http.Handler, _ *bundled.Keys) http.Handler {
				return rewrite(h, func(_ *http.Request, rec *httptest.ResponseRecorder) {
					if rec.Code == http.StatusUnauthorized {
						rec.Body = bytes.NewBufferString(`{"status":"unauthorized"}`)
					}
				})
			}},
		{name: "sends a wrong Content-Type", label: "CONTENT-TYPE-JSON", text: "JSON Content-Type",
			wrap: func(h http.Handler, _ *bundled.Keys) http.Handler {
				return rewrite(h, func(_ *http.Request, rec *httptest.ResponseRecorder) {
					rec.Header().Set("Content-Type", "text/plain; charset=utf-8")
				})
			}},
		{name: "says the health is up", label: "HEALTH-OK", text: `{"status":"ok"}`,
			wrap: func(h http.Handler, _ *bundled.Keys) http.Handler {
				return rewrite(h, func(r *http.Request, rec *httptest.ResponseRecorder) {
					if r.URL.Path == schemas.PathHealth {
						rec.Body = bytes.NewBufferString(`{"status":"up"}`)
					}
				})
			}},
		{name: "accepts 21 video ids", label: "VIDEOS-IDS-MAX", text: "rejects 21 ids",
			wrap: func(h http.Handler, _ *bundled.Keys) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if isVideos(r) {
						var body struct {
							VideoIDs []string `json:"videoIds"`
						}
						raw, _ := io.ReadAll(r.Body)
						if json.Unmarshal(raw, &body) == nil && len(body.VideoIDs) > schemas.MaxVideoIDs {
							raw, _ = json.Marshal(map[string][]string{"videoIds": body.VideoIDs[:schemas.MaxVideoIDs]})
						}
						r.Body = io.NopCloser(bytes.NewReader(raw))
						r.ContentLength = int64(len(raw))
					}
					h.ServeHTTP(w, r)
				})
			}},
	}
}

func TestCleanSimulatorPasses(t *testing.T) {
	t.Parallel()
	r := runSuite(t, startTarget(t, simulator.Config{}, nil))
	if r.exitCode != 0 || len(r.failed()) > 0 {
		t.Fatalf("the unbroken simulator failed (exit %d):\n%s", r.exitCode, failures(r))
	}
	if r.passed() < 60 {
		t.Errorf("only %d specs passed", r.passed())
	}
	for _, f := range []string{"conformance-report.json", "conformance-report.md", "conformance-report.html"} {
		if _, err := os.Stat(filepath.Join(r.dir, "reports", f)); err != nil {
			t.Errorf("report file: %v", err)
		}
	}
}

func TestStrictSpecsPassOnTheSimulator(t *testing.T) {
	t.Parallel()
	r := runSuite(t, startTarget(t, simulator.Config{}, nil), "--ginkgo.label-filter=strict")
	if r.exitCode != 0 || len(r.failed()) > 0 || r.passed() == 0 {
		t.Fatalf("the strict specs did not pass on the simulator (exit %d, %d passed):\n%s", r.exitCode, r.passed(), failures(r))
	}
}

func TestBrokenServersFailInTheExpectedSpec(t *testing.T) {
	t.Parallel()
	for _, b := range breakages() {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			r := runSuite(t, startTarget(t, b.cfg, b.wrap))
			if r.exitCode == 0 {
				t.Fatalf("the suite passed a server that %s", b.name)
			}
			var caught bool
			for _, sr := range r.failed() {
				if slices.Contains(sr.Labels(), b.label) && strings.Contains(sr.FullText(), b.text) {
					caught = true
					if !strings.Contains(sr.Failure.Message, "/api/public") {
						t.Errorf("the failure of %q does not name the request:\n%s", sr.FullText(), sr.Failure.Message)
					}
				}
			}
			if !caught {
				t.Errorf("no spec labelled %s with %q in its text failed; failures:\n%s", b.label, b.text, failures(r))
			}
		})
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
