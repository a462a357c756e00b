// Package clienttest runs a client's own tests against the simulator and
// fails them with the client's findings: Start starts a simulator with a
// client judge on 127.0.0.1 (or attaches to a running one), hands the
// client its URL and keys, and when the test ends fails it with every
// client requirement the client broke, each finding naming the request,
// the rule and the evidence (keys redacted), and with the scenario it did
// not pass.
//
//	func TestSync(t *testing.T) {
//		sim := clienttest.Start(t, clienttest.Options{Scenario: "429-storm"})
//		c := tcmclient.New(sim.URL, sim.Keys.Pro)
//		c.Clock = sim // Now and Sleep: a wait moves the simulator's clock
//		feed := &tcmclient.Feed{Client: c}
//		if _, err := feed.Sync(t.Context()); err != nil {
//			t.Fatal(err)
//		}
//	} // at the end: the verdicts
//
// (tcmclient is the example client of ci/examples/clients.)
//
// In Ginkgo: sim := clienttest.Start(GinkgoT(), opts) (GinkgoT's Cleanup
// is DeferCleanup).
//
// The simulator started in-process runs on a manual clock: nothing waits
// in real time. A client that honours Retry-After or backs off must then
// wait through Sim.Sleep, which moves the clock (a client with a clock of
// its own can be tested against a realtime simulator: Options.Config.Speed
// 1). Attached to a running simulator (Options.URL), the test gets
// accounts of its own, and only their keys are judged.
//
// Fuzz makes a client's test a fuzz test: the fuzz input decides what the
// simulator serves (package simulator/fuzz), go test -fuzz explores and
// shrinks, and a failure tells what was served, request by request. Against
// a simulator started with --fuzz-seed N, Sim.MayFail and
// Sim.ServedEventIDs read GET /_control/fuzz.
package clienttest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/tcmkit/tcmkit/schemas/catalogue"
	"github.com/tcmkit/tcmkit/simulator"
	"github.com/tcmkit/tcmkit/simulator/clients"
	"github.com/tcmkit/tcmkit/simulator/fuzz"
)

// TB is the part of testing.TB (and of Ginkgo's GinkgoT()) that Start uses.
type TB interface {
	Helper()
	Cleanup(func())
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
	Logf(format string, args ...any)
}

// Options configure Start. The zero value starts a simulator in-process,
// seed 1, manual clock, every client requirement judged.
type Options struct {
	// URL attaches to a running simulator instead (its base URL, such as
	// TCM_BASE_URL of ci/examples/with-simulator.sh), whose control API
	// must be on and its client judge too. ControlToken is its
	// --control-token, if any.
	URL          string
	ControlToken string
	// Config configures the simulator started in-process (Clients is set
	// by Start).
	Config simulator.Config
	// Judge configures its judge.
	Judge clients.Config
	// Scenario arms a scenario (clients.Scenarios) once the simulator is
	// up. A scenario no client meets fails the test.
	Scenario string
	// Expect lists the client requirements the client is meant to break
	// (a test of a misbehaving client): the test then fails unless the
	// failed requirements are exactly these.
	Expect []catalogue.ID
}

// Sim is a simulator a test talks to.
type Sim struct {
	// URL is the API's base URL; Keys the keys the client may use: the
	// seeded ones in-process; attached, those of a Pro and a free account
	// made for this test (Revoked is then empty).
	URL  string
	Keys simulator.Keys
	// Control drives the simulator: the clock, faults, keys, the journal.
	Control simulator.Control
	// Server and Judge are the in-process simulator and its judge, nil
	// when attached.
	Server *simulator.Server
	Judge  *clients.Judge
	// Schedule is the fuzz schedule of an in-process simulator under
	// Fuzz, nil otherwise.
	Schedule *fuzz.Schedule

	t        TB
	o        Options
	accounts []string // attached: the accounts whose keys are judged
	manual   bool
}

// Start starts (or attaches to) a simulator and registers the check of
// the client's verdicts at the end of the test (t.Cleanup).
func Start(t TB, o Options) *Sim {
	t.Helper()
	s := &Sim{t: t, o: o}
	var err error
	if o.URL == "" {
		err = s.start()
	} else {
		err = s.attach()
	}
	if err != nil {
		t.Fatalf("clienttest: %v", err)
	}
	if o.Scenario != "" {
		if err := s.Control.Call(context.Background(), http.MethodPost, "scenarios", map[string]string{"name": o.Scenario}, nil, http.StatusCreated); err != nil {
			t.Fatalf("clienttest: arming the scenario: %v", err)
		}
	}
	t.Cleanup(s.check)
	return s
}

func (s *Sim) start() error {
	cfg := s.o.Config
	cfg.Clients = clients.Judging(s.o.Judge)
	srv, err := simulator.New(cfg)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		srv.Close()
		return err
	}
	hs := srv.HTTPServer()
	go func() { _ = hs.Serve(ln) }()
	s.t.Cleanup(func() {
		_ = hs.Close()
		_ = srv.Close()
	})
	s.URL = "http://" + ln.Addr().String()
	s.Keys, s.Server, s.Judge, s.manual = srv.Seeded(), srv, clients.Of(srv), cfg.Speed == 0
	s.Control = simulator.Control{URL: s.URL, Token: cfg.ControlToken}
	return nil
}

func (s *Sim) attach() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s.URL = strings.TrimRight(s.o.URL, "/")
	s.Control = simulator.Control{URL: s.URL, Token: s.o.ControlToken}
	var clock struct {
		Mode string `json:"mode"`
	}
	if err := s.Control.Call(ctx, http.MethodGet, "clock", nil, &clock, http.StatusOK); err != nil {
		return fmt.Errorf("attaching to %s: %w", s.URL, err)
	}
	s.manual = clock.Mode == "manual"
	if err := s.Control.Call(ctx, http.MethodGet, "clients", nil, nil, http.StatusOK); err != nil {
		return fmt.Errorf("the simulator at %s judges no clients (started with --no-client-judge?): %w", s.URL, err)
	}
	for _, plan := range []string{"pro", "free"} {
		a, err := s.Control.CreateAccount(ctx, plan)
		if err != nil {
			return err
		}
		s.accounts = append(s.accounts, a.ID)
		if plan == "pro" {
			s.Keys.Pro = a.Key
		} else {
			s.Keys.Free = a.Key
		}
	}
	return nil
}

// Now is the time on the clock the simulator counts rate limits on: its
// virtual time with a manual clock, the wall clock otherwise. With Sleep,
// a Sim is a clock a client can be given (Now, Sleep).
func (s *Sim) Now() time.Time {
	switch {
	case !s.manual:
		return time.Now()
	case s.Server != nil:
		return s.Server.RateNow()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if t, err := s.Control.Now(ctx); err == nil {
		return t
	}
	return time.Now()
}

// Sleep lets d pass for the client: it moves a manual clock by d at once,
// and waits d in real time otherwise. Give it to a client as its way of
// waiting (Retry-After, backoff) so that a test does not sleep.
func (s *Sim) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	if !s.manual {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
			return nil
		}
	}
	if s.Server != nil {
		s.Server.Advance(d)
		return ctx.Err()
	}
	return s.Control.Advance(ctx, d)
}

// Verdicts reads the verdicts on the clients of this test (final: as if
// the run ended now).
func (s *Sim) Verdicts(ctx context.Context, final bool) (clients.Verdicts, error) {
	var v clients.Verdicts
	if s.Judge != nil {
		v = s.Judge.Snapshot(final)
	} else if err := s.Control.Call(ctx, http.MethodGet, fmt.Sprintf("clients?final=%t", final), nil, &v, http.StatusOK); err != nil {
		return v, err
	}
	if s.accounts != nil {
		// Attached: this test's keys only. Keys of other clients the
		// shared simulator did not judge are not this test's concern; a
		// test none of whose keys made a request judged nothing.
		v.Clients = slices.DeleteFunc(v.Clients, func(c clients.Client) bool { return !slices.Contains(s.accounts, c.Account) })
		v.NotJudged, v.Errored, v.Outcome, v.Passed = 0, "", clients.Passed, true
		for _, c := range v.Clients {
			if !c.Passed {
				v.Outcome, v.Passed = clients.Failed, false
			}
		}
		if len(v.Clients) == 0 {
			v.Outcome, v.Errored, v.Passed = clients.Errored, clients.NothingJudged, false
		}
	}
	return v, nil
}

// check fails the test with the client's findings, at its end.
func (s *Sim) check() {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	v, err := s.Verdicts(ctx, true)
	if err != nil {
		s.t.Errorf("clienttest: reading the verdicts: %v", err)
		return
	}
	if err := Judge(v, s.o.Expect, s.o.Scenario); err != nil {
		s.t.Errorf("%v", err)
	}
}

// Judge turns verdicts into a test's outcome: nil when every key was
// judged and some client made a request, the clients broke exactly the
// requirements expected (none, usually), every client that met the
// scenario passed it and, if one was armed, some client met it; otherwise
// an error that lists every finding and scenario result.
func Judge(v clients.Verdicts, expect []catalogue.ID, scenario string) error {
	var failed []catalogue.ID
	var b strings.Builder
	reached := false
	for _, c := range v.Clients {
		var broke []string
		for _, r := range c.Requirements {
			if r.Result == clients.Failed {
				broke = append(broke, string(r.ID))
				if !slices.Contains(failed, r.ID) {
					failed = append(failed, r.ID)
				}
			}
		}
		sc := c.Scenario
		if sc != nil && sc.Result != clients.NotReached {
			reached = true
		}
		if len(broke) == 0 && (sc == nil || sc.Result != clients.Failed) {
			continue
		}
		fmt.Fprintf(&b, "\nclient %s, %d requests", c.Name(), c.Requests)
		if len(broke) > 0 {
			fmt.Fprintf(&b, ", broke %s:", strings.Join(broke, ", "))
		}
		for _, f := range c.Findings {
			b.WriteString("\n  " + strings.ReplaceAll(f.String(), "\n", "\n  "))
		}
		if sc != nil && sc.Result == clients.Failed {
			fmt.Fprintf(&b, "\n  scenario %s failed: %s", sc.Name, sc.Behaviour)
		}
	}
	var problems []string
	if v.Errored != "" {
		problems = append(problems, "the verdicts are errored, the client was not judged: "+v.Errored)
	}
	slices.Sort(failed)
	want := slices.Sorted(slices.Values(expect))
	if !slices.Equal(failed, want) {
		switch {
		case len(want) == 0:
			problems = append(problems, "the client broke client requirements of the contract")
		default:
			problems = append(problems, fmt.Sprintf("the client broke %v, but was expected to break %v", failed, want))
		}
	}
	if scenario != "" && !reached {
		problems = append(problems, fmt.Sprintf("scenario %s was armed, but no client met it", scenario))
	}
	for _, c := range v.Clients {
		if c.Scenario != nil && c.Scenario.Result == clients.Failed {
			problems = append(problems, "a client failed scenario "+c.Scenario.Name)
			break
		}
	}
	if len(problems) == 0 {
		return nil
	}
	return errors.New("clienttest: " + strings.Join(problems, "; ") + b.String())
}
