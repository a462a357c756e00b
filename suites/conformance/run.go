package conformance

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"
	"github.com/onsi/gomega"

	"github.com/tcmkit/tcmkit/schemas/catalogue"
	"github.com/tcmkit/tcmkit/schemas/report"
	"github.com/tcmkit/tcmkit/suites/bundled"
)

// SuiteVersion names this suite in reports.
const SuiteVersion = "tcmkit conformance suite 0.1"

// Run runs the whole suite as one Go test, as csi-test's sanity.Test: it
// declares the specs (Register), starts the bundled simulator and
// provisions its keys when cfg names no target, runs the preflight, leaves
// the strict specs out unless the label filter names strict, and writes the
// report files and a summary once every spec ran, even when the run failed.
//
// With -p, process 1 starts the simulator and runs the preflight; the other
// processes judge the same target with the same keys. Against another
// target -p is refused at once: the processes would spend the same keys'
// rate windows while the rate-limit specs need one of them fresh.
//
// The run ends by its deadline (Config.RunDeadline, and before the go test
// timeout): Ginkgo then stops the spec under way and skips the rest, and
// the report, errored, names what was left undone. Unless GOMEMLIMIT says
// otherwise, the garbage collector works to keep the heap under
// memoryLimit.
func Run(t TB, cfg Config) {
	cfg = cfg.settled()
	r := &run{Session: Register(&cfg), started: time.Now()}
	ginkgo.SynchronizedBeforeSuite(r.setUp, r.join)
	ginkgo.SynchronizedAfterSuite(r.closeSession, r.tearDown)
	ginkgo.ReportAfterSuite("conformance report", r.report)
	gomega.RegisterFailHandler(r.fail)
	suiteConfig, reporterConfig := ginkgo.GinkgoConfiguration()
	suiteConfig.LabelFilter = withoutStrict(suiteConfig.LabelFilter)
	r.filter = suiteConfig.LabelFilter
	r.deadline = runDeadline(t, cfg.RunDeadline, suiteConfig.GracePeriod)
	suiteConfig.Timeout = min(suiteConfig.Timeout, r.deadline)
	stop := time.AfterFunc(suiteConfig.Timeout, r.stopRun)
	defer stop.Stop()
	if os.Getenv("GOMEMLIMIT") == "" {
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(memoryLimit))
	}
	ginkgo.RunSpecs(t, "Tracked-Channel Monitoring API conformance", suiteConfig, reporterConfig)
	r.closeSession()
	r.logWriter().Flush()
}

// memoryLimit is the heap Run asks the garbage collector to stay under, well
// below the 512 MiB the suite promises to stay within whatever a target sends.
const memoryLimit = 320 << 20

// runDeadline is the run's time: the Config's, and less than what is left
// of the go test timeout, so that the reports are written before it kills
// the binary.
func runDeadline(t TB, d, grace time.Duration) time.Duration {
	if d <= 0 {
		d = DefaultRunDeadline
	}
	if end, ok := t.Deadline(); ok {
		d = min(d, max(time.Until(end)-grace-15*time.Second, time.Second))
	}
	return d
}

// run is what Run keeps beyond the specs' Session: the bundled simulator
// (on process 1), the setup's error and requests, and when it started.
type run struct {
	*Session
	started       time.Time
	deadline      time.Duration // how long the run may take
	filter        string        // the label filter in force
	lead          bool          // this process set the run up: process 1
	sim           *bundled.Server
	setupErr      error // the preflight's or the bundled simulator's, on process 1
	setupRequests int
}

// fail is Gomega's fail handler: every message through the redactor.
func (r *run) fail(message string, callerSkip ...int) {
	ginkgo.GinkgoHelper()
	ginkgo.Fail(r.Redactor().String(message), callerSkip...)
}

// setUp runs on process 1 before any spec: the target (the bundled
// simulator, started and provisioned, or the Config's), then the
// preflight. It hands the target to the other processes.
func (r *run) setUp(ctx ginkgo.SpecContext) []byte {
	r.lead = true
	tg := r.cfg.target()
	if sc, _ := ginkgo.GinkgoConfiguration(); sc.ParallelTotal > 1 && tg.URL != "" {
		n := sc.ParallelTotal
		r.setupErr = fmt.Errorf("-p (%d processes) is for the bundled simulator only: against --target the processes would spend the same keys' rate windows at once, and the rate-limit specs need one fresh; run without -p", n)
		r.failf("%v", r.setupErr)
	}
	if tg.URL == "" {
		var err error
		if r.sim, err = bundled.Start(); err != nil {
			r.setupErr = fmt.Errorf("the bundled simulator did not start: %w", err)
			r.failf("%v", r.setupErr)
		}
		keys, err := bundled.Provision(ctx, nil, r.sim.URL)
		if err != nil {
			r.setupErr = fmt.Errorf("the bundled simulator's accounts could not be provisioned: %w", err)
			r.failf("%v", r.setupErr)
		}
		tg = Target{URL: r.sim.URL, Pro: keys.Pro, Free: keys.Free, Revoked: keys.Revoked,
			Burst: keys.Burst, Other: keys.Other, ControlClock: true, Secrets: keys.Secrets}
	}
	r.Use(tg)
	err := r.Preflight(ctx)
	r.setupRequests, _ = r.Client().Take()
	if err != nil {
		r.setupErr = err
		r.failf("the run errored (the target was not judged): %v", err)
	}
	data, err := json.Marshal(tg)
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	return data
}

// join runs on every process: it judges the target process 1 set up.
func (r *run) join(data []byte) {
	var tg Target
	gomega.Expect(json.Unmarshal(data, &tg)).To(gomega.Succeed())
	if !r.lead {
		r.Use(tg)
	}
	r.Redactor().Add(tg.Secrets...)
}

// closeSession ends every process's session (its client's files on disk).
func (r *run) closeSession() {
	if err := r.Session.Close(); err != nil {
		fmt.Fprintf(r.logWriter(), "closing the session: %v\n", err)
	}
}

func (r *run) tearDown() {
	if r.sim != nil {
		gomega.Expect(r.sim.Close()).To(gomega.Succeed())
	}
}

// report writes the report on process 1 after every process finished, even
// when specs failed or the setup did, and prints the summary.
func (r *run) report(rep types.Report) {
	cat, err := catalogue.Load()
	if err != nil {
		r.failf("%v", err)
	}
	tg := r.Target()
	m := report.Meta{
		Target:       tg.URL,
		SuiteVersion: SuiteVersion,
		Started:      r.started,
		Finished:     time.Now(),
		Config:       r.describe(tg),
	}
	if r.cfg.Target == "" {
		m.Config["target"] = "bundled simulator at " + tg.URL
	}
	if r.setupErr != nil {
		m.Errored = r.setupErr.Error()
	} else if undone := r.undone(rep); undone != "" {
		m.Errored = undone
	}
	out := report.FromGinkgo(rep, cat, m)
	if err := out.WriteFiles(r.cfg.ReportDir, r.Redactor().String); err != nil {
		r.failf("%v", err)
	}
	r.summary(out)
}

// describe is the settings as the run used them: the Config's, with the
// target and keys it judged.
func (r *run) describe(tg Target) map[string]string {
	used := *r.cfg
	used.Target, used.ProKey, used.FreeKey, used.RevokedKey = tg.URL, tg.Pro, tg.Free, tg.Revoked
	used.ControlClock = tg.ControlClock
	return used.Describe()
}

// summary prints, per feature label, the specs passed, failed and skipped
// and the requests they sent.
func (r *run) summary(rep report.Report) {
	var b strings.Builder
	fmt.Fprintf(&b, "\nConformance summary (%s): %s\n", rep.Outcome, rep.Headline())
	fmt.Fprintf(&b, "  %s\n", rep.SpecLine())
	fmt.Fprintf(&b, "  %-12s %6s %6s %6s %6s %8s\n", "label", "specs", "passed", "failed", "skipped", "requests")
	for _, f := range rep.Features {
		fmt.Fprintf(&b, "  %-12s %6d %6d %6d %6d %8d\n", f.Feature, f.Specs, f.Passed, f.Failed, f.Skipped, f.Requests)
	}
	t := rep.Totals
	fmt.Fprintf(&b, "  %-12s %6d %6d %6d %6d %8d\n", "all", t.Specs, t.Passed, t.Failed, t.Skipped, t.Requests)
	fmt.Fprintf(&b, "  requests: %d by the specs + %d by the setup (preflight) on process 1\n", t.Requests, r.setupRequests)
	dir, err := filepath.Abs(r.cfg.ReportDir)
	if err != nil {
		dir = r.cfg.ReportDir
	}
	fmt.Fprintf(&b, "  report: %s (and %s, %s)\n", filepath.Join(dir, report.HTMLFile), report.MarkdownFile, report.JSONFile)
	fmt.Fprint(r.logWriter(), r.Redactor().String(b.String()))
	r.logWriter().Flush()
}

var mentionsStrict = regexp.MustCompile(`(^|[^\w-])` + strict + `($|[^\w-])`)

// withoutStrict leaves the strict specs out unless the filter names them.
func withoutStrict(filter string) string {
	switch {
	case mentionsStrict.MatchString(filter):
		return filter
	case strings.TrimSpace(filter) == "":
		return "!" + strict
	}
	return "(" + filter + ") && !" + strict
}
