package clients

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tcmkit/tcmkit/schemas/catalogue"
	"github.com/tcmkit/tcmkit/schemas/report"
)

func mustCatalogue(t *testing.T) catalogue.Catalogue {
	t.Helper()
	cat, err := catalogue.Load()
	if err != nil {
		t.Fatal(err)
	}
	return cat
}

func reportMeta() report.Meta {
	now := time.Now()
	return report.Meta{Kind: report.KindClient, Target: "the clients of a test", Started: now, Finished: now, Config: map[string]string{}}
}

// The report maps each key and requirement to a spec: a failed one's
// failure is its one finding (the first request, the count, the last); a
// requirement not exercised is skipped with its reason; the scenario is a
// spec of its own.
func TestReportMapsTheVerdicts(t *testing.T) {
	h := newHarness(t, Config{Scenario: "videos-5xx"})
	pro := h.keys.Pro
	h.feed(pro, "limit=1")
	for range 3 {
		h.videos(pro, "text/plain", `{"videoIds":["a"]}`) // a 500 each (the scenario), retried at once
	}
	v := h.j.Snapshot(true)
	r := Report(v, mustCatalogue(t), reportMeta())
	if r.Outcome != report.Failed || r.Kind != report.KindClient || r.Totals.Requests != 4 {
		t.Fatalf("outcome %s, kind %q, %d requests", r.Outcome, r.Kind, r.Totals.Requests)
	}
	specs := map[string]report.Spec{}
	for _, s := range r.Specs {
		specs[strings.TrimPrefix(s.Name, h.client(true, pro).Name()+": ")] = s
	}
	body := specs[rules[ruleJSONBody].must]
	if body.State != report.ResultFailed || body.Failure == nil ||
		!strings.HasPrefix(body.Failure.Message, "1 finding, 3 requests: "+rules[ruleJSONBody].must) ||
		!strings.Contains(body.Failure.Message, "… and 2 more, the last:\n#4 POST /api/public/videos → 500") ||
		!strings.Contains(body.Failure.Transcript, "#2 POST") {
		t.Errorf("CLIENT-JSON-BODY: %+v", body.Failure)
	}
	if walk := specs[rules[ruleWalk].must]; walk.State != report.ResultSkipped || !strings.Contains(walk.SkipReason, "not exercised: no walk begun") {
		t.Errorf("CLIENT-WALK-END: %s %s", walk.State, walk.SkipReason)
	}
	if sc := specs["scenario videos-5xx"]; sc.State != report.ResultFailed || !strings.Contains(sc.Failure.Message, "no pause") {
		t.Errorf("scenario: %+v", sc)
	}
	if !strings.Contains(r.Config["scenario"], "videos-5xx: answers") {
		t.Errorf("config: %v", r.Config)
	}
}

// WriteReport writes the four files, keys redacted, and its outcome is
// the exit status's.
func TestWriteReport(t *testing.T) {
	h := newHarness(t, Config{})
	h.feed(h.keys.Pro, "limit=1&key="+h.keys.Pro)
	dir := filepath.Join(t.TempDir(), "report")
	v, r, err := h.j.WriteReport(dir, report.Meta{Target: "x", Started: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	if v.Outcome != Failed || r.Outcome != report.Failed || r.Kind != report.KindClient || ExitStatus(r.Outcome) != ExitFailed {
		t.Errorf("verdicts %s, report %s %q, exit %d", v.Outcome, r.Outcome, r.Kind, ExitStatus(r.Outcome))
	}
	for _, name := range []string{report.ClientJSONFile, report.ClientMarkdownFile, report.ClientHTMLFile, report.ClientJUnitFile} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), h.keys.Pro[4:12]) {
			t.Errorf("%s holds a key", name)
		}
	}
	if ExitStatus(report.Passed) != 0 || ExitStatus(report.Errored) != ExitErrored {
		t.Error("exit statuses")
	}
}
