package conformance

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	. "github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/schemas/catalogue"
	"github.com/tcmkit/tcmkit/suites/client"
	"github.com/tcmkit/tcmkit/suites/redact"
)

// burst is what the rate-limit specs saw: a run of feed requests on one key
// as fast as the target answers, until the first 429.
type burst struct {
	key       string
	used      int           // requests the suite sent on the key in the window before
	allowed   int           // requests that must pass: the limit minus used
	passed    int           // 200s before the first 429
	most      int           // most requests that may pass: allowed plus what a bucket refills meanwhile
	elapsed   time.Duration // how long the burst took
	sent      []*client.Response
	throttled *client.Response // the first 429, nil if none came
	at        time.Time        // when it came, by the target's clock
	stopped   *client.Response // an answer that was neither 200 nor 429
	other     *client.Response // the other key's request right after the 429
	err       error
	repeated  bool // the first burst saw no 429 in time and was repeated from a fresh window
}

// wait lets d pass on the target's clock, saying so where it is seen at once.
func (s *suite) wait(ctx context.Context, d time.Duration, why string) error {
	if d <= 0 {
		return nil
	}
	clock := s.targetClock()
	line := fmt.Sprintf("waiting %s for the rate limit (%s)%s\n", client.Seconds(d.Round(time.Millisecond)), why, client.Note(clock))
	io.WriteString(s.c.Log, line)
	fmt.Fprint(GinkgoWriter, s.Redactor().String(line))
	return clock.Wait(ctx, d)
}

// targetClock is the target's clock: the session's, or the wall clock.
func (s *suite) targetClock() client.Clock {
	if s.clock == nil {
		return client.WallClock{}
	}
	return s.clock
}

// budget waits until the key has room for n more requests in its window,
// by what the suite itself sent on it.
func (s *suite) budget(ctx context.Context, key string, n int) error {
	limit := schemas.FeedRequestsPerMinute
	uses := s.c.RecentUses(key, schemas.RateWindow)
	if len(uses)+n <= limit {
		return nil
	}
	// the oldest uses must leave the window
	until := uses[len(uses)+n-limit-1].Add(schemas.RateWindow)
	if err := s.wait(ctx, time.Until(until), "so that the key has room in its window"); err != nil {
		return err
	}
	if s.clock != nil {
		s.c.Forget(key) // the target's clock moved: the suite's record is stale
	}
	return nil
}

// runBurst sends feed requests on key until the first 429, at most until
// more passed than the limit allows.
func (s *suite) runBurst(ctx context.Context, key string) *burst {
	limit := schemas.FeedRequestsPerMinute
	b := &burst{key: key, used: len(s.c.RecentUses(key, schemas.RateWindow))}
	b.allowed = max(limit-b.used, 0)
	start := time.Now()
	_, virtual := s.targetClock().(interface{ Virtual() bool })
	for {
		// A token bucket refills during the burst; a sliding window does
		// not. A virtual clock does not move during the burst (the
		// rate-limit specs are Serial), so nothing refills there.
		b.elapsed = time.Since(start)
		refill := 0
		if !virtual {
			refill = int(float64(limit) * b.elapsed.Seconds() / schemas.RateWindow.Seconds())
		}
		b.most = b.allowed + refill
		if len(b.sent) > b.most {
			return b // more passed than may: no 429 in time
		}
		resp, err := s.c.Send(ctx, limitRequest("1", key))
		if err != nil {
			b.err = err
			return b
		}
		b.sent = append(b.sent, resp)
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

func (s *suite) runBursts(ctx context.Context) *burst {
	key, other := s.tg.burstKey(), s.tg.otherKey()
	if other != "" {
		if err := s.budget(ctx, other, 1); err != nil {
			return &burst{err: err}
		}
	}
	b := s.runBurst(ctx, key)
	if b.err == nil && b.stopped == nil && b.throttled == nil {
		// A fixed window may have turned over during the burst: try once
		// more from a fresh window before calling the target lenient.
		if err := s.wait(ctx, schemas.RateWindow, "a fresh window, to repeat a burst that saw no 429"); err != nil {
			return &burst{err: err}
		}
		s.c.Forget(key)
		b = s.runBurst(ctx, key)
		b.repeated = true
	}
	if b.throttled != nil && other != "" {
		b.other, b.err = s.c.Send(ctx, limitRequest("1", other))
	}
	return b
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

// burst returns the burst, sending it on first use.
func (rl *rateLimit) burst(ctx context.Context) *burst {
	GinkgoHelper()
	if rl.b == nil {
		rl.b = rl.s.runBursts(ctx)
	}
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
	return fmt.Sprintf("%d requests %s on key %s in %s (%d sent on it by the suite in the minute before)",
		len(b.sent), limitRequest("1", b.key), redact.Form(b.key), b.elapsed.Round(time.Millisecond), b.used)
}

// rateLimitSpecs: 20 feed requests a minute pass on a fresh key, the next
// gets 429 with Retry-After, waiting what it says lets the next through,
// and another key is not throttled meanwhile.
func (s *suite) rateLimitSpecs() {
	rl := &rateLimit{s: s}

	It("allows 20 requests a minute from a fresh window", requires(catalogue.RateAllows20), func(ctx SpecContext) {
		b := rl.burst(ctx)
		if b.passed < b.allowed {
			last := b.sent[len(b.sent)-1]
			s.failf("%s: request %d answered %d after %d passed; %d per minute must pass (%d minus the %d the suite had sent)\nresponse body: %s",
				b.describe(), b.passed+1, last.Status, b.passed, b.allowed, schemas.FeedRequestsPerMinute, b.used, last.Excerpt())
		}
	})

	It("answers 429 with an ErrorBody once the limit is exceeded", requires(catalogue.RateLimit429, catalogue.ErrorBody, catalogue.ContentTypeJSON), func(ctx SpecContext) {
		b := rl.burst(ctx)
		switch {
		case b.stopped != nil:
			s.failf("%s: request %d answered %d, want 429 once the limit is exceeded (rule: %d requests per minute per key)\nresponse body: %s",
				b.describe(), len(b.sent), b.stopped.Status, schemas.FeedRequestsPerMinute, b.stopped.Excerpt())
		case b.throttled == nil:
			s.failf("%s: all passed, want a 429 after at most %d (rule: %d requests per minute per key)",
				b.describe(), b.most, schemas.FeedRequestsPerMinute)
		}
		s.expect(b.throttled).To(BeErrorBody())
		s.expect(b.throttled).To(HaveJSONContentType())
	})

	It("sends Retry-After with the 429, as delta-seconds or an HTTP-date", requires(catalogue.RateRetryAfter), func(ctx SpecContext) {
		b := rl.throttled(ctx)
		v := b.throttled.Header.Get("Retry-After")
		if _, err := client.ParseRetryAfter(v, client.ServerTime(b.throttled.Header, time.Now())); err != nil {
			s.failf("%s (status 429): %v (rule: a 429 carries Retry-After, delta-seconds or an HTTP-date)", b.throttled.Request, err)
		}
	})

	It("lets the next request through after waiting what Retry-After says", requires(catalogue.RateRetryAfter), func(ctx SpecContext) {
		b := rl.throttled(ctx)
		if rl.after == nil && rl.afterErr == nil {
			rl.after, rl.afterErr = s.afterRetryAfter(ctx, b)
		}
		if rl.afterErr != nil {
			s.failf("%v", rl.afterErr)
		}
		s.expect(rl.after).To(HaveStatus(http.StatusOK), "rule: a request made after waiting what Retry-After says succeeds (Retry-After: %q)", b.throttled.Header.Get("Retry-After"))
	})

	It("does not throttle another key", requires(catalogue.RatePerKey), func(ctx SpecContext) {
		if s.tg.otherKey() == "" {
			Skip(needs("free-key") + ": a second key to send while the first is throttled")
		}
		b := rl.throttled(ctx)
		s.expect(b.other).To(HaveStatus(http.StatusOK), "rule: the limit counts per key; the other key was sent right after %s", b.describe())
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
	return s.c.Send(ctx, limitRequest("1", b.key))
}

// walksWanted reports whether the label filter lets some spec run that
// walks the feed, so that walking ahead of time is not wasted.
func walksWanted() bool {
	match, err := types.ParseLabelFilter(GinkgoLabelFilter())
	if err != nil {
		return false
	}
	for _, labels := range [][]string{{"pagination", "FEED-ORDER"}, {"events", "EVENT-SCHEMA"}, {"videos", "VIDEOS-SERVED"}} {
		if match(labels) {
			return true
		}
	}
	return false
}
