package simulator

import (
	"math"
	"sync"
	"time"
)

// clock is the simulator's one source of time. In manual mode (speed 0) it
// moves only when advanced; in realtime mode virtual time runs at speed ×
// the real clock, and advancing still adds a jump on top.
type clock struct {
	mu       sync.Mutex
	real     func() time.Time // the wall clock; tests replace it
	speed    float64
	base     time.Time // virtual time at realBase
	realBase time.Time
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
	return c.base.Add(time.Duration(float64(elapsed) * c.speed))
}

// Advance jumps virtual time forward by d (d >= 0) and returns the new time.
func (c *clock) Advance(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.base = c.nowLocked().Add(d)
	c.realBase = c.real()
	return c.base
}

// Set moves virtual time to t (after an import or a reset).
func (c *clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.base = t
	c.realBase = c.real()
}

// Manual reports whether time moves only when advanced.
func (c *clock) Manual() bool { return c.speed <= 0 }

// Speed is the factor of realtime mode, 0 in manual mode.
func (c *clock) Speed() float64 { return max(c.speed, 0) }

// RetryAfter converts a virtual wait into the whole seconds a client must
// wait on its own clock: virtual seconds in manual mode, real seconds in
// realtime mode. It rounds up, so a client that honors it is never early.
func (c *clock) RetryAfter(virtualWait time.Duration) int64 {
	if virtualWait <= 0 {
		return 0
	}
	w := float64(virtualWait)
	if c.speed > 0 {
		w /= c.speed
	}
	secs := math.Ceil(w / float64(time.Second))
	if secs > math.MaxInt32 {
		return math.MaxInt32
	}
	return int64(secs)
}
