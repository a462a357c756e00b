package conformance_test

import (
	"slices"
	"strings"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"

	"github.com/tcmkit/tcmkit/schemas/catalogue"
	"github.com/tcmkit/tcmkit/suites/conformance"
)

// The suite's specs, declared here as the entry point declares them, so
// that their labels can be read without running them.
var _ = conformance.Register(conformance.NewConfig())

// Every must requirement has a spec, and every id a spec names is in the
// catalogue: a renamed id or a forgotten requirement fails here, not in a
// report nobody reads.
func TestSuiteCoversCatalogue(t *testing.T) {
	cat, err := catalogue.Load()
	if err != nil {
		t.Fatal(err)
	}
	suiteConfig, _ := GinkgoConfiguration()
	suiteConfig.LabelFilter = "" // strict specs too: they name open requirements
	preview := PreviewSpecs("catalogue coverage", suiteConfig)

	specs := map[string][]string{}
	for _, sr := range preview.SpecReports {
		if !sr.LeafNodeType.Is(types.NodeTypeIt) {
			continue
		}
		name := sr.FullText()
		// an explored request, and the oracle's own spec, check whatever
		// rule an answer breaks: the oracle's problems name it
		judgedByOracle := slices.Contains(sr.Labels(), "explore") || slices.Contains(sr.Labels(), "oracle")
		if len(catalogue.IDs(sr.Labels())) == 0 && !judgedByOracle {
			t.Errorf("spec %q names no requirement: label it with the id(s) it checks", name)
		}
		specs[name] = append(specs[name], sr.Labels()...)
	}
	if len(specs) == 0 {
		t.Fatal("the suite registered no specs")
	}
	cov := cat.Check(specs)
	if err := cov.Err(); err != nil {
		t.Error(strings.ReplaceAll(err.Error(), "\n", "\n\t"))
	}
	t.Logf("%d specs cover %d of %d must requirements", len(specs), len(cat.OfKind(catalogue.Must))-len(cov.Uncovered), len(cat.OfKind(catalogue.Must)))
}

// The specs run in their declared order: the rate-limit specs first (while
// the burst key's window is fresh), then one group after another, each
// group's strict specs after its own. Ginkgo orders specs by file name and
// line, so a renamed file could reorder them silently; this fails instead.
func TestSpecOrder(t *testing.T) {
	suiteConfig, _ := GinkgoConfiguration()
	suiteConfig.LabelFilter = ""
	preview := PreviewSpecs("spec order", suiteConfig)
	want := []string{
		"rate limit of GET /api/public-feed",
		"POST /api/public/health",
		"authentication",
		"the Pro plan",
		"GET /api/public-feed pagination",
		"events, in the feed and in VideoEntries",
		"POST /api/public/videos",
		"tenant isolation",
		"errors and media types",
		"where the spec is silent, as the simulator chose",
		"generated probes",
		"requests explored from HTTP's grammar",
		"rate limit, a second lockout",
		"the contract oracle",
	}
	var groups []string
	strictSeen := map[string]bool{}
	for _, sr := range preview.SpecReports {
		if !sr.LeafNodeType.Is(types.NodeTypeIt) {
			continue
		}
		g := sr.ContainerHierarchyTexts[1]
		if len(groups) == 0 || groups[len(groups)-1] != g {
			groups = append(groups, g)
		}
		isStrict := slices.Contains(sr.Labels(), "strict")
		if strictSeen[g] && !isStrict {
			t.Errorf("%q runs after a strict spec of its group", sr.FullText())
		}
		strictSeen[g] = strictSeen[g] || isStrict
	}
	if !slices.Equal(groups, want) {
		t.Errorf("groups run in the order\n\t%s\nwant\n\t%s", strings.Join(groups, "\n\t"), strings.Join(want, "\n\t"))
	}
}
