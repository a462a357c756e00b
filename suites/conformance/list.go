package conformance

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/formatter"
	"github.com/onsi/ginkgo/v2/types"

	"github.com/tcmkit/tcmkit/schemas"
)

// List prints to w, without sending a request, the specs a Run with cfg and
// Ginkgo's settings (label filter, focus, skip) would run, each with the
// requirements it checks, then the run's request budget: what bounds the
// requests it sends and the time they take. It is Ginkgo's dry run of the
// same tree Run declares, so the list cannot drift from the run. Like Run,
// it may be called once in a process. Settings a run would refuse, it
// refuses (a *RefusedError, one line on the log) before it lists anything.
func List(t TB, cfg Config, w io.Writer) error {
	cfg = cfg.settled()
	suiteConfig, reporterConfig := ginkgo.GinkgoConfiguration()
	suiteConfig.LabelFilter = withoutStrict(suiteConfig.LabelFilter)
	if errs := settingErrors(&cfg, suiteConfig); len(errs) > 0 {
		// The settings a run would refuse, a list refuses too, before
		// any spec is declared: one line, no report.
		log := newSession(&cfg).logWriter()
		fmt.Fprintf(log, "the list was refused: %s\n", strings.Join(errs, "; "))
		log.Flush()
		t.Fail()
		return refused("%s", strings.Join(errs, "; "))
	}
	Register(&cfg)
	ginkgo.ReportAfterSuite("the list of specs", func(rep types.Report) { printList(w, rep, cfg) })
	suiteConfig.DryRun = true
	// Ginkgo's own account of a dry run (a dot a spec) says nothing here.
	saved := formatter.ColorableStdOut
	formatter.ColorableStdOut = io.Discard
	defer func() { formatter.ColorableStdOut = saved }()
	ginkgo.RunSpecs(t, "Tracked-Channel Monitoring API conformance (list)", suiteConfig, reporterConfig)
	return nil
}

// printList writes the specs of a dry run that would run, grouped by
// their container, and the budget.
func printList(w io.Writer, rep types.Report, cfg Config) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	group, run, left := "", 0, 0
	ids := map[string]bool{}
	for _, sr := range rep.SpecReports {
		if sr.LeafNodeType != types.NodeTypeIt {
			continue
		}
		if sr.State != types.SpecStatePassed { // a dry run passes the specs it would run
			left++
			continue
		}
		run++
		if g := strings.Join(sr.ContainerHierarchyTexts[1:], " "); g != group {
			group = g
			fmt.Fprintf(tw, "\n%s\n", g)
		}
		var reqs []string
		for _, l := range sr.Labels() {
			if l == strings.ToUpper(l) && l != strings.ToLower(l) { // a requirement's id (Register)
				reqs = append(reqs, l)
				ids[l] = true
			}
		}
		fmt.Fprintf(tw, "  %s\t%s\n", sr.LeafNodeText, strings.Join(reqs, " "))
	}
	tw.Flush()
	target := cfg.Target
	if target == "" {
		target = "the bundled simulator (manual clock: no real wait)"
	}
	fmt.Fprintf(w, "\n%d specs would run against %s, checking %d requirements; %d of the suite's %d are left out by the label filter, focus or skip (strict runs only when --label-filter names it).\n",
		run, target, len(ids), left, run+left)
	fmt.Fprintf(w, "A spec that needs a key you did not give (--free-key, --revoked-key) skips itself and says which flag enables it;\n"+
		"  the summary and the reports name first every must requirement no spec verified (--require-all fails the run for them).\n")
	fmt.Fprintf(w, "Request budget: at most %d requests a minute per key, as the contract allows (a 429 is waited out, at most --max-wait %s each);\n"+
		"  a cursor walk reads at most --max-pages %d pages of %d; a request takes at most --request-timeout %s and its body at most --max-body %s.\n",
		schemas.FeedRequestsPerMinute, cfg.MaxWait, cfg.MaxPages, schemas.MaxPageSize, cfg.RequestTimeout, &cfg.MaxBody)
	fmt.Fprintf(w, "Estimate of a whole run: %s.\n%s\n", estimateOf(cfg.Profile, cfg.virtualTarget()), deadlineSays(cfg))
}

// deadlineSays is the run deadline beside the profile's estimate: the
// default, 1.5 times the estimate, or the one given and whether it leaves
// the run time to finish.
func deadlineSays(cfg Config) string {
	e := estimateOf(cfg.Profile, cfg.virtualTarget())
	switch d := cfg.RunDeadline; {
	case d == e.deadline():
		return fmt.Sprintf("Deadline: the run ends by --run-deadline %s (the default of --profile %s: 1.5 times the estimate, at least %s), its reports written; cut short, it is incomplete (exit %d).",
			d, e.profile, DefaultRunDeadline, ExitIncomplete)
	case !e.virtual && d < e.high:
		return fmt.Sprintf("Deadline: --run-deadline %s is shorter than the estimate (%s): the run may end incomplete (exit %d); the default of --profile %s is %s.",
			d, e.span(), ExitIncomplete, e.profile, e.deadline())
	default:
		return fmt.Sprintf("Deadline: the run ends by --run-deadline %s, its reports written; cut short, it is incomplete (exit %d).", d, ExitIncomplete)
	}
}
