package conformance

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/schemas/jsondoc"
	"github.com/tcmkit/tcmkit/schemas/redact"
	"github.com/tcmkit/tcmkit/simulator"
	"github.com/tcmkit/tcmkit/suites/client"
	"github.com/tcmkit/tcmkit/suites/explore"
	"github.com/tcmkit/tcmkit/suites/oracle"
	"github.com/tcmkit/tcmkit/suites/pace"
	"github.com/tcmkit/tcmkit/suites/probe"
)

// Session is the state of one run of the suite in one process, as
// csi-test's TestContext: what the run learned (its Target, the
// preflight's verdict), what it built (redactor, clock, client) and what it
// fetched (the feed walks). The Config it was made from is only read.
//
// The target is the Config's unless Use names another before the first
// spec (Run does, for the bundled simulator); the rest is built on first
// use, once the target is known.
type Session struct {
	cfg *Config

	redOnce sync.Once
	red     *redact.Redactor
	log     *redact.Writer // the Config's log, redacted

	mu      sync.Mutex // guards tg, tgSet, walks and verdict
	tg      Target
	tgSet   bool
	walks   map[string]*walkEntry
	verdict *error // the preflight's, once it ran

	build sync.Once
	clock client.Clock
	// pace lets time pass for rate windows, and runs the probes' lanes
	// (pace.go).
	pace *pace.Pacer
	c    *client.Client
	// or is the contract oracle every exchange goes through, and ledger
	// what it found (oracle.go).
	or     *oracle.Oracle
	ledger ledger
	// carry writes the specs' own requests in forms the standards read
	// as the same (explore.Carrier), once the preflight passed.
	carry *explore.Carrier
	// calOffset is the target's clock less the run's, read once
	calOnce   sync.Once
	calOffset time.Duration
	drift     atomic.Bool
	// runCtx ends when the run does (its deadline, with a *deadlineError
	// as its cause, or Close): work done ahead of time stops with it.
	runCtx  context.Context
	stopRun context.CancelCauseFunc
	// g fails through the redactor, whatever fail handler the host suite
	// registered: a body that echoes a key cannot leak through a message.
	g gomega.Gomega
	// feedOK: whether the free key was served its feed when a 401 on
	// tracked videos raised the question (freeServedOnFeed)
	feedOK struct {
		once sync.Once
		ok   bool
	}
}

func newSession(cfg *Config) *Session {
	ctx, stop := context.WithCancelCause(context.Background())
	return &Session{cfg: cfg, walks: map[string]*walkEntry{}, runCtx: ctx, stopRun: stop}
}

// Close ends the session: work still under way ahead of time stops, and
// the bodies the client kept on disk are removed.
func (s *Session) Close() error {
	s.stopRun(nil)
	s.mu.Lock()
	c := s.c
	s.mu.Unlock()
	if c == nil {
		return nil
	}
	return c.Close()
}

// Use sets the target the session judges, instead of the Config's. Call it
// before the first spec runs; later it panics.
func (s *Session) Use(t Target) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.c != nil {
		panic("conformance: Session.Use after the session was built")
	}
	s.tg, s.tgSet = t, true
}

// Target is what the session judges: the one given to Use, or the Config's.
func (s *Session) Target() Target {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.tgSet {
		return s.cfg.target()
	}
	return s.tg
}

// Redactor redacts every key the session knows of: the Config's
// Redactor, or its own.
func (s *Session) Redactor() *redact.Redactor {
	s.redOnce.Do(func() {
		s.red = s.cfg.Redactor
		if s.red == nil {
			s.red = redact.New()
		}
		s.red.Add(s.cfg.target().keys()...)
		s.log = s.red.Writer(s.cfg.log())
	})
	return s.red
}

// logWriter is the Config's log, redacted.
func (s *Session) logWriter() *redact.Writer {
	s.Redactor()
	return s.log
}

// Client is the suite's HTTP client for the target (for request counts, and
// for host suites that want to send more).
func (s *Session) Client() *client.Client {
	s.ready()
	return s.c
}

// ready builds the clock, the client and the redacting Gomega, once.
func (s *Session) ready() {
	s.build.Do(func() {
		tg := s.Target()
		s.Redactor().Add(tg.keys()...)
		s.Redactor().Add(tg.Secrets...)
		// Invented keys are no secret, but redacted too: a key-shaped string
		// in a report should not alarm a secret scanner.
		s.Redactor().Add(tg.unknownKey(), tg.unprefixedToken())
		s.Redactor().Add(tg.derived()...)
		clock := s.cfg.Clock
		if clock == nil && tg.ControlClock {
			clock = client.ControlClock{Control: simulator.Control{URL: tg.URL, HTTP: s.controlHTTP()}}
		}
		g := gomega.NewGomega(func(message string, callerSkip ...int) {
			ginkgo.GinkgoHelper()
			skip := 1
			if len(callerSkip) > 0 {
				skip += callerSkip[0]
			}
			s.stopIfEnded()
			// the failing matcher's problems and response, if it is ours
			problems, resps := taken()
			if len(problems) == 0 {
				problems = []Problem{{Request: requestIn(message), Actual: firstLine(message)}}
			}
			if len(resps) == 1 && strings.HasPrefix(problems[0].Expected, "status ") {
				id, block := s.statusCause(resps[0])
				if block != "" {
					s.Block(block)
				}
				for i := range problems {
					if problems[i].Requirement == "" {
						problems[i].Requirement = string(id)
					}
				}
			}
			s.record(message, problems, resps)
			ginkgo.Fail(s.Redactor().String(message), skip)
		})
		inner := clock
		if inner == nil {
			inner = client.WallClock{}
		}
		pc := pace.New(s.runCtx, inner, s.logWriter())
		c := &client.Client{
			BaseURL: tg.URL,
			HTTP:    s.cfg.HTTP,
			Clock:   pc,
			Now:     pc.ClientTime,
			Gate:    pc.Exchange,
			MaxWait: s.cfg.MaxWait,
			Timeout: s.cfg.RequestTimeout,
			MaxBody: int64(s.cfg.MaxBody),
			Redact:  s.Redactor().String,
			Log:     s.logWriter(),
			KeyVar:  tg.keyVar,
		}
		or := oracle.New(oracle.Options{Keys: tg.oracleKeys(), Exclusive: pc.Virtual(), Now: pc.TargetTime,
			Calendar: s.calendar, Drifted: s.drifted, Frozen: func(a, b time.Time) bool { return pc.Virtual() && !s.drifted() && a.Equal(b) }})
		c.Observe = func(_ context.Context, r *client.Response) { s.judged(or, r) }
		c.Sending = or.Sending
		carry := explore.NewCarrier(s.cfg.ExploreSeed, map[string]string{"pro": tg.Pro, "free": tg.Free})
		c.Rewrite = carry.Rewrite
		s.mu.Lock()
		s.carry = carry
		s.or = or
		s.tg, s.tgSet = tg, true
		s.clock, s.g, s.c, s.pace = clock, g, c, pc
		s.mu.Unlock()
	})
}

// stopIfEnded stops the spec under way as the run's, not the target's, once
// the run's deadline passed: what a spec meets then (a request cut, a
// probe's sequence never sent, a lane that stopped) is no verdict, and a
// run cut short is incomplete, never passed. It aborts the suite: the
// specs after it are not run, and the report names them.
func (s *Session) stopIfEnded() {
	ginkgo.GinkgoHelper()
	var d *deadlineError
	if errors.As(context.Cause(s.runCtx), &d) {
		ginkgo.AbortSuite(s.Redactor().String(d.Error() + ": this spec was stopped where it stood, before its verdict"))
	}
}

// Waited is, on a virtual clock (ok), the time the run moved the target's
// clock by for rate windows, which is what it waits in real time (the
// probes' lanes wait at once), and the time it moved the world by.
func (s *Session) Waited() (waited, moved time.Duration, ok bool) {
	s.mu.Lock()
	p := s.pace
	s.mu.Unlock()
	if p == nil || !p.Virtual() {
		return 0, 0, false
	}
	waited, moved = p.Waited()
	return waited, moved, true
}

// calendar is the target's date: the wall clock, or on a clock the suite
// moves, the date it read from the target once and has moved it by since.
func (s *Session) calendar() time.Time {
	s.calOnce.Do(func() {
		if s.clock == nil {
			return
		}
		ctx, cancel := context.WithTimeout(s.runCtx, s.cfg.RequestTimeout)
		defer cancel()
		if t, err := s.clock.Now(ctx); err == nil {
			s.calOffset = t.Sub(s.pace.TargetTime())
		}
	})
	return s.pace.TargetTime().Add(s.calOffset)
}

// drifted reports whether the target's clock, one the suite moves, moved
// by itself beyond what the suite moved it (a world whose clock moves with
// every request): once it did, the oracle's rules that count a window or
// compare moments say nothing. It asks the target's clock, and remembers a
// drift.
func (s *Session) drifted() bool {
	if s.clock == nil || s.drift.Load() {
		return s.drift.Load()
	}
	want := s.calendar()
	ctx, cancel := context.WithTimeout(s.runCtx, s.cfg.RequestTimeout)
	defer cancel()
	if t, err := s.clock.Now(ctx); err == nil && t.Sub(want) > time.Second {
		s.drift.Store(true)
	}
	return s.drift.Load()
}

// controlHTTP sends the control API's requests: the Config's client or a
// plain one, bounded in time and following no redirect either.
func (s *Session) controlHTTP() *http.Client {
	hc := &http.Client{Timeout: s.cfg.RequestTimeout}
	if s.cfg.HTTP != nil {
		*hc = *s.cfg.HTTP
	}
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return hc
}

// validate says what is wrong with the target or the Config.
func (s *Session) validate() error {
	tg, red := s.Target(), s.Redactor()
	red.Add(tg.keys()...)
	errs := append(tg.validate(red), s.cfg.rangeErrors()...)
	if len(errs) > 0 {
		return fmt.Errorf("configuration: %s", strings.Join(errs, "; "))
	}
	return nil
}

// rangeErrors says which settings are out of range (or not one of their
// values: --profile); a run and a list check them alike.
func (c *Config) rangeErrors() []string {
	var errs []string
	if c.MaxPages < 1 {
		errs = append(errs, fmt.Sprintf("--max-pages %d: must be at least 1", c.MaxPages))
	}
	for _, b := range []struct {
		name string
		d    time.Duration
	}{{"max-wait", c.MaxWait}, {"request-timeout", c.RequestTimeout}, {"run-deadline", c.RunDeadline}} {
		// (a run deadline of 0 is the profile's: Run settles it)
		if b.d < 0 || b.d == 0 && b.name != "run-deadline" {
			errs = append(errs, fmt.Sprintf("--%s %s: must be more than 0", b.name, b.d))
		}
	}
	if c.MaxBody <= 0 {
		errs = append(errs, fmt.Sprintf("--max-body %d: must be more than 0", c.MaxBody))
	}
	if _, err := probe.ParseProfile(c.Profile); err != nil {
		errs = append(errs, err.Error())
	}
	return errs
}

// Preflight checks, once, that the target answers and accepts the Pro key
// on the feed. Its error is one clear sentence: the run is incomplete, the
// target was not judged.
func (s *Session) Preflight(ctx context.Context) error {
	if err := s.validate(); err != nil {
		return err
	}
	s.ready()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.verdict != nil {
		return *s.verdict
	}
	err := s.preflight(ctx)
	s.verdict = &err
	if err == nil {
		s.carry.Start()
	}
	return err
}

// walk returns the Pro key's cursor walk at a page size, walking on first
// use. The limit=200 walk goes to the end (bounded by MaxPages); the
// default-size walk goes just past the first page boundary of the other,
// which is what comparing the two needs. Requests made ahead of time
// (prefetchWalks) go to the spec that uses the walk first.
func (s *Session) walk(ctx context.Context, limit string) *walk {
	return s.walkOf(ctx, s.tg.Pro, limit)
}

// walkOf is the walk of any key at a page size.
func (s *Session) walkOf(ctx context.Context, key, limit string) *walk {
	w := s.walkOnce(ctx, key, limit)
	s.c.Claim(walkScope(key, limit))
	// the pages are the evidence of what the spec finds in them, whoever
	// fetched them
	for _, p := range w.Pages {
		s.c.Saw(ctx, p.Resp)
	}
	if w.Stopped != nil {
		s.c.Saw(ctx, w.Stopped)
	}
	return w
}

func walkScope(key, limit string) string {
	return "feed walk limit=" + limit + " with key " + redact.Form(key)
}

func (s *Session) walkOnce(ctx context.Context, key, limit string) *walk {
	name := key + "\x00" + limit
	s.mu.Lock()
	e, ok := s.walks[name]
	if !ok {
		e = &walkEntry{}
		s.walks[name] = e
	}
	s.mu.Unlock()
	// Only a spec that needs this walk waits for it, not every spec.
	e.once.Do(func() { e.w = s.makeWalk(ctx, key, limit) })
	return e.w
}

// walkEntry is one lazily made walk.
type walkEntry struct {
	once sync.Once
	w    *walk
}

func (s *Session) makeWalk(ctx context.Context, key, limit string) *walk {
	// What a walk keeps grows with the events of its pages: it stops at a
	// page that holds far more than a page may, and past what --max-pages
	// pages of a conforming feed hold.
	most, seen := s.cfg.MaxPages*schemas.MaxPageSize, 0
	fetch := func(ctx context.Context, cursor string) (*client.Response, error) {
		if seen > most {
			return nil, fmt.Errorf("the walk stopped after %d events in its pages, more than --max-pages=%d pages of %d hold (bounded memory)", seen, s.cfg.MaxPages, schemas.MaxPageSize)
		}
		resp, err := s.c.Cached(ctx, pageRequest(limit, cursor, key))
		if err != nil || resp.Status != 200 {
			return resp, err
		}
		doc, _ := resp.JSON()
		n := len(jsondoc.Items(doc, "/events"))
		if n > maxPageEvents {
			return resp, &tooManyEventsError{fmt.Sprintf("%s: the page holds %d events, more than %d times the largest page (%d); the walk stops there (bounded memory)",
				resp, n, maxPageEvents/schemas.MaxPageSize, schemas.MaxPageSize), n}
		}
		seen += n
		return resp, nil
	}
	if limit == "" {
		return walkFeed(ctx, limit, fetch, 0, schemas.MaxPageSize+schemas.DefaultPageSize)
	}
	return walkFeed(ctx, limit, fetch, s.cfg.MaxPages, 0)
}

// tooManyEventsError is a page a walk refused for its size: still a page,
// whose events and size the specs judge.
type tooManyEventsError struct {
	msg    string
	events int
}

func (e *tooManyEventsError) Error() string { return e.msg }

// maxPageEvents is the most events a walk takes from one page: five times
// what a page may hold.
const maxPageEvents = 5 * schemas.MaxPageSize

// prefetchWalks starts both feed walks in the background, so that the Pro
// key's requests (and its own waits for the rate limit) overlap the time
// the rate-limit specs must wait anyway. Against a 20/minute server this
// saves a whole window. The walks are the same lazily cached values every
// spec uses; only their timing changes.
func (s *Session) prefetchWalks() {
	go func() {
		for _, limit := range []string{"", strconv.Itoa(schemas.MaxPageSize)} {
			s.walkOnce(client.WithScope(s.runCtx, walkScope(s.tg.Pro, limit)), s.tg.Pro, limit)
		}
		// the walk's videos too: the tracked-videos budget is idle meanwhile
		if videosWanted() {
			s.prefetchVideos(client.WithScope(s.runCtx, videoScope))
		}
	}()
}

// fullWalk is the walk at the largest page size, which every feed-wide
// check uses. The default-size walk is made before it: on a feed that grows
// while the suite reads it, new events arrive at the head, so every event
// of the earlier, shorter walk is then in this one, and the two compare.
func (s *Session) fullWalk(ctx context.Context) *walk {
	s.walkOnce(ctx, s.tg.Pro, "")
	return s.walk(ctx, strconv.Itoa(schemas.MaxPageSize))
}

// knownVideoIDs are the distinct video ids the full walk shows, in feed
// order, at most max of them.
func (s *Session) knownVideoIDs(ctx context.Context, max int) []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range s.fullWalk(ctx).Pages {
		doc, _ := p.Resp.JSON()
		for _, e := range jsondoc.Items(doc, "/events") {
			id, _ := jsondoc.String(e, "/video/platformVideoId")
			if id == "" || len(id) > schemas.MaxVideoIDLen || seen[id] {
				continue
			}
			seen[id] = true
			out = append(out, id)
			if len(out) == max {
				return out
			}
		}
	}
	return out
}
