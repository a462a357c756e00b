package simulator

import (
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/tcmkit/tcmkit/schemas"
)

func retryAfter(t *testing.T, r response) time.Duration {
	t.Helper()
	if r.status != http.StatusTooManyRequests {
		t.Fatalf("status %d, want 429: %s", r.status, r.body)
	}
	check(t, r, "")
	n, err := strconv.Atoi(r.header.Get("Retry-After"))
	if err != nil || n < 1 {
		t.Fatalf("Retry-After %q is not a positive integer", r.header.Get("Retry-After"))
	}
	return time.Duration(n) * time.Second
}

func TestFeedRateLimitIsExact(t *testing.T) {
	s := newServer(t, Config{Seed: 1})
	key := s.Seeded().Pro
	for i := range schemas.FeedRequestsPerMinute {
		if r := s.serve(t, feedReq(key, "limit=1")); r.status != 200 {
			t.Fatalf("request %d: status %d", i+1, r.status)
		}
	}
	ra := retryAfter(t, s.serve(t, feedReq(key, "limit=1")))
	if ra != schemas.RateWindow {
		t.Errorf("Retry-After %s, want %s: all requests were at the same instant", ra, schemas.RateWindow)
	}
	// One virtual second early is still too early, and says the rest.
	s.Advance(ra - time.Second)
	if left := retryAfter(t, s.serve(t, feedReq(key, "limit=1"))); left != time.Second {
		t.Errorf("Retry-After %s one second before the window ends, want 1s", left)
	}
	s.Advance(time.Second)
	for i := range schemas.FeedRequestsPerMinute {
		if r := s.serve(t, feedReq(key, "limit=1")); r.status != 200 {
			t.Fatalf("after Retry-After, request %d: status %d", i+1, r.status)
		}
	}
	// Other keys have their own budget; videos has its own budget.
	if r := s.serve(t, feedReq(s.Seeded().Free, "")); r.status != 200 {
		t.Errorf("free key: %d", r.status)
	}
	if r := s.serve(t, videosReq(key, `{"videoIds":["a"]}`)); r.status != 200 {
		t.Errorf("videos after the feed budget is spent: %d", r.status)
	}
}

func TestRateLimitWindowSlides(t *testing.T) {
	s := newServer(t, Config{Seed: 1, FeedLimit: 3})
	key := s.Seeded().Pro
	// Requests at 0s, 10s, 20s; the fourth at 30s waits for the first to
	// leave the window at 60s.
	for i := range 3 {
		if r := s.serve(t, feedReq(key, "")); r.status != 200 {
			t.Fatalf("request %d: %d", i, r.status)
		}
		s.Advance(10 * time.Second)
	}
	if ra := retryAfter(t, s.serve(t, feedReq(key, ""))); ra != 30*time.Second {
		t.Fatalf("Retry-After %s, want 30s", ra)
	}
	s.Advance(30 * time.Second)
	if r := s.serve(t, feedReq(key, "")); r.status != 200 {
		t.Fatalf("at 60s: %d", r.status)
	}
	// Only one left the window: the next waits for the 10s request.
	if ra := retryAfter(t, s.serve(t, feedReq(key, ""))); ra != 10*time.Second {
		t.Fatalf("Retry-After %s, want 10s", ra)
	}
}

func TestRetryAfterRoundsUp(t *testing.T) {
	s := newServer(t, Config{Seed: 1, FeedLimit: 1})
	key := s.Seeded().Pro
	s.serve(t, feedReq(key, ""))
	s.Advance(1500 * time.Millisecond)
	ra := retryAfter(t, s.serve(t, feedReq(key, "")))
	if ra != 59*time.Second {
		t.Fatalf("Retry-After %s for a wait of 58.5s, want 59s", ra)
	}
	s.Advance(ra)
	if r := s.serve(t, feedReq(key, "")); r.status != 200 {
		t.Fatalf("after Retry-After: %d", r.status)
	}
}

func TestRateLimitUnderConcurrency(t *testing.T) {
	s := newServer(t, Config{Seed: 1})
	key := s.Seeded().Pro
	const workers = 200
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		codes = map[int]int{}
		ras   = map[string]int{}
	)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := s.serve(t, feedReq(key, "limit=1"))
			mu.Lock()
			defer mu.Unlock()
			codes[r.status]++
			if r.status == 429 {
				ras[r.header.Get("Retry-After")]++
			}
		}()
	}
	wg.Wait()
	if codes[200] != schemas.FeedRequestsPerMinute || codes[429] != workers-schemas.FeedRequestsPerMinute {
		t.Fatalf("statuses %v, want %d × 200 and the rest 429", codes, schemas.FeedRequestsPerMinute)
	}
	want := strconv.Itoa(int(schemas.RateWindow / time.Second))
	if len(ras) != 1 || ras[want] == 0 {
		t.Fatalf("Retry-After values %v, want all %s", ras, want)
	}
	s.Advance(schemas.RateWindow - time.Nanosecond)
	if r := s.serve(t, feedReq(key, "")); r.status != 429 {
		t.Fatalf("just before Retry-After: %d, want 429", r.status)
	}
	s.Advance(time.Nanosecond)
	if r := s.serve(t, feedReq(key, "")); r.status != 200 {
		t.Fatalf("at Retry-After: %d, want 200", r.status)
	}
}

// fakeWall is a wall clock a test moves by hand.
type fakeWall struct {
	mu sync.Mutex
	t  time.Time
}

func (f *fakeWall) Now() time.Time { f.mu.Lock(); defer f.mu.Unlock(); return f.t }
func (f *fakeWall) Add(d time.Duration) {
	f.mu.Lock()
	f.t = f.t.Add(d)
	f.mu.Unlock()
}

// At any speed the world runs fast, but the rate limit stays per real
// minute, as the contract says; an advance of the clock still counts.
func TestRealtimeWindowsAreRealMinutes(t *testing.T) {
	wall := &fakeWall{t: time.Unix(1_000_000, 0)}
	s := newServer(t, Config{Seed: 1, Speed: 10, FeedLimit: 1, now: wall.Now})
	key := s.Seeded().Pro
	start := s.Now()
	wall.Add(time.Second)
	if got := s.Now().Sub(start); got != 10*time.Second {
		t.Fatalf("one real second at speed 10 moved the clock %s, want 10s", got)
	}
	s.serve(t, feedReq(key, ""))
	if ra := retryAfter(t, s.serve(t, feedReq(key, ""))); ra != time.Minute {
		t.Fatalf("Retry-After %s, want 60s (real)", ra)
	}
	wall.Add(59 * time.Second)
	if r := s.serve(t, feedReq(key, "")); r.status != 429 {
		t.Fatalf("after 59 real seconds (590 virtual): %d, want 429", r.status)
	}
	wall.Add(time.Second)
	if r := s.serve(t, feedReq(key, "")); r.status != 200 {
		t.Fatalf("after 60 real seconds: %d", r.status)
	}
	s.serve(t, feedReq(key, ""))
	s.Advance(time.Minute)
	if r := s.serve(t, feedReq(key, "")); r.status != 200 {
		t.Fatalf("after an advance of a minute: %d", r.status)
	}
}

func TestClock(t *testing.T) {
	wall := &fakeWall{t: time.Unix(0, 0)}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	manual := newClock(start, 0, wall.Now)
	wall.Add(time.Hour)
	if !manual.Now().Equal(start) {
		t.Error("the manual clock moved with the wall")
	}
	if got := manual.Advance(90 * time.Second); !got.Equal(start.Add(90 * time.Second)) {
		t.Errorf("Advance: %v", got)
	}
	fast := newClock(start, 60, wall.Now)
	wall.Add(time.Minute)
	if got := fast.Now().Sub(start); got != time.Hour {
		t.Errorf("a real minute at speed 60: %s, want 1h", got)
	}
	fast.Advance(time.Hour)
	wall.Add(time.Second)
	if got := fast.Now().Sub(start); got != 2*time.Hour+time.Minute {
		t.Errorf("after an advance: %s", got)
	}
	for _, tc := range []struct {
		speed float64
		wait  time.Duration
		want  int64
	}{
		{0, 0, 0}, {0, time.Nanosecond, 1}, {0, time.Second, 1}, {0, 1001 * time.Millisecond, 2},
		{60, time.Minute, 60}, {60, 61 * time.Second, 61}, {0.5, time.Second, 1},
	} {
		if got := newClock(start, tc.speed, wall.Now).RetryAfter(tc.wait); got != tc.want {
			t.Errorf("speed %v, wait %s: RetryAfter %d, want %d", tc.speed, tc.wait, got, tc.want)
		}
	}
}
