// Package suites_test is the entry point of the conformance suite:
//
//	go tool ginkgo ./suites                                   # the bundled simulator
//	go tool ginkgo ./suites -- --target URL --pro-key KEY     # any server
//	go test ./suites -args --target URL --pro-key KEY
//
// Flags (and their environment variables) fill a conformance.Config;
// without --target it starts the simulator in-process, provisions the keys
// it needs and moves the simulator's clock instead of sleeping. Specs
// labelled strict (the simulator's own choices where the spec is silent)
// run only when the label filter names strict.
//
// -p shares one bundled simulator between the processes. Against another
// target, run without -p: the rate-limit specs count what the suite itself
// sent on a key in the last minute, and other processes' requests would
// escape that count.
package suites_test

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"
	. "github.com/onsi/gomega"

	"github.com/tcmkit/tcmkit/schemas/catalogue"
	"github.com/tcmkit/tcmkit/suites/bundled"
	"github.com/tcmkit/tcmkit/suites/conformance"
	"github.com/tcmkit/tcmkit/suites/redact"
	"github.com/tcmkit/tcmkit/suites/report"
)

// SuiteVersion names this suite in reports.
const SuiteVersion = "tcmkit conformance suite 0.1"

var (
	cfg      = conformance.NewConfig()
	redactor = redact.New()
	logOut   = redactor.Writer(os.Stderr) // seen at once, keys redacted
	started  = time.Now()

	setupErr      error // the preflight's or the bundled simulator's error, on process 1
	setupRequests int
	sim           *bundled.Server
)

func init() {
	cfg.BindFlags(flag.CommandLine)
	cfg.Redactor = redactor
	cfg.Log = logOut
}

var _ = conformance.Register(cfg)

func TestConformance(t *testing.T) {
	if err := cfg.ApplyEnv(flag.CommandLine, os.Getenv); err != nil {
		t.Fatal(err)
	}
	redactor.Add(cfg.Secrets()...)
	RegisterFailHandler(func(message string, callerSkip ...int) {
		GinkgoHelper()
		Fail(redactor.String(message), callerSkip...)
	})
	suiteConfig, reporterConfig := GinkgoConfiguration()
	suiteConfig.LabelFilter = withoutStrict(suiteConfig.LabelFilter)
	RunSpecs(t, "Tracked-Channel Monitoring API conformance", suiteConfig, reporterConfig)
	logOut.Flush()
}

var mentionsStrict = regexp.MustCompile(`(^|[^\w-])strict($|[^\w-])`)

// withoutStrict leaves the strict specs out unless the filter names them.
func withoutStrict(filter string) string {
	switch {
	case mentionsStrict.MatchString(filter):
		return filter
	case strings.TrimSpace(filter) == "":
		return "!strict"
	}
	return "(" + filter + ") && !strict"
}

// shared is what process 1 tells the others (with -p): the target and keys.
type shared struct {
	Target                           string
	Pro, Free, Revoked, Burst, Other string
	Bundled                          bool
	Secrets                          []string
}

func (sh shared) apply() {
	cfg.Target, cfg.ProKey, cfg.FreeKey, cfg.RevokedKey = sh.Target, sh.Pro, sh.Free, sh.Revoked
	cfg.BurstKey, cfg.OtherKey = sh.Burst, sh.Other
	if sh.Bundled {
		cfg.ControlClock = true
	}
	redactor.Add(sh.Secrets...)
	redactor.Add(cfg.Secrets()...)
}

var _ = SynchronizedBeforeSuite(func(ctx SpecContext) []byte {
	sh := shared{Target: cfg.Target, Pro: cfg.ProKey, Free: cfg.FreeKey, Revoked: cfg.RevokedKey,
		Burst: cfg.BurstKey, Other: cfg.OtherKey}
	if cfg.Target == "" {
		var err error
		if sim, err = bundled.Start(); err != nil {
			setupErr = fmt.Errorf("the bundled simulator did not start: %w", err)
			Fail(setupErr.Error())
		}
		keys, err := bundled.Provision(ctx, nil, sim.URL)
		if err != nil {
			setupErr = fmt.Errorf("the bundled simulator's accounts could not be provisioned: %w", err)
			Fail(redactor.String(setupErr.Error()))
		}
		sh = shared{Target: sim.URL, Pro: keys.Pro, Free: keys.Free, Revoked: keys.Revoked,
			Burst: keys.Burst, Other: keys.Other, Bundled: true, Secrets: keys.Secrets}
	}
	sh.apply()
	err := cfg.Preflight(ctx)
	setupRequests, _ = cfg.Client().Take()
	if err != nil {
		setupErr = err
		Fail(redactor.String("the run errored (the target was not judged): " + err.Error()))
	}
	data, err := json.Marshal(sh)
	Expect(err).NotTo(HaveOccurred())
	return data
}, func(data []byte) {
	var sh shared
	Expect(json.Unmarshal(data, &sh)).To(Succeed())
	sh.apply()
})

var _ = SynchronizedAfterSuite(func() {}, func() {
	if sim != nil {
		Expect(sim.Close()).To(Succeed())
	}
})

// The report is written on process 1 after every process finished, even
// when specs failed or the setup did.
var _ = ReportAfterSuite("conformance report", func(r types.Report) {
	cat, err := catalogue.Load()
	if err != nil {
		Fail(err.Error())
	}
	m := report.Meta{
		Target:       cfg.Target,
		SuiteVersion: SuiteVersion,
		Started:      started,
		Finished:     time.Now(),
		Config:       cfg.Describe(),
	}
	if cfg.Target == "" || sim != nil {
		m.Config["target"] = "bundled simulator at " + cfg.Target
	}
	if setupErr != nil {
		m.Errored = setupErr.Error()
	}
	rep := report.FromGinkgo(r, cat, m)
	if err := rep.WriteFiles(cfg.ReportDir, redactor.String); err != nil {
		Fail(redactor.String(err.Error()))
	}
	summary(rep)
})

// summary prints, per feature label, the specs passed, failed and skipped
// and the requests they sent.
func summary(rep report.Report) {
	var b strings.Builder
	fmt.Fprintf(&b, "\nConformance summary (%s): %s\n", rep.Outcome, rep.Headline())
	fmt.Fprintf(&b, "  %-12s %6s %6s %6s %6s %8s\n", "label", "specs", "passed", "failed", "skipped", "requests")
	for _, f := range rep.Features {
		fmt.Fprintf(&b, "  %-12s %6d %6d %6d %6d %8d\n", f.Feature, f.Specs, f.Passed, f.Failed, f.Skipped, f.Requests)
	}
	t := rep.Totals
	fmt.Fprintf(&b, "  %-12s %6d %6d %6d %6d %8d\n", "all", t.Specs, t.Passed, t.Failed, t.Skipped, t.Requests)
	fmt.Fprintf(&b, "  requests: %d by the specs + %d by the setup (preflight) on process 1\n", t.Requests, setupRequests)
	fmt.Fprintf(&b, "  report: %s/{%s,%s,%s}\n", cfg.ReportDir, report.JSONFile, report.MarkdownFile, report.HTMLFile)
	fmt.Fprint(logOut, redactor.String(b.String()))
	logOut.Flush()
}
