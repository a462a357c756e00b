package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2/types"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/tcmkit/tcmkit/schemas/catalogue"
)

const secret = "tcm_S3cretS3cretS3cretS3cretS3cr9Qa"

func redactSecret(s string) string { return strings.ReplaceAll(s, secret, "tcm_…9Qa") }

var t0 = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

func testCatalogue(t *testing.T) catalogue.Catalogue {
	t.Helper()
	c, err := catalogue.Parse([]byte(`{"version":1,"requirements":[
	 {"id":"HEALTH-OK","kind":"must","feature":"health","section":"Health","text":"health says ok"},
	 {"id":"FEED-ORDER","kind":"must","feature":"pagination","section":"Feed","text":"newest first"},
	 {"id":"FEED-LIMIT-CAP","kind":"must","feature":"pagination","section":"Limits","text":"limit capped at 200"},
	 {"id":"RATE-PER-KEY","kind":"must","feature":"rate-limit","section":"Limits","text":"per key"},
	 {"id":"AUTH-REVOKED","kind":"must","feature":"auth","section":"Authentication","text":"revoked key 401"},
	 {"id":"FEED-CURSOR-UNKNOWN","kind":"open","feature":"pagination","section":"Feed","text":"unknown cursor: not shown","simulatorChoice":"400 naming cursor"},
	 {"id":"ERROR-STRINGS","kind":"open","feature":"errors","section":"Errors","text":"error strings: not shown","simulatorChoice":"snake_case"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

type entry struct {
	name  string
	value any
}

func it(container, text string, labels []string, state types.SpecState, msg string, entries ...entry) types.SpecReport {
	sr := types.SpecReport{
		ContainerHierarchyTexts:  []string{container},
		ContainerHierarchyLabels: [][]string{{strings.ToLower(strings.Fields(container)[0])}},
		LeafNodeType:             types.NodeTypeIt,
		LeafNodeText:             text,
		LeafNodeLabels:           labels,
		State:                    state,
		RunTime:                  1500 * time.Millisecond,
	}
	if msg != "" {
		sr.Failure = types.Failure{Message: msg, Location: types.CodeLocation{FileName: "/src/suites/conformance/feed.go", LineNumber: 42}}
	}
	for _, e := range entries {
		sr.ReportEntries = append(sr.ReportEntries, types.ReportEntry{Name: e.name, Value: types.WrapEntryValue(e.value)})
	}
	return sr
}

func meta() Meta {
	return Meta{
		Target: "https://staging.example.test", SuiteVersion: "v0.1.0-test",
		Started: t0, Finished: t0.Add(12 * time.Second),
		Config: map[string]string{"target": "https://staging.example.test", "pro-key": "tcm_…9Qa"},
	}
}

func passedRun() types.Report {
	return types.Report{SuiteSucceeded: true, SpecReports: types.SpecReports{
		it("Health operation", "says ok", []string{"HEALTH-OK"}, types.SpecStatePassed, "", entry{"requests", 1}),
		it("Pagination of the feed", "is newest first", []string{"FEED-ORDER"}, types.SpecStatePassed, "", entry{"requests", 4}),
		it("Pagination of the feed", "caps limit at 200", []string{"FEED-LIMIT-CAP"}, types.SpecStatePassed, "", entry{"requests", 1}),
		it("Rate-limit of the feed", "counts per key", []string{"RATE-PER-KEY"}, types.SpecStatePassed, "", entry{"requests", 21}),
		it("Auth of the feed", "rejects a revoked key", []string{"AUTH-REVOKED"}, types.SpecStatePassed, "", entry{"requests", 2}),
		{LeafNodeType: types.NodeTypeBeforeSuite, State: types.SpecStatePassed},
	}}
}

func failedRun() types.Report {
	transcript := "GET /api/public-feed?limit=500\nAuthorization: Bearer " + secret + "\n→ 200 application/json\n{\"events\":[… 500 events …],\"nextCursor\":\"c2\"}"
	return types.Report{SpecReports: types.SpecReports{
		it("Health operation", "says ok", []string{"HEALTH-OK"}, types.SpecStatePassed, "", entry{"requests", 1}),
		it("Pagination of the feed", "is newest first", []string{"FEED-ORDER"}, types.SpecStatePassed, "", entry{"requests", 4}),
		it("Pagination of the feed", "caps limit at 200", []string{"FEED-LIMIT-CAP", "strict", "Serial"}, types.SpecStateFailed,
			"GET /api/public-feed?limit=500: /events has 500 items, rule: limit is capped at 200 <script>alert(1)</script> key "+secret,
			entry{"requests", 1}, entry{"transcript", transcript}),
		it("Rate-limit of the feed", "counts per key", []string{"RATE-PER-KEY"}, types.SpecStateSkipped,
			"needs a second key: set --free-key or TCM_FREE_KEY"),
		it("Auth of the feed", "rejects a revoked key", []string{"AUTH-REVOKED"}, types.SpecStateSkipped,
			"needs a revoked key: set --revoked-key or TCM_REVOKED_KEY"),
		it("Strict", "rejects an unknown cursor", []string{"FEED-CURSOR-UNKNOWN", "NOT-IN-CATALOGUE"}, types.SpecStateSkipped, ""),
	}}
}

func erroredRun() types.Report {
	return types.Report{PreRunStats: types.PreRunStats{TotalSpecs: 4, SpecsThatWillRun: 3}, SpecReports: types.SpecReports{
		{LeafNodeType: types.NodeTypeBeforeSuite, State: types.SpecStateFailed,
			Failure: types.Failure{Message: "preflight: POST https://staging.example.test/api/public/health: connection refused",
				Location: types.CodeLocation{FileName: "/src/suites/suites_test.go", LineNumber: 30}}},
		it("Health operation", "says ok", []string{"HEALTH-OK"}, types.SpecStateSkipped, ""),
		it("Pagination of the feed", "is newest first", []string{"FEED-ORDER"}, types.SpecStateSkipped, ""),
	}}
}

func find[T any](t *testing.T, xs []T, match func(T) bool) T {
	t.Helper()
	for _, x := range xs {
		if match(x) {
			return x
		}
	}
	t.Fatalf("not found")
	var zero T
	return zero
}

func req(t *testing.T, r Report, id string) Requirement {
	t.Helper()
	return find(t, r.Requirements, func(q Requirement) bool { return q.ID == id })
}

func TestFromGinkgoPassed(t *testing.T) {
	r := FromGinkgo(passedRun(), testCatalogue(t), meta())
	if r.Outcome != Passed || len(r.Errors) != 0 {
		t.Fatalf("outcome %s, errors %v", r.Outcome, r.Errors)
	}
	if r.SchemaVersion != 2 || r.DurationSeconds != 12 || r.Target != "https://staging.example.test" {
		t.Errorf("header: %+v", r)
	}
	want := Counts{Specs: 5, Passed: 5, Requests: 29}
	if r.Totals != want {
		t.Errorf("totals %+v, want %+v", r.Totals, want)
	}
	if len(r.Specs) != 5 {
		t.Errorf("%d specs, want 5 (a passed BeforeSuite is not a spec)", len(r.Specs))
	}
	for _, id := range []string{"HEALTH-OK", "FEED-ORDER", "FEED-LIMIT-CAP", "RATE-PER-KEY", "AUTH-REVOKED"} {
		if q := req(t, r, id); q.Result != ResultPassed || len(q.Specs) != 1 {
			t.Errorf("%s: %s by %v", id, q.Result, q.Specs)
		}
	}
	if q := req(t, r, "ERROR-STRINGS"); q.Result != ResultNotApplicable || q.SimulatorChoice != "snake_case" {
		t.Errorf("open requirement: %+v", q)
	}
	pag := find(t, r.Features, func(f FeatureCounts) bool { return f.Feature == "pagination" })
	if pag.Counts != (Counts{Specs: 2, Passed: 2, Requests: 5}) {
		t.Errorf("pagination counts %+v", pag.Counts)
	}
	s := find(t, r.Specs, func(s Spec) bool { return s.Name == "Pagination of the feed is newest first" })
	if s.Requests != 4 || s.DurationSeconds != 1.5 || s.Features[0] != "pagination" || s.Requirements[0] != "FEED-ORDER" {
		t.Errorf("spec %+v", s)
	}
}

func TestFromGinkgoFailed(t *testing.T) {
	r := FromGinkgo(failedRun(), testCatalogue(t), meta())
	if r.Outcome != Failed {
		t.Fatalf("outcome %s, errors %v", r.Outcome, r.Errors)
	}
	if r.Totals != (Counts{Specs: 6, Passed: 2, Failed: 1, Skipped: 3, Requests: 6}) {
		t.Errorf("totals %+v", r.Totals)
	}
	q := req(t, r, "FEED-LIMIT-CAP")
	if q.Result != ResultFailed {
		t.Errorf("FEED-LIMIT-CAP %s", q.Result)
	}
	if q := req(t, r, "RATE-PER-KEY"); q.Result != ResultSkipped || !strings.Contains(q.Reason, "--free-key") {
		t.Errorf("RATE-PER-KEY %s (%s)", q.Result, q.Reason)
	}
	if q := req(t, r, "FEED-CURSOR-UNKNOWN"); q.Result != ResultNotApplicable || !strings.Contains(q.Reason, "not selected") {
		t.Errorf("open requirement with a skipped strict spec: %s (%s)", q.Result, q.Reason)
	}
	if len(r.UnknownRequirements) != 1 || r.UnknownRequirements[0] != "NOT-IN-CATALOGUE" {
		t.Errorf("unknown %v", r.UnknownRequirements)
	}
	f := r.Failures()
	if len(f) != 1 || f[0].Failure.Location != "/src/suites/conformance/feed.go:42" || !strings.Contains(f[0].Failure.Transcript, "limit=500") {
		t.Fatalf("failures %+v", f)
	}
	if !slices.Equal(f[0].Features, []string{"pagination", "strict"}) || !slices.Equal(f[0].OtherLabels, []string{"Serial"}) {
		t.Errorf("labels: features %v requirements %v", f[0].Features, f[0].Requirements)
	}
}

func TestFromGinkgoIncomplete(t *testing.T) {
	tests := []struct {
		name string
		run  types.Report
		meta func(Meta) Meta
		want string
	}{
		{"BeforeSuite failed", erroredRun(), func(m Meta) Meta { return m }, "BeforeSuite failed: preflight"},
		{"Meta.Errored", passedRun(), func(m Meta) Meta { m.Errored = "pro key rejected: 401"; return m }, "pro key rejected"},
		{"interrupted", types.Report{SpecialSuiteFailureReasons: []string{"Interrupted by User"}, SpecReports: passedRun().SpecReports}, func(m Meta) Meta { return m }, "Interrupted by User"},
		{"aborted spec", types.Report{SpecReports: types.SpecReports{
			it("Rate-limit of the feed", "counts per key", []string{"RATE-PER-KEY"}, types.SpecStateAborted, "target went away")}}, func(m Meta) Meta { return m }, "target went away"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := FromGinkgo(tt.run, testCatalogue(t), tt.meta(meta()))
			if r.Outcome != Incomplete {
				t.Fatalf("outcome %s, want incomplete", r.Outcome)
			}
			if h := r.Headline(); strings.Contains(h, "passed") || !strings.Contains(h, "incomplete") {
				t.Errorf("headline %q: want incomplete, never passed", h)
			}
			if !strings.Contains(strings.Join(r.Errors, "\n"), tt.want) {
				t.Errorf("errors %q, want one saying %q", r.Errors, tt.want)
			}
		})
	}
	aborted := FromGinkgo(types.Report{SpecReports: types.SpecReports{
		it("Health operation", "says ok", []string{"HEALTH-OK"}, types.SpecStatePassed, ""),
		it("Rate-limit of the feed", "counts per key", []string{"RATE-PER-KEY"}, types.SpecStateAborted, "preflight: key rejected"),
		it("Auth of the feed", "rejects a revoked key", []string{"AUTH-REVOKED"}, types.SpecStateSkipped, ""),
	}}, testCatalogue(t), meta())
	if aborted.Totals != (Counts{Specs: 3, Passed: 1, Skipped: 1, Errored: 1}) {
		t.Errorf("totals of an aborted run %+v: an abort is not the target's failure", aborted.Totals)
	}
	if q := req(t, aborted, "RATE-PER-KEY"); q.Result != ResultSkipped || !strings.Contains(q.Reason, "not judged") {
		t.Errorf("requirement of the aborted spec: %s (%s)", q.Result, q.Reason)
	}
	if q := req(t, aborted, "AUTH-REVOKED"); q.Reason != "not run: the run ended before this spec" {
		t.Errorf("requirement of a spec after the abort: %s (%s)", q.Result, q.Reason)
	}
	if f := aborted.Failures(); len(f) != 1 || f[0].State != ResultErrored || f[0].Failure.Message != "preflight: key rejected" {
		t.Errorf("the aborted spec is not shown with its message: %+v", f)
	}
	if got := aborted.SpecLine(); got != "2 ran: 1 passed, 0 failed, 1 stopped by the run's end; 1 skipped" {
		t.Errorf("SpecLine = %q", got)
	}

	m := meta()
	m.Errored = "preflight: POST https://staging.example.test/api/public/health: connection refused"
	if r := FromGinkgo(erroredRun(), testCatalogue(t), m); len(r.Errors) != 1 {
		t.Errorf("the same error said %d times: %q", len(r.Errors), r.Errors)
	}
	r := FromGinkgo(erroredRun(), testCatalogue(t), meta())
	if q := req(t, r, "HEALTH-OK"); q.Result != ResultSkipped || !strings.Contains(q.Reason, "the run ended") {
		t.Errorf("HEALTH-OK after a failed BeforeSuite: %s (%s)", q.Result, q.Reason)
	}
	if q := req(t, r, "RATE-PER-KEY"); q.Result != ResultSkipped || q.Reason != "not run: the run did not finish" {
		t.Errorf("RATE-PER-KEY, not run in an incomplete run: %s (%s)", q.Result, q.Reason)
	}
	if got := r.SpecLine(); got != "0 ran: 0 passed, 0 failed; 2 skipped; 3 selected of 4 in the suite" {
		t.Errorf("SpecLine = %q", got)
	}
	noSpecs := erroredRun()
	noSpecs.SpecReports = noSpecs.SpecReports[:1] // what Ginkgo reports when a BeforeSuite fails
	if got := FromGinkgo(noSpecs, testCatalogue(t), meta()).SpecLine(); !strings.HasSuffix(got, "none ran") {
		t.Errorf("SpecLine of a run without specs = %q", got)
	}
	partial := passedRun()
	partial.SpecReports = partial.SpecReports[:2]
	if q := req(t, FromGinkgo(partial, testCatalogue(t), meta()), "RATE-PER-KEY"); q.Result != ResultNotCovered {
		t.Errorf("RATE-PER-KEY without a spec in a run that did not error: %s", q.Result)
	}
	if f := r.Failures(); len(f) != 1 || f[0].Node != "BeforeSuite" || f[0].Name != "[BeforeSuite]" || f[0].State != ResultErrored {
		t.Errorf("failures %+v", f)
	}
}

// In a parallel run ReportAfterSuite sees report entries decoded from
// JSON: the request count arrives as a float64.
func TestEntriesFromJSON(t *testing.T) {
	var n, s types.ReportEntryValue
	if err := json.Unmarshal([]byte(`{"AsJSON":"7","Representation":"7"}`), &n); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(`{"AsJSON":"\"GET /x\\n→ 500\"","Representation":"GET /x"}`), &s); err != nil {
		t.Fatal(err)
	}
	sr := it("Feed", "x", nil, types.SpecStateFailed, "boom")
	sr.ReportEntries = types.ReportEntries{{Name: EntryRequests, Value: n}, {Name: EntryTranscript, Value: s}, {Name: EntryRequests, Value: types.WrapEntryValue(int64(2))}}
	got := spec(sr)
	if got.Requests != 9 || got.Failure.Transcript != "GET /x\n→ 500" {
		t.Errorf("requests %d, transcript %q", got.Requests, got.Failure.Transcript)
	}
}

func TestLastLines(t *testing.T) {
	long := strings.Repeat("GET /api/public-feed → 200 ✓\n", 2000) + "GET /api/public-feed?limit=500 → 200 (the failing one)"
	got := lastLines(long, 1000)
	if len(got) > 1100 || !strings.HasPrefix(got, "… (") || !strings.HasSuffix(got, "(the failing one)") {
		t.Errorf("lastLines: %d bytes, starts %q", len(got), got[:40])
	}
	if !strings.Contains(got, "earlier bytes left out)\nGET") {
		t.Errorf("lastLines does not cut on a line boundary: %q", got[:80])
	}
	if lastLines("short", 1000) != "short" {
		t.Errorf("short text changed")
	}
}

func writeAll(t *testing.T, run types.Report, m Meta) (dir string, files map[string]string) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "reports")
	r := FromGinkgo(run, testCatalogue(t), m)
	if err := r.WriteFiles(dir, redactSecret); err != nil {
		t.Fatal(err)
	}
	files = map[string]string{}
	for _, name := range []string{JSONFile, MarkdownFile, HTMLFile} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		files[name] = string(b)
	}
	return dir, files
}

func TestWriteFilesFailedRun(t *testing.T) {
	m := meta()
	m.Config["note"] = "given key " + secret // the suite forgot to redact this one
	m.Target = "https://staging.example.test/?k=" + secret
	_, files := writeAll(t, failedRun(), m)
	for name, content := range files {
		if strings.Contains(content, secret) {
			t.Errorf("%s contains the secret", name)
		}
		if strings.Contains(content, "S3cretS3cret") {
			t.Errorf("%s contains part of the secret", name)
		}
		for _, want := range []string{"tcm_…9Qa", "FEED-LIMIT-CAP", "caps limit at 200", "limit=500", "/src/suites/conformance/feed.go:42", "--free-key or TCM_FREE_KEY", "v0.1.0-test"} {
			if !strings.Contains(content, want) {
				t.Errorf("%s does not say %q", name, want)
			}
		}
	}

	var doc struct {
		SchemaVersion int
		Outcome       string
		Requirements  []struct{ ID, Result, Reason string }
		Specs         []struct {
			Name    string
			Failure *struct{ Message, Location, Transcript string }
		}
	}
	if err := json.Unmarshal([]byte(files[JSONFile]), &doc); err != nil {
		t.Fatalf("JSON: %v", err)
	}
	if doc.SchemaVersion != 2 || doc.Outcome != "failed" || len(doc.Requirements) != 7 {
		t.Errorf("JSON: version %d, outcome %s, %d requirements", doc.SchemaVersion, doc.Outcome, len(doc.Requirements))
	}

	md := files[MarkdownFile]
	for _, want := range []string{"# Conformance report: FAILED", "| ❌ failed | `FEED-LIMIT-CAP` |", "## Failures", "### Pagination of the feed caps limit at 200", "<details><summary>HTTP transcript, 1 request (keys redacted)</summary>\n\n```text\nGET /api/public-feed?limit=500", "| ⏭️ skipped | `RATE-PER-KEY` |", "| ➖ not applicable | `ERROR-STRINGS` |", "NOT-IN-CATALOGUE", "[the contract, in the kit's words](" + catalogue.DocURL + ")"} {
		if !strings.Contains(md, want) {
			t.Errorf("Markdown does not say %q", want)
		}
	}

	html := files[HTMLFile]
	for _, want := range []string{`<span class="outcome failed">FAILED</span>`, `<span class="badge failed">failed</span>`, `&lt;script&gt;alert(1)&lt;/script&gt;`, "<details class=\"transcript\"><summary>HTTP transcript of the spec, 1 request (keys redacted)</summary>\n<pre class=\"transcript\">GET /api/public-feed?limit=500", `href="#fail-spec-pagination-of-the-feed-caps-limit-at-200"`, `id="fail-spec-pagination-of-the-feed-caps-limit-at-200"`, `Not met: <a href="#req-FEED-LIMIT-CAP">`, `id="req-FEED-LIMIT-CAP"`, `<h2>Left open by the spec</h2>`, `<a href="` + catalogue.DocLink("FEED-LIMIT-CAP") + `"`, `<a href="` + catalogue.DocURL + `">`} {
		if !strings.Contains(html, want) {
			t.Errorf("HTML does not say %q", want)
		}
	}
	if strings.Contains(html, "<script>") {
		t.Errorf("HTML carries an unescaped script element")
	}
	for _, external := range []string{"<link", "<script", "src=", "@import", "url("} {
		if strings.Contains(html, external) {
			t.Errorf("HTML is not self-contained: has %q", external)
		}
	}
}

func TestWriteFilesIncompleteRun(t *testing.T) {
	m := meta()
	m.Errored = "preflight: pro key " + secret + " rejected with 401"
	_, files := writeAll(t, erroredRun(), m)
	for name, content := range files {
		if strings.Contains(content, secret) {
			t.Errorf("%s contains the secret", name)
		}
		for _, want := range []string{"incomplete", "preflight: pro key tcm_…9Qa rejected", "connection refused", "not run: the run ended before this spec"} {
			if !strings.Contains(content, want) {
				t.Errorf("%s does not say %q", name, want)
			}
		}
	}
	if !strings.Contains(files[HTMLFile], `<span class="outcome incomplete">INCOMPLETE</span>`) || !strings.Contains(files[HTMLFile], "Why the run is incomplete") {
		t.Errorf("HTML does not show the incomplete outcome")
	}
	if !strings.Contains(files[MarkdownFile], "## Why the run is incomplete") || !strings.Contains(files[MarkdownFile], "⚠️ INCOMPLETE") {
		t.Errorf("Markdown does not say why the run is incomplete")
	}
}

func TestWriteFilesPassedRun(t *testing.T) {
	dir, files := writeAll(t, passedRun(), meta())
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if want := []string{HTMLFile, JSONFile, MarkdownFile}; !slices.Equal(names, want) { // ReadDir sorts
		t.Errorf("files %v, want %v and nothing else", names, want)
	}
	if !strings.Contains(files[HTMLFile], `<span class="outcome passed">PASSED</span>`) || strings.Contains(files[HTMLFile], "<h2>Failures") {
		t.Errorf("HTML of a passed run")
	}
	if !strings.Contains(files[MarkdownFile], "All 5 specs that ran passed") || strings.Contains(files[MarkdownFile], "## Failures") {
		t.Errorf("Markdown of a passed run")
	}
	if !strings.Contains(files[JSONFile], `"outcome": "passed"`) {
		t.Errorf("JSON of a passed run")
	}
}

func TestWriteFilesNilRedactAndBadDir(t *testing.T) {
	r := FromGinkgo(passedRun(), testCatalogue(t), meta())
	if err := r.WriteFiles(t.TempDir(), nil); err != nil {
		t.Errorf("nil redact: %v", err)
	}
	file := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteFiles(filepath.Join(file, "sub"), nil); err == nil {
		t.Errorf("writing under a file succeeded")
	}
}

func TestMarkdownEscaping(t *testing.T) {
	if got := cell("a|b\nc <d>"); got != `a\|b<br>c &lt;d&gt;` {
		t.Errorf("cell = %q", got)
	}
	if got := fence("x ```` y"); !strings.HasPrefix(got, "`````text\n") || !strings.HasSuffix(got, "\n`````\n") {
		t.Errorf("fence = %q", got)
	}
}

// mapStrings must reach every string of the report: a field it forgot is
// a field where a key could reach the disk (the pass over the rendered
// bytes would still catch a whole key, but not one split by escaping).
func TestMapStringsReachesEveryString(t *testing.T) {
	m := meta()
	m.Errored = "e"
	run := failedRun()
	run.SpecReports = append(run.SpecReports, erroredRun().SpecReports...)
	r := FromGinkgo(run, testCatalogue(t), m)
	mapped := r.mapStrings(func(string) string { return "X" })
	var walk func(path string, v reflect.Value)
	seen := 0
	walk = func(path string, v reflect.Value) {
		switch v.Kind() {
		case reflect.String:
			seen++
			if v.String() != "X" {
				t.Errorf("%s = %q, not mapped", path, v.String())
			}
		case reflect.Pointer:
			if !v.IsNil() {
				walk(path, v.Elem())
			}
		case reflect.Slice:
			for i := range v.Len() {
				walk(fmt.Sprintf("%s[%d]", path, i), v.Index(i))
			}
		case reflect.Map:
			for _, k := range v.MapKeys() {
				walk(path+"{key}", k)
				walk(path+"["+k.String()+"]", v.MapIndex(k))
			}
		case reflect.Struct:
			if v.Type() == reflect.TypeOf(time.Time{}) {
				return
			}
			for i := range v.NumField() {
				walk(path+"."+v.Type().Field(i).Name, v.Field(i))
			}
		}
	}
	walk("Report", reflect.ValueOf(mapped))
	if seen < 50 {
		t.Errorf("walked only %d strings; the fixture is too small to prove anything", seen)
	}
}

func TestCommonPrefix(t *testing.T) {
	specs := func(names ...string) Report {
		var r Report
		for _, n := range names {
			r.Specs = append(r.Specs, Spec{Name: n})
		}
		return r
	}
	tests := []struct {
		r    Report
		want string
	}{
		{specs("API feed a", "API feed b", "API videos c"), "API "},
		{specs("API feed a", "API feed b"), "API feed "},
		{specs("only one spec"), ""},
		{specs("alpha", "beta"), ""},
		{specs("API feed", "API feed x"), "API "}, // cut at a word: "feed" stays
		{specs("API ", "API x"), ""},              // a name would vanish
	}
	for _, tt := range tests {
		if got := tt.r.commonPrefix(); got != tt.want {
			t.Errorf("commonPrefix(%v) = %q, want %q", tt.r.Specs, got, tt.want)
		}
	}
}

// Every report the tests build validates against the published schema, so
// the schema and the Go types cannot drift apart.
func TestJSONMatchesSchema(t *testing.T) {
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(Schema()))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.AddResource("report.schema.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("report.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	errored := meta()
	errored.Errored = "preflight failed"
	noSpecs := erroredRun()
	noSpecs.SpecReports = noSpecs.SpecReports[:1]
	for name, r := range map[string]Report{
		"passed":   FromGinkgo(passedRun(), testCatalogue(t), meta()),
		"failed":   FromGinkgo(failedRun(), testCatalogue(t), meta()),
		"errored":  FromGinkgo(erroredRun(), testCatalogue(t), errored),
		"no specs": FromGinkgo(noSpecs, testCatalogue(t), Meta{}),
	} {
		raw, err := r.JSON()
		if err != nil {
			t.Fatal(err)
		}
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		if err := sch.Validate(inst); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	// The schema bites: a report with an unknown outcome is refused.
	inst, _ := jsonschema.UnmarshalJSON(strings.NewReader(`{"schemaVersion":1,"outcome":"maybe"}`))
	if sch.Validate(inst) == nil {
		t.Errorf("schema accepts an invalid report")
	}
}

// TestWriteFilesFollowsLinks: a report file that is a symbolic link (to
// where a CI keeps its artefacts) is written through the link, which
// stays; the other files are written as usual.
func TestWriteFilesFollowsLinks(t *testing.T) {
	dir, elsewhere := t.TempDir(), t.TempDir()
	kept := filepath.Join(elsewhere, "report.json")
	if err := os.Symlink(kept, filepath.Join(dir, JSONFile)); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	r := FromGinkgo(passedRun(), testCatalogue(t), meta())
	if err := r.WriteFiles(dir, nil); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(filepath.Join(dir, JSONFile)); err != nil || fi.Mode().Type() != os.ModeSymlink {
		t.Errorf("the link was replaced: %v", err)
	}
	if b, err := os.ReadFile(kept); err != nil || !strings.Contains(string(b), `"outcome": "passed"`) {
		t.Errorf("the file the link names: %v", err)
	}
}

// TestBoundedSpecMakesTheRunIncomplete: a spec a bound the user set
// stopped (EntryBounded) leaves the run incomplete, naming the bound,
// never passed nor failed.
func TestBoundedSpecMakesTheRunIncomplete(t *testing.T) {
	rep := passedRun()
	rep.SpecReports = append(rep.SpecReports, it("Rate-limit of the feed", "waits what Retry-After says", []string{"RATE-RETRY-AFTER"}, types.SpecStateSkipped,
		"stopped by a bound you set: Retry-After asks for 1m0s, more than --max-wait=1ns",
		entry{EntryBounded, "GET /api/public-feed?limit=1 (status 429): Retry-After asks for 1m0s, more than --max-wait=1ns"}))
	out := FromGinkgo(rep, testCatalogue(t), meta())
	if out.Outcome != Incomplete || len(out.Errors) != 1 || !strings.Contains(out.Errors[0], "a bound you set stopped 1 spec") || !strings.Contains(out.Errors[0], "--max-wait=1ns") {
		t.Errorf("outcome %s, errors %q; want incomplete, naming --max-wait=1ns", out.Outcome, out.Errors)
	}
}

// TestJudgedIsNoPass: the line that says every must requirement was
// judged reads as what was judged, and is shown as a pass only when the
// run passed (never green under FAILED or on an incomplete run).
func TestJudgedIsNoPass(t *testing.T) {
	failed := passedRun()
	failed.SpecReports[1].State = types.SpecStateFailed
	failed.SpecReports[1].Failure = types.Failure{Message: "newest first: rule broken"}
	for _, tc := range []struct {
		run  types.Report
		m    Meta
		want string
	}{
		{passedRun(), meta(), `class="verified passed"`},
		{failed, meta(), `class="verified failed"`},
		{passedRun(), func() Meta { m := meta(); m.Errored = "the run deadline was reached"; return m }(), `class="verified incomplete"`},
	} {
		_, files := writeAll(t, tc.run, tc.m)
		html := files[HTMLFile]
		if !strings.Contains(html, tc.want) || strings.Contains(html, "Verified: all") || !strings.Contains(html, "Judged: all 5 must requirements") {
			t.Errorf("want %s and the line that says what was judged", tc.want)
		}
		if tc.want != `class="verified passed"` && strings.Contains(html, `class="verified passed"`) {
			t.Errorf("%s: the judged line is shown as a pass", tc.want)
		}
	}
}
