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
	r := &rateRun{pr: pr, ctx: ctx, key: pr.keyOf(p.Role), a: &admissions{}, other: func() {}}
	if r.key == "" {
		r.a.blocked = r.pr.h.Needs("free-key")
		return r.a
	}
	if !r.freshWindow() {
		return r.a
	}
	if p.Shape == probe.AfterBurst {
		// The lockouts' window is the sequence's from here on, fresh: the
		// oracle judges their answers by it (RATE-ALLOWS-20 from the fresh
		// window, RATE-RETRY-AFTER after each wait).
		defer r.pr.h.Own(r.key, r.room(r.key))()
	}
	defer func() { r.other() }()
	if p.Shape == probe.BothOps {
		r.bothOperations()
		return r.a
	}
	if p.Shape == probe.AfterBurst && r.key != r.pr.h.Keys().Pro && pace.InLane(ctx) && !r.holdPro() {
		return r.a
	}
	r.lockouts()
	return r.a
}

// rateRun is a rate sequence under way: the key it measures and what it
// saw.
type rateRun struct {
	pr  *prober
	ctx context.Context
	key string
	a   *admissions
	// other releases the Pro key held for the one request asked of it
	// while the key is throttled
	other func()
}

// now is the target's time.
func (r *rateRun) now() time.Time {
	t, err := r.pr.h.TargetClock().Now(r.ctx)
	if err != nil {
		return time.Now()
	}
	return t
}

// room is what the suite's count leaves in a key's window now.
func (r *rateRun) room(key string) int {
	return schemas.FeedRequestsPerMinute - len(r.pr.h.Client().RecentUses(key, schemas.RateWindow))
}

// freshWindow waits for a window after the suite's last request on the
// key (the suite knows what it sent; the rest is the target's history);
// false when the sequence is blocked.
func (r *rateRun) freshWindow() bool {
	if d := r.pr.h.RoomIn(r.key, "", schemas.FeedRequestsPerMinute); d > 0 {
		if err := r.pr.h.Wait(r.ctx, d, "a fresh window for the rate probes"); err != nil {
			r.a.blocked = err.Error()
			return false
		}
	}
	return true
}

// holdPro holds the Pro key, with room for one request, for the other key's
// lockouts: in a lane, it is asked once while the key is throttled. False
// when the sequence is blocked.
func (r *rateRun) holdPro() bool {
	pro := r.pr.h.Keys().Pro
	release, err := r.pr.h.Pace().Hold(r.ctx, pro)
	if err == nil {
		r.other = release
		err = r.pr.waitRoom(r.ctx, pro, "", 1, "room in the Pro key's window for one request while the other key is throttled")
	}
	if err != nil {
		r.a.blocked = err.Error()
		return false
	}
	return true
}

// send sends req; nil (and the sequence blocked) when no answer came.
func (r *rateRun) send(req client.Request) *client.Response {
	resp, err := r.pr.h.Client().Send(r.ctx, req)
	if err != nil {
		r.a.blocked = "the target gave no answer to judge: " + r.pr.h.Redact(err.Error())
	}
	return resp
}

// feed sends feed requests (limit 1 to 10, every other one following the
// cursor of the one before) until a 429, at most most of them pass; false
// when the sequence stops.
func (r *rateRun) feed(most int) bool {
	h, a := r.pr.h, r.a
	cursor, passed := "", 0
	for i := 0; passed < most; i++ {
		resp := r.send(h.PageRequest(strconv.Itoa(i%10+1), cursor, r.key))
		if resp == nil {
			return false
		}
		switch resp.Status {
		case http.StatusOK:
			passed++
			if !a.admit(r.now(), resp) {
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

// bothOperations asks, three times, tracked videos and then the feed up to
// one request under the limit. Whether the operations share the limit is
// open; that one resets the other's count is not.
func (r *rateRun) bothOperations() {
	ids := r.pr.h.KnownVideoIDs(r.ctx, 1)
	if len(ids) == 0 {
		ids = []string{r.pr.h.InventedID(0, 24)}
	}
	for range 3 {
		if r.send(r.pr.h.VideosRequest(ids, r.key)) == nil {
			return
		}
		if !r.feed(schemas.FeedRequestsPerMinute - 1) {
			return
		}
	}
}

// lockouts bursts until a 429 and waits what its Retry-After says, lockout
// after lockout; after the first, the Pro key is asked once while the key
// is throttled.
func (r *rateRun) lockouts() {
	h, a, pro := r.pr.h, r.a, r.pr.h.Keys().Pro
	for l := range probe.Lockouts {
		if !r.feed(mostAdmittedIn(0)+1) || len(a.limited) <= l {
			return
		}
		throttled := a.limited[len(a.limited)-1]
		if n := r.room(pro); l == 0 && pro != r.key && n > 0 {
			// the suite's count of the Pro key's minute leaves it room:
			// the oracle judges a 429 to it (RATE-PER-KEY)
			release := h.Own(pro, n)
			a.other = r.send(h.LimitRequest("1", pro))
			release()
		}
		if l == 0 {
			r.other()
			r.other = func() {}
		}
		d, err := client.ParseRetryAfter(throttled.Header.Get("Retry-After"), client.ServerTime(throttled.Header, time.Now()))
		if err != nil || d > h.MaxWait() {
			return // the Retry-After specs judge it
		}
		if err := h.Wait(r.ctx, d, "what Retry-After said, between the lockouts that measure the window"); err != nil {
			a.blocked = err.Error()
			return
		}
		if resp := r.send(h.LimitRequest("1", r.key)); resp != nil {
			a.after = append(a.after, resp)
			switch resp.Status {
			case http.StatusOK:
				if !a.admit(r.now(), resp) {
					return
				}
			case http.StatusTooManyRequests:
				a.limited = append(a.limited, resp)
				return
			}
		}
	}
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
