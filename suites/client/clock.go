package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/tcmkit/tcmkit/simulator"
)

// Clock is the target's time, seen by the suite: how long the suite waits
// for a rate window, and when "now" is. Against the bundled simulator the
// clock is moved through its control API; against any other target it is
// the wall clock and waiting means sleeping.
type Clock interface {
	// Wait lets d pass on the target's clock.
	Wait(ctx context.Context, d time.Duration) error
	// Now is the target's current time.
	Now(ctx context.Context) (time.Time, error)
}

// ErrNoRetryAfter is returned by ParseRetryAfter for a missing header.
var ErrNoRetryAfter = errors.New("no Retry-After header")

// ParseRetryAfter reads a Retry-After value exactly as RFC 9110 §10.2.3
// defines it: delta-seconds (one or more digits, of any size: a value past
// what a Duration holds is the longest Duration) or an HTTP-date (any of
// the three forms), which is turned into a wait from now (the server's
// time, see ServerTime). A date in the past means no wait. Anything else,
// such as "-5", "1.5", "3s" or an ISO 8601 date, is an error that says so.
func ParseRetryAfter(v string, now time.Time) (time.Duration, error) {
	v = strings.Trim(v, " \t") // optional whitespace around a field value
	if v == "" {
		return 0, ErrNoRetryAfter
	}
	if strings.Trim(v, "0123456789") == "" {
		return deltaSeconds(v), nil
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, fmt.Errorf("Retry-After %q is neither delta-seconds (digits only) nor an HTTP-date", v)
	}
	return max(t.Sub(now), 0), nil
}

// deltaSeconds is a string of digits as a Duration, saturated.
func deltaSeconds(digits string) time.Duration {
	const most = time.Duration(math.MaxInt64)
	n, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || n > int64(most/time.Second) {
		return most
	}
	return time.Duration(n) * time.Second
}

// ServerTime is the time a response was made, by the server's own clock
// (its Date header) when it sent one, else fallback. An HTTP-date
// Retry-After is relative to it, so client clock skew does not matter.
func ServerTime(h http.Header, fallback time.Time) time.Time {
	if t, err := http.ParseTime(h.Get("Date")); err == nil {
		return t
	}
	return fallback
}

// WallClock is real time: Wait sleeps (or returns early when ctx ends).
type WallClock struct{}

// Wait sleeps for d.
func (WallClock) Wait(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Now is time.Now.
func (WallClock) Now(context.Context) (time.Time, error) { return time.Now(), nil }

// ControlClock is the clock of a tcmkit simulator in manual mode, moved
// through its control API: waiting advances virtual time at once, so the
// rate-limit specs take no real time.
type ControlClock struct {
	simulator.Control
}

// Virtual reports that waiting on this clock takes no real time.
func (ControlClock) Virtual() bool { return true }

// Note is what a waiting line adds about the clock: nothing for real time,
// and a word that no real time passes for a virtual clock.
func Note(c Clock) string {
	if v, ok := c.(interface{ Virtual() bool }); ok && v.Virtual() {
		return " on the simulator's clock, no real wait"
	}
	return ""
}

// Wait advances the simulator's clock by d.
func (c ControlClock) Wait(ctx context.Context, d time.Duration) error {
	return c.Advance(ctx, d)
}

// countdownStep is how often a wait on real time says how long is left.
var countdownStep = 10 * time.Second

// Countdown lets d pass on clock. On real time it writes how long is left
// to log every countdownStep ("  … 40 s left"), so that a long wait for a
// rate window is not taken for a hang; a virtual clock moves at once.
func Countdown(ctx context.Context, clock Clock, d time.Duration, log io.Writer) error {
	if _, real := clock.(WallClock); !real || log == nil || d <= countdownStep {
		return clock.Wait(ctx, d)
	}
	for left := d; left > 0; left -= countdownStep {
		if err := clock.Wait(ctx, min(left, countdownStep)); err != nil {
			return err
		}
		if left > countdownStep {
			fmt.Fprintf(log, "  … %s left\n", Seconds((left - countdownStep).Round(time.Second)))
		}
	}
	return nil
}
