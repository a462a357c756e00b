package killmatrix

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2/types"
)

// The runner's tests use this test binary as a fake suite (the helper
// process pattern): with fakeSuiteEnv set, TestMain plays a suite of one
// health spec instead of running the tests. It judges the target given by
// TCM_TARGET over HTTP and writes a Ginkgo JSON report where
// --ginkgo.json-report says.
const fakeSuiteEnv = "KILLMATRIX_FAKE_SUITE"

func TestMain(m *testing.M) {
	if os.Getenv(fakeSuiteEnv) == "1" {
		os.Exit(fakeSuite(os.Args[1:]))
	}
	debug.SetGCPercent(400) // the simulators of this process: a fifth less CPU
	os.Exit(m.Run())
}

func fakeSuite(args []string) int {
	var reportPath string
	for _, a := range args {
		if p, ok := strings.CutPrefix(a, "--ginkgo.json-report="); ok {
			reportPath = p
		}
	}
	resp, err := http.Post(os.Getenv("TCM_TARGET")+"/api/public/health", "application/json", strings.NewReader("{}"))
	if err != nil {
		return 2
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	healthy := resp.StatusCode == http.StatusOK && strings.Contains(string(body), `"ok"`) &&
		os.Getenv("TCM_PRO_KEY") != "" && os.Getenv("TCM_CONTROL_CLOCK") == "true"
	spec := types.SpecReport{
		ContainerHierarchyTexts: []string{"POST /api/public/health"},
		LeafNodeType:            types.NodeTypeIt,
		LeafNodeText:            "answers ok",
		LeafNodeLabels:          []string{"HEALTH-OK"},
		State:                   types.SpecStatePassed,
	}
	if !healthy {
		spec.State, spec.Failure = types.SpecStateFailed, types.Failure{Message: "not ok"}
	}
	raw, _ := json.Marshal([]types.Report{{SuiteSucceeded: healthy, SpecReports: types.SpecReports{spec}}})
	if err := os.WriteFile(reportPath, raw, 0o600); err != nil {
		return 2
	}
	if !healthy {
		return 1
	}
	return 0
}

func TestRunner(t *testing.T) {
	t.Setenv(fakeSuiteEnv, "1")
	rn := &runner{binary: os.Args[0], dir: t.TempDir()}
	o, err := rn.run(t.Context(), "broken", []string{"health-not-ok"})
	if err != nil {
		t.Fatal(err)
	}
	if v := judge("health-not-ok", "HEALTH-OK", o.reports); !v.Killed() {
		t.Errorf("the simulator started with health-not-ok was not judged broken: %+v\n%s", v, o.output)
	}
	o, err = rn.run(t.Context(), "clean", nil)
	if err != nil {
		t.Fatal(err)
	}
	if f := failures(o.reports); len(f) != 0 || len(o.reports) == 0 {
		t.Errorf("the faultless simulator failed: %q\n%s", f, o.output)
	}
}
