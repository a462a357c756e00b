package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/formatter"
	"github.com/onsi/ginkgo/v2/types"
	"github.com/onsi/gomega"

	"github.com/tcmkit/tcmkit/schemas/catalogue"
	"github.com/tcmkit/tcmkit/schemas/report"
	"github.com/tcmkit/tcmkit/suites/bundled"
	"github.com/tcmkit/tcmkit/suites/client"
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
// The run ends by its deadline (Config.RunDeadline, by default the
// profile's: estimate.go; and before the go test timeout): Ginkgo then
// stops the spec under way and skips the rest, what waited in the probes'
// lanes stops too, and the report, incomplete, names what was left
// undone. Unless GOMEMLIMIT says otherwise, the garbage collector works
// to keep the heap under memoryLimit.
//
// A run that would mean nothing is refused before Ginkgo prints anything:
// a bad setting (a range, a profile, a regular expression of --focus or
// --skip, a label filter), or a key in the wrong role (the preflight's
// finding). Run then prints one line, leaves the report directory as it
// was and returns a *RefusedError; a command exits ExitRefused for it. A
// run whose filter selected no spec, or none that judged a must
// requirement, is refused the same way once Ginkgo ran (judgedNothing). A run that did not finish (its deadline, an interrupt, a target
// that could not be judged) returns an *IncompleteError (ExitIncomplete);
// ExitStatus maps what Run returned to the exit status.
func Run(t TB, cfg Config) error {
	cfg = cfg.settled()
	suiteConfig, reporterConfig := ginkgo.GinkgoConfiguration()
	userFilter := filterOf(suiteConfig) // as the user wrote it, for a refusal
	suiteConfig.LabelFilter = withoutStrict(suiteConfig.LabelFilter)
	ginkgoFiles := takeGinkgoReports(&reporterConfig) // written redacted, below
	started := time.Now()
	if err := checkSettings(&cfg, suiteConfig); err != nil {
		// before Register: a refused run declares no spec
		return refuse(t, &run{Session: newSession(&cfg), started: started}, err)
	}
	r := &run{Session: Register(&cfg), started: started}
	ginkgo.SynchronizedBeforeSuite(r.setUp, r.join)
	ginkgo.SynchronizedAfterSuite(r.closeSession, r.tearDown)
	// Ginkgo's report is kept here and written once RunSpecs returned:
	// a run cut at its deadline still has the time to write it.
	ginkgo.ReportAfterSuite("conformance report", func(rep types.Report) { r.final = &rep })
	gomega.RegisterFailHandler(r.fail)
	r.filter = suiteConfig.LabelFilter
	r.deadline, r.shortened = runDeadline(t, cfg.RunDeadline, suiteConfig.GracePeriod)
	end := started.Add(r.deadline)
	// At the deadline the run's context ends with its cause: what waits
	// on it (the probes' lanes, the walks made ahead) stops, and a spec
	// that meets the end is stopped as the run's, not judged (stopIfEnded).
	stop := time.AfterFunc(r.deadline, func() { r.stopRun(&deadlineError{deadline: r.deadline, shortened: r.shortened}) })
	defer stop.Stop()
	if os.Getenv("GOMEMLIMIT") == "" {
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(memoryLimit))
	}
	r.noteDeadline()
	if suiteConfig.ParallelTotal <= 1 {
		// The preflight before Ginkgo starts: a key in the wrong role
		// stops the run in one line. (With -p, process 1 runs it in the
		// suite's setup, where the other processes wait for it.)
		// Ginkgo handles SIGINT and SIGTERM once its specs run; before,
		// a signal ends the preflight at once (a target that does not
		// answer, a Retry-After waited out), and the run with it.
		ctx, cancel := context.WithDeadline(r.runCtx, end)
		ctx, stopSignals := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
		r.prepare(ctx)
		signalled := ctx.Err() != nil && r.runCtx.Err() == nil && !errors.Is(context.Cause(ctx), context.DeadlineExceeded) && time.Now().Before(end)
		stopSignals()
		if r.setupErr != nil && ctx.Err() != nil && !time.Now().Before(end) {
			// the target may have been slow, the run's deadline is why
			// the preflight stopped
			r.setupErr = fmt.Errorf("%w during the preflight: %v", &deadlineError{deadline: r.deadline, shortened: r.shortened}, r.setupErr)
		}
		cancel()
		if refused := (*RefusedError)(nil); errors.As(r.setupErr, &refused) {
			r.closeSession()
			r.tearDown()
			return refuse(t, r, r.setupErr)
		}
		if signalled {
			r.closeSession()
			r.tearDown()
			return interrupted(t, r, context.Cause(ctx))
		}
	}
	// Ginkgo's own deadline is the run's and a little more: it counts from
	// here, not from the start, so it is what the preflight left. The run
	// stops its specs itself at the deadline (stopRun); Ginkgo's timeout
	// strikes only a spec that did not stop, and never the report nodes
	// that follow the run's end (--ginkgo.json-report was left empty).
	suiteConfig.Timeout = min(suiteConfig.Timeout, max(time.Until(end), time.Second)+afterDeadline)
	console := formatter.ColorableStdOut // Ginkgo's console, redacted while it runs
	formatter.ColorableStdOut = consoleWriter{w: console, redact: r.Redactor().String}
	ginkgo.RunSpecs(t, "Tracked-Channel Monitoring API conformance", suiteConfig, reporterConfig)
	formatter.ColorableStdOut = console
	if r.final != nil { // process 1
		if err := r.report(t, *r.final, ginkgoFiles, userFilter); err != nil {
			r.closeSession()
			return err
		}
	}
	r.closeSession()
	r.logWriter().Flush()
	switch r.outcome {
	case report.Incomplete:
		t.Fail()
		return &IncompleteError{Reason: r.incomplete}
	case report.Failed:
		t.Fail() // a failed spec failed it already; --require-all did not
	}
	return nil
}

// Exit statuses of a run, of tcmkit conform and of the test binary of go
// test ./suites (go test itself, and the ginkgo CLI, say any of the last
// three as a failure: exit 1, naming the binary's status).
const (
	// ExitPassed: the run finished, no spec failed (with --require-all,
	// every must requirement was verified).
	ExitPassed = 0
	// ExitFailed: the run finished and a spec found that the target does
	// not conform; or --require-all and a must requirement was not
	// verified.
	ExitFailed = 1
	// ExitRefused: a bad setting or a key in the wrong role: nothing ran.
	ExitRefused = 2
	// ExitIncomplete: the run did not finish (its deadline, an interrupt,
	// a target that could not be judged): never passed, whatever it found
	// before its end.
	ExitIncomplete = 3
)

// ExitStatus is the exit status of a run that Run (or List) ended with
// err, in a test that failed or not.
func ExitStatus(err error, failed bool) int {
	var refused *RefusedError
	var incomplete *IncompleteError
	switch {
	case errors.As(err, &refused):
		return ExitRefused
	case errors.As(err, &incomplete):
		return ExitIncomplete
	case failed || err != nil:
		return ExitFailed
	}
	return ExitPassed
}

// IncompleteError is a run that did not finish: the target was not fully
// judged.
type IncompleteError struct{ Reason string }

func (e *IncompleteError) Error() string { return "the run is incomplete: " + e.Reason }

// deadlineError is the cause of the run's end at its deadline.
type deadlineError struct {
	deadline  time.Duration
	shortened bool // to end before go test's -timeout
}

func (e *deadlineError) Error() string {
	if e.shortened {
		return fmt.Sprintf("the run deadline (%s, to end before go test's -timeout) was reached", e.deadline)
	}
	return fmt.Sprintf("the run deadline (--run-deadline=%s) was reached", e.deadline)
}

// noteDeadline says, before the run, when its deadline leaves it less time
// than its profile's estimate: it will likely end incomplete.
func (r *run) noteDeadline() {
	e := estimateOf(r.cfg.Profile, r.virtual())
	if e.virtual || r.deadline >= e.high {
		return
	}
	given := fmt.Sprintf("--run-deadline %s", r.deadline)
	if r.shortened {
		given = fmt.Sprintf("the run deadline, %s to end before go test's -timeout (pass -timeout %s),", r.deadline.Round(time.Second), e.deadline()+5*time.Minute)
	}
	fmt.Fprintf(r.logWriter(), "note: %s is shorter than the estimate of %s: the run may end incomplete (exit %d); its default is %s\n",
		given, e, ExitIncomplete, e.deadline())
	r.logWriter().Flush()
}

// virtual reports whether the run waits on a simulator's clock.
func (r *run) virtual() bool { return r.cfg.virtualTarget() }

// RefusedError is a run the suite refused to start, because its result
// would mean nothing: a bad setting, or a key in the wrong role.
type RefusedError struct{ Reason string }

func (e *RefusedError) Error() string { return e.Reason }

// refused wraps a reason as a refusal.
func refused(format string, args ...any) error {
	return &RefusedError{Reason: fmt.Sprintf(format, args...)}
}

// checkSettings refuses settings the run cannot use (settingErrors), and
// a report directory it cannot make.
func checkSettings(cfg *Config, sc types.SuiteConfig) error {
	if errs := settingErrors(cfg, sc); len(errs) > 0 {
		return refused("%s", strings.Join(errs, "; ")) // the report directory untouched
	}
	if err := os.MkdirAll(cfg.ReportDir, 0o755); err != nil {
		return refused("--report-dir: %v", err)
	}
	return nil
}

// settingErrors says which settings a run or a list cannot use: out of
// range or not one of their values, or a focus, skip or label filter
// Ginkgo cannot read (it would panic).
func settingErrors(cfg *Config, sc types.SuiteConfig) []string {
	errs := cfg.rangeErrors()
	if cfg.Target != "" { // else Run starts the bundled simulator
		errs = append(cfg.target().validate(nil), errs...)
	}
	for _, f := range []struct {
		flag string
		res  []string
	}{{"--focus", sc.FocusStrings}, {"--skip", sc.SkipStrings}} {
		for _, re := range f.res {
			if _, err := regexp.Compile(re); err != nil {
				errs = append(errs, fmt.Sprintf("%s %q: not a regular expression: %v", f.flag, re, err))
			}
		}
	}
	if _, err := types.ParseLabelFilter(sc.LabelFilter); err != nil {
		errs = append(errs, fmt.Sprintf("--label-filter: %v", firstLine(err.Error())))
	}
	if sc.ParallelTotal > 1 && cfg.Target != "" {
		errs = append(errs, fmt.Sprintf("-p (%d processes) is for the bundled simulator only: against --target the processes would spend the same keys' rate windows at once, and the rate-limit specs need one fresh; run without -p", sc.ParallelTotal))
	}
	return errs
}

// refuse ends a run that did not start: one line on the log, and the test
// failed. The report directory is left as it was: the last good report
// stays, as a refusal judged nothing.
func refuse(t TB, r *run, err error) error {
	reason := r.Redactor().String(strings.Join(strings.Fields(err.Error()), " "))
	fmt.Fprintf(r.logWriter(), "the run was refused: %s\n", reason)
	r.logWriter().Flush()
	t.Fail()
	return &RefusedError{Reason: reason}
}

// interrupted ends a run that a signal stopped before its specs began:
// one line on the log, the reports (errored, saying so), and the test
// failed.
func interrupted(t TB, r *run, cause error) error {
	reason := fmt.Sprintf("interrupted (%v) during the preflight, before any spec ran", cause)
	endUnstarted(t, r, reason)
	return &IncompleteError{Reason: "the run was " + reason}
}

// endUnstarted writes the reports of a run no spec ran in, and says why
// on the log: "the run was " + why.
func endUnstarted(t TB, r *run, why string) {
	where := ""
	if cat, cerr := catalogue.Load(); cerr == nil {
		m := report.Meta{Target: r.Target().URL, SuiteVersion: SuiteVersion, Started: r.started, Finished: time.Now(),
			Config: r.cfg.Describe(), Errored: "the run was " + why}
		if werr := report.FromSpecs(nil, cat, m).WriteFiles(r.cfg.ReportDir, r.Redactor().String); werr == nil {
			where = " (report: " + filepath.Join(r.cfg.ReportDir, report.HTMLFile) + ")"
		}
	}
	fmt.Fprintf(r.logWriter(), "the run was %s%s\n", why, where)
	r.logWriter().Flush()
	t.Fail()
}

// afterDeadline is how long after the run's deadline Ginkgo's own timeout
// strikes: time for the specs stopped at the deadline to return and for
// the reports to be written.
const afterDeadline = 5 * time.Second

// memoryLimit is the heap Run asks the garbage collector to stay under, well
// below the 512 MiB the suite promises to stay within whatever a target sends.
const memoryLimit = 320 << 20

// runDeadline is the run's time: the Config's, and less than what is left
// of the go test timeout (shortened), so that the reports are written
// before it kills the binary.
func runDeadline(t TB, d, grace time.Duration) (_ time.Duration, shortened bool) {
	if d <= 0 {
		d = DefaultRunDeadline
	}
	if end, ok := t.Deadline(); ok {
		if left := max(time.Until(end)-grace-15*time.Second, time.Second); left < d {
			return left, true
		}
	}
	return d, false
}

// run is what Run keeps beyond the specs' Session: the bundled simulator
// (on process 1), the setup's error and requests, and when it started.
type run struct {
	*Session
	started       time.Time
	deadline      time.Duration // how long the run may take
	shortened     bool          // the deadline is go test's timeout's, not the Config's
	filter        string        // the label filter in force
	lead          bool          // this process set the run up: process 1
	prepared      bool          // prepare ran
	sim           *bundled.Server
	setupErr      error // the preflight's or the bundled simulator's, on process 1
	setupRequests int
	final         *types.Report  // Ginkgo's, on process 1 once the specs ran
	outcome       report.Outcome // the report's, on process 1
	incomplete    string         // why the run is incomplete
}

// fail is Gomega's fail handler: every message through the redactor.
func (r *run) fail(message string, callerSkip ...int) {
	ginkgo.GinkgoHelper()
	ginkgo.Fail(r.Redactor().String(message), callerSkip...)
}

// setUp runs on process 1 before any spec: the target and the preflight
// (prepare), unless Run made them already. It hands the target to the
// other processes.
func (r *run) setUp(ctx ginkgo.SpecContext) []byte {
	r.lead = true
	if !r.prepared {
		r.prepare(ctx)
	}
	if r.setupErr != nil {
		r.failf("the run is incomplete (the target was not judged): %v", r.setupErr)
	}
	data, err := json.Marshal(r.Target())
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	return data
}

// prepare makes the target (the bundled simulator, started and
// provisioned, or the Config's) and runs the preflight; what went wrong is
// setupErr.
func (r *run) prepare(ctx context.Context) {
	r.prepared = true
	tg := r.cfg.target()
	if tg.URL == "" {
		var err error
		if r.sim, err = bundled.Start(); err != nil {
			r.setupErr = fmt.Errorf("the bundled simulator did not start: %w", err)
			return
		}
		keys, err := bundled.Provision(ctx, nil, r.sim.URL)
		if err != nil {
			r.setupErr = fmt.Errorf("the bundled simulator's accounts could not be provisioned: %w", err)
			return
		}
		tg = Target{URL: r.sim.URL, Pro: keys.Pro, Free: keys.Free, Revoked: keys.Revoked,
			Burst: keys.Burst, Other: keys.Other, ControlClock: true, Secrets: keys.Secrets}
	}
	r.Use(tg)
	r.setupErr = r.Preflight(ctx)
	r.setupRequests, _ = r.Client().Take()
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
		err := r.sim.Close()
		r.sim = nil
		gomega.Expect(err).To(gomega.Succeed())
	}
}

// report writes the reports on process 1 after every process finished,
// even when specs failed or the setup did, and prints the summary; or,
// when the run would pass having judged nothing (judgedNothing), leaves
// the report directory alone and returns a *RefusedError (Ginkgo's own
// files are written either way).
func (r *run) report(t TB, rep types.Report, ginkgoFiles ginkgoReports, filter string) error {
	cat, err := catalogue.Load()
	if err != nil {
		fmt.Fprintf(r.logWriter(), "the report could not be made: %v\n", err)
		t.Fail()
		return nil
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
	m.RequireAll = r.cfg.RequireAll
	out := report.FromGinkgo(rep, cat, m)
	// Ginkgo's files say what Ginkgo ran, refused or not (tools read them).
	if err := ginkgoFiles.write(rep, r.Redactor().String); err != nil {
		fmt.Fprintf(r.logWriter(), "%s\n", r.Redactor().String(err.Error()))
		t.Fail()
	}
	if why := judgedNothing(out, filter); why != "" {
		reason := r.Redactor().String(why)
		fmt.Fprintf(r.logWriter(), "the run was refused: %s\n", reason)
		r.logWriter().Flush()
		t.Fail()
		return &RefusedError{Reason: reason}
	}
	r.outcome = out.Outcome
	if len(out.Errors) > 0 {
		r.incomplete = r.Redactor().String(firstLine(out.Errors[0]))
	}
	if err := out.WriteFiles(r.cfg.ReportDir, r.Redactor().String); err != nil {
		fmt.Fprintf(r.logWriter(), "%s\n", r.Redactor().String(err.Error()))
		t.Fail()
	}
	r.summary(out)
	return nil
}

// judgedNothing says why a run that would pass judged nothing of the
// target: its filter selected no spec, or no spec that judges a must
// requirement; "" when the run judged something (or did not pass: a
// failure is a verdict, an incomplete run says so itself). A pass must
// mean the target was judged.
func judgedNothing(out report.Report, filter string) string {
	if out.Outcome != report.Passed {
		return ""
	}
	musts := 0
	for _, q := range out.Requirements {
		if q.Kind == catalogue.Must {
			musts++
		}
	}
	switch {
	case out.Planned.Selected == 0:
		return fmt.Sprintf("%s selects none of the suite's %d specs, so nothing of the target was judged (see --list, and the labels in --help)", filter, out.Planned.InSuite)
	case musts > 0 && len(out.Unverified) == musts:
		return fmt.Sprintf("%s selects %d specs and none of them judged any of the %d must requirements, so a pass would say nothing of the target (see --list; widen the filter)", filter, out.Planned.Selected, musts)
	}
	return ""
}

// filterOf names the filter a run was given: its label filter, focus and
// skip as the user wrote them ("no filter" when none).
func filterOf(sc types.SuiteConfig) string {
	var parts []string
	if sc.LabelFilter != "" {
		parts = append(parts, fmt.Sprintf("--label-filter %q", sc.LabelFilter))
	}
	for _, f := range sc.FocusStrings {
		parts = append(parts, fmt.Sprintf("--focus %q", f))
	}
	for _, f := range sc.SkipStrings {
		parts = append(parts, fmt.Sprintf("--skip %q", f))
	}
	if len(parts) == 0 {
		return "no filter"
	}
	return strings.Join(parts, " ")
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
	// What the outcome does not vouch for, first.
	if head := rep.UnverifiedHead(); head != "" {
		fmt.Fprintf(&b, "  %s\n", head)
		for _, g := range rep.UnverifiedGroups() {
			fmt.Fprintf(&b, "    %s: %s\n", strings.Join(g.IDs, ", "), g.Line)
		}
	}
	if line := rep.LedgerLine(); line != "" {
		fmt.Fprintf(&b, "  %s\n", line)
	}
	fmt.Fprintf(&b, "  %s\n", rep.SpecLine())
	fmt.Fprintf(&b, "  %-12s %6s %6s %6s %7s %6s %8s\n", "label", "specs", "passed", "failed", "blocked", "skipped", "requests")
	for _, f := range rep.Features {
		fmt.Fprintf(&b, "  %-12s %6d %6d %6d %7d %6d %8d\n", f.Feature, f.Specs, f.Passed, f.Failed, f.Blocked, f.Skipped, f.Requests)
	}
	t := rep.Totals
	fmt.Fprintf(&b, "  %-12s %6d %6d %6d %7d %6d %8d\n", "all", t.Specs, t.Passed, t.Failed, t.Blocked, t.Skipped, t.Requests)
	fmt.Fprintf(&b, "  requests: %d by the specs + %d by the setup (preflight) on process 1\n", t.Requests, r.setupRequests)
	if waited, moved, ok := r.Waited(); ok {
		fmt.Fprintf(&b, "  virtual time: %s waiting for rate windows (what the run waits in real time), %s moving the world\n", client.Seconds(waited), client.Seconds(moved))
	}
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
