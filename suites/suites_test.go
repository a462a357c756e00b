// Package suites_test is the entry point of the conformance suite:
//
//	go tool ginkgo ./suites                                   # the bundled simulator
//	go tool ginkgo ./suites -- --target URL --pro-key KEY     # any server
//	go test ./suites -args --target URL --pro-key KEY
//
// It binds the flags (and their TCM_* environment variables) to a
// conformance.Config and calls conformance.Run, which does the rest. The
// same run without Go or a clone: tcmkit conform (cmd/tcmkit). go test and ginkgo
// run this package in suites/: a relative --report-dir is taken from there
// unless --base-dir names another directory (--base-dir "$PWD");
// a mistyped flag gets the nearest one and the suite's flags alone.
package suites_test

import (
	"flag"
	"os"
	"testing"

	// The ginkgo CLI runs a package as a Ginkgo suite (-p, the arguments
	// after --) only when one of its test files imports ginkgo.
	_ "github.com/onsi/ginkgo/v2"

	"github.com/tcmkit/tcmkit/suites/conformance"
)

var (
	cfg   = conformance.NewConfig()
	flags = cfg.BindFlags(flag.CommandLine) // go test parses flag.CommandLine
)

func TestConformance(t *testing.T) {
	if err := conformance.ParseEnv(flags); err != nil {
		t.Fatal(err)
	}
	// as tcmkit conform: a bad setting or a key in the wrong role exits
	// 2, said in one line (printed) and in the reports (written); a run
	// that did not finish and found no failure 3; a failure 1 (go test's)
	err := conformance.Run(t, *cfg)
	if code := conformance.ExitStatus(err, t.Failed()); code == conformance.ExitRefused || code == conformance.ExitIncomplete {
		os.Exit(code)
	}
}
