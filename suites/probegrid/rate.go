package probegrid

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/schemas/catalogue"
	"github.com/tcmkit/tcmkit/schemas/redact"
	"github.com/tcmkit/tcmkit/suites/client"
	"github.com/tcmkit/tcmkit/suites/pace"
	"github.com/tcmkit/tcmkit/suites/probe"
)

// The rate probes measure the limiter instead of poking it once: lockouts
// one after the other (each burst until a 429, then the wait its
// Retry-After asks), or the feed and tracked videos interleaved under the
// limit. Whatever the limiter (a sliding window, a fixed one, a bucket),
// no limiter of 20 a minute admits more than admitted(d) in any d; a
// window of half a minute admits more within four lockouts, and so does a
// limiter that the other operation resets.

// admission is one feed request that passed, at the target's time.
type admission struct {
	at   time.Time
	resp *client.Response
}

// admissions is what a rate sequence saw.
type admissions struct {
	key      string
	admitted []admission
	limited  []*client.Response // every 429
	after    []*client.Response // the first answer after waiting a Retry-After
	first    int                // admitted in the first lockout, from a fresh window
	other    *client.Response   // the other key, while the key was throttled
	stopped  *client.Response   // an answer that was neither 200 nor 429
	blocked  string

	stopCause string // why stopped is another requirement's to judge, "" if RATE-LIMIT-429's
}

// mostAdmitted is the most requests any limiter of 20 a minute admits
// within d: a fixed window admits 20 in every window the span touches
// (floor(d/60)+2 of them), which is more than a sliding window or a bucket
// of 20 refilled over a minute admit. A second covers the clocks' grain.
func mostAdmittedIn(d time.Duration) int {
	d += time.Second
	return schemas.FeedRequestsPerMinute * (int(d/schemas.RateWindow) + 2)
}

// admit records a feed 200 and reports whether the admissions still keep
// within every limiter's bound (past it, sending more proves nothing more).
func (a *admissions) admit(at time.Time, resp *client.Response) bool {
	a.admitted = append(a.admitted, admission{at, resp})
	last := a.admitted[len(a.admitted)-1]
	for i, first := range a.admitted {
		n := len(a.admitted) - i
		if d := last.at.Sub(first.at); n > mostAdmittedIn(d) {
			return false
		}
	}
	return true
}

// rateSequence sends the probe's sequence: lockouts on the free key
// (after-burst), or the operations interleaved on the Pro key.
func (pr *prober) rateSequence(ctx context.Context, p probe.Probe) *admissions {
	h, pro := pr.h, pr.keys().Pro
	key := pr.keyOf(p.Role)
	a := &admissions{key: key}
	if key == "" {
		a.blocked = h.Needs("free-key")
		return a
	}
	now := func() time.Time {
		t, err := h.TargetClock().Now(ctx)
		if err != nil {
			return time.Now()
		}
		return t
	}
	// From a fresh window: a window after the suite's last request on the
	// key (the suite knows what it sent; the rest is the target's
	// history).
	if d := h.RoomIn(key, "", schemas.FeedRequestsPerMinute); d > 0 {
		if err := h.Wait(ctx, d, "a fresh window for the rate probes"); err != nil {
			a.blocked = err.Error()
			return a
		}
	}
	// The Pro key is asked once while the key is throttled: in a lane, it
	// is held that long, with room for that request.
	other := func() {}
	defer func() { other() }()
	if key != pro && p.Shape == probe.AfterBurst && pace.InLane(ctx) {
		release, err := h.Pace().Hold(ctx, pro)
		if err == nil {
			other = release
			err = pr.waitRoom(ctx, pro, "", 1, "room in the Pro key's window for one request while the other key is throttled")
		}
		if err != nil {
			a.blocked = err.Error()
			return a
		}
	}
	send := func(req client.Request) *client.Response {
		resp, err := h.Client().Send(ctx, req)
		if err != nil {
			a.blocked = "the target gave no answer to judge: " + h.Redact(err.Error())
		}
		return resp
	}
	// feed sends feed requests (limit 1 to 10, every other one following
	// the cursor of the one before) until a 429, at most most of them pass.
	feed := func(most int) (passed int, ok bool) {
		cursor := ""
		for i := 0; passed < most; i++ {
			resp := send(h.PageRequest(strconv.Itoa(i%10+1), cursor, key))
			if resp == nil {
				return passed, false
			}
			switch resp.Status {
			case http.StatusOK:
				passed++
				if !a.admit(now(), resp) {
					return passed, false
				}
				if _, next := h.PageShape(resp); i%2 == 0 {
					cursor = next
				} else {
					cursor = ""
				}
			case http.StatusTooManyRequests:
				a.limited = append(a.limited, resp)
				return passed, true
			default:
				a.stopped, a.stopCause = resp, h.Elsewhere(resp, catalogue.RateLimit429)
				return passed, false
			}
		}
		return passed, true
	}
	retryAfter := func(resp *client.Response) (time.Duration, bool) {
		d, err := client.ParseRetryAfter(resp.Header.Get("Retry-After"), client.ServerTime(resp.Header, time.Now()))
		return d, err == nil && d <= h.MaxWait()
	}
	if p.Shape == probe.BothOps {
		// Three times: tracked videos, then the feed up to one request
		// under the limit. Whether the operations share the limit is
		// open; that one resets the other's count is not.
		ids := h.KnownVideoIDs(ctx, 1)
		if len(ids) == 0 {
			ids = []string{h.InventedID(0, 24)}
		}
		for range 3 {
			if send(h.VideosRequest(ids, key)) == nil {
				return a
			}
			if _, ok := feed(schemas.FeedRequestsPerMinute - 1); !ok {
				return a
			}
		}
		return a
	}
	for l := range probe.Lockouts {
		passed, ok := feed(mostAdmittedIn(0) + 1)
		if l == 0 {
			a.first = passed
		}
		if !ok || len(a.limited) <= l {
			return a
		}
		throttled := a.limited[len(a.limited)-1]
		if l == 0 && pro != key && len(h.Client().RecentUses(pro, schemas.RateWindow)) < schemas.FeedRequestsPerMinute {
			a.other = send(h.LimitRequest("1", pro))
		}
		if l == 0 {
			other()
			other = func() {}
		}
		d, ok := retryAfter(throttled)
		if !ok {
			return a // the Retry-After specs judge it
		}
		if err := h.Wait(ctx, d, "what Retry-After said, between the lockouts that measure the window"); err != nil {
			a.blocked = err.Error()
			return a
		}
		if resp := send(h.LimitRequest("1", key)); resp != nil {
			a.after = append(a.after, resp)
			switch resp.Status {
			case http.StatusOK:
				if !a.admit(now(), resp) {
					return a
				}
			case http.StatusTooManyRequests:
				a.limited = append(a.limited, resp)
				return a
			}
		}
	}
	return a
}

// check judges one requirement on the sequence: what only the sequence
// knows (its window was fresh, it waited what Retry-After said, it held
// the other key). The rules of any answer are the contract oracle's,
// which sees every one of them: a Retry-After that is no delta-seconds or
// HTTP-date, more admitted in a span than any limiter of 20 a minute
// admits (admittedBound), an answer that is neither 200 nor 429 (its status
// table, a 503 that asks to come back later RATE-LIMIT-429's).
func (a *admissions) check(id catalogue.ID) ([]string, string) {
	if a.blocked != "" {
		return nil, a.blocked
	}
	var out []string
	switch id {
	case catalogue.RateLimit429:
		if a.stopped != nil && a.stopCause != "" {
			return nil, a.stopCause
		}
	case catalogue.RateAllows20:
		if a.first < schemas.FeedRequestsPerMinute && len(a.limited) > 0 {
			out = append(out, fmt.Sprintf("%s: 429 after %d feed requests of key %s passed from a fresh window, want %d to pass", a.limited[0].Request, a.first, redact.Form(a.key), schemas.FeedRequestsPerMinute))
		}
	case catalogue.RateRetryAfter:
		for _, resp := range a.after {
			if resp.Status == http.StatusTooManyRequests {
				out = append(out, fmt.Sprintf("%s: 429 after waiting what Retry-After said (Retry-After: %q)", resp.Request, resp.Header.Get("Retry-After")))
			}
		}
	case catalogue.RatePerKey:
		if a.other == nil {
			return nil, "the Pro key's own window was full, or no 429 came"
		}
		if a.other.Status == http.StatusTooManyRequests {
			out = append(out, fmt.Sprintf("%s: 429 while key %s was throttled, and the suite had sent fewer than %d requests on this key in the minute before", a.other.Request, redact.Form(a.key), schemas.FeedRequestsPerMinute))
		}
	}
	return out, ""
}
