package clients

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/tcmkit/tcmkit/schemas/catalogue"
	"github.com/tcmkit/tcmkit/simulator"
)

// A request is a retry of a 429 only if it was sent after the client read
// it. The judge sees arrivals: one on another connection that arrived
// within inFlightMargin after the 429 was answered may have been in flight
// and is no retry that ignored Retry-After; one on the 429's own
// connection, or later, is.
func TestRequestsInFlightAreNoRetries(t *testing.T) {
	r := newRecorded(t)
	r.refusedFirst(2, 5)
	if len(r.xs) != 2 || r.xs[0].Status != http.StatusTooManyRequests || r.xs[1].Status != http.StatusOK {
		t.Fatalf("exchanges: %d", len(r.xs))
	}
	refused := *r.xs[0]
	refused.Conn = "conn 1"
	answered := refused.Time.Add(time.Duration(refused.Micros) * time.Microsecond)
	for _, tc := range []struct {
		name  string
		conn  string
		after time.Duration // after the 429 was answered
		fails bool
	}{
		{"another connection, 0.05 ms after", "conn 2", 50 * time.Microsecond, false},
		{"another connection, within the margin", "conn 2", inFlightMargin - time.Millisecond, false},
		{"another connection, past the margin", "conn 2", inFlightMargin + time.Millisecond, true},
		{"the same connection, 0.05 ms after", "conn 1", 50 * time.Microsecond, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			next := *r.xs[1]
			next.Conn, next.Time, next.RateTime = tc.conn, answered.Add(tc.after), refused.RateTime // the manual clock did not move: no wait
			rt := *r
			rt.t = t
			rt.judgeRetry(tc.fails, refused, next)
		})
	}
}

// The 429s of requests in flight join the first: the wait that ends last
// binds the retry, which the judge counts once.
func TestInFlight429sJoinTheFirst(t *testing.T) {
	r := newRecorded(t)
	r.refusedFirst(3, 5, 9)
	first, second, retry := *r.xs[0], *r.xs[1], *r.xs[2]
	answered := first.Time.Add(time.Duration(first.Micros) * time.Microsecond)
	first.Conn, second.Conn, retry.Conn = "conn 1", "conn 2", "conn 1"
	second.Time = answered.Add(time.Millisecond) // in flight: its Retry-After (9 s) ends last
	for _, tc := range []struct {
		wait  time.Duration
		fails bool
	}{{6 * time.Second, true}, {9 * time.Second, false}} {
		retry.Time, retry.RateTime = answered.Add(tc.wait), first.RateTime.Add(tc.wait)
		r.judgeRetry(tc.fails, first, second, retry)
	}
}

// A request on the connection of a 429 that joined the first, sent after
// that 429 was read, is a retry: the margin is for other connections.
func TestRetryOnAJoined429sConnection(t *testing.T) {
	r := newRecorded(t)
	r.refusedFirst(3, 5, 5)
	first, second, retry := *r.xs[0], *r.xs[1], *r.xs[2]
	answered := first.Time.Add(time.Duration(first.Micros) * time.Microsecond)
	first.Conn, second.Conn = "conn 1", "conn 2"
	second.Time = answered.Add(time.Millisecond)
	for _, tc := range []struct {
		conn  string
		fails bool
	}{{"conn 2", true}, {"conn 3", false}} {
		retry.Conn, retry.Time, retry.RateTime = tc.conn, second.Time.Add(time.Duration(second.Micros)*time.Microsecond+time.Millisecond), first.RateTime
		r.judgeRetry(tc.fails, first, second, retry)
	}
}

// refusedFirst injects a feed 429 for each Retry-After given and sends n
// feed requests with the Pro key: the 429s answer the first of them.
func (r *recorded) refusedFirst(n int, retryAfters ...int) {
	r.t.Helper()
	for _, ra := range retryAfters {
		if _, err := r.s.AddFault(simulator.FaultSpec{Operation: "feed", Status: http.StatusTooManyRequests, RetryAfter: new(ra), Count: 1}); err != nil {
			r.t.Fatal(err)
		}
	}
	for range n {
		q := httptest.NewRequest(http.MethodGet, "/api/public-feed?limit=5", nil)
		q.Header.Set("Authorization", "Bearer "+r.s.Seeded().Pro)
		r.s.Handler().ServeHTTP(httptest.NewRecorder(), q)
	}
}

// judgeRetry has a new judge observe the exchanges and expects the one
// client to fail CLIENT-RETRY-AFTER, or nothing.
func (r *recorded) judgeRetry(fails bool, xs ...simulator.Exchange) {
	r.t.Helper()
	j, err := New(r.s, Config{})
	if err != nil {
		r.t.Fatal(err)
	}
	for _, x := range xs {
		j.Observe(&x)
	}
	c := j.Snapshot(false).Clients[0]
	if fails {
		expectFailed(r.t, c, catalogue.ClientRetryAfter)
	} else {
		expectFailed(r.t, c)
	}
}
