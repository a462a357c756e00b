package probegrid

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/schemas/catalogue"
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
	admitted []admission
	limited  []*client.Response // every 429
	after    []*client.Response // the first answer after waiting a Retry-After
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
	a := &admissions{}
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
	// room is what the suite's count leaves in a key's window now.
	room := func(key string) int {
		return schemas.FeedRequestsPerMinute - len(h.Client().RecentUses(key, schemas.RateWindow))
	}
	if p.Shape == probe.AfterBurst {
		// The lockouts' window is the sequence's from here on, fresh: the
		// oracle judges their answers by it (RATE-ALLOWS-20 from the fresh
		// window, RATE-RETRY-AFTER after each wait).
		defer h.Own(key, room(key))()
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
	// the cursor of the one before) until a 429, at most most of them
	// pass; false when the sequence stops.
	feed := func(most int) bool {
		cursor, passed := "", 0
		for i := 0; passed < most; i++ {
			resp := send(h.PageRequest(strconv.Itoa(i%10+1), cursor, key))
			if resp == nil {
				return false
			}
			switch resp.Status {
			case http.StatusOK:
				passed++
				if !a.admit(now(), resp) {
					return false
				}
				if _, next := h.PageShape(resp); i%2 == 0 {
					cursor = next
				} else {
					cursor = ""
				}
			case http.StatusTooManyRequests:
				a.limited = append(a.limited, resp)
				return true
			default:
				a.stopped, a.stopCause = resp, h.Elsewhere(resp, catalogue.RateLimit429)
				return false
			}
		}
		return true
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
			if !feed(schemas.FeedRequestsPerMinute - 1) {
				return a
			}
		}
		return a
	}
	for l := range probe.Lockouts {
		if !feed(mostAdmittedIn(0)+1) || len(a.limited) <= l {
			return a
		}
		throttled := a.limited[len(a.limited)-1]
		if n := room(pro); l == 0 && pro != key && n > 0 {
			// the suite's count of the Pro key's minute leaves it room:
			// the oracle judges a 429 to it (RATE-PER-KEY)
			release := h.Own(pro, n)
			a.other = send(h.LimitRequest("1", pro))
			release()
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

// check holds what the sequence's probe needs to be judged; it judges
// nothing itself. Every answer is the contract oracle's, told what the
// sequence knows (Host.Own: the key's window was the sequence's from a
// fresh one, it waited what Retry-After said and sent nothing meanwhile,
// the Pro key's minute left it room): a 429 from a fresh window before 20
// passed (RATE-ALLOWS-20), a 429 after waiting what Retry-After said
// (RATE-RETRY-AFTER), the Pro key's 429 while the key was throttled
// (RATE-PER-KEY), more admitted in a span than any limiter of 20 a minute
// admits and an answer that is neither 200 nor 429 (RATE-LIMIT-429), a
// Retry-After that is no delta-seconds or HTTP-date.
func (a *admissions) check(id catalogue.ID) ([]string, string) {
	if a.blocked != "" {
		return nil, a.blocked
	}
	switch id {
	case catalogue.RateLimit429:
		if a.stopped != nil && a.stopCause != "" {
			return nil, a.stopCause
		}
	case catalogue.RatePerKey:
		if a.other == nil {
			return nil, "the Pro key's own window was full, or no 429 came"
		}
	}
	return nil, ""
}
