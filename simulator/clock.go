package simulator

import (
	"math"
	"sync"
	"time"

	"github.com/tcmkit/tcmkit/simulator/world"
)

// clock is the simulator's one source of time. In manual mode (speed 0) it
// moves only when advanced; in realtime mode virtual time runs at speed ×
// the real clock, and advancing still adds a jump on top.
//
// Rate-limit windows are counted on RateNow: virtual time in manual mode
// (a test advances it), and in realtime mode the real clock plus the
// jumps, whatever the speed: the world may run an hour a minute, but 20
// requests a minute stays 20 a real minute, as the contract says.
type clock struct {
	mu       sync.Mutex
	real     func() time.Time // the wall clock; tests replace it
	speed    float64
	base     time.Time // virtual time at realBase
	realBase time.Time
	jumps    time.Duration // the sum of Advance, for RateNow in realtime mode
}

func newClock(start time.Time, speed float64, real func() time.Time) *clock {
	if real == nil {
		real = time.Now
	}
	return &clock{real: real, speed: speed, base: start, realBase: real()}
}

// Now returns the current virtual time.
func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.nowLocked()
}

func (c *clock) nowLocked() time.Time {
	if c.speed <= 0 {
		return c.base
	}
	elapsed := c.real().Sub(c.realBase)
	// The clock stops at the end of the times it keeps (clockEnd): a
	// realtime clock started near it, or fast, does not run past it.
	if v := float64(elapsed) * c.speed; v < float64(clockEnd.Sub(c.base)) {
		return c.base.Add(time.Duration(v))
	}
	return clockEnd
}

// clockEnd is the latest time the clock keeps (world.MaxTime).
var clockEnd = time.UnixMilli(world.MaxTime).UTC()

// Advance jumps virtual time forward by d (d >= 0) and returns the new time.
func (c *clock) Advance(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.base = c.nowLocked().Add(d)
	if c.base.After(clockEnd) {
		c.base = clockEnd
	}
	c.realBase = c.real()
	c.jumps += d
	return c.base
}

// Set moves virtual time to t (after an import or a reset).
func (c *clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.base = t
	c.realBase = c.real()
}

// ManualClock reports whether the server's clock moves only when advanced
// (Config.Speed 0): then a request arrives at the virtual time it was
// sent, and a judge allows no transit.
func (s *Server) ManualClock() bool { return s.clock.Manual() }

// Manual reports whether time moves only when advanced.
func (c *clock) Manual() bool { return c.speed <= 0 }

// Speed is the factor of realtime mode, 0 in manual mode.
func (c *clock) Speed() float64 { return max(c.speed, 0) }

// RateNow is the time rate-limit windows are counted in.
func (c *clock) RateNow() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.speed <= 0 {
		return c.base
	}
	return c.real().Add(c.jumps)
}

// RetryAfter converts a wait on RateNow into whole seconds, rounded up, so
// that a client that honors it is never early: virtual seconds in manual
// mode (a test advances the clock that much), real seconds in realtime mode.
func (c *clock) RetryAfter(wait time.Duration) int64 {
	if wait <= 0 {
		return 0
	}
	secs := math.Ceil(wait.Seconds())
	if secs > math.MaxInt32 {
		return math.MaxInt32
	}
	return int64(secs)
}
