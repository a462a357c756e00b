package clienttest

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/tcmkit/tcmkit/simulator/fuzz"
)

// FuzzOptions configure FuzzWith.
type FuzzOptions struct {
	// Options configure the simulator and its judge (Config.Speed > 0
	// runs it in real time); URL and Scenario are not used.
	Options
	// Break also serves answers that break the contract (a page out of
	// order, a cursor cycle, an unknown event type...), to test the
	// client's defences: a client may then end in an error (Sim.MayFail).
	Break bool
	// Seeds is how many seeds' plans (1..Seeds) are added to the corpus
	// (0: 8; negative: none, only Inputs).
	Seeds int
	// Inputs are more inputs added to the corpus.
	Inputs [][]byte
	// Timeout bounds one input in real time (0: 30 s): a client that has
	// not returned by then ends the test binary with what was served.
	Timeout time.Duration
}

// Fuzz is a fuzz test of a client: the fuzz input decides what the
// simulator serves during fn (package simulator/fuzz: the world at the
// contract's edges, 429s, 5xx, slow answers, cut bodies, a key revoked
// during a walk, events arriving during a walk), and the test fails with
// the client's findings, as with Start (the one judge's: a tight loop
// after errors and a cursor cycle followed among them), and when fn
// fails; the failure tells what was served, request by request.
//
//	func FuzzSync(f *testing.F) {
//		clienttest.Fuzz(f, func(t *testing.T, sim *clienttest.Sim) {
//			c := tcmclient.New(sim.URL, sim.Keys.Pro)
//			c.Clock = sim
//			feed := &tcmclient.Feed{Client: c}
//			if _, err := feed.Sync(t.Context()); err != nil && !sim.MayFail() {
//				t.Fatal(err)
//			}
//		})
//	}
//
// go test runs the corpus (the plans of seeds 1 to 8, and testdata/fuzz);
// go test -fuzz=FuzzSync explores, shrinks a failing input and saves it
// under testdata/fuzz/FuzzSync, where the next go test replays it.
func Fuzz(f *testing.F, fn func(t *testing.T, sim *Sim)) {
	f.Helper()
	FuzzWith(f, FuzzOptions{}, fn)
}

// FuzzWith is Fuzz with options.
func FuzzWith(f *testing.F, o FuzzOptions, fn func(t *testing.T, sim *Sim)) {
	f.Helper()
	quickMinimize()
	seeds := o.Seeds
	if seeds == 0 {
		seeds = 8
	}
	for n := 1; n <= seeds; n++ {
		f.Add(fuzz.FromSeed(int64(n), o.fuzzOptions()).Input)
	}
	for _, in := range o.Inputs {
		f.Add(in)
	}
	f.Fuzz(func(t *testing.T, input []byte) {
		RunPlan(t, fuzz.FromBytes(input, o.fuzzOptions()), o, fn)
	})
}

// MinimizeTime is how long go test -fuzz minimizes an input, one that
// reached new code or one that failed, unless -fuzzminimizetime is given:
// not at all. Go's default, 60 s, stopped the search for a minute at every
// input that reached new code (an input here runs a simulator and a
// client, tens of milliseconds, and minimizing tries thousands), and at
// the start of a search most inputs do: FuzzTCMClient ran 1 input a
// second with it, 30 with 20 tries (20x), 73 without. An input is a few
// dozen bytes, and a failure tells its plan in words.
const MinimizeTime = "0"

// quickMinimize sets -test.fuzzminimizetime to MinimizeTime unless the
// command line set it. go test -fuzz reads it once the fuzz target has
// added its corpus, so a target may set it.
func quickMinimize() {
	given := false
	flag.Visit(func(fl *flag.Flag) { given = given || fl.Name == "test.fuzzminimizetime" })
	if !given && flag.Lookup("test.fuzzminimizetime") != nil {
		_ = flag.Set("test.fuzzminimizetime", MinimizeTime)
	}
}

func (o FuzzOptions) fuzzOptions() fuzz.Options {
	return fuzz.Options{Break: o.Break, Realtime: o.Config.Speed > 0}
}

// RunPlan runs fn against a simulator that serves plan p (fuzz.FromSeed
// makes the plan of a seed): one input of Fuzz.
func RunPlan(t *testing.T, p fuzz.Plan, o FuzzOptions, fn func(t *testing.T, sim *Sim)) {
	t.Helper()
	opts := o.Options
	opts.URL, opts.Scenario = "", ""
	opts.Config.Layers = slices.Clone(opts.Config.Layers)
	sched := p.Configure(&opts.Config)
	// Registered before Start, so that it runs after the judge's check.
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("what was served (%s):\n%s", replayHint(p), sched.Snapshot())
		}
	})
	sim := Start(t, opts)
	sim.Schedule = sched
	timeout := o.Timeout
	if timeout == 0 {
		timeout = 30 * time.Second
	}
	watchdog := time.AfterFunc(timeout, func() {
		panic(fmt.Sprintf("clienttest: the client did not return within %s (an endless loop?); what was served (%s):\n%s", timeout, replayHint(p), sched.Snapshot()))
	})
	defer watchdog.Stop()
	fn(t, sim)
}

func replayHint(p fuzz.Plan) string {
	if p.Seed != 0 {
		return fmt.Sprintf("simulator --fuzz-seed %d serves it to any client", p.Seed)
	}
	return "the input is saved under testdata/fuzz when go test -fuzz found it"
}

// FuzzReport is what the fuzz schedule served so far: in-process, the
// Schedule's; attached, the simulator's GET /_control/fuzz (ok false
// when it serves no schedule).
func (s *Sim) FuzzReport(ctx context.Context) (r fuzz.Report, ok bool) {
	if s.Schedule != nil {
		return s.Schedule.Snapshot(), true
	}
	if s.Server != nil {
		return r, false
	}
	err := s.Control.Call(ctx, http.MethodGet, "fuzz", nil, &r, http.StatusOK)
	return r, err == nil
}

// MayFail reports whether what the simulator served so far lets a correct
// client end in an error: its key was revoked during a walk, an answer
// broke the contract, or a Retry-After asked for more than a minute.
// Without a fuzz schedule it is false.
func (s *Sim) MayFail() bool {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, _ := s.FuzzReport(ctx)
	return r.MayFail
}

// ServedEventIDs are the ids of the feed events the simulator served whole
// so far, each once: what a client that walked the feed to its end holds.
func (s *Sim) ServedEventIDs() []string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, _ := s.FuzzReport(ctx)
	return r.EventIDs
}
