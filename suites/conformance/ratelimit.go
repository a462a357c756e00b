package conformance

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	. "github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/schemas/catalogue"
	"github.com/tcmkit/tcmkit/schemas/jsondoc"
	"github.com/tcmkit/tcmkit/schemas/redact"
	"github.com/tcmkit/tcmkit/suites/client"
)

// burst is what the rate-limit specs saw: a run of feed requests on one key
// as fast as the target answers, until the first 429.
type burst struct {
	key       string
	used      int                // requests the suite sent on the key in the window before
	allowed   int                // feed requests that must pass: the limit minus used
	passed    int                // feed 200s before the first feed 429
	apart     int                // feed requests that pass when nothing else counts: the limit minus the feed's own used
	most      int                // most feed requests that may pass: apart plus what a bucket refills meanwhile
	elapsed   time.Duration      // how long the burst took
	sent      []*client.Response // every request of the burst, in order
	feed      []*client.Response // its feed requests
	between   []*client.Response // the requests of no key sent between them
	throttled *client.Response   // the first 429, nil if none came
	at        time.Time          // when it came, by the target's clock
	stopped   *client.Response   // an answer that was neither 200 nor 429
	other     *client.Response   // the other key's request right after the 429
	err       error
	repeated  string // why the burst was repeated from a fresh window, "" if it was not
	// release gives back the key the burst owns (Oracle.Own), once the
	// request after its Retry-After was sent; nil when it owns none
	release func()
}

// wait lets d pass on the target's clock, saying so where it is seen at once.
func (s *suite) wait(ctx context.Context, d time.Duration, why string) error {
	if d <= 0 {
		return nil
	}
	line := fmt.Sprintf("waiting %s for the rate limit (%s)%s\n", client.Seconds(d.Round(time.Millisecond)), why, client.Note(s.targetClock()))
	io.WriteString(s.c.Log, line)
	fmt.Fprint(GinkgoWriter, s.Redactor().String(line))
	return client.Countdown(ctx, s.pace, d, s.c.Log)
}

// targetClock is the target's clock: the session's, or the wall clock.
// Its waits move the world (new events); waits for a rate window go
// through the run's Pacer (package pace).
func (s *suite) targetClock() client.Clock {
	if s.clock == nil {
		return client.WallClock{}
	}
	return s.pace.World()
}

// budget waits until the key has room for n more requests in its window,
// by what the suite itself sent on it.
func (s *suite) budget(ctx context.Context, key string, n int) error {
	if d := s.roomIn(key, "", n); d > 0 {
		return s.wait(ctx, d, "so that the key has room in its window")
	}
	return nil
}

// roomIn is how long until the key has room for n more requests of path
// ("": of any path) in its window, by what the suite sent on it.
func (s *suite) roomIn(key, path string, n int) time.Duration {
	limit := schemas.FeedRequestsPerMinute
	uses := s.c.RecentUses(key, schemas.RateWindow)
	if path != "" {
		uses = s.c.RecentUsesOf(key, path, schemas.RateWindow)
	}
	if len(uses)+n <= limit {
		return 0
	}
	return uses[len(uses)+n-limit-1].Add(schemas.RateWindow + paceGrain).Sub(s.pace.ClientTime())
}

// runBurst sends feed requests on key until the first 429, at most until
// more passed than the limit allows.
func (s *suite) runBurst(ctx context.Context, key string, last *client.Request, owned bool) *burst {
	limit := schemas.FeedRequestsPerMinute
	// Whether the operations share one limit is open: the other
	// operations' requests may count (fewer must pass) or not (no more
	// may pass than the feed's own leave room for).
	b := &burst{key: key, used: len(s.c.RecentUses(key, schemas.RateWindow))}
	feedOnly := len(s.c.RecentUsesOf(key, schemas.PathFeed, schemas.RateWindow))
	b.allowed = max(limit-b.used, 0)
	b.apart = max(limit-feedOnly, 0)
	start := time.Now()
	_, virtual := s.targetClock().(interface{ Virtual() bool })
	for {
		// A token bucket refills during the burst; a sliding window does
		// not. A virtual clock does not move during the burst (the
		// rate-limit specs are Serial), so nothing refills there.
		b.elapsed = time.Since(start)
		refill := 0
		if !virtual {
			// (and a second of the clocks' grain, as the oracle reads it)
			refill = int(float64(limit) * (b.elapsed + time.Second).Seconds() / schemas.RateWindow.Seconds())
		}
		b.most = b.apart + refill
		if len(b.feed) > b.most {
			return b // more passed than may: no 429 in time
		}
		if req, ok := betweenRequest(len(b.feed), len(b.between)); ok {
			// A request of no key between the feed's: no request of the
			// key, it must not count (one that did would throttle the key
			// early). Whatever it answers, the burst goes on; the oracle
			// judges it. (Requests of the key whose counting is open, the
			// other operation and health, go where every reading gives one
			// verdict: the second lockout, once the key is throttled.)
			resp, err := s.c.Send(ctx, req)
			if healthCut(req, err) {
				b.between = append(b.between, nil) // HEALTH-OK's finding; the burst goes on
				continue
			}
			if err != nil {
				b.err = err
				return b
			}
			b.sent, b.between = append(b.sent, resp), append(b.between, resp)
			continue
		}
		if !owned && len(b.feed) == b.allowed {
			// The suite's count of the window is all it knows of the key:
			// full now, whatever came before. Owned from here, the oracle
			// judges the 429 and the request after its Retry-After, and the
			// other key asked meanwhile.
			b.release, owned = s.own(key, 0), true
		}
		if virtual && len(b.feed) == b.allowed && b.allowed > 0 {
			// The request a limiter must refuse comes a fraction of a
			// second into the window, so that the window frees at no whole
			// second from it: a Retry-After truncated or rounded to whole
			// seconds is then short, and its retry meets a 429.
			if err := s.wait(ctx, burstOffset, "into the window, so that its end falls between two seconds"); err != nil {
				b.err = err
				return b
			}
		}
		resp, err := s.c.Send(ctx, forwardedFrom(burstRequest(b.feed, key, last), len(b.feed)))
		if err != nil {
			b.err = err
			return b
		}
		b.sent, b.feed = append(b.sent, resp), append(b.feed, resp)
		switch resp.Status {
		case http.StatusOK:
			b.passed++
		case http.StatusTooManyRequests:
			b.throttled = resp
			b.at, b.err = s.targetClock().Now(ctx)
			b.elapsed = time.Since(start)
			return b
		default:
			b.stopped = resp
			return b
		}
	}
}

// betweenRequest is the request of no key the burst sends after its feed
// requests number fed, when one is due: after the 1st, health without a
// key (the usage the contract shows), after the 3rd, the feed without a
// key (401). Neither is a request of the key: a limiter that counts them
// against it (by the client's address, before authentication) throttles
// the key early.
func betweenRequest(fed, sent int) (client.Request, bool) {
	switch {
	case sent == 0 && fed == 1:
		return healthRequest(), true
	case sent == 1 && fed == 3:
		return limitRequest("1", ""), true
	}
	return client.Request{}, false
}

// burstOffset is how far into the window, on a virtual clock, the burst's
// request past the limit comes: more than half a second, so that rounding
// to the nearest second is short as well as truncating.
const burstOffset = 700 * time.Millisecond

// burstRequest is the next feed request of a burst, after its feed
// requests sent. The queries vary (limit 1 to 10) so that a limit counted
// per query, not per key, shows; they repeat, so that a server that
// answers a throttled request with an earlier answer to the same query
// shows too; and every other one follows the nextCursor of the one
// before, at its page size, so that a limit that does not count cursor
// pages shows (they are feed requests like the others).
//
// Every fourth request is last, when the run knows a last page of the
// key's feed: a limiter that does not count last pages shows too.
func burstRequest(sent []*client.Response, key string, last *client.Request) client.Request {
	i := len(sent)
	if last != nil && i%4 == 3 {
		return *last
	}
	if i%2 == 1 && sent[i-1].Status == http.StatusOK {
		if _, next := pageShape(sent[i-1]); next != "" {
			// at the page size of the page the cursor came with
			return pageRequest(strconv.Itoa((i-1)%10+1), next, key)
		}
	}
	return limitRequest(strconv.Itoa(i%10+1), key)
}

// virtualClock reports whether waiting on the target's clock takes no real
// time (a tcmkit simulator's clock, moved through its control API).
func (s *suite) virtualClock() bool {
	v, ok := s.targetClock().(interface{ Virtual() bool })
	return ok && v.Virtual()
}

// runBursts sends the burst from a fresh window. The suite knows only what
// it sent itself; a run just before it or another job on the same key may
// have spent part of the window. On a virtual clock a whole window passes
// first, at no cost. Otherwise a 429 that comes too early is read as
// history the suite did not make: the burst is repeated once, a whole
// window after that 429 (so that no grant before it remains): at most one
// window more, and a server that really allows fewer still fails. A
// --max-wait shorter than a window forbids the repeat.
func (s *suite) runBursts(ctx context.Context) *burst {
	key, other := s.tg.burstKey(), s.tg.otherKey()
	last := s.lastPage(ctx, key)
	var release func()
	if s.virtualClock() {
		// a window and a grain: a request exactly a window old may still
		// count (that is Retry-After's to judge, not the burst's)
		if err := s.wait(ctx, schemas.RateWindow+paceGrain, "a fresh window for the burst, whatever was sent before"); err != nil {
			return &burst{err: err}
		}
		s.c.Forget(key)
		s.c.Forget(other)
		release = s.own(key, schemas.FeedRequestsPerMinute)
	} else if other != "" {
		if err := s.budget(ctx, other, 1); err != nil {
			return &burst{err: err}
		}
	}
	if release == nil && schemas.RateWindow > s.cfg.MaxWait {
		// no repeat can tell the key's history from a limiter that admits
		// too few: the suite's count of the window stands for it
		release = s.own(key, schemas.FeedRequestsPerMinute-len(s.c.RecentUses(key, schemas.RateWindow)))
	}
	b := s.runBurst(ctx, key, last, release != nil)
	if release != nil {
		b.release = release
	}
	var again string
	switch {
	case b.err != nil || b.stopped != nil:
	case b.throttled == nil:
		// A fixed window may have turned over during the burst.
		again = "a burst that saw no 429 (a fixed window may have turned over during it)"
	case b.passed < b.allowed:
		again = fmt.Sprintf("a burst throttled after %d requests: the key's window may hold requests the suite did not send (a run just before, another job)", b.passed)
	}
	if again != "" && schemas.RateWindow <= s.cfg.MaxWait {
		b.giveBack()
		now, err := s.targetClock().Now(ctx)
		if err == nil && b.throttled != nil {
			err = s.wait(ctx, schemas.RateWindow+paceGrain-now.Sub(b.at), "a whole window after the 429, to repeat "+again)
		} else if err == nil {
			// and more than the oracle's grain: a fixed window that turned
			// over in the burst does not turn over in the repeat
			err = s.wait(ctx, schemas.RateWindow+paceGrain+beyondTurn, "a fresh window, to repeat "+again)
		}
		if err != nil {
			return &burst{err: err}
		}
		s.c.Forget(key)
		// the repeat's window is fresh: the oracle judges it on the
		// suite's word (RATE-ALLOWS-20, RATE-LIMIT-429 past the limit)
		release := s.own(key, schemas.FeedRequestsPerMinute)
		b = s.runBurst(ctx, key, last, true)
		b.release, b.repeated = release, again
	}
	if b.throttled != nil && other != "" {
		b.other, b.err = s.otherKey(ctx, b, other)
	}
	return b
}

// beyondTurn is what a repeat after a burst that saw no 429 waits past a
// window: the oracle places a fixed window's turn in a span widened by a
// second either side, and the repeat's span must not meet that one a
// minute on.
const beyondTurn = 3 * time.Second

// own tells the oracle that the run holds the key with room for room
// more requests in its window (Oracle.Own), until the function returned.
func (s *suite) own(key string, room int) func() {
	if s.or == nil {
		return func() {}
	}
	return s.or.Own(key, room)
}

// giveBack gives back the key the burst owns, if any.
func (b *burst) giveBack() {
	if b.release != nil {
		b.release()
		b.release = nil
	}
}

// forwardedFrom claims that the i-th request of a burst was forwarded for
// another client address (RFC 7239 §8.1: anyone can write these fields;
// the limit is per API key, not per address): a limiter that counts per
// claimed address gives each request a fresh budget, and shows.
func forwardedFrom(r client.Request, i int) client.Request {
	addr := fmt.Sprintf("192.0.2.%d", i%250+1) // TEST-NET-1 (RFC 5737): no one's address
	r.Header = append(slices.Clone(r.Header), client.Field{Name: "X-Forwarded-For", Value: addr}, client.Field{Name: "Forwarded", Value: "for=" + addr})
	return r
}

// lastPage is the request of a last page of the key's feed (a cursor page
// whose nextCursor was null) from a walk the run makes anyway (the Pro
// key's at the largest page size, the free key's; on a virtual clock, where
// it costs no window, any key's), or nil. On a feed of one page it is the
// first page: a last page too.
func (s *suite) lastPage(ctx context.Context, key string) *client.Request {
	var w *walk
	switch key {
	case s.tg.Free:
		w = s.walkOnce(ctx, key, freeWalkLimit)
	case s.tg.Pro:
		w = s.walkOnce(ctx, key, strconv.Itoa(schemas.MaxPageSize))
	default:
		if !s.virtualClock() {
			return nil // a walk of its own would cost the burst's window
		}
		w = s.walkOnce(ctx, key, strconv.Itoa(schemas.MaxPageSize))
	}
	if !w.Complete || len(w.Pages) == 0 {
		return nil
	}
	r := w.Pages[len(w.Pages)-1].Resp.Request // a feed of one page: its first
	return &r
}

// otherKey sends one request on the other key while the burst key is
// throttled. A 429 there may be the other key's own history (a run before,
// another job): then the suite honours its Retry-After, throttles the
// burst key again and asks once more; only a second 429 counts.
func (s *suite) otherKey(ctx context.Context, b *burst, other string) (*client.Response, error) {
	resp, err := s.c.Send(ctx, limitRequest("1", other))
	if err != nil || resp.Status != http.StatusTooManyRequests {
		return resp, err
	}
	d, perr := client.ParseRetryAfter(resp.Header.Get("Retry-After"), client.ServerTime(resp.Header, time.Now()))
	if perr != nil || d > s.cfg.MaxWait {
		return resp, nil
	}
	if err := s.wait(ctx, d, "the other key's Retry-After: it may be throttled by its own history"); err != nil {
		return nil, err
	}
	if again := s.runBurst(ctx, b.key, nil, true); again.err != nil || again.throttled == nil {
		return resp, again.err
	}
	// its own history waited out, it has room for this request: the
	// oracle judges a 429 to it while the burst key is throttled
	defer s.own(other, 1)()
	return s.c.Send(ctx, limitRequest("1", other))
}

// rateLimit is what the specs of the rate-limit container share: the
// burst, sent once by whichever of them runs first, and the request sent
// after waiting what Retry-After said. The container is Ordered and
// Serial: nothing else may spend the keys' windows meanwhile.
type rateLimit struct {
	s        *suite
	b        *burst
	after    *client.Response
	afterErr error
}

// resumed is the request sent once the burst's Retry-After was waited
// (afterRetryAfter), sent on first use; it fails the spec when it could
// not be sent.
func (rl *rateLimit) resumed(ctx context.Context, b *burst) *client.Response {
	GinkgoHelper()
	if rl.after == nil && rl.afterErr == nil {
		rl.after, rl.afterErr = rl.s.afterRetryAfter(ctx, b)
		b.giveBack()
	}
	if rl.afterErr != nil {
		rl.s.failf("%v", rl.afterErr)
	}
	rl.s.c.Saw(ctx, rl.after) // the evidence of every spec that judges it
	return rl.after
}

// burst returns the burst, sending it on first use.
func (rl *rateLimit) burst(ctx context.Context) *burst {
	GinkgoHelper()
	if rl.b == nil {
		rl.b = rl.s.runBursts(ctx)
	}
	// what the burst sent is the evidence of every spec that judges it
	rl.s.c.Saw(ctx, append(slices.Clone(rl.b.sent), rl.b.other)...)
	if rl.b.err != nil {
		rl.s.failf("the burst could not be sent: %v", rl.b.err)
	}
	return rl.b
}

// throttled returns the burst, skipping the spec when it saw no 429.
func (rl *rateLimit) throttled(ctx context.Context) *burst {
	GinkgoHelper()
	b := rl.burst(ctx)
	if b.throttled == nil {
		Skip("the burst saw no 429")
	}
	return b
}

// describe names the burst for a failure message.
func (b *burst) describe() string {
	noun := "requests"
	if len(b.feed) == 1 {
		noun = "request"
	}
	d := fmt.Sprintf("%d %s GET %s?limit=1..9 (every other one with the cursor of the one before, every 4th a last page) on key %s in %s (%d sent on it by the suite in the minute before)",
		len(b.feed), noun, schemas.PathFeed, redact.Form(b.key), b.elapsed.Round(time.Millisecond), b.used)
	if len(b.between) > 0 {
		d += fmt.Sprintf(", and between them %d without a key (health, the feed), which must not count", len(b.between))
	}
	if b.repeated != "" {
		d += ", repeated from a fresh window after " + b.repeated
	}
	return d
}

// rateLimitSpecs: 20 feed requests a minute pass on a fresh key, the next
// gets 429 with Retry-After, waiting what it says lets the next through,
// and another key is not throttled meanwhile.
func (s *suite) rateLimitSpecs() {
	rl := &rateLimit{s: s}
	AfterAll(func() {
		if rl.b != nil {
			rl.b.giveBack()
		}
	})

	// The burst owns its key (Oracle.Own) from a window it knows: the
	// oracle judges each answer on it (RATE-ALLOWS-20: a 429 before the
	// limit; RATE-LIMIT-429: more admitted than any limiter admits, a
	// throttle that is no 429; RATE-RETRY-AFTER; RATE-PER-KEY: the other
	// key refused while it is throttled). The specs only block where the
	// burst did not reach what they need.
	It("allows 20 requests a minute from a fresh window", requires(catalogue.RateAllows20), func(ctx SpecContext) {
		b := rl.burst(ctx)
		if b.stopped != nil && b.passed < b.allowed {
			// not throttled: refused, or broken: the oracle judges it by
			// its rule
			s.Block(fmt.Sprintf("the burst stopped at an answer that is no 200 and no 429 after %d passed: %s", b.passed, b.stopped))
		}
	})

	It("answers 429 with an ErrorBody once the limit is exceeded", requires(catalogue.RateLimit429, catalogue.ErrorBody, catalogue.ContentTypeJSON), func(ctx SpecContext) {
		b := rl.burst(ctx)
		switch {
		case b.stopped != nil && s.elsewhere(b.stopped, catalogue.RateLimit429) != "":
			// another rule's answer (a handed-out cursor refused, a valid
			// key refused): the oracle judges it; the burst never reached
			// the limit
			s.Block(s.elsewhere(b.stopped, catalogue.RateLimit429))
		case b.stopped != nil:
			s.Block(fmt.Sprintf("%s: feed request %d answered %d, no 429 (the oracle judges it)", b.describe(), len(b.feed), b.stopped.Status))
		case b.throttled == nil:
			s.Block(fmt.Sprintf("%s: all passed, no 429 after more than any limiter of %d a minute admits (the oracle judges the bursts: RATE-LIMIT-429)", b.describe(), schemas.FeedRequestsPerMinute))
		}
	})

	It("sends Retry-After with the 429, as delta-seconds or an HTTP-date", requires(catalogue.RateRetryAfter), func(ctx SpecContext) {
		rl.throttled(ctx) // the oracle judges the 429's Retry-After
	})

	It("lets the next request through after waiting what Retry-After says", requires(catalogue.RateRetryAfter), func(ctx SpecContext) {
		b := rl.throttled(ctx)
		rl.resumed(ctx, b)
		if rl.after.Status == http.StatusTooManyRequests && b.other != nil && b.other.Status == http.StatusTooManyRequests {
			// the other key was throttled with this one: a limiter shared
			// across keys (RATE-PER-KEY's), whose traffic of both keys
			// explains a 429 after the wait as well as an untrue Retry-After
			s.Block(fmt.Sprintf("%s answered 429 after waiting what Retry-After said, while the limiter throttles other keys with this one (RATE-PER-KEY): not judged", rl.after.Request))
		}
		if rl.after.Status == http.StatusTooManyRequests && schemas.RateWindow <= s.cfg.MaxWait {
			// A whole window more tells a Retry-After that said too little
			// (this rule broken) from a limiter that does not release at
			// all, which stops the run: no verdict on the key would hold.
			if err := s.wait(ctx, schemas.RateWindow, "a whole window more: does the limiter release at all?"); err != nil {
				s.failf("%v", err)
			}
			if again, err := s.c.Send(ctx, limitRequest("1", b.key)); err == nil && again.Status == http.StatusTooManyRequests {
				AbortSuite(s.Redactor().String(fmt.Sprintf("the run stopped: the rate limiter does not release: %s answered 429 after waiting what Retry-After said (%q) and a whole window more (a tcmkit simulator on its manual clock needs --control-clock)",
					again.Request, b.throttled.Header.Get("Retry-After"))))
			}
		}
		// the oracle judges the answer: a 429 after waiting what
		// Retry-After said, on the key the burst owns, is RATE-RETRY-AFTER's
	})

	It("goes on with a walk's cursor handed out before the 429, once its Retry-After was waited", requires(catalogue.FeedCursorWalk), func(ctx SpecContext) {
		b := rl.throttled(ctx)
		// a Retry-After that cannot be honoured leaves no walk to go on
		// with: RATE-RETRY-AFTER's to judge, a precondition here
		ra := b.throttled.Header.Get("Retry-After")
		if d, err := client.ParseRetryAfter(ra, client.ServerTime(b.throttled.Header, time.Now())); err != nil || d > s.cfg.MaxWait {
			s.Block(fmt.Sprintf("%s (status 429): Retry-After %q cannot be honoured within --max-wait, so no walk goes on after it (judged by RATE-RETRY-AFTER)", b.throttled.Request, ra))
		}
		if resp := rl.resumed(ctx, b); resp.Status == http.StatusTooManyRequests {
			s.Block(fmt.Sprintf("%s answered 429 after waiting what Retry-After said: the walk did not go on (judged by RATE-RETRY-AFTER)", resp.Request))
		}
		// the oracle judges the cursor page: a cursor the target handed
		// out is no unknown one, and its page goes on from where it was
	})

	It("does not throttle another key", requires(catalogue.RatePerKey), func(ctx SpecContext) {
		if s.tg.otherKey() == "" {
			skipFor("--free-key", needs("free-key")+": a second key to send while the first is throttled")
		}
		rl.throttled(ctx)
		// the oracle judges the other key's answer: a 429 while the burst
		// key is throttled and it has room is RATE-PER-KEY's
	})

	s.strictRateLimit(rl)
}

// afterRetryAfter waits what the 429's Retry-After says (less the time
// since it came), fetching the feed walks meanwhile, then sends the next
// request on the burst's key. It fails the spec when Retry-After cannot be
// honoured.
func (s *suite) afterRetryAfter(ctx context.Context, b *burst) (*client.Response, error) {
	GinkgoHelper()
	d, err := client.ParseRetryAfter(b.throttled.Header.Get("Retry-After"), client.ServerTime(b.throttled.Header, time.Now()))
	if err != nil {
		s.failf("%s (status 429): cannot honour Retry-After: %v", b.throttled.Request, err)
	}
	if s.shortWait(d) {
		s.stopByBound(fmt.Sprintf("%s (status 429): Retry-After asks for %s, more than --max-wait=%s", b.throttled.Request, client.Human(d), s.cfg.MaxWait))
	}
	if d > s.cfg.MaxWait {
		s.failf("%s (status 429): Retry-After asks for %s, more than --max-wait=%s", b.throttled.Request, client.Human(d), s.cfg.MaxWait)
	}
	if walksWanted() {
		s.prefetchWalks()
	}
	now, err := s.targetClock().Now(ctx)
	if err != nil {
		s.failf("reading the target's clock: %v", err)
	}
	if err := s.wait(ctx, d-now.Sub(b.at), "what Retry-After said, less the time since the 429"); err != nil {
		return nil, err
	}
	return s.c.Send(ctx, b.resume())
}

// resume is the request a walk sends once it waited out the burst's 429:
// the throttled page again when it carried a cursor, else the page after
// the burst's latest served page that handed out a cursor (a walk goes on
// with its cursor; the burst's last pages hand out none), else a first
// page.
func (b *burst) resume() client.Request {
	if q, err := url.ParseQuery(b.throttled.Request.Query); err == nil && q.Get("cursor") != "" {
		return b.throttled.Request
	}
	for i := len(b.feed) - 1; i >= 0; i-- {
		r := b.feed[i]
		if r.Status != http.StatusOK {
			continue
		}
		doc, _ := r.JSON()
		if next, ok := jsondoc.String(doc, "/nextCursor"); ok && next != "" {
			return pageRequest("1", next, b.key)
		}
	}
	return limitRequest("1", b.key)
}

// walksWanted reports whether the label filter lets some spec run that
// walks the feed, so that walking ahead of time is not wasted.
func walksWanted() bool {
	return wanted([]string{"pagination", "FEED-ORDER"}, []string{"events", "EVENT-SCHEMA"}, []string{"videos", "VIDEOS-SERVED"})
}

// videosWanted reports whether some spec that judges the tracked videos
// of the walk's videos will run.
func videosWanted() bool {
	return wanted([]string{"events", "EVENT-SCHEMA"}, []string{"videos", "hidden", "VIDEOS-SERVED"}, []string{"auth", "hidden", "AUTH-VALID"})
}

// wanted reports whether the label filter lets a spec of one of the label
// sets run.
func wanted(sets ...[]string) bool {
	match, err := types.ParseLabelFilter(GinkgoLabelFilter())
	if err != nil {
		return false
	}
	for _, labels := range sets {
		if match(labels) {
			return true
		}
	}
	return false
}
