package conformance_test

import (
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
		if len(catalogue.IDs(sr.Labels())) == 0 {
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
