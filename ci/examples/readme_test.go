package examples

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tcmkit/tcmkit/ci/testbin"
	"github.com/tcmkit/tcmkit/schemas/catalogue"
	"github.com/tcmkit/tcmkit/schemas/redact"
	"github.com/tcmkit/tcmkit/schemas/settings"
	"github.com/tcmkit/tcmkit/simulator"
	"github.com/tcmkit/tcmkit/simulator/clienttest"
)

// The module's README, which a new user follows line by line: what it
// says against what the kit prints and accepts.
const readmePath = "../../README.md"

func readme(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(readmePath)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// readmeOutsideFlags are the flags the README gives to tools that are not
// the kit's: podman, Spectral, Prism, npx, sha256sum, curl.
var readmeOutsideFlags = map[string]bool{
	"rm": true, "network": true, "ulimit": true, // podman run
	"ruleset": true, "errors": true, "yes": true, // Spectral, Prism, npx
	"ignore-missing": true, "data-binary": true, // sha256sum, curl
}

// TestREADMENamesOnlyFlagsThatExist: every --flag of the README is one of
// a job's --help (tcmkit conform, simulate, record, fixtures; hostile),
// Ginkgo's, or a named outside tool's; every TCM_SIM_ variable is one the
// simulator's --help lists.
func TestREADMENamesOnlyFlagsThatExist(t *testing.T) {
	tcmkit := buildTcmkit(t)
	known := map[string]bool{}
	for f := range outsideFlags {
		known[f] = true
	}
	for f := range readmeOutsideFlags {
		known[f] = true
	}
	simVars := map[string]bool{}
	flagLine := regexp.MustCompile(`(?m)^\s+--([a-z][a-z0-9-]*)`)
	for _, job := range []string{"conform", "simulate", "record", "fixtures"} {
		help, _ := exec.Command(tcmkit, job, "--help").CombinedOutput()
		n := 0
		for _, m := range flagLine.FindAllSubmatch(help, -1) {
			known[string(m[1])] = true
			n++
		}
		if n == 0 {
			t.Fatalf("tcmkit %s --help lists no flag:\n%s", job, help)
		}
		if job == "simulate" { // each flag's variable (package schemas/settings)
			for _, m := range flagLine.FindAllSubmatch(help, -1) {
				simVars[settings.EnvName("TCM_SIM", string(m[1]))] = true
			}
		}
	}
	hostileBin, err := testbin.Command("./cmd/hostile")
	if err != nil {
		t.Fatal(err)
	}
	hostile, err := exec.Command(hostileBin, "--help").CombinedOutput()
	for _, m := range flagLine.FindAllSubmatch(hostile, -1) {
		known[string(m[1])] = true
	}
	if !known["name"] {
		t.Fatalf("go run ./cmd/hostile --help lists no --name (%v):\n%s", err, hostile)
	}
	for i, line := range strings.Split(readme(t), "\n") {
		for _, m := range flagToken.FindAllStringSubmatch(line, -1) {
			if !known[m[2]] {
				t.Errorf("README.md:%d: --%s is a flag of no job's --help, of neither Ginkgo nor a tool the README names", i+1, m[2])
			}
		}
		for _, v := range envToken.FindAllString(line, -1) {
			if v != "TCM_SIM_" && !simVars[v] {
				t.Errorf("README.md:%d: %s is no variable of tcmkit simulate (see its --help)", i+1, v)
			}
		}
	}
}

// TestREADMEJournalFilters: the filters the README names for GET
// /_control/requests are the ones the control API documents and accepts,
// and a parameter it does not name is refused, not ignored.
func TestREADMEJournalFilters(t *testing.T) {
	m := regexp.MustCompile("filters: ((?:`[a-z]+`[^`]*?){3,}); another parameter").FindStringSubmatch(strings.Join(strings.Fields(readme(t)), " "))
	if m == nil {
		t.Fatal("README.md names no filters of GET /_control/requests (\"filters: `key`, … another parameter\")")
	}
	var named []string
	for _, f := range regexp.MustCompile("`([a-z]+)`").FindAllStringSubmatch(m[1], -1) {
		named = append(named, f[1])
	}
	s, err := simulator.New(simulator.Config{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	get := func(target string) (int, string) {
		req, _ := http.NewRequest(http.MethodGet, "http://127.0.0.1"+target, nil)
		w := httptest.NewRecorder()
		s.Handler().ServeHTTP(w, req)
		return w.Code, w.Body.String()
	}
	_, doc := get(simulator.ControlPrefix + "openapi.yaml")
	i := strings.Index(doc, "\n  /requests:")
	j := strings.Index(doc[i+1:], "\n  /")
	var documented []string
	for _, p := range regexp.MustCompile(`- name: ([a-z]+)\n\s+in: query`).FindAllStringSubmatch(doc[i:i+1+j], -1) {
		documented = append(documented, p[1])
	}
	slices.Sort(named)
	slices.Sort(documented)
	if !slices.Equal(named, documented) {
		t.Errorf("the README names the filters %v; the control API documents %v", named, documented)
	}
	values := map[string]string{"key": "3f9a", "account": "acc_1", "status": "4xx", "operation": "feed", "method": "GET",
		"path": "/api/public-feed", "since": "0", "until": "1", "after": "0", "limit": "5"}
	for _, f := range named {
		if code, body := get(simulator.ControlPrefix + "requests?" + f + "=" + values[f]); code != http.StatusOK {
			t.Errorf("GET /_control/requests?%s=%s: %d %s", f, values[f], code, body)
		}
	}
	if code, body := get(simulator.ControlPrefix + "requests?keySuffix=fTwO"); code != http.StatusBadRequest || !strings.Contains(body, "keySuffix") {
		t.Errorf("a filter the journal does not have: %d %s, want a 400 that names it", code, body)
	}
}

// TestREADMEKeyHint: the README's line that gives the hint of a key one
// holds gives the hint the simulator shows for it, in its accounts and in
// its journal, and its digits filter the journal to that key.
func TestREADMEKeyHint(t *testing.T) {
	line := regexp.MustCompile("hint of a key you hold is `tcm_…#\\$\\((printf [^`]+)\\)`").FindStringSubmatch(strings.Join(strings.Fields(readme(t)), " "))
	if line == nil {
		t.Fatal("README.md does not say how to get the hint of a key one holds")
	}
	s, err := simulator.New(simulator.Config{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	key := s.Seeded().Pro
	cmd := exec.Command("bash", "-c", line[1])
	cmd.Env = append(os.Environ(), "TCM_PRO_KEY="+key)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v", line[1], err)
	}
	digits := strings.TrimSpace(string(out))
	if got, want := "tcm_…#"+digits, redact.Form(key); got != want {
		t.Fatalf("the README's line gives %s, the simulator shows %s", got, want)
	}
	serve := func(method, target, key string) string {
		req, _ := http.NewRequest(method, "http://127.0.0.1"+target, nil)
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		w := httptest.NewRecorder()
		s.Handler().ServeHTTP(w, req)
		return w.Body.String()
	}
	serve(http.MethodGet, "/api/public-feed?limit=1", key)
	serve(http.MethodGet, "/api/public-feed?limit=1", s.Seeded().Free)
	if accounts := serve(http.MethodGet, simulator.ControlPrefix+"accounts", ""); !strings.Contains(accounts, `"keyHint":"tcm_…#`+digits+`"`) {
		t.Errorf("GET /_control/accounts does not show %s: %.300s", "tcm_…#"+digits, accounts)
	}
	journal := serve(http.MethodGet, simulator.ControlPrefix+"requests?key="+digits, "")
	if strings.Count(journal, `"keyHint":"tcm_…#`+digits+`"`) != 1 || strings.Contains(journal, redact.Form(s.Seeded().Free)) {
		t.Errorf("the journal filtered by %s: %.400s", digits, journal)
	}
}

// TestREADMEClientRules: the README's count of the client rules the rude
// example breaks is the catalogue's.
func TestREADMEClientRules(t *testing.T) {
	m := regexp.MustCompile(`rude fails exactly the (\d+) of the (\d+) client rules`).FindStringSubmatch(strings.Join(strings.Fields(readme(t)), " "))
	if m == nil {
		t.Fatal("README.md does not say how many client rules the rude example breaks (\"rude fails exactly the N of the M client rules\")")
	}
	cat, err := catalogue.Load()
	if err != nil {
		t.Fatal(err)
	}
	total := len(cat.OfKind(catalogue.Client))
	if n, _ := strconv.Atoi(m[2]); n != total {
		t.Errorf("the README counts %d client rules; the catalogue has %d", n, total)
	}
	if n, _ := strconv.Atoi(m[1]); n != total-len(inTrouble) {
		t.Errorf("the README says rude breaks %d; a conforming server lets it break %d (all but %v)", n, total-len(inTrouble), inTrouble)
	}
	for _, id := range inTrouble {
		if !strings.Contains(readme(t), string(id)) {
			t.Errorf("the README does not name %s, which rude cannot break against a conforming server", id)
		}
	}
}

// TestREADMENpxLinesRunOutsideATerminal: every npx line of the README
// carries --yes (without it npx asks before it installs, and a script
// fails).
func TestREADMENpxLinesRunOutsideATerminal(t *testing.T) {
	n := 0
	for i, line := range strings.Split(readme(t), "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[0] == "npx" {
			n++
			if !slices.Contains(f, "--yes") {
				t.Errorf("README.md:%d: an npx line without --yes: %s", i+1, strings.TrimSpace(line))
			}
		}
	}
	if n == 0 {
		t.Fatal("no npx line in README.md: the search is broken")
	}
}

// TestREADMEClienttestMessage: the failure the README's clienttest example
// quotes is what clienttest prints for a client that asks again at once
// after a 429 (numbers and the hint's digits aside).
func TestREADMEClienttestMessage(t *testing.T) {
	block := regexp.MustCompile(`(?s)// here, had it [^:]*: "(.*?)"\n`).FindStringSubmatch(readme(t))
	if block == nil {
		t.Fatal("README.md quotes no clienttest failure (// here, had it …: \"…\")")
	}
	var quoted []string
	for _, l := range strings.Split(block[1], "\n") {
		l = strings.TrimPrefix(strings.TrimSpace(l), "//")
		if l = strings.TrimSpace(l); l != "" {
			quoted = append(quoted, l)
		}
	}
	rec := &recordingTB{t: t}
	func() {
		sim := clienttest.Start(rec, clienttest.Options{Scenario: "429-storm"})
		// A client that asks again at once after a 429 of the storm.
		for range 2 {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, sim.URL+"/api/public-feed?limit=200", nil)
			req.Header.Set("Authorization", "Bearer "+sim.Keys.Pro)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		rec.runCleanups() // the end of the client's test: clienttest judges it
	}()
	printed := strings.Join(rec.errors, "\n")
	if printed == "" {
		t.Fatal("clienttest failed nothing: the client did not break CLIENT-RETRY-AFTER")
	}
	var lines []string
	for _, l := range strings.Split(printed, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	// Each quoted line, its numbers and the hint's digits any, is a line
	// printed, in the order printed.
	number := regexp.MustCompile(`\d+(\.\d+)?`)
	at := 0
	for _, q := range quoted {
		pattern := regexp.MustCompile(`#[0-9a-f]{4}`).ReplaceAllString(regexp.QuoteMeta(q), "#\x00")
		pattern = number.ReplaceAllString(pattern, `\d+`)
		pattern = strings.ReplaceAll(pattern, "#\x00", `#[0-9a-f]{4}`)
		re := regexp.MustCompile("^" + pattern + "$")
		found := false
		for ; at < len(lines); at++ {
			if re.MatchString(lines[at]) {
				found, at = true, at+1
				break
			}
		}
		if !found {
			t.Errorf("the README quotes %q; clienttest prints no such line (after the ones before it):\n%s", q, printed)
			return
		}
	}
}

// recordingTB is a test that records what clienttest fails it with, and
// runs its cleanups when told (the client's test ending).
type recordingTB struct {
	t        *testing.T
	errors   []string
	cleanups []func()
}

func (r *recordingTB) Helper()                   {}
func (r *recordingTB) Cleanup(f func())          { r.cleanups = append(r.cleanups, f) }
func (r *recordingTB) Logf(f string, a ...any)   { r.t.Logf(f, a...) }
func (r *recordingTB) Errorf(f string, a ...any) { r.errors = append(r.errors, fmt.Sprintf(f, a...)) }
func (r *recordingTB) Fatalf(f string, a ...any) { r.t.Fatalf(f, a...) }
func (r *recordingTB) runCleanups() {
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		r.cleanups[i]()
	}
	r.cleanups = nil
}
