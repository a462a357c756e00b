package simulator

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tcmkit/tcmkit/schemas"
)

// discardWriter is a ResponseWriter that keeps nothing, so a benchmark
// measures the server and not the recorder.
type discardWriter struct{ h http.Header }

func (d *discardWriter) Header() http.Header         { return d.h }
func (d *discardWriter) WriteHeader(int)             {}
func (d *discardWriter) Write(b []byte) (int, error) { return len(b), nil }

func benchServer(b *testing.B) (*Server, string) {
	s, err := New(Config{Seed: 1, FeedLimit: -1, VideosLimit: -1})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	return s, s.Seeded().Pro
}

// BenchmarkFeedPage serves GET /api/public-feed?limit=50 (about 30 KB),
// the same page again and again: after the first, the answer is cached.
func BenchmarkFeedPage(b *testing.B) { benchFeed(b, false) }

// BenchmarkFeedPageUncached builds every page afresh.
func BenchmarkFeedPageUncached(b *testing.B) { benchFeed(b, true) }

func benchFeed(b *testing.B, uncached bool) {
	s, key := benchServer(b)
	h := s.Handler()
	r := httptest.NewRequest("GET", schemas.PathFeed+"?limit=50", nil)
	r.Header.Set("Authorization", "Bearer "+key)
	w := &discardWriter{h: http.Header{}}
	b.ReportAllocs()
	for b.Loop() {
		clear(w.h)
		if uncached {
			s.st.Load().answers.Changed()
		}
		h.ServeHTTP(w, r)
	}
}

// BenchmarkVideos serves POST /api/public/videos with 20 ids, the same
// request again and again: after the first, the answer is cached.
func BenchmarkVideos(b *testing.B) { benchVideos(b, false) }

// BenchmarkVideosUncached builds every answer afresh: the world's cost.
func BenchmarkVideosUncached(b *testing.B) { benchVideos(b, true) }

func benchVideos(b *testing.B, uncached bool) {
	s, key := benchServer(b)
	h := s.Handler()
	rec := httptest.NewRecorder()
	feed := httptest.NewRequest("GET", schemas.PathFeed+"?limit=200", nil)
	feed.Header.Set("Authorization", "Bearer "+key)
	h.ServeHTTP(rec, feed)
	var page feedPage
	if err := json.Unmarshal(rec.Body.Bytes(), &page); err != nil {
		b.Fatal(err)
	}
	var ids []string
	seen := map[string]bool{}
	for _, e := range page.Events {
		if e.Video != nil && !seen[e.Video.PlatformVideoID] && len(ids) < schemas.MaxVideoIDs {
			seen[e.Video.PlatformVideoID] = true
			ids = append(ids, e.Video.PlatformVideoID)
		}
	}
	body, _ := json.Marshal(map[string]any{"videoIds": ids})
	w := &discardWriter{h: http.Header{}}
	b.ReportAllocs()
	for b.Loop() {
		r := httptest.NewRequest("POST", schemas.PathVideos, strings.NewReader(string(body)))
		r.Header.Set("Authorization", "Bearer "+key)
		r.Header.Set("Content-Type", "application/json")
		clear(w.h)
		if uncached {
			s.st.Load().answers.Changed()
		}
		h.ServeHTTP(w, r)
	}
}

// BenchmarkVideosRequestParse is the request side alone: decode and
// validate 20 ids with the compiled schema.
var jsonHeader = http.Header{"Content-Type": {"application/json"}}

func BenchmarkVideosRequestParse(b *testing.B) {
	var items []string
	for i := range schemas.MaxVideoIDs {
		items = append(items, `"video`+strings.Repeat("x", i%10)+`"`)
	}
	raw := []byte(`{"videoIds":[` + strings.Join(items, ",") + `]}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, bad := ParseVideosRequest(jsonHeader, raw); bad != nil {
			b.Fatal(bad.Message)
		}
	}
}
