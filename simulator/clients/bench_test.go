package clients

import (
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

func feedRequest(key string) *http.Request {
	r := httptest.NewRequest("GET", "/api/public-feed?limit=50", nil)
	r.Header.Set("Authorization", "Bearer "+key)
	return r
}

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
	cfg := simulator.Config{Seed: 1, FeedLimit: -1, VideosLimit: -1}
	if judged {
		j, err := New(Config{})
		if err != nil {
			b.Fatal(err)
		}
		cfg.Clients = j
	}
	s, err := simulator.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	key := s.Seeded().Pro
	h := s.Handler()
	w := &discard{h: http.Header{}}
	b.ReportAllocs()
	for b.Loop() {
		clear(w.h)
		h.ServeHTTP(w, req(key))
	}
}
