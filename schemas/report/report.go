// Package report turns a Ginkgo run of the conformance suite into a
// conformance report: what was tested (target, date, suite version,
// configuration), the outcome, the result of every requirement of the
// catalogue, and for every failure the message, the location and the HTTP
// transcript, so that a failure is understood without running again.
//
// The report is written in three forms from one value: versioned JSON for
// machines, Markdown for merge requests, and one self-contained HTML file
// for people. WriteFiles writes all three even when the run failed or did
// not finish, and redacts every string on its way out.
package report

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/tcmkit/tcmkit/schemas/catalogue"
)

// SchemaVersion is the version of the JSON form. It changes when a field
// changes meaning or goes away; new fields do not change it. Version 2: a
// server's run that did not finish is "incomplete" (it was "errored").
const SchemaVersion = 2

// The names of the Ginkgo report entries the suite records per spec.
const (
	EntryRequests   = "requests"   // int: HTTP requests the spec sent
	EntryTranscript = "transcript" // string: request/response excerpts, redacted
	// EntryProblems is a JSON array of Problem: what the failed assertion
	// found, each blaming one requirement. The requirement verdicts come
	// from these, not from the spec's labels.
	EntryProblems = "problems"
	// EntryEvidence is a JSON array of Exchange: the requests a failure
	// rests on, also those a shared walk fetched for another spec.
	EntryEvidence = "evidence"
	// EntryRerun is the command line that runs the spec again, alone.
	EntryRerun = "rerun"
	// EntryBlocked says why a spec could not judge (a precondition failed:
	// a walk that could not finish, a key refused); it is then skipped in
	// Ginkgo's terms and blocked in the report's, never failed.
	EntryBlocked = "blocked"
	// EntryNeeds names the setting that would let a skipped spec verify
	// its requirements: a key (--free-key), a profile (--profile
	// thorough), --control-clock.
	EntryNeeds = "needs"
	// EntryBounded says which bound the user set (a --max-wait shorter
	// than the suite's) stopped a spec before its verdict: the spec is
	// skipped, and the run incomplete, neither passed nor failed (the
	// target was not judged, and not for its own sake).
	EntryBounded = "bounded"
)

// MaxTranscript bounds the transcript kept per spec, in bytes. The end is
// kept: the request that failed is usually the last one.
const MaxTranscript = 16 << 10

// KindClient marks a report on clients: the simulator's verdicts on the
// clients that talked to it (cmd/simulator --client-report), judged on the
// client requirements of the catalogue. A report without a kind is the
// conformance suite's, on a server.
const KindClient = "client"

// Meta is what the suite knows about the run that Ginkgo does not.
type Meta struct {
	Kind         string // "" (a server's report) or KindClient
	Target       string
	SuiteVersion string
	Started      time.Time
	Finished     time.Time
	Config       map[string]string // already redacted
	Errored      string            // why the run did not finish (a preflight or setup error, its deadline); "" if none
	// RequireAll fails a server's run that left a must requirement
	// unverified (--require-all).
	RequireAll bool
}

// Outcome is the verdict of a whole run.
type Outcome string

const (
	// Passed: the run finished, no spec failed (and with RequireAll every
	// must requirement was verified).
	Passed Outcome = "passed"
	// Failed: the run finished and a spec found that the target does not
	// conform, or RequireAll and a must requirement was not verified.
	Failed Outcome = "failed"
	// Incomplete: a server's run did not finish: the suite could not run
	// (unreachable target, rejected key, bad configuration, a failed setup
	// node), or its deadline, an interrupt or an abort stopped it. The
	// target was not fully judged: never passed, and the failures found
	// before the end are named (a spec that got no answer in time fails,
	// and that is no verdict on a run cut short).
	Incomplete Outcome = "incomplete"
	// Errored: the same for a client report (KindClient): the verdicts
	// on the clients are not whole.
	Errored Outcome = "errored"
)

// Result is the verdict on one requirement, or the state of one spec.
type Result string

const (
	ResultPassed        Result = "passed"
	ResultFailed        Result = "failed"
	ResultSkipped       Result = "skipped"
	ResultBlocked       Result = "blocked"        // a precondition failed: not judged, and why
	ResultErrored       Result = "errored"        // a spec the run's abort or interrupt stopped: not judged
	ResultNotCovered    Result = "not covered"    // a must requirement no spec names
	ResultNotApplicable Result = "not applicable" // an open requirement nothing judged
)

// Report is one run of the suite, in the form all three outputs share.
type Report struct {
	SchemaVersion   int               `json:"schemaVersion"`
	Kind            string            `json:"kind,omitempty"` // "" (a server's report) or KindClient
	Target          string            `json:"target"`
	SuiteVersion    string            `json:"suiteVersion"`
	Started         time.Time         `json:"started"`
	Finished        time.Time         `json:"finished"`
	DurationSeconds float64           `json:"durationSeconds"`
	Config          map[string]string `json:"config"`
	Outcome         Outcome           `json:"outcome"`
	Errors          []string          `json:"errors,omitempty"` // why the run did not finish
	// RequireAll: the run fails when a must requirement is unverified.
	RequireAll bool `json:"requireAll,omitempty"`
	// Unverified are the must requirements no spec verified (a server's
	// report): what the outcome does not vouch for, first in every form.
	Unverified       []Unverified    `json:"unverified,omitempty"`
	CatalogueVersion int             `json:"catalogueVersion"`
	Totals           Counts          `json:"totals"`
	Planned          Planned         `json:"planned"`
	Features         []FeatureCounts `json:"features"`
	Requirements     []Requirement   `json:"requirements"`
	Specs            []Spec          `json:"specs"`
	// UnknownRequirements lists ids that specs name but the catalogue lacks.
	UnknownRequirements []string `json:"unknownRequirements,omitempty"`
}

// Counts counts specs by state, and the HTTP requests they sent.
type Counts struct {
	Specs    int `json:"specs"`
	Passed   int `json:"passed"`
	Failed   int `json:"failed"`
	Skipped  int `json:"skipped"`
	Blocked  int `json:"blocked"`
	Errored  int `json:"errored"`
	Requests int `json:"requests"`
}

// Planned is what Ginkgo meant to run before it started: a run that errored
// in its setup reports no specs, only these numbers.
type Planned struct {
	InSuite  int `json:"inSuite"`  // specs the suite declares
	Selected int `json:"selected"` // specs the filters let through
}

// FeatureCounts are the counts of the specs carrying one feature label.
type FeatureCounts struct {
	Feature string `json:"feature"`
	Counts
}

// Requirement is one catalogue entry with its verdict.
type Requirement struct {
	ID              string         `json:"id"`
	Kind            catalogue.Kind `json:"kind"`
	Feature         string         `json:"feature"`
	Section         string         `json:"section"`
	Text            string         `json:"text"`
	SimulatorChoice string         `json:"simulatorChoice,omitempty"`
	Result          Result         `json:"result"`
	Reason          string         `json:"reason,omitempty"` // why skipped, not covered, not applicable
	Specs           []string       `json:"specs,omitempty"`  // names of the specs that check it
	// Needs are the settings that would let its specs verify it, when
	// none did (--free-key, --profile thorough).
	Needs []string `json:"needs,omitempty"`
}

// Unverified is a must requirement no spec verified: no spec of it passed
// or failed.
type Unverified struct {
	ID string `json:"id"`
	// Why is one of: blocked (a precondition failed), skipped (a key or
	// setting not given), untried (the profile's budget left it out), not
	// selected (label filter, focus or skip), not run (the run ended
	// before its specs), not covered (no spec of the suite checks it).
	Why string `json:"why"`
	// Reason says it in a line, from the spec nearest to verifying it.
	Reason string `json:"reason"`
	// Needs are the settings that would verify it, if any.
	Needs []string `json:"needs,omitempty"`
}

// Line is the requirement's line in a summary: why, the reason, and the
// settings that would verify it that the reason does not name.
func (u Unverified) Line() string {
	line := u.Why
	if u.Reason != "" {
		line += ": " + u.Reason
	}
	var more []string
	for _, n := range u.Needs {
		if !strings.Contains(u.Reason, n) {
			more = append(more, n)
		}
	}
	if len(more) > 0 {
		line += " (to verify it: " + strings.Join(more, ", ") + ")"
	}
	return line
}

// Spec is one spec of the run, or a suite-level node (BeforeSuite...) that
// failed.
type Spec struct {
	Name            string   `json:"name"`
	Node            string   `json:"node,omitempty"` // set for suite-level nodes, e.g. "BeforeSuite"
	State           Result   `json:"state"`
	GinkgoState     string   `json:"ginkgoState"` // Ginkgo's own word: passed, failed, panicked, timedout...
	Features        []string `json:"features,omitempty"`
	Requirements    []string `json:"requirements,omitempty"`
	OtherLabels     []string `json:"otherLabels,omitempty"`
	DurationSeconds float64  `json:"durationSeconds"`
	Requests        int      `json:"requests"`
	SkipReason      string   `json:"skipReason,omitempty"`
	// Needs is the setting that would let a skipped spec run.
	Needs   string   `json:"needs,omitempty"`
	Failure *Failure `json:"failure,omitempty"`
}

// Failure is why a spec failed.
type Failure struct {
	Message    string `json:"message"`
	Location   string `json:"location"`
	Transcript string `json:"transcript,omitempty"`
	// Problems are the failed assertion's findings, each with the one
	// requirement it breaks.
	Problems []Problem `json:"problems,omitempty"`
	// Evidence are the exchanges the problems rest on.
	Evidence []Exchange `json:"evidence,omitempty"`
	// Rerun runs this spec alone again.
	Rerun string `json:"rerun,omitempty"`
}

// Problem is one thing a failed assertion found: the one requirement whose
// rule it states, the request, where in the answer, what the rule wants
// and what came.
type Problem struct {
	Requirement string `json:"requirement"`
	Request     string `json:"request,omitempty"`
	Pointer     string `json:"pointer,omitempty"`
	Expected    string `json:"expected,omitempty"`
	Actual      string `json:"actual,omitempty"`
}

// Exchange is one request a failure rests on, to read and to send again.
type Exchange struct {
	Request    string `json:"request"`
	Curl       string `json:"curl,omitempty"`       // paste-ready; keys as $TCM_PRO_KEY…
	Transcript string `json:"transcript,omitempty"` // request line, headers (keys redacted), status, response headers, the body cut
}

// Blamed is the requirements the failure's problems blame, in order, once each.
func (f *Failure) Blamed() []string {
	var out []string
	for _, p := range f.Problems {
		if p.Requirement != "" && !slices.Contains(out, p.Requirement) {
			out = append(out, p.Requirement)
		}
	}
	return out
}

// FromGinkgo builds the report of a run from Ginkgo's report (as given to
// ReportAfterSuite), the catalogue and what the suite knows about the run.
func FromGinkgo(r types.Report, cat catalogue.Catalogue, m Meta) Report {
	if m.Started.IsZero() {
		m.Started = r.StartTime
	}
	if m.Finished.IsZero() {
		m.Finished = r.EndTime
	}
	out := newReport(cat, m)
	out.Planned = Planned{InSuite: r.PreRunStats.TotalSpecs, Selected: r.PreRunStats.SpecsThatWillRun}
	for _, reason := range r.SpecialSuiteFailureReasons {
		out.Errors = append(out.Errors, "Ginkgo: "+reason)
	}

	// Suite-level nodes first: a failed BeforeSuite means the suite could
	// not run, which the reader must see before the specs it left unrun.
	for _, sr := range r.SpecReports {
		if sr.LeafNodeType.Is(types.NodeTypeIt) || !sr.State.Is(types.SpecStateFailureStates) {
			continue
		}
		s := spec(sr)
		s.State = ResultErrored // a setup node's failure is the suite's, not the target's
		s.Node = sr.LeafNodeType.String()
		if s.Name == "" {
			s.Name = "[" + s.Node + "]"
		}
		out.Specs = append(out.Specs, s)
		if m.Errored == "" || !strings.Contains(sr.Failure.Message, m.Errored) { // said once is enough
			out.Errors = append(out.Errors, fmt.Sprintf("%s failed: %s", s.Node, firstLine(sr.Failure.Message)))
		}
	}
	// An abort or interrupt stops the run: what follows was not judged.
	for _, sr := range r.SpecReports {
		if sr.LeafNodeType.Is(types.NodeTypeIt) && (sr.State.Is(types.SpecStateAborted|types.SpecStateInterrupted) || stoppedBySuiteTimeout(sr)) {
			out.Errors = append(out.Errors, fmt.Sprintf("%s: %s %s", sr.FullText(), sr.State, firstLine(sr.Failure.Message)))
		}
	}
	// A bound the user set that stopped a spec: the run is not the
	// target's verdict. Said once, with the first spec it stopped.
	if n, first := boundedSpecs(r.SpecReports); n > 0 {
		out.Errors = append(out.Errors, fmt.Sprintf("a bound you set stopped %d %s before its verdict (%s)", n, plural(n, "spec", "specs"), first))
	}
	erroredRun := len(out.Errors) > 0

	// Specs proper, in the order they ran (Ginkgo's report order).
	var specs []Spec
	for _, sr := range r.SpecReports {
		if !sr.LeafNodeType.Is(types.NodeTypeIt) {
			continue
		}
		s := spec(sr)
		if s.State == ResultSkipped && s.SkipReason == "" {
			s.SkipReason = notSelected
			if erroredRun {
				s.SkipReason = notRun
			}
		}
		specs = append(specs, s)
	}
	out.assemble(specs, cat, erroredRun)
	return out
}

// The reasons of specs Ginkgo skipped without a word.
const (
	notSelected = "not selected (label filter, focus or skip)"
	notRun      = "not run: the run ended before this spec"
)

// FromSpecs builds a report from specs that Ginkgo did not run, such as
// the simulator's checks of its clients (Meta.Kind KindClient: one spec
// per key and client requirement). The run errored if m.Errored says so.
func FromSpecs(specs []Spec, cat catalogue.Catalogue, m Meta) Report {
	out := newReport(cat, m)
	out.assemble(specs, cat, len(out.Errors) > 0)
	return out
}

// newReport is a report's head: what was tested, when, how.
func newReport(cat catalogue.Catalogue, m Meta) Report {
	started, finished := m.Started, m.Finished
	if finished.IsZero() || finished.Before(started) {
		finished = started
	}
	out := Report{
		SchemaVersion:    SchemaVersion,
		Kind:             m.Kind,
		Target:           m.Target,
		SuiteVersion:     m.SuiteVersion,
		Started:          started.UTC(),
		Finished:         finished.UTC(),
		DurationSeconds:  seconds(finished.Sub(started)),
		Config:           map[string]string{},
		RequireAll:       m.RequireAll,
		CatalogueVersion: cat.Version,
		// Empty lists, not null: readers of the JSON need not check.
		Features:     []FeatureCounts{},
		Requirements: []Requirement{},
		Specs:        []Spec{},
	}
	for k, v := range m.Config {
		out.Config[k] = v
	}
	if m.Errored != "" {
		out.Errors = append(out.Errors, m.Errored)
	}
	return out
}

// assemble adds the specs, counts them, judges every requirement of the
// report's kind from the specs that name it, and gives the outcome.
func (out *Report) assemble(specs []Spec, cat catalogue.Catalogue, erroredRun bool) {
	features := map[string]*Counts{}
	unknown := map[string]bool{}
	specsOf := map[string][]Spec{}
	for _, s := range specs {
		if f := s.Failure; f != nil && len(f.Problems) == 0 && len(s.Requirements) > 0 && s.State == ResultFailed {
			// A failure that says nothing structured (a panic, a client's
			// verdict, a report from elsewhere) blames one requirement:
			// the spec's first.
			fl := *f
			fl.Problems = []Problem{{Requirement: s.Requirements[0], Actual: firstLine(f.Message)}}
			s.Failure = &fl
		}
		out.Specs = append(out.Specs, s)
		out.Totals.add(s)
		for _, f := range s.Features {
			if features[f] == nil {
				features[f] = &Counts{}
			}
			features[f].add(s)
		}
		ids := s.Requirements
		if s.Failure != nil {
			ids = append(slices.Clone(ids), s.Failure.Blamed()...)
		}
		for _, id := range slices.Compact(ids) {
			if _, ok := cat.Lookup(catalogue.ID(id)); !ok {
				unknown[id] = true
				continue
			}
			if !slices.ContainsFunc(specsOf[id], func(o Spec) bool { return o.Name == s.Name }) {
				specsOf[id] = append(specsOf[id], s)
			}
		}
	}
	for f, c := range features {
		out.Features = append(out.Features, FeatureCounts{Feature: f, Counts: *c})
	}
	slices.SortFunc(out.Features, func(a, b FeatureCounts) int { return strings.Compare(a.Feature, b.Feature) })
	for id := range unknown {
		out.UnknownRequirements = append(out.UnknownRequirements, id)
	}
	slices.Sort(out.UnknownRequirements)

	for _, req := range cat.List() {
		// A server's report leaves the client's rules out (the simulator
		// judges clients); a client's report holds only them.
		if (req.Feature == "client") != (out.Kind == KindClient) {
			continue
		}
		q, u := judge(req, specsOf[string(req.ID)], erroredRun)
		out.Requirements = append(out.Requirements, q)
		if u != nil && req.Kind == catalogue.Must {
			out.Unverified = append(out.Unverified, *u)
		}
	}

	switch {
	case erroredRun && out.Kind == KindClient:
		out.Outcome = Errored
	case erroredRun:
		out.Outcome = Incomplete
	case out.Totals.Failed > 0:
		out.Outcome = Failed
	case out.RequireAll && len(out.Unverified) > 0:
		out.Outcome = Failed
	default:
		out.Outcome = Passed
	}
}

// judge gives the verdict on one requirement from the specs that name it
// or blame it. A spec fails it only when one of its problems blames it: a
// spec that failed on another requirement first did not judge this one.
// One such failure fails it; else it passes when a spec that judged it
// passed, and is blocked when the specs that would judge it were blocked.
// A requirement that no spec passed or failed is unverified: why, said
// from the spec nearest to verifying it (nil when it was verified).
func judge(req catalogue.Requirement, specs []Spec, erroredRun bool) (Requirement, *Unverified) {
	out := Requirement{
		ID: string(req.ID), Kind: req.Kind, Feature: req.Feature, Section: req.Section,
		Text: req.Text, SimulatorChoice: req.SimulatorChoice,
	}
	var passed, failed, errored, blocked int
	var reasons, blocks []string
	note := func(list *[]string, why string) {
		if !slices.Contains(*list, why) {
			*list = append(*list, why)
		}
	}
	var gap *Unverified // the nearest to verifying it so far
	consider := func(why, reason, needs string) {
		rank := slices.Index(unverifiedOrder, why)
		if gap == nil || rank < slices.Index(unverifiedOrder, gap.Why) {
			gap = &Unverified{ID: string(req.ID), Why: why, Reason: shortReason(reason, why), Needs: gap.needs()}
		}
		if needs != "" && !slices.Contains(gap.Needs, needs) {
			gap.Needs = append(gap.Needs, needs)
		}
	}
	for _, s := range specs {
		out.Specs = append(out.Specs, s.Name)
		switch s.State {
		case ResultPassed:
			passed++
		case ResultFailed:
			if slices.Contains(s.Failure.Blamed(), string(req.ID)) {
				failed++
			} else {
				why := "not judged: its spec failed first on " + strings.Join(s.Failure.Blamed(), ", ")
				note(&reasons, why)
				consider("blocked", why, "")
			}
		case ResultErrored:
			errored++
			consider("not run", "its spec was stopped by the run's end: "+firstLine(s.Failure.Message), "")
		case ResultBlocked:
			blocked++
			note(&blocks, s.SkipReason)
			consider("blocked", s.SkipReason, s.Needs)
		default:
			note(&reasons, s.SkipReason)
			consider(skipWhy(s), s.SkipReason, s.Needs)
		}
	}
	switch {
	case failed > 0:
		out.Result = ResultFailed
	case passed > 0:
		out.Result = ResultPassed
	case blocked > 0:
		out.Result = ResultBlocked
		out.Reason = strings.Join(blocks, "; ")
	case req.Kind == catalogue.Open:
		out.Result = ResultNotApplicable
		out.Reason = "left open by the spec: any choice conforms"
		if len(reasons) > 0 {
			out.Reason += " (strict check skipped: " + strings.Join(reasons, "; ") + ")"
		}
	case errored > 0:
		out.Result = ResultSkipped
		out.Reason = "not judged: the run errored during its spec"
	case len(specs) == 0 && erroredRun:
		// A failed BeforeSuite leaves every spec out of Ginkgo's report:
		// nothing tells a requirement without a spec from one not run.
		out.Result = ResultSkipped
		out.Reason = "not run: the run did not finish"
		consider("not run", out.Reason, "")
	case len(specs) == 0:
		out.Result = ResultNotCovered
		out.Reason = "no spec of this suite checks it"
		consider("not covered", out.Reason, "")
	default:
		out.Result = ResultSkipped
		out.Reason = strings.Join(reasons, "; ")
	}
	if out.Result == ResultPassed || out.Result == ResultFailed {
		return out, nil
	}
	if gap != nil {
		out.Needs = gap.Needs
	}
	return out, gap
}

// unverifiedOrder ranks why a requirement was not verified, the nearest
// to verifying it first: a precondition of the target, then a setting the
// user can give (a key, the profile), then what the run left out.
var unverifiedOrder = []string{"blocked", "skipped", "untried", "not run", "not selected", "not covered"}

func (u *Unverified) needs() []string {
	if u == nil {
		return nil
	}
	return u.Needs
}

// skipWhy is why a skipped spec did not verify its requirement.
func skipWhy(s Spec) string {
	switch {
	case s.SkipReason == notSelected:
		return "not selected"
	case s.SkipReason == notRun:
		return "not run"
	case strings.HasPrefix(s.Needs, "--profile"):
		return "untried"
	}
	return "skipped"
}

// shortReason is a skip or block reason in one line: its first line, up
// to its first "; " outside parentheses, at most 160 characters, without a
// leading word that repeats why.
func shortReason(reason, why string) string {
	reason = firstLine(reason)
	depth, cut := 0, len(reason)
	for i, c := range reason {
		switch c {
		case '(':
			depth++
		case ')':
			depth--
		case ';':
			if depth == 0 && strings.HasPrefix(reason[i:], "; ") {
				cut = i
			}
		}
		if cut < len(reason) {
			break
		}
	}
	reason = reason[:cut]
	reason = strings.TrimPrefix(strings.TrimPrefix(reason, why+": "), why+" ")
	if inner, ok := strings.CutPrefix(reason, "("); ok && strings.Index(inner, ")") == len(inner)-1 {
		reason = inner[:len(inner)-1] // "not selected (label filter…)": the words in parentheses
	}
	if utf8.RuneCountInString(reason) > 160 {
		reason = string([]rune(reason)[:159]) + "…"
	}
	return reason
}

func (c *Counts) add(s Spec) {
	c.Specs++
	c.Requests += s.Requests
	switch s.State {
	case ResultPassed:
		c.Passed++
	case ResultFailed:
		c.Failed++
	case ResultErrored:
		c.Errored++
	case ResultBlocked:
		c.Blocked++
	default:
		c.Skipped++
	}
}

// featurePattern is the shape of a feature label. Labels of other shapes,
// such as the "Serial" Ginkgo adds to serial specs, are not features.
var featurePattern = regexp.MustCompile(`^[a-z][a-z0-9]*(-[a-z0-9]+)*$`)

// spec converts one Ginkgo spec report.
func spec(sr types.SpecReport) Spec {
	s := Spec{
		Name:            sr.FullText(),
		GinkgoState:     sr.State.String(),
		DurationSeconds: seconds(sr.RunTime),
	}
	for _, l := range sr.Labels() {
		if catalogue.IsID(l) {
			if !slices.Contains(s.Requirements, l) {
				s.Requirements = append(s.Requirements, l)
			}
		} else if featurePattern.MatchString(l) {
			if !slices.Contains(s.Features, l) {
				s.Features = append(s.Features, l)
			}
		} else if !slices.Contains(s.OtherLabels, l) {
			s.OtherLabels = append(s.OtherLabels, l) // e.g. Ginkgo's own "Serial"
		}
	}
	var transcript []string
	var problems []Problem
	var evidence []Exchange
	var rerun, blocked, needs string
	for _, e := range sr.ReportEntries {
		switch e.Name {
		case EntryRequests:
			s.Requests += entryInt(e)
		case EntryTranscript:
			if t := entryString(e); t != "" {
				transcript = append(transcript, strings.TrimRight(t, "\n"))
			}
		case EntryProblems:
			problems = append(problems, entryList[Problem](e)...)
		case EntryEvidence:
			for _, x := range entryList[Exchange](e) {
				if !slices.ContainsFunc(evidence, func(y Exchange) bool { return y == x }) {
					evidence = append(evidence, x)
				}
			}
		case EntryRerun:
			rerun = entryString(e)
		case EntryBlocked:
			blocked = entryString(e)
		case EntryNeeds:
			needs = entryString(e)
		}
	}
	switch {
	case sr.State.Is(types.SpecStatePassed):
		s.State = ResultPassed
	case sr.State.Is(types.SpecStateFailureStates):
		s.State = ResultFailed
		if sr.State.Is(types.SpecStateAborted|types.SpecStateInterrupted) || stoppedBySuiteTimeout(sr) {
			s.State = ResultErrored
		}
		s.Failure = &Failure{
			Message:    strings.TrimSpace(sr.Failure.Message),
			Location:   location(sr.Failure.Location),
			Transcript: lastLines(strings.Join(transcript, "\n\n"), MaxTranscript),
		}
		if s.Failure.Message == "" {
			s.Failure.Message = sr.State.String()
		}
		s.Failure.Problems, s.Failure.Evidence, s.Failure.Rerun = problems, evidence, rerun

		if sr.Failure.ForwardedPanic != "" {
			s.Failure.Message += "\npanic: " + sr.Failure.ForwardedPanic
		}
		for _, af := range sr.AdditionalFailures {
			s.Failure.Message += "\n\nand then (" + af.State.String() + "): " + strings.TrimSpace(af.Failure.Message)
		}
	default: // skipped, pending
		s.State = ResultSkipped
		s.SkipReason = strings.TrimSpace(sr.Failure.Message)
		if sr.State.Is(types.SpecStatePending) {
			s.SkipReason = "pending"
		}
		if blocked != "" {
			s.State, s.SkipReason = ResultBlocked, blocked
		}
		s.Needs = needs
	}
	return s
}

// entryInt reads the "requests" entry. In a parallel run (and from a
// rehydrated JSON report) the raw value is a decoded JSON number, so
// several shapes are accepted.
func entryInt(e types.ReportEntry) int {
	switch v := e.GetRawValue().(type) {
	case int:
		return v
	case int64:
		return int(v)
	case int32:
		return int(v)
	case float64:
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			return int(v)
		}
	case json.Number:
		n, _ := v.Int64()
		return int(n)
	}
	for _, s := range []string{e.Value.AsJSON, e.Value.Representation} {
		if n, err := strconv.Atoi(strings.TrimSpace(s)); err == nil {
			return n
		}
	}
	return 0
}

// entryList reads an entry whose value is a JSON array (as a string, so
// that it survives a parallel run's and a JSON report's round trip alike).
func entryList[T any](e types.ReportEntry) []T {
	var out []T
	if json.Unmarshal([]byte(entryString(e)), &out) != nil {
		return nil
	}
	return out
}

func entryString(e types.ReportEntry) string {
	if s, ok := e.GetRawValue().(string); ok {
		return s
	}
	var s string
	if e.Value.AsJSON != "" && json.Unmarshal([]byte(e.Value.AsJSON), &s) == nil {
		return s
	}
	return e.Value.String()
}

// lastLines keeps the last max bytes of s, from a line boundary, saying how
// much it left out: the end of a transcript is where a failure is, so
// unlike jsondoc.Excerpt, which keeps the start, it keeps the end.
func lastLines(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := len(s) - max
	if i := strings.IndexByte(s[cut:], '\n'); i >= 0 {
		cut += i + 1
	}
	for cut < len(s) && !utf8.RuneStart(s[cut]) {
		cut++
	}
	return fmt.Sprintf("… (%d earlier bytes left out)\n", cut) + s[cut:]
}

// stoppedBySuiteTimeout reports a spec that the suite's own timeout (the
// run deadline) stopped: the run's limit, not the target's failure.
func stoppedBySuiteTimeout(sr types.SpecReport) bool {
	return sr.State.Is(types.SpecStateTimedout) && strings.Contains(strings.ToLower(sr.Failure.Message), "suite timeout")
}

func location(l types.CodeLocation) string {
	if l.FileName == "" {
		return ""
	}
	return fmt.Sprintf("%s:%d", l.FileName, l.LineNumber)
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

func seconds(d time.Duration) float64 { return math.Round(d.Seconds()*1000) / 1000 }

// boundedSpecs counts the specs a bound the user set stopped
// (EntryBounded), and says what stopped the first.
func boundedSpecs(srs types.SpecReports) (int, string) {
	n, first := 0, ""
	for _, sr := range srs {
		for _, e := range sr.ReportEntries {
			if e.Name == EntryBounded {
				if n++; first == "" {
					first = firstLine(entryString(e))
				}
				break
			}
		}
	}
	return n, first
}
