package clients

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tcmkit/tcmkit/simulator"
)

// What judging costs the server: the same cached feed page (limit=50,
// about 30 KB) and tracked-videos request, served with and without a
// judge (cmd/simulator judges unless --no-client-judge).
func BenchmarkFeedPage(b *testing.B) {
	b.Run("unjudged", func(b *testing.B) { benchServe(b, false, feedRequest) })
	b.Run("judged", func(b *testing.B) { benchServe(b, true, feedRequest) })
}

func BenchmarkVideos(b *testing.B) {
	b.Run("unjudged", func(b *testing.B) { benchServe(b, false, videosRequest) })
	b.Run("judged", func(b *testing.B) { benchServe(b, true, videosRequest) })
}

// benchServer is a simulator without rate limits, judged or not, closed
// when the benchmark ends.
func benchServer(b *testing.B, judged bool) (*simulator.Server, http.Handler) {
	cfg := simulator.Config{Seed: 1, FeedLimit: -1, VideosLimit: -1}
	if judged {
		cfg.Clients = Judging(Config{})
	}
	s, err := simulator.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s, s.Handler()
}

func feedRequest(key string) *http.Request { return feedRequestTo("/api/public-feed?limit=50", key) }

func videosRequest(key string) *http.Request {
	r := httptest.NewRequest("POST", "/api/public/videos", strings.NewReader(`{"videoIds":["a","b","c"]}`))
	r.Header.Set("Authorization", "Bearer "+key)
	r.Header.Set("Content-Type", "application/json")
	return r
}

type discard struct{ h http.Header }

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) WriteHeader(int)             {}
func (d *discard) Write(b []byte) (int, error) { return len(b), nil }

func benchServe(b *testing.B, judged bool, req func(key string) *http.Request) {
	s, h := benchServer(b, judged)
	key := s.Seeded().Pro
	w := &discard{h: http.Header{}}
	b.ReportAllocs()
	for b.Loop() {
		clear(w.h)
		h.ServeHTTP(w, req(key))
	}
}

// BenchmarkFeedDeep: the feed's later pages (limit=50) in a scattered
// order, as a load test asks for them: every request begins a walk.
func BenchmarkFeedDeep(b *testing.B) {
	b.Run("unjudged", func(b *testing.B) { benchDeep(b, false) })
	b.Run("judged", func(b *testing.B) { benchDeep(b, true) })
}

func benchDeep(b *testing.B, judged bool) {
	s, h := benchServer(b, judged)
	reqs := deepRequests(b, h, s.Seeded().Pro)
	w := &discard{h: http.Header{}}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		clear(w.h)
		h.ServeHTTP(w, reqs[(i*7919)%len(reqs)])
		i++
	}
}

// BenchmarkJudgeDeep: the judge alone, on the exchanges of the feed's
// later pages as BenchmarkFeedDeep serves them: all at one instant on the
// rate clock, so that every one breaks CLIENT-RATE again (as in a load
// test), and most begin a walk.
func BenchmarkJudgeDeep(b *testing.B) {
	var xs []*simulator.Exchange
	s, err := simulator.New(simulator.Config{Seed: 1, FeedLimit: -1, VideosLimit: -1,
		Observers: []simulator.Observer{func(x *simulator.Exchange) { xs = append(xs, x) }}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	deepRequests(b, s.Handler(), s.Seeded().Pro) // every page, in order
	j, err := New(s, Config{})
	if err != nil {
		b.Fatal(err)
	}
	for _, x := range xs {
		j.Observe(x) // as the judge of BenchmarkFeedDeep has seen them
	}
	deep := xs[1:]
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		j.Observe(deep[(i*7919)%len(deep)])
		i++
	}
}

// deepRequests are the requests of the feed's pages after the first
// (limit=50), each served once to learn the next cursor.
func deepRequests(b *testing.B, h http.Handler, key string) []*http.Request {
	var reqs []*http.Request
	for cursor := ""; ; {
		target := "/api/public-feed?limit=50"
		if cursor != "" {
			target += "&cursor=" + cursor
		}
		r := feedRequestTo(target, key)
		reqs = append(reqs, r)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		var page struct{ NextCursor *string }
		if json.Unmarshal(w.Body.Bytes(), &page) != nil || page.NextCursor == nil {
			break
		}
		cursor = *page.NextCursor
	}
	if len(reqs) < 2 {
		b.Fatalf("the feed has %d page(s)", len(reqs))
	}
	return reqs[1:]
}

func feedRequestTo(target, key string) *http.Request {
	r := httptest.NewRequest("GET", target, nil)
	r.Header.Set("Authorization", "Bearer "+key)
	return r
}
