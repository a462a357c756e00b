package killmatrix

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2/types"
)

// spec builds a synthetic spec report, as Ginkgo's JSON report has it.
func spec(text string, state types.SpecState, labels ...string) types.SpecReport {
	s := types.SpecReport{
		ContainerHierarchyTexts:  []string{"Tracked-Channel Monitoring API", "GET /api/public-feed pagination"},
		ContainerHierarchyLabels: [][]string{{}, {"pagination"}},
		LeafNodeType:             types.NodeTypeIt,
		LeafNodeText:             text,
		LeafNodeLabels:           labels,
		State:                    state,
	}
	if state.Is(types.SpecStateFailureStates) {
		s.Failure = types.Failure{Message: "the rule was broken\nsecond line"}
	}
	return s
}

func setupFailure(message string) types.SpecReport {
	return types.SpecReport{
		LeafNodeType: types.NodeTypeSynchronizedBeforeSuite,
		State:        types.SpecStateFailed,
		Failure:      types.Failure{Message: message},
	}
}

func TestJudge(t *testing.T) {
	order := spec("orders events newest first", types.SpecStateFailed, "FEED-ORDER")
	walk := spec("visits the whole feed", types.SpecStateFailed, "FEED-CURSOR-WALK", "EVENT-ID-UNIQUE")
	passedOrder := spec("orders events newest first", types.SpecStatePassed, "FEED-ORDER")
	skipped := spec("caps limit at 200", types.SpecStateSkipped, "FEED-LIMIT-CAP")
	panicked := spec("orders events newest first", types.SpecStatePanicked, "FEED-ORDER")
	afterSuite := types.SpecReport{LeafNodeType: types.NodeTypeReportAfterSuite, State: types.SpecStateFailed, Failure: types.Failure{Message: "report not written"}}

	tests := []struct {
		name        string
		requirement string
		reports     []types.Report
		result      string
		killedBy    []string
		others      int
	}{
		{"killed by the labelled spec", "FEED-ORDER", []types.Report{{SpecReports: types.SpecReports{order, skipped}}}, "killed",
			[]string{"Tracked-Channel Monitoring API GET /api/public-feed pagination orders events newest first"}, 0},
		{"a panic kills too", "FEED-ORDER", []types.Report{{SpecReports: types.SpecReports{panicked}}}, "killed", []string{panicked.FullText()}, 0},
		{"the label of the container counts", "pagination", []types.Report{{SpecReports: types.SpecReports{order}}}, "killed", []string{order.FullText()}, 0},
		{"a second label counts", "EVENT-ID-UNIQUE", []types.Report{{SpecReports: types.SpecReports{walk, order}}}, "killed", []string{walk.FullText()}, 1},
		{"only other specs failed", "FEED-LIMIT-CAP", []types.Report{{SpecReports: types.SpecReports{order, skipped}}}, "SURVIVED (other specs failed)", nil, 1},
		{"everything passed", "FEED-ORDER", []types.Report{{SuiteSucceeded: true, SpecReports: types.SpecReports{passedOrder}}}, "SURVIVED", nil, 0},
		{"a failed report node is not a spec", "FEED-ORDER", []types.Report{{SpecReports: types.SpecReports{passedOrder, afterSuite}}}, "SURVIVED", nil, 0},
		{"setup failed", "FEED-ORDER", []types.Report{{SpecReports: types.SpecReports{setupFailure("the Pro key is not accepted\nbody: …")}}}, "ERRORED", nil, 0},
		{"setup failed, and a spec failed anyway", "FEED-ORDER", []types.Report{{SpecReports: types.SpecReports{setupFailure("no"), order}}}, "ERRORED", []string{order.FullText()}, 0},
		{"no report", "FEED-ORDER", nil, "ERRORED", nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := judge("some-fault", tt.requirement, tt.reports)
			if v.Result() != tt.result {
				t.Errorf("result %q, want %q (%+v)", v.Result(), tt.result, v)
			}
			if !slices.Equal(v.KilledBy, tt.killedBy) {
				t.Errorf("killed by %q, want %q", v.KilledBy, tt.killedBy)
			}
			if len(v.Others) != tt.others {
				t.Errorf("others %q, want %d", v.Others, tt.others)
			}
			if v.Killed() != (tt.result == "killed") {
				t.Errorf("Killed() = %v for result %q", v.Killed(), tt.result)
			}
		})
	}
	if v := judge("f", "FEED-ORDER", []types.Report{{SpecReports: types.SpecReports{setupFailure("the Pro key is not accepted\nbody: …")}}}); v.Errored != "the Pro key is not accepted" {
		t.Errorf("errored %q, want the first line of the setup failure", v.Errored)
	}
}

func TestFailures(t *testing.T) {
	clean := []types.Report{{SuiteSucceeded: true, SpecReports: types.SpecReports{spec("a", types.SpecStatePassed, "FEED-ORDER"), spec("b", types.SpecStateSkipped)}}}
	if got := failures(clean); len(got) != 0 {
		t.Errorf("a clean run has failures %q", got)
	}
	dirty := []types.Report{{SpecReports: types.SpecReports{spec("a", types.SpecStateFailed, "FEED-ORDER"), setupFailure("no target")}}}
	got := failures(dirty)
	if len(got) != 2 || !strings.HasSuffix(got[0], "a: the rule was broken") || !strings.Contains(got[1], "no target") {
		t.Errorf("failures %q", got)
	}
	if got := failures([]types.Report{{SuiteSucceeded: false, SpecialSuiteFailureReasons: []string{"Interrupted by User"}}}); len(got) != 1 {
		t.Errorf("an interrupted suite without specs has failures %q", got)
	}
}

func TestReadReport(t *testing.T) {
	want := []types.Report{{SuiteDescription: "conformance", SpecReports: types.SpecReports{spec("orders events newest first", types.SpecStateFailed, "FEED-ORDER")}}}
	raw, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "report.json")
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := readReport(path)
	if err != nil {
		t.Fatal(err)
	}
	v := judge("oldest-first", "FEED-ORDER", got)
	if !v.Killed() || v.KilledBy[0] != want[0].SpecReports[0].FullText() {
		t.Errorf("after a JSON round trip: %+v", v)
	}
	if _, err := readReport(filepath.Join(t.TempDir(), "missing.json")); err == nil {
		t.Error("a missing report reads without error")
	}
	if err := os.WriteFile(path, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := readReport(path); err == nil {
		t.Error("a broken report reads without error")
	}
}

func TestMatrixRendering(t *testing.T) {
	m := matrix{
		Mode: "test",
		Verdicts: []verdict{
			{Fault: "oldest-first", Requirement: "FEED-ORDER", KilledBy: []string{"orders | newest first"}},
			{Fault: "rate-limit-503", Requirement: "RATE-LIMIT-429", Others: []string{"allows 20 requests"}},
			{Fault: "health-not-ok", Requirement: "HEALTH-OK"},
			{Fault: "reject-valid-key", Requirement: "AUTH-VALID", Errored: "the Pro key is not accepted"},
		},
	}
	if k, n := m.Rate(); k != 1 || n != 4 {
		t.Errorf("rate %d/%d, want 1/4", k, n)
	}
	if got := m.RateLine(); got != "kill rate: 1 of 4 faults killed (25.0%)" {
		t.Errorf("rate line %q", got)
	}
	md := m.Markdown()
	for _, want := range []string{
		"| oldest-first | FEED-ORDER | killed | orders \\| newest first |",
		"| rate-limit-503 | RATE-LIMIT-429 | SURVIVED (other specs failed) |  |",
		"| health-not-ok | HEALTH-OK | SURVIVED |  |",
		"| reject-valid-key | AUTH-VALID | ERRORED | the Pro key is not accepted |",
		"faultless run: no failure",
		"| rate-limit-503 | RATE-LIMIT-429 | allows 20 requests |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("Markdown lacks %q:\n%s", want, md)
		}
	}
	text := m.Text()
	if !strings.Contains(text, "SURVIVED (other specs failed): allows 20 requests") || !strings.Contains(text, "kill rate: 1 of 4") {
		t.Errorf("text:\n%s", text)
	}
	if strings.Contains(md, "chosen by") {
		t.Error("a full matrix says it is a subset")
	}
	m.Subset = "TCM_KILLMATRIX_FAULTS"
	if md := m.Markdown(); !strings.Contains(md, "- faults: 4, chosen by TCM_KILLMATRIX_FAULTS") {
		t.Errorf("a subset is not said:\n%s", md)
	}
	m.Clean = []string{"x: failed"}
	if md := m.Markdown(); !strings.Contains(md, "faultless run: 1 FAILURE(S)") {
		t.Errorf("a dirty faultless run is not shown:\n%s", md)
	}
	if (matrix{}).RateLine() != "kill rate: 0 of 0 faults killed (0.0%)" {
		t.Error("an empty matrix divides by zero")
	}
}
