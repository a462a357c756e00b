package conformance

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/schemas/catalogue"
	"github.com/tcmkit/tcmkit/schemas/report"
	"github.com/tcmkit/tcmkit/suites/client"
	"github.com/tcmkit/tcmkit/suites/probe"
)

// Problem is what one failed assertion found: the one requirement whose
// rule it states, the request, the JSON pointer, what the rule wants and
// what came. A Problem without a Requirement blames the spec's own (its
// first requirement label: a spec, or a probe, that checks one requirement
// needs to say nothing).
type Problem = report.Problem

// maxEvidence bounds the exchanges one failure shows, and maxProblems the
// problems it records (its message counts the rest).
const (
	maxEvidence = 8
	maxProblems = 50
)

// Fail fails the current spec with a message and what it found. Each
// problem's requirement defaults to the spec's; the failure carries the
// exchanges its problems name (those of a walk another spec fetched too),
// each as a transcript and a curl line, and the command that runs the spec
// again. Everything is redacted before it is recorded.
func (s *Session) Fail(message string, problems ...Problem) {
	ginkgo.GinkgoHelper()
	s.record(message, problems, nil)
	ginkgo.Fail(s.Redactor().String(message))
}

// NoneOf fails the current spec when there are problems, each a line
// that names its request (GET /api/public-feed?…): they blame the spec's
// requirement, and the requests they name are the evidence.
func (s *Session) NoneOf(rule string, problems []string) {
	ginkgo.GinkgoHelper()
	if len(problems) == 0 {
		return
	}
	ps := make([]Problem, 0, min(len(problems), maxProblems))
	for _, p := range problems[:min(len(problems), maxProblems)] {
		ps = append(ps, Problem{Request: requestIn(p), Expected: rule, Actual: p})
	}
	s.Fail(fmt.Sprintf("%s\n%d problem(s):\n%s", rule, len(problems), listProblems(problems, "  ")), ps...)
}

// Block ends the current spec without a verdict: a precondition failed (a
// walk that could not finish, a key refused, a limiter that does not
// release). The report shows it blocked, with its cause; no requirement
// fails for it.
func (s *Session) Block(cause string) {
	ginkgo.GinkgoHelper()
	// a precondition that failed because the run ended is the run's
	s.stopIfEnded()
	// what the oracle found of the spec's own rules in what it saw is a
	// verdict, not a precondition: a skipped spec could not fail for it
	s.oracleOwn()
	if neededFlag.MatchString(cause) {
		// a precondition the user can meet (a key not given) skips the
		// spec, naming the flag, as a spec that asks for the key does
		skipMissing(cause)
	}
	if s.userWaitBound(cause) {
		s.stopByBound(cause)
	}
	cause = s.Redactor().String(cause)
	ginkgo.AddReportEntry(report.EntryBlocked, cause, ginkgo.ReportEntryVisibilityNever)
	ginkgo.Skip("blocked: " + cause)
}

// stopByBound ends the current spec without a verdict because a bound the
// user set stopped it (a --max-wait shorter than the suite's): the spec is
// skipped, and the run is incomplete, not failed (report.EntryBounded).
func (s *Session) stopByBound(cause string) {
	ginkgo.GinkgoHelper()
	s.stopIfEnded()
	s.oracleOwn()
	cause = s.Redactor().String(cause)
	ginkgo.AddReportEntry(report.EntryBounded, cause, ginkgo.ReportEntryVisibilityNever)
	ginkgo.Skip("stopped by a bound you set: " + cause)
}

// userWaitBound says whether the client gave up on a Retry-After (its
// note, in cause) that the suite's own --max-wait would have waited for:
// the user's shorter --max-wait stopped the spec, not the target.
func (s *Session) userWaitBound(cause string) bool {
	i := strings.Index(cause, "asks for ")
	if i < 0 || !strings.Contains(cause, "(--max-wait=") {
		return false
	}
	d, err := time.ParseDuration(strings.TrimRight(strings.Fields(cause[i+len("asks for "):] + " ")[0], ",;)"))
	return err == nil && s.shortWait(d)
}

// shortWait says whether a wait of d is past the user's --max-wait and
// within the suite's default one.
func (s *Session) shortWait(d time.Duration) bool {
	def := NewConfig().MaxWait
	return s.cfg.MaxWait < def && d > s.cfg.MaxWait && d <= def
}

// record adds the problems, their evidence and the rerun line to the
// current spec's report (only inside a spec: a setup node's failure is the
// run's, not a requirement's).
func (s *Session) record(message string, problems []Problem, resps []*client.Response) {
	// a failure met once the run ended (a request cut at the deadline) is
	// the run's, not the target's
	s.stopIfEnded()
	sr := ginkgo.CurrentSpecReport()
	if !sr.LeafNodeType.Is(types.NodeTypeIt) {
		return
	}
	own := specRequirement(sr)
	if len(problems) == 0 {
		problems = []Problem{{Actual: firstLine(message)}}
	}
	if len(problems) > maxProblems {
		problems = problems[:maxProblems]
	}
	for i := range problems {
		if problems[i].Requirement == "" {
			problems[i].Requirement = own
		}
	}
	red := s.Redactor().String
	ginkgo.AddReportEntry(report.EntryProblems, red(jsonText(problems)), ginkgo.ReportEntryVisibilityNever)
	if ev := s.evidence(message, problems, resps); len(ev) > 0 {
		ginkgo.AddReportEntry(report.EntryEvidence, red(jsonText(ev)), ginkgo.ReportEntryVisibilityNever)
	}
	// shown with the failure on the console too: what to run next
	ginkgo.AddReportEntry(report.EntryRerun, red(s.rerun(sr)), ginkgo.ReportEntryVisibilityFailureOrVerbose)
}

// statusCause is the requirement an unexpected status breaks whatever the
// spec asked: a valid key refused (401) is AUTH-VALID's, the Pro key
// refused for its plan (403) PRO-GATE's, a 429 without a Retry-After the
// suite can read RATE-RETRY-AFTER's ("" for the spec's own). Another 429
// the client gave up on (past --max-wait, or still 429 after its retries),
// or a 503 with Retry-After, blocks the spec instead: the limiter's own
// specs judge it.
func (s *Session) statusCause(resp *client.Response) (catalogue.ID, string) {
	auth := resp.Request.Auth
	tg := s.Target()
	token, bearer := strings.CutPrefix(auth, "Bearer ")
	valid := bearer && token != "" && slices.Contains([]string{tg.Pro, tg.Free, tg.Burst, tg.Other}, token)
	switch {
	case resp.Status == 401 && valid && token == tg.Free && token != tg.Pro && resp.Request.Path == schemas.PathVideos && s.freeServedOnFeed():
		// a valid key of no Pro plan, refused on tracked videos with the
		// wrong status: the plan rule says 403 for it
		return catalogue.ProGate, ""
	case resp.Status == 401 && valid:
		return catalogue.AuthValid, ""
	case resp.Status == 403 && valid && (token == tg.Pro || resp.Request.Path == schemas.PathFeed):
		// the Pro key refused for its plan, or the gate on the feed
		return catalogue.ProGate, ""
	case resp.Status == 429 && strings.Contains(resp.Note, "rule: a 429 carries Retry-After"):
		return catalogue.RateRetryAfter, ""
	case resp.Status == 429 && resp.Note != "":
		// waited for as long as allowed, or asked for longer: the target
		// kept throttling (the rate-limit specs judge the limiter)
		return "", fmt.Sprintf("%s answered 429 and the suite stopped waiting: %s", resp.Request, resp.Note)
	case resp.Status == 503 && resp.Header.Get("Retry-After") != "" && !slices.Contains(ginkgo.CurrentSpecReport().Labels(), string(catalogue.RateLimit429)):
		// unavailable for now, or a throttle that is no 429: RATE-LIMIT-429's
		// specs judge which, no answer to judge by any other rule
		return "", fmt.Sprintf("%s answered 503 with Retry-After %q: the target asks to come back later", resp.Request, resp.Header.Get("Retry-After"))
	}
	return "", ""
}

// freeServedOnFeed reports whether the target serves the free key its
// feed now: the free key refused with 401 on tracked videos alone is a
// valid key, refused there for its plan (PRO-GATE's rule), not a refused
// key (AUTH-VALID's). It asks once per session, and only when such a 401
// came.
func (s *Session) freeServedOnFeed() bool {
	s.feedOK.once.Do(func() {
		ctx, cancel := context.WithTimeout(s.runCtx, s.cfg.RequestTimeout+s.cfg.MaxWait)
		defer cancel()
		resp, err := s.c.Do(ctx, feedRequest(url.Values{"limit": {"1"}}, s.Target().Free))
		s.feedOK.ok = err == nil && resp.Status == 200
	})
	return s.feedOK.ok
}

// specRequirement is the requirement a spec checks first: the one its
// problems blame unless they say otherwise.
func specRequirement(sr types.SpecReport) string {
	for _, l := range sr.Labels() {
		if catalogue.IsID(l) {
			return l
		}
	}
	return ""
}

func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "[]"
	}
	return string(b)
}

// evidence picks the exchanges a failure rests on: those of what the spec
// judged (sent, reused, or a shared walk's pages) and the matcher's, whose
// request the problems or the message name; when none is named, the last
// ones the spec judged.
func (s *Session) evidence(message string, problems []Problem, resps []*client.Response) []report.Exchange {
	if s.c == nil {
		return nil
	}
	candidates := append(s.c.Seen(), resps...)
	text := message
	for _, p := range problems {
		text += "\n" + p.Request + " "
	}
	var picked []*client.Response
	seen := map[string]bool{}
	add := func(r *client.Response) {
		k := r.Request.String() + "\x00" + r.Request.Auth + "\x00" + string(r.Request.Body)
		if !seen[k] && len(picked) < maxEvidence {
			seen[k] = true
			picked = append(picked, r)
		}
	}
	for _, r := range resps {
		add(r)
	}
	for _, r := range candidates {
		if mentions(text, r.Request.String()) {
			add(r)
		}
	}
	if len(picked) == 0 {
		for _, r := range candidates[max(len(candidates)-3, 0):] {
			add(r)
		}
	}
	out := make([]report.Exchange, len(picked))
	for i, r := range picked {
		out[i] = report.Exchange{Request: r.Request.String(), Curl: s.c.Curl(r.AsWritten()), Transcript: s.c.Transcript(r)}
	}
	return out
}

// mentions reports whether text names the request: its name followed by
// no more of a query (GET /x?limit=2 is not GET /x?limit=20).
func mentions(text, name string) bool {
	for i := 0; ; {
		j := strings.Index(text[i:], name)
		if j < 0 {
			return false
		}
		end := i + j + len(name)
		if end == len(text) || !strings.ContainsRune("&=%?/_.~+-"+alnum, rune(text[end])) {
			return true
		}
		i = end
	}
}

const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

// rerun is the command that runs one spec again, alone, against the same
// target with the settings that matter. Pasted into a fresh shell (env -i
// bash) it works with only the key variables it names set: a guard names
// each key of the full run ($TCM_PRO_KEY, $TCM_FREE_KEY, $TCM_REVOKED_KEY;
// their names, never their values) and stops the line when one is unset.
// It repeats every setting that changes what the spec sends or how it is
// judged (the target, --control-clock, --profile, --explore-seed, the
// bounds), plans only the probes of the spec's requirement, and writes its
// reports beside the full run's (rerun-<the spec's hash> under its report
// directory), never over them.
func (s *Session) rerun(sr types.SpecReport) string {
	parts := []string{"tcmkit conform"}
	var guard []string
	if s.cfg.Target != "" { // else the rerun starts the bundled simulator, with its own keys
		parts = append(parts, "--target "+shellQuote(s.cfg.Target))
		tg := s.Target()
		for _, k := range []struct{ key, flag string }{{tg.Pro, "pro-key"}, {tg.Free, "free-key"}, {tg.Revoked, "revoked-key"}} {
			if k.key != "" {
				v := envName(k.flag)
				guard = append(guard, fmt.Sprintf(`"${%s:?set %s to the --%s of the full run}"`, v, v, k.flag))
			}
		}
	}
	d := NewConfig()
	if s.Target().ControlClock && s.cfg.Target != "" {
		parts = append(parts, "--control-clock")
	}
	if p, err := probe.ParseProfile(s.cfg.Profile); err == nil && p != probe.Quick {
		parts = append(parts, "--profile "+string(p))
	}
	if s.cfg.ExploreSeed != 0 {
		parts = append(parts, fmt.Sprintf("--explore-seed %d", s.cfg.ExploreSeed))
	}
	if s.cfg.MaxPages != d.MaxPages {
		parts = append(parts, fmt.Sprintf("--max-pages %d", s.cfg.MaxPages))
	}
	if s.cfg.MaxWait != d.MaxWait {
		parts = append(parts, "--max-wait "+s.cfg.MaxWait.String())
	}
	if s.cfg.MaxBody != d.MaxBody {
		parts = append(parts, "--max-body "+s.cfg.MaxBody.String())
	}
	if s.cfg.RequestTimeout != d.RequestTimeout {
		parts = append(parts, "--request-timeout "+s.cfg.RequestTimeout.String())
	}
	labels := sr.Labels()
	switch {
	case slices.Contains(labels, strict):
		parts = append(parts, "--label-filter "+strict)
	case slices.Contains(labels, probeLabel) && specRequirement(sr) != "":
		// the probes of its requirement alone are planned and sent
		parts = append(parts, "--label-filter "+shellQuote(probeLabel+" && "+specRequirement(sr)))
	}
	parts = append(parts, "--report-dir "+shellQuote(filepath.Join(s.cfg.ReportDir, rerunDir(sr.FullText()))))
	parts = append(parts, "--focus "+shellQuote(focusOn(sr.FullText())))
	line := strings.Join(parts, " ")
	if len(guard) > 0 {
		line = ": " + strings.Join(guard, " ") + " && " + line
	}
	return line
}

// focusOn is the --focus that selects the spec of that full text alone.
// Ginkgo matches a focus against the suite's description, a space and the
// spec's text: the spec's text is what ends it.
func focusOn(fullText string) string { return "(^| )" + regexp.QuoteMeta(fullText) + "$" }

// rerunDir is where a spec's rerun writes its reports, under the full
// run's report directory: named after the spec, so that reruns of two
// specs keep theirs apart too.
func rerunDir(spec string) string {
	sum := sha256.Sum256([]byte(spec))
	return "rerun-" + hex.EncodeToString(sum[:4])
}

// shellQuote quotes s for a POSIX shell: in single quotes, a single quote
// inside closed, escaped and opened again.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// pending hands a matcher's problems and responses to the fail handler
// that Gomega calls right after the matcher's FailureMessage: Gomega passes
// it only the message.
var pending struct {
	sync.Mutex
	problems []Problem
	resps    []*client.Response
}

// hand is called by a matcher's FailureMessage.
func hand(resp *client.Response, problems ...Problem) {
	pending.Lock()
	defer pending.Unlock()
	pending.problems = problems
	pending.resps = nil
	if resp != nil {
		pending.resps = []*client.Response{resp}
	}
}

// taken returns what the last failing matcher handed over, and forgets it.
func taken() ([]Problem, []*client.Response) {
	pending.Lock()
	defer pending.Unlock()
	ps, rs := pending.problems, pending.resps
	pending.problems, pending.resps = nil, nil
	return ps, rs
}

// keyVar spells an Authorization value for a shell: the target's keys as
// the environment variables the suite reads them from, keys derived from
// the Pro key as shell expressions of it, invented ones as random keys of
// the same shape; "" for any other (it is shown redacted).
func (t Target) keyVar(auth string) string {
	scheme, token, ok := strings.Cut(auth, " ")
	if !ok {
		return ""
	}
	const random = `$(LC_ALL=C tr -dc A-Za-z0-9 </dev/urandom | head -c %d)`
	var v string
	switch {
	case token == "":
		return scheme + " "
	case t.Pro != "" && token == t.Pro:
		v = "$TCM_PRO_KEY"
	case t.Free != "" && token == t.Free:
		v = "$TCM_FREE_KEY"
	case t.Revoked != "" && token == t.Revoked:
		v = "$TCM_REVOKED_KEY"
	case t.Pro == "":
		return ""
	case token == t.longerKey():
		v = "${TCM_PRO_KEY}A"
	case token == t.shorterKey():
		v = "${TCM_PRO_KEY%?}"
	case token == t.swappedKey():
		v = `${TCM_PRO_KEY%%_*}_$(printf %s "${TCM_PRO_KEY#*_}" | tr a-zA-Z A-Za-z)`
	case token == t.unknownKey():
		_, rest, _ := strings.Cut(token, "_")
		v = "${TCM_PRO_KEY%%_*}_" + fmt.Sprintf(random, len(rest))
	case token == t.unprefixedToken():
		v = fmt.Sprintf(random, len(token))
	default:
		if v = t.derivedVar(token); v == "" {
			return ""
		}
	}
	return scheme + " " + v
}

// requestPattern finds a request of the API named in a message.
var requestPattern = regexp.MustCompile(`\b(GET|POST|PUT|DELETE|PATCH|HEAD|OPTIONS) /[^\s:()]*`)

// requestIn is the first request a message names, "" if none.
func requestIn(msg string) string { return requestPattern.FindString(msg) }
