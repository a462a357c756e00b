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
	clock := s.clock()
	line := fmt.Sprintf("waiting %s for the rate limit (%s)%s\n", client.Seconds(d.Round(time.Millisecond)), why, client.Note(clock))
	io.WriteString(s.r.c.Log, line)
	fmt.Fprint(GinkgoWriter, s.r.red.String(line))
	return clock.Wait(ctx, d)
}

// clock is the target's clock.
func (s *suite) clock() client.Clock {
	if s.cfg.Clock == nil {
		return client.WallClock{}
	}
	return s.cfg.Clock
}

// budget waits until the key has room for n more requests in its window,
// by what the suite itself sent on it.
func (s *suite) budget(ctx context.Context, key string, n int) error {
	limit := schemas.FeedRequestsPerMinute
	uses := s.r.c.RecentUses(key, schemas.RateWindow)
	if len(uses)+n <= limit {
		return nil
	}
	// the oldest uses must leave the window
	until := uses[len(uses)+n-limit-1].Add(schemas.RateWindow)
	if err := s.wait(ctx, time.Until(until), "so that the key has room in its window"); err != nil {
		return err
	}
	if s.cfg.Clock != nil {
		s.r.c.Forget(key) // the target's clock moved: the suite's record is stale
	}
	return nil
}

// runBurst sends feed requests on key until the first 429, at most until
// more passed than the limit allows.
func (s *suite) runBurst(ctx context.Context, key string) *burst {
	limit := schemas.FeedRequestsPerMinute
	b := &burst{key: key, used: len(s.r.c.RecentUses(key, schemas.RateWindow))}
	b.allowed = max(limit-b.used, 0)
	start := time.Now()
	_, virtual := s.clock().(interface{ Virtual() bool })
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
		resp, err := s.r.c.Send(ctx, s.r.feedLimit("1", key))
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
			b.at, b.err = s.clock().Now(ctx)
			b.elapsed = time.Since(start)
			return b
		default:
			b.stopped = resp
			return b
		}
	}
}

func (s *suite) runBursts(ctx context.Context) *burst {
	key, other := s.cfg.burstKey(), s.cfg.otherKey()
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
		s.r.c.Forget(key)
		b = s.runBurst(ctx, key)
		b.repeated = true
	}
	if b.throttled != nil && other != "" {
		b.other, b.err = s.r.c.Send(ctx, s.r.feedLimit("1", other))
	}
	return b
}

func (s *suite) rateLimit() {
	Describe("rate limit of GET /api/public-feed", Label("rate-limit"), Ordered, Serial, ContinueOnFailure, func() {
		var (
			b        *burst
			after    *client.Response
			afterErr error
		)
		// The burst runs once, in whichever spec of the container runs first.
		get := func(ctx context.Context) *burst {
			GinkgoHelper()
			if b == nil {
				b = s.runBursts(ctx)
			}
			if b.err != nil {
				Fail(s.r.red.String("the burst could not be sent: " + b.err.Error()))
			}
			return b
		}
		describe := func(b *burst) string {
			return fmt.Sprintf("%d requests %s on key %s in %s (%d sent on it by the suite in the minute before)",
				len(b.sent), s.r.feedLimit("1", b.key), redact.Form(b.key), b.elapsed.Round(time.Millisecond), b.used)
		}

		It("allows 20 requests a minute from a fresh window", Label("RATE-ALLOWS-20"), func(ctx SpecContext) {
			b := get(ctx)
			if b.passed < b.allowed {
				last := b.sent[len(b.sent)-1]
				Fail(s.r.red.String(fmt.Sprintf("%s: request %d answered %d after %d passed; %d per minute must pass (%d minus the %d the suite had sent)\nresponse body: %s",
					describe(b), b.passed+1, last.Status, b.passed, b.allowed, schemas.FeedRequestsPerMinute, b.used, last.Excerpt())))
			}
		})

		It("answers 429 with an ErrorBody once the limit is exceeded", Label("RATE-LIMIT-429", "ERROR-BODY", "CONTENT-TYPE-JSON"), func(ctx SpecContext) {
			b := get(ctx)
			switch {
			case b.stopped != nil:
				Fail(s.r.red.String(fmt.Sprintf("%s: request %d answered %d, want 429 once the limit is exceeded (rule: %d requests per minute per key)\nresponse body: %s",
					describe(b), len(b.sent), b.stopped.Status, schemas.FeedRequestsPerMinute, b.stopped.Excerpt())))
			case b.throttled == nil:
				Fail(s.r.red.String(fmt.Sprintf("%s: all passed, want a 429 after at most %d (rule: %d requests per minute per key)",
					describe(b), b.most, schemas.FeedRequestsPerMinute)))
			}
			s.expect(b.throttled).To(BeErrorBody())
			s.expect(b.throttled).To(HaveJSONContentType())
		})

		It("sends Retry-After with the 429, as delta-seconds or an HTTP-date", Label("RATE-RETRY-AFTER"), func(ctx SpecContext) {
			b := get(ctx)
			if b.throttled == nil {
				Skip("the burst saw no 429")
			}
			v := b.throttled.Header.Get("Retry-After")
			if _, err := client.ParseRetryAfter(v, client.ServerTime(b.throttled.Header, time.Now())); err != nil {
				Fail(s.r.red.String(fmt.Sprintf("%s (status 429): %v (rule: a 429 carries Retry-After, delta-seconds or an HTTP-date)", b.throttled.Request, err)))
			}
		})

		It("lets the next request through after waiting what Retry-After says", Label("RATE-RETRY-AFTER"), func(ctx SpecContext) {
			b := get(ctx)
			if b.throttled == nil {
				Skip("the burst saw no 429")
			}
			if after == nil && afterErr == nil {
				d, err := client.ParseRetryAfter(b.throttled.Header.Get("Retry-After"), client.ServerTime(b.throttled.Header, time.Now()))
				if err != nil {
					Fail(s.r.red.String(fmt.Sprintf("%s (status 429): cannot honour Retry-After: %v", b.throttled.Request, err)))
				}
				if d > s.cfg.MaxWait {
					Fail(s.r.red.String(fmt.Sprintf("%s (status 429): Retry-After asks for %s, more than --max-wait=%s", b.throttled.Request, d, s.cfg.MaxWait)))
				}
				if walksWanted() {
					s.r.prefetchWalks()
				}
				now, err := s.clock().Now(ctx)
				if err != nil {
					Fail(s.r.red.String("reading the target's clock: " + err.Error()))
				}
				if afterErr = s.wait(ctx, d-now.Sub(b.at), "what Retry-After said, less the time since the 429"); afterErr == nil {
					after, afterErr = s.r.c.Send(ctx, s.r.feedLimit("1", b.key))
				}
			}
			if afterErr != nil {
				Fail(s.r.red.String(afterErr.Error()))
			}
			s.expect(after).To(HaveStatus(http.StatusOK), "rule: a request made after waiting what Retry-After says succeeds (Retry-After: %q)", b.throttled.Header.Get("Retry-After"))
		})

		It("does not throttle another key", Label("RATE-PER-KEY"), func(ctx SpecContext) {
			if s.cfg.otherKey() == "" {
				Skip("needs --free-key (or TCM_FREE_KEY): a second key to send while the first is throttled")
			}
			b := get(ctx)
			if b.throttled == nil {
				Skip("the burst saw no 429")
			}
			s.expect(b.other).To(HaveStatus(http.StatusOK), "rule: the limit counts per key; the other key was sent right after %s", describe(b))
		})

		It("answers exactly the 21st request of a fresh window with 429", Label("strict", "RATE-LIMIT-429"), func(ctx SpecContext) {
			b := get(ctx)
			if b.throttled == nil || b.passed != b.allowed {
				Fail(s.r.red.String(fmt.Sprintf("%s: %d passed before the first 429, want exactly %d", describe(b), b.passed, b.allowed)))
			}
		})
	})
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
