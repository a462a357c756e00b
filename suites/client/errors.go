package client

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"time"
)

// Error is an exchange that gave no answer the suite can judge. Its message
// names the request first, then what happened.
type Error struct {
	Request Request
	Err     error
}

func (e *Error) Error() string { return e.Request.String() + ": " + e.Err.Error() }

func (e *Error) Unwrap() error { return e.Err }

// RedirectError is a 3xx answer. The client follows no redirect: no answer
// of this API is one, and the key must go nowhere but the target's origin.
type RedirectError struct {
	Status   int
	Location string
}

func (e *RedirectError) Error() string {
	return fmt.Sprintf("answered %d %s to %s; the suite follows no redirect (no answer of this API is a redirect, and keys go only to the target's origin)",
		e.Status, http.StatusText(e.Status), e.Location)
}

// BodyTooLargeError is a body longer than the client reads.
type BodyTooLargeError struct {
	Status   int
	Limit    int64
	Declared int64  // the Content-Length, when it said so up front
	Flag     string // the setting of the limit ("" when the user has none)
}

func (e *BodyTooLargeError) Error() string {
	how := fmt.Sprintf("%s read, then no more", Bytes(e.Limit))
	if e.Declared > 0 {
		how = fmt.Sprintf("its Content-Length says %s; none of it was read", Bytes(e.Declared))
	}
	return fmt.Sprintf("answered %d with a body larger than %s%s: %s", e.Status, Bytes(e.Limit), flagNote(e.Flag), how)
}

// flagNote names the setting of a bound, " (--max-body)", or nothing.
func flagNote(flag string) string {
	if flag == "" {
		return ""
	}
	return " (" + flag + ")"
}

// NotReleasedError is a rate limiter that does not release: a 429 whose
// Retry-After was waited for, and a whole window after it, still 429. The
// target cannot be judged by requests of that key (a tcmkit simulator on
// its manual clock, judged without --control-clock, is such a target).
type NotReleasedError struct {
	RetryAfter string // the last 429's Retry-After
	Attempts   int
}

func (e *NotReleasedError) Error() string {
	return fmt.Sprintf("the rate limiter does not release: still 429 after %d attempts, having waited what Retry-After said (%q) and then a whole window (a tcmkit simulator on its manual clock needs --control-clock)", e.Attempts, e.RetryAfter)
}

// TimeoutError is an exchange that did not finish within the request timeout.
type TimeoutError struct {
	Timeout  time.Duration
	Status   int    // 0: not even the headers came
	Received int    // bytes of the body by then
	Flag     string // the setting of the timeout ("" when the user has none)
}

func (e *TimeoutError) Error() string {
	if e.Status == 0 {
		return fmt.Sprintf("no answer within %s%s: no response headers came", e.Timeout, flagNote(e.Flag))
	}
	return fmt.Sprintf("no complete answer within %s%s: status %d came, then %s of the body", e.Timeout, flagNote(e.Flag), e.Status, Bytes(int64(e.Received)))
}

// CutError is a body that ended before it was whole: the connection closed
// or failed mid-body.
type CutError struct {
	Status   int
	Received int
	Declared string // Content-Length, if sent
	Err      error
}

func (e *CutError) Error() string {
	want := ""
	if e.Declared != "" {
		want = " of the " + e.Declared + " its Content-Length announced"
	}
	return fmt.Sprintf("answered %d, then the body broke off after %s%s: %v", e.Status, Bytes(int64(e.Received)), want, e.Err)
}

func (e *CutError) Unwrap() error { return e.Err }

var errTimeout = errors.New("request timeout")

// Bytes prints a size the way people read it: "512 B", "4 MiB", "1.5 GiB".
func Bytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	f, i := float64(n), -1
	for f >= unit && i < 4 {
		f /= unit
		i++
	}
	s := fmt.Sprintf("%.1f", f)
	if f == math.Trunc(f) {
		s = fmt.Sprintf("%.0f", f)
	}
	return s + " " + []string{"KiB", "MiB", "GiB", "TiB", "PiB"}[i]
}

// Human prints a long wait the way people read it: "2m0s", "365 days".
func Human(d time.Duration) string {
	if d == math.MaxInt64 {
		return "more than 292 years"
	}
	if d >= 48*time.Hour {
		return fmt.Sprintf("%d days", d/(24*time.Hour))
	}
	return d.String()
}
