package conformance

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/schemas/catalogue"
	"github.com/tcmkit/tcmkit/schemas/report"
	"github.com/tcmkit/tcmkit/suites/client"
	"github.com/tcmkit/tcmkit/suites/oracle"
)

// Register declares every spec of the suite inside the caller's Ginkgo
// suite, as csi-test's sanity.GinkgoTest, and returns the Session the specs
// share. Call it at the top level of a Ginkgo suite (var _ = ...) or before
// RunSpecs. cfg is read when the first spec runs, so flags may fill it
// until then; it must name a target (Run is the entry point that starts the
// bundled simulator).
//
// The specs stand under one top-level container, so that they keep their
// order (the rate-limit specs first, while the burst key's window is fresh)
// unless the user asks for --randomize-all. Ginkgo orders the specs of a
// container by where they are declared, file name first, then line (an
// Ordered container by declaration): so Register declares every group's
// container here, and a group's strict specs, from strict.go, follow the
// group's own specs (TestSpecOrder holds this).
//
// A host suite owns the run's bounds: give RunSpecs a Timeout (Run uses
// Config.RunDeadline), and call the Session's Close after the suite, which
// removes the bodies its client kept on disk.
//
// Labels: lower-case ones are features (health, auth, pro, pagination,
// events, videos, isolation, rate-limit, errors, strict, hidden: the checks
// of where breaks hide); upper-case ones are the ids
// of the requirements a spec checks, from schemas/catalogue.
func Register(cfg *Config) *Session {
	s := &suite{Session: newSession(cfg)}
	Describe("Tracked-Channel Monitoring API", func() {
		BeforeEach(s.start)
		// the oracle's problems of what the spec saw, before finish takes
		// its transcript and what it saw
		AfterEach(s.oracleAfter)
		AfterEach(s.finish)
		// The groups, in the order they run: one line each, see above.
		Describe("rate limit of GET /api/public-feed", Label("rate-limit"), Ordered, Serial, ContinueOnFailure, s.rateLimitSpecs)
		Describe("POST /api/public/health", Label("health"), s.healthSpecs)
		Describe("authentication", Label("auth"), s.authSpecs)
		Describe("the Pro plan", Label("pro"), s.proSpecs)
		Describe("GET /api/public-feed pagination", Label("pagination"), s.paginationSpecs)
		Describe("events, in the feed and in VideoEntries", Label("events"), s.eventSpecs)
		Describe("POST /api/public/videos", Label("videos"), s.videoSpecs)
		Describe("tenant isolation", Label("isolation"), s.isolationSpecs)
		Describe("errors and media types", Label("errors"), s.errorSpecs)
		Describe(silent, Label(strict), s.simulatorChoices)
		Describe("generated probes", Label(probeLabel), s.probeSpecs)
		Describe("requests explored from HTTP's grammar", Label(exploreLabel), s.exploreSpecs)
		// Last: the burst key's second lockout delays no spec after it.
		Describe("rate limit, a second lockout", Label("rate-limit", "hidden"), Ordered, Serial, ContinueOnFailure, s.lockoutSpecs)
		// Last of all: what the oracle found in answers no spec read.
		Describe("the contract oracle", Serial, s.oracleSpecs)
	})
	return s.Session
}

// suite declares the specs of a Session; its methods are what the spec
// bodies share.
type suite struct {
	*Session
	// ex sends the explored requests: its lanes start with the probes',
	// so that the keys' windows are spent side by side
	ex *explorer
}

func (s *suite) start(ctx SpecContext) {
	taken() // nothing a matcher handed over outside a failure
	s.stopIfEnded()
	if err := s.Preflight(ctx); err != nil {
		AbortSuite(s.Redactor().String("the run is incomplete (the target was not judged): " + err.Error()))
	}
}

// finish records what the spec sent, as report entries, already redacted.
func (s *suite) finish() {
	if s.c == nil {
		return
	}
	n, transcript := s.c.Take()
	AddReportEntry(report.EntryRequests, n, ReportEntryVisibilityFailureOrVerbose)
	if transcript != "" {
		AddReportEntry(report.EntryTranscript, transcript, ReportEntryVisibilityNever)
	}
}

// requires labels a spec with the requirements it checks.
func requires(ids ...catalogue.ID) Labels {
	l := make(Labels, len(ids))
	for i, id := range ids {
		l[i] = string(id)
	}
	return l
}

// strict labels the specs of the simulator's choices where the spec is
// silent; Run leaves them out unless the label filter names it.
const strict = "strict"

// silent is the container of strict specs that stand apart.
const silent = "where the spec is silent, as the simulator chose"

// failf fails the spec (or setup node) with a formatted message,
// redacted: the one way the suite fails by hand. The failure blames the
// spec's requirement and carries the request its message names.
func (s *Session) failf(format string, args ...any) {
	GinkgoHelper()
	msg := fmt.Sprintf(format, args...)
	s.Fail(msg, Problem{Request: requestIn(msg), Actual: firstLine(msg)})
}

// expect asserts through the redacting Gomega of the session.
func (s *suite) expect(actual any, extra ...any) Assertion {
	GinkgoHelper()
	return s.g.Expect(actual, extra...)
}

// Expect asserts through the session's redacting Gomega: a failure
// records its problems (the matcher's, each with its requirement, or one
// of the spec's own), their evidence and a rerun line, as failf does.
func (s *Session) Expect(actual any, extra ...any) Assertion {
	GinkgoHelper()
	s.ready()
	return s.g.Expect(actual, extra...)
}

// fetch returns the (possibly shared) response to req, failing the spec
// when the target does not answer at all.
func (s *suite) fetch(ctx context.Context, req client.Request) *client.Response {
	GinkgoHelper()
	resp, err := s.c.Cached(ctx, req)
	var stuck *client.NotReleasedError
	if errors.As(err, &stuck) {
		// every request of the key would fail alike: the run stops with
		// this finding instead of failing requirements it did not judge
		AbortSuite(s.Redactor().String("the run stopped: " + err.Error()))
	}
	if healthCut(req, err) && !slices.Contains(CurrentSpecReport().Labels(), string(catalogue.HealthOK)) {
		// health answered and its body broke off: HEALTH-OK's specs fail
		// on it, this one has no answer to judge
		s.Block(s.Redactor().String(fmt.Sprintf("%v: HEALTH-OK's finding, no answer for this spec to judge", err)))
	}
	if err != nil {
		s.failf("no answer to judge: %v", err) // the client's errors name the request
	}
	return resp
}

// healthCut reports whether an exchange of the health operation answered
// and its body broke off: a finding of HEALTH-OK, not of a spec that only
// sent health along.
func healthCut(req client.Request, err error) bool {
	var cut *client.CutError
	return req.Path == schemas.PathHealth && errors.As(err, &cut)
}

// noneOf fails the spec with plain problems, if there are any.
func (s *suite) noneOf(rule string, problems []string) {
	GinkgoHelper()
	s.NoneOf(rule, problems)
}

// needKey skips a spec whose key was not given, saying how to give it.
func needKey(key, flag string) {
	GinkgoHelper()
	if key == "" {
		skipFor("--"+flag, needs(flag))
	}
}

// needs is the skip message of a spec whose flag was not given.
func needs(flag string) string { return fmt.Sprintf("needs --%s (or %s)", flag, envName(flag)) }

// skipFor skips a spec that a setting the run was not given would let run
// (a key, --profile thorough, --control-clock): the report names the
// setting beside each requirement the spec would have verified.
func skipFor(setting, reason string) {
	GinkgoHelper()
	AddReportEntry(report.EntryNeeds, setting, ReportEntryVisibilityNever)
	Skip(reason)
}

// skipMissing skips a spec whose request cannot be made (a credential's
// skip message): for a key not given (needs(flag)), naming the flag.
func skipMissing(why string) {
	GinkgoHelper()
	if m := neededFlag.FindStringSubmatch(why); m != nil {
		skipFor(m[1], why)
	}
	Skip(why)
}

// neededFlag finds the flag in a needs message.
var neededFlag = regexp.MustCompile(`^needs (--[a-z-]+)`)

// needFree returns the free key, or skips the spec.
func (s *suite) needFree() string {
	GinkgoHelper()
	needKey(s.tg.Free, "free-key")
	return s.tg.Free
}

// need stops a spec whose scenario needs the answer to have one of the
// statuses. Whether the status is one the contract allows is the oracle's
// to judge: what it found of the spec's own rules fails the spec, and
// anything else (another rule's break, a 429 the contract allows) blocks
// it, with the oracle's words.
func (s *Session) need(resp *client.Response, statuses ...int) {
	GinkgoHelper()
	if slices.Contains(statuses, resp.Status) {
		return
	}
	why := "a status the contract allows here, which the scenario cannot use"
	if ps := s.ledger.of(resp); len(ps) > 0 {
		why = fmt.Sprintf("which breaks %s (the oracle reports it there: %s)", ps[0].Requirement, firstLine(ps[0].Expected))
	}
	s.Block(fmt.Sprintf("%s answered %d, %s", resp.Request, resp.Status, why))
}

// errorAnswer checks a response that must be an error of one status, with
// an ErrorBody (the strict specs: answers the oracle does not judge, such
// as an unknown path's).
func (s *suite) errorAnswer(resp *client.Response, status int) {
	GinkgoHelper()
	s.expect(resp).To(HaveStatus(status))
	if msg, ps := notErrorBody(resp); msg != "" {
		s.Fail(msg, ps...)
	}
}

// notErrorBody says why resp's body is no ErrorBody, by the schema the
// oracle judges ERROR-BODY with (oracle.Violations), and its problems; ""
// when it is one. Any string is an error and a message: the contract
// shows no allowed values of error and says nothing of message beyond its
// type, so "" is a conforming value of both.
func notErrorBody(resp *client.Response) (string, []Problem) {
	vs := oracle.Violations(resp, schemas.ErrorBody)
	if len(vs) == 0 {
		return "", nil
	}
	why := make([]string, len(vs))
	ps := make([]Problem, 0, min(len(vs), maxProblems))
	for i, v := range vs {
		why[i] = v.String()
		if i < maxProblems {
			ps = append(ps, Problem{Requirement: string(catalogue.ErrorBody), Request: resp.Request.String(), Pointer: v.Pointer, Expected: "an ErrorBody: error and message strings", Actual: why[i]})
		}
	}
	return fmt.Sprintf("%s (status %d): the body is not an ErrorBody (error and message strings):\n%s\nresponse body: %s",
		resp.Request, resp.Status, listProblems(why, "  "), resp.Excerpt()), ps
}
