package simulator

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// The simulator is what the suite judges, and what judges its clients: no
// package under simulator/, tests included, depends on a package of
// suites/, directly or through another. Names both sides need (the
// catalogue, its grid) live in schemas/.
func TestSimulatorImportsNoSuite(t *testing.T) {
	// -test lists each package's test variants too, whose Deps hold what
	// its tests import.
	out, err := exec.Command("go", "list", "-test", "-f", "{{.ImportPath}}|{{.Module.Path}}|{{join .Deps \" \"}}", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) < 2 {
		t.Fatalf("go list listed %d packages under simulator/:\n%s", len(lines), out)
	}
	for _, line := range lines {
		pkg, rest, _ := strings.Cut(line, "|")
		module, deps, _ := strings.Cut(rest, "|")
		suites := module + "/suites"
		var bad []string
		for _, d := range strings.Fields(deps) {
			if d == suites || strings.HasPrefix(d, suites+"/") {
				bad = append(bad, strings.TrimPrefix(d, module+"/"))
			}
		}
		if len(bad) > 0 {
			slices.Sort(bad)
			t.Errorf("%s depends on %s", strings.ReplaceAll(pkg, module+"/", ""), strings.Join(bad, ", "))
		}
	}
}
