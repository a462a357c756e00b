package conformance

import (
	"fmt"
	"sync"
	"time"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/schemas/catalogue"
	"github.com/tcmkit/tcmkit/suites/explore"
	"github.com/tcmkit/tcmkit/suites/probe"
)

// estimate is how long a whole run of a profile waits for the target's
// rate windows, in real time, against a server of 20 requests a minute per
// key: the keys spend their windows at once, so the key that sends the most
// sets the pace. The specs besides the probes and the explored requests
// take one to two windows (the burst's window and its Retry-After, the
// second lockout at the end); quick gives its probes what the keys'
// windows have room for, thorough sends them all, and the explored
// requests that go with them. The low figure counts tracked videos apart
// from the feed's limit, the high one as sharing it (the contract leaves
// it open). On a virtual clock (--control-clock, the bundled simulator) no
// wait is real: the suite moves the simulator's clock instead.
type estimate struct {
	profile   probe.Profile
	virtual   bool
	low, high time.Duration // waiting for rate windows
}

// baseWindows are the windows of the specs besides the probes and the
// explored requests: at least the burst's, at most its Retry-After and the
// second lockout's too (measured: a quick run in real time, 62 s).
const baseLow, baseHigh = 1, 2

// virtualHigh is the most a run on a simulator's clock takes, whatever
// its profile: thorough's 2,000 requests take 2 s on a fast machine, 50 s
// on a shared 2-core one.
const virtualHigh = 2 * time.Minute

// estimateOf is the estimate of a profile ("" is quick; a name that is no
// profile, which a run refuses, is estimated as quick).
func estimateOf(name string, virtual bool) estimate {
	p, err := probe.ParseProfile(name)
	if err != nil {
		p = probe.Quick
	}
	e := estimate{profile: p, virtual: virtual}
	if virtual {
		// no wait is real: the run takes what its requests take,
		// seconds to a minute or two on a simulator
		e.high = virtualHigh
		return e
	}
	low, high := baseLow, baseHigh
	if p == probe.Thorough {
		// (a catalogue that cannot be read leaves the base alone: the
		// run says why)
		if c, ok := profileCost(p); ok {
			low, high = low+c.Windows(), high+c.SharedWindows()
		}
	}
	e.low, e.high = time.Duration(low)*schemas.RateWindow, time.Duration(high)*schemas.RateWindow
	return e
}

// profileCost is what a profile's probes and explored requests send, on
// each key and without a valid key; quick's probes are within the budget
// of its plan (in real time less: what the windows have room for). The
// probes are generated once in a process.
var profileCost = func() func(probe.Profile) (probe.Cost, bool) {
	var once sync.Once
	var probes []probe.Probe
	var err error
	return func(p probe.Profile) (probe.Cost, bool) {
		once.Do(func() {
			var cat catalogue.Catalogue
			if cat, err = catalogue.Load(); err == nil {
				probes, err = probe.Generate(cat)
			}
		})
		if err != nil {
			return probe.Cost{}, false
		}
		plan := probe.MakePlan(probes, p)
		c := plan.Spent
		if p == probe.Thorough {
			c = plan.All
		}
		out := probe.Cost{Keyed: map[probe.Role]int{}, Videos: map[probe.Role]int{}, Unkeyed: c.Unkeyed}
		for role, n := range c.Keyed {
			out.Keyed[role] = n
		}
		for role, n := range c.Videos {
			out.Videos[role] = n
		}
		b := quickExplore
		if p == probe.Thorough {
			b = thoroughExplore // what decide picks: the corpus's texts are many more
		}
		keys := explore.Keys{Pro: "pro", Free: "free", Video: "video"}
		role := map[explore.Spend]probe.Role{explore.SpendPro: probe.Pro, explore.SpendFree: probe.Free}
		for _, v := range explore.Sample(0, b) { // the seed moves which, not how many
			n := v.Cost()
			r, keyed := role[v.Spend]
			if !keyed {
				out.Unkeyed += n
				continue
			}
			out.Keyed[r] += n
			if req, ok := v.Request(keys); ok && req.Path == schemas.PathVideos {
				out.Videos[r] += n
			}
		}
		return out, true
	}
}()

// deadline is the default --run-deadline of the estimate: 1.5 times the
// longest wait, in whole minutes, and never less than DefaultRunDeadline
// (requests take their own time too, up to --request-timeout each).
func (e estimate) deadline() time.Duration {
	d := (e.high*3/2 + time.Minute - 1).Truncate(time.Minute)
	return max(d, DefaultRunDeadline)
}

// String says the estimate in a line.
func (e estimate) String() string {
	c, _ := profileCost(e.profile)
	if e.virtual {
		return fmt.Sprintf("--profile %s on the simulator's clock: no real wait for rate windows (the suite moves the clock), seconds to a minute or two for its %d probe and explored requests and the specs'", e.profile, c.Total())
	}
	return fmt.Sprintf("--profile %s against a server of %d requests a minute per key: %s waiting for rate windows (%d probe and explored requests and the specs'; the longer if tracked videos share the feed's limit)",
		e.profile, schemas.FeedRequestsPerMinute, e.span(), c.Total())
}

// span is the estimate's range, "13–17 min".
func (e estimate) span() string {
	lo, hi := int(e.low/time.Minute), int(e.high/time.Minute)
	if lo == hi {
		return fmt.Sprintf("about %d min", hi)
	}
	return fmt.Sprintf("%d–%d min", lo, hi)
}

// virtualTarget reports whether a run with c waits on a simulator's clock:
// the bundled simulator's, or --control-clock's.
func (c *Config) virtualTarget() bool { return c.Target == "" || c.ControlClock }
