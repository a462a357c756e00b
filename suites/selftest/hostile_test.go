package selftest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/suites/bundled"
	"github.com/tcmkit/tcmkit/suites/redact"
)

// The suite against hostile and broken targets: small servers on
// 127.0.0.1 that redirect, send huge bodies, drip, ask for absurd waits,
// never end their cursors, echo the key or cut the connection. Each run
// must end in bounded time and memory with its reports written, a verdict
// that names the problem, no fragment of a key in any output, and nothing
// sent to any listener but the target.

// hostileKeys look like keys; no account has them.
var hostileKeys = bundled.Keys{
	Pro:     "tcm_HstPro7fK2mQ9vX4bN8cR1tY6wZ3pL5s",
	Free:    "tcm_HstFree3aB8dE1gJ6kM9nQ2rT5uW7xZ0",
	Revoked: "tcm_HstRevk4cF7hK0lP3sV6yA9bD2eG5iJ8",
}

// catcher is a listener that must see nothing: targets redirect to it.
type catcher struct {
	*httptest.Server
	hits atomic.Int32
}

func newCatcher(t *testing.T) *catcher {
	c := &catcher{}
	c.Server = httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { c.hits.Add(1) }))
	t.Cleanup(c.Close)
	return c
}

// preflightThen answers what the preflight asks like a conforming server
// (health, and the first feed page for the Pro key: an empty feed), and
// everything else with bad.
func preflightThen(bad http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == schemas.PathHealth && r.Method == http.MethodPost && r.Header.Get("Authorization") == "":
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"status":"ok"}`))
		case r.URL.Path == schemas.PathFeed && r.URL.RawQuery == "" && r.Header.Get("Authorization") == "Bearer "+hostileKeys.Pro:
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"events":[],"nextCursor":null}`))
		default:
			bad(w, r)
		}
	}
}

// hostileRun is one run against a hostile target, and what it must show.
type hostileRun struct {
	name    string
	handler http.Handler
	flags   []string
	outcome string   // of the conformance report
	says    []string // in the conformance report: the verdict names the problem
	wall    time.Duration
	memory  int64 // peak memory bound, bytes; 0 when none applies
}

// hostileFlags keep a run short: a hostile target gets small bounds.
var hostileFlags = []string{"--max-wait", "1s", "--request-timeout", "1s", "--run-deadline", "20s", "--max-pages", "5"}

func (h hostileRun) run(t *testing.T, c *catcher) {
	srv := httptest.NewServer(h.handler)
	t.Cleanup(srv.Close)
	args := append([]string{"--target", srv.URL, "--pro-key", hostileKeys.Pro, "--free-key", hostileKeys.Free, "--revoked-key", hostileKeys.Revoked},
		append(append([]string{}, hostileFlags...), h.flags...)...)
	r := runArgs(t, args)
	t.Logf("%s: exit %d, wall %s, peak memory %d MiB", h.name, r.exitCode, r.wall.Round(10*time.Millisecond), r.maxRSS>>20)
	if r.exitCode == 0 {
		t.Errorf("the suite passed a target that %s", h.name)
	}
	if r.wall > h.wall {
		t.Errorf("the run took %s, more than %s", r.wall, h.wall)
	}
	if h.memory > 0 && r.maxRSS > h.memory {
		t.Errorf("peak memory %d MiB, more than %d MiB", r.maxRSS>>20, h.memory>>20)
	}
	rep, err := os.ReadFile(filepath.Join(r.dir, "reports", "conformance-report.json"))
	if err != nil {
		t.Fatalf("no report: %v\n%s", err, tail(r.output, 2000))
	}
	var verdict struct{ Outcome string }
	json.Unmarshal(rep, &verdict)
	if verdict.Outcome != h.outcome {
		t.Errorf("outcome %q, want %q", verdict.Outcome, h.outcome)
	}
	text := jsonText(rep)
	for _, s := range h.says {
		if !strings.Contains(text, s) {
			t.Errorf("the report does not say %q; failures:\n%s", s, failures(r))
		}
	}
	noKeyFragment(t, r, hostileKeys)
	if n := c.hits.Load(); n != 0 {
		t.Errorf("another listener got %d requests", n)
	}
}

// jsonText is the JSON report with its strings unescaped, for searching.
func jsonText(raw []byte) string {
	var b strings.Builder
	var walk func(v any)
	walk = func(v any) {
		switch t := v.(type) {
		case map[string]any:
			for _, x := range t {
				walk(x)
			}
		case []any:
			for _, x := range t {
				walk(x)
			}
		case string:
			b.WriteString(t + "\n")
		}
	}
	var doc any
	json.Unmarshal(raw, &doc)
	walk(doc)
	return b.String()
}

// noKeyFragment searches the console output and every file the run wrote
// (the three reports, Ginkgo's JSON and JUnit reports) for any run of
// redact.MinSecret characters of a key's secret part.
func noKeyFragment(t *testing.T, r result, keys bundled.Keys) {
	t.Helper()
	search := map[string][]byte{"console output": []byte(r.output)}
	filepath.WalkDir(r.dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(path)
			search[filepath.Base(path)] = b
		}
		return nil
	})
	if len(search) < 6 {
		t.Errorf("only %d outputs to search", len(search))
	}
	for name, b := range search {
		for _, k := range []string{keys.Pro, keys.Free, keys.Revoked} {
			for _, f := range redact.Fragments(k) {
				if bytes.Contains(b, []byte(f)) {
					t.Errorf("%s holds %q, a fragment of the key %s", name, f, redact.Form(k))
					break
				}
			}
		}
	}
}

// endless writes chunk until the client goes away (at most 2 GiB).
func endless(w http.ResponseWriter, chunk []byte) {
	for sent := 0; sent < 2<<30; sent += len(chunk) {
		if _, err := w.Write(chunk); err != nil {
			return
		}
	}
}

// cutMidBody announces 5000 bytes, sends 100 and closes the connection.
func cutMidBody(w http.ResponseWriter, _ *http.Request) {
	conn, buf, err := w.(http.Hijacker).Hijack()
	if err != nil {
		return
	}
	defer conn.Close()
	fmt.Fprintf(buf, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 5000\r\n\r\n%s", strings.Repeat(" ", 100))
	buf.Flush()
}

// drip sends the headers, then a byte every 100 ms until the client leaves.
func drip(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	for {
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
			return
		case <-time.After(100 * time.Millisecond):
			w.Write([]byte(" "))
		}
	}
}

// endlessFeed pages through the same 200 events for ever: nextCursor is
// never null. Other requests get a 401 ErrorBody.
func endlessFeed(fetched *atomic.Int32) http.HandlerFunc {
	var page bytes.Buffer
	w := bufio.NewWriter(&page)
	for i := range schemas.MaxPageSize {
		if i > 0 {
			w.WriteString(",")
		}
		fmt.Fprintf(w, `{"id":"e%d","createdAt":%d,"type":"channel_renamed","oldChannelTitle":"a","newChannelTitle":"b","channel":{"id":"c","platformChannelId":"p","title":"t","thumbnailUrl":null}}`, i, 1_767_225_600_000-int64(i)*1000)
	}
	w.Flush()
	events := page.String()
	var mu sync.Mutex
	n := 0
	return func(rw http.ResponseWriter, r *http.Request) {
		rw.Header().Set("Content-Type", "application/json")
		if r.URL.Path != schemas.PathFeed || r.Header.Get("Authorization") != "Bearer "+hostileKeys.Pro {
			rw.WriteHeader(http.StatusUnauthorized)
			rw.Write([]byte(`{"error":"unauthorized","message":"no"}`))
			return
		}
		fetched.Add(1)
		mu.Lock()
		n++
		next := n
		mu.Unlock()
		fmt.Fprintf(rw, `{"events":[%s],"nextCursor":"c%d"}`, events, next)
	}
}

func TestHostileTargets(t *testing.T) {
	t.Parallel()
	c := newCatcher(t)
	redirect := func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, c.URL+r.URL.RequestURI(), http.StatusTemporaryRedirect)
	}
	var feedPages atomic.Int32
	garbage := func(w http.ResponseWriter, r *http.Request) { // valid JSON, invalid everywhere, just under the limit
		w.Header().Set("Content-Type", "application/json")
		if r.URL.RawQuery == "limit=1" { // a rate limit, so that the burst ends at once
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
		}
		fmt.Fprintf(w, `{"events":[%s1],"videos":[],"missingVideoIds":[],"nextCursor":"c%d"}`, strings.Repeat("1,", 120<<10), time.Now().UnixNano())
	}
	for _, h := range []hostileRun{
		{name: "redirects every request to another port", handler: http.HandlerFunc(redirect),
			outcome: "errored", says: []string{"answered 307 Temporary Redirect to " + c.URL + schemas.PathHealth, "the suite follows no redirect"},
			wall: 15 * time.Second},
		{name: "redirects every request after the preflight", handler: preflightThen(redirect),
			outcome: "failed", says: []string{"answered 307 Temporary Redirect to " + c.URL + schemas.PathVideos},
			wall: 20 * time.Second},
		{name: "sends bodies of 2 GiB", handler: preflightThen(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			endless(w, bytes.Repeat([]byte(`{"events":[`), 6000))
		}), flags: []string{"--max-body", "4MiB"}, outcome: "failed", says: []string{"with a body larger than 4 MiB (--max-body): the suite read 4 MiB and stopped"},
			wall: 30 * time.Second, memory: 512 << 20},
		{name: "sends bodies of invalid JSON just under the limit", handler: preflightThen(garbage), flags: []string{"--max-body", "256KiB"},
			outcome: "failed", says: []string{"more than --max-pages=5 pages of 200 hold", "validation stopped after 1000 violations"},
			wall: 30 * time.Second, memory: 512 << 20},
		{name: "drips its bodies", handler: preflightThen(drip), flags: []string{"--request-timeout", "500ms", "--run-deadline", "5s"},
			outcome: "errored", says: []string{"the run deadline (--run-deadline=5s) passed", "selected specs were left undone", "no complete answer within 500ms (--request-timeout)"},
			wall: 25 * time.Second},
		{name: "asks to wait a year", handler: preflightThen(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "31536000")
			w.WriteHeader(http.StatusTooManyRequests)
		}), outcome: "failed", says: []string{`Retry-After "31536000" asks for 365 days, more than the longest wait allowed (--max-wait=1s)`},
			wall: 20 * time.Second},
		{name: "sends a negative Retry-After", handler: preflightThen(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "-5")
			w.WriteHeader(http.StatusTooManyRequests)
		}), outcome: "failed", says: []string{`Retry-After "-5" is neither delta-seconds (digits only) nor an HTTP-date`},
			wall: 20 * time.Second},
		{name: "never ends its cursors", handler: endlessFeed(&feedPages), outcome: "failed",
			says: []string{"rule: a cursor walk visits each event once", `event id "e0" at page 2`}, wall: 20 * time.Second},
		{name: "cuts the connection mid-body", handler: preflightThen(cutMidBody), outcome: "failed",
			says: []string{"answered 200, then the body broke off after 100 B of the 5000 its Content-Length announced"}, wall: 20 * time.Second},
	} {
		t.Run(h.name, func(t *testing.T) {
			t.Parallel()
			h.run(t, c)
		})
	}
	t.Cleanup(func() {
		// two walks of at most --max-pages pages each, and a page or two of the other specs
		if n := feedPages.Load(); n > 2*5+4 {
			t.Errorf("the endless feed was asked for %d pages", n)
		}
	})
}
