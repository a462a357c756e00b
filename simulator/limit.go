package simulator

import (
	"sync"
	"time"
)

// limiter enforces "at most limit requests in any window of length window"
// per key, counted in virtual time: a sliding log of the last limit grants.
//
// Why not a token bucket (golang.org/x/time/rate)? A bucket of burst 20 that
// refills at 20/min lets 40 requests through in a minute (20 at once, then
// one every 3 s), which is not "20 requests per minute". The log is exact:
// a request is granted if fewer than limit grants fall in the window ending
// now, and a refused request is told when the oldest of them leaves the
// window, which is exactly when the next request will succeed. Refused
// requests do not count.
type limiter struct {
	limit  int // <= 0: unlimited
	window time.Duration

	mu   sync.Mutex
	logs map[keyHash]*grantLog
}

// grantLog is a ring of the virtual times (ns) of the last limit grants.
type grantLog struct {
	mu    sync.Mutex
	times []int64
	next  int // index of the oldest entry once full
}

func newLimiter(limit int, window time.Duration) *limiter {
	return &limiter{limit: limit, window: window, logs: make(map[keyHash]*grantLog)}
}

// Allow records a request for key at the virtual time now() returns. It
// returns ok, or the virtual wait until a request would be granted. now is
// read under the key's lock, so the log of one key is in time order even
// when its requests race.
func (l *limiter) Allow(key keyHash, now func() time.Time) (ok bool, wait time.Duration) {
	if l.limit <= 0 {
		return true, 0
	}
	l.mu.Lock()
	g := l.logs[key]
	if g == nil {
		g = &grantLog{times: make([]int64, 0, min(l.limit, 64))} // grows as grants come: a high limit reserves nothing
		l.logs[key] = g
	}
	l.mu.Unlock()

	g.mu.Lock()
	defer g.mu.Unlock()
	t := now().UnixNano()
	if len(g.times) < l.limit {
		g.times = append(g.times, t)
		return true, 0
	}
	oldest := g.times[g.next]
	if free := oldest + int64(l.window); t < free {
		return false, time.Duration(free - t)
	}
	g.times[g.next] = t
	g.next = (g.next + 1) % l.limit
	return true, 0
}

// RateLimiter is the server's limiter for a wrapper that counts requests
// itself (package variant, whose draws account them otherwise than the
// server): at most Limit requests of a key in any window, refused ones not
// counted, the wait exact.
type RateLimiter struct {
	Limit int
	l     *limiter
}

// NewRateLimiter is a limiter of limit requests a key in any window.
func NewRateLimiter(limit int, window time.Duration) *RateLimiter {
	return &RateLimiter{Limit: limit, l: newLimiter(limit, window)}
}

// Allow records a request of key at now, or says how long until one
// would be granted.
func (r *RateLimiter) Allow(key string, now time.Time) (bool, time.Duration) {
	return r.l.Allow(hashKey(key), func() time.Time { return now })
}
