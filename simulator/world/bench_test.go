package world

import (
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/tcmkit/tcmkit/schemas"
)

// bigConfig makes a world of about a million events, through Config alone.
var bigConfig = Config{Seed: 1, Channels: 1500, History: 60 * 24 * time.Hour}

var big struct {
	once sync.Once
	w    *World
	err  error
}

func bigWorld(b *testing.B) *World {
	b.Helper()
	big.once.Do(func() {
		big.w, big.err = New(bigConfig)
		if big.err == nil {
			big.w.CreateAccount(Pro) // the first account tracks every channel
		}
		runtime.GC() // so that the build's garbage is not collected during a benchmark
	})
	if big.err != nil {
		b.Fatal(big.err)
	}
	return big.w
}

// BenchmarkBuild1M builds the million-event world. Peak memory:
// /usr/bin/time -v go test -run XXX -bench BenchmarkBuild1M -benchtime 1x ./simulator/world
func BenchmarkBuild1M(b *testing.B) {
	var events int
	for b.Loop() {
		w, err := New(bigConfig)
		if err != nil {
			b.Fatal(err)
		}
		events = w.Stats().Events
		runtime.KeepAlive(w)
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(events), "events")
	b.ReportMetric(float64(ms.HeapAlloc)/(1<<20), "heap-MiB")
}

// BenchmarkFeedPage reads a limit=50 page at the head, in the middle and at
// the far end of the million-event feed: the cost must not grow with depth.
func BenchmarkFeedPage(b *testing.B) {
	w := bigWorld(b)
	a := w.accountBy["acc_1"]
	n := len(a.feed)
	for _, bc := range []struct {
		name  string
		index int // the cursor's event: the page holds the events before it
	}{
		{"first", -1},
		{"middle", n / 2},
		{"deep", schemas.DefaultPageSize + 1},
	} {
		cursor := ""
		if bc.index >= 0 {
			cursor = string(w.appendCursor(nil, a.id, a.feed[bc.index]))
		}
		b.Run(bc.name+"/reused-buffer", func(b *testing.B) {
			buf, err := w.AppendFeedPage(nil, a.id, cursor, schemas.DefaultPageSize)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(buf)))
			for b.Loop() {
				if buf, err = w.AppendFeedPage(buf[:0], a.id, cursor, schemas.DefaultPageSize); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(bc.name, func(b *testing.B) {
			raw, err := w.FeedPage(a.id, cursor, schemas.DefaultPageSize)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(raw)))
			b.ReportMetric(float64(n), "feed-events")
			// Warm the allocator up to its steady state first: a fresh heap
			// faults pages in for the first thousands of 30 KB pages.
			for range 2000 {
				w.FeedPage(a.id, cursor, schemas.DefaultPageSize)
			}
			for b.Loop() {
				if _, err := w.FeedPage(a.id, cursor, schemas.DefaultPageSize); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkVideos asks for 20 videos of a default world, spread over its
// videos (fresh uploads and old catalog ones alike): answered from the
// entry cache (the clock does not move), into a new or a reused buffer, and
// encoded afresh.
func BenchmarkVideos(b *testing.B) {
	w, err := New(Config{Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	a := w.CreateAccount(Pro)
	var ids []string
	for i := range schemas.MaxVideoIDs {
		ids = append(ids, w.videos[i*len(w.videos)/schemas.MaxVideoIDs].ID)
	}
	for _, bc := range []struct {
		name            string
		noCache, reused bool
	}{{"cached", false, false}, {"cached/reused-buffer", false, true}, {"uncached", true, false}} {
		b.Run(bc.name, func(b *testing.B) {
			w.noCache = bc.noCache
			buf, err := w.Videos(a.ID, ids)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(buf)))
			for b.Loop() {
				if !bc.reused {
					buf = nil
				}
				if buf, err = w.AppendVideos(buf[:0], a.ID, ids); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	w.noCache = false
}

// BenchmarkAdvanceToIdle is the cost of AdvanceTo on a request when no poll
// is due.
func BenchmarkAdvanceToIdle(b *testing.B) {
	w, err := New(Config{Seed: 1, Channels: 2, History: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	now := w.Now()
	for b.Loop() {
		w.AdvanceTo(now)
	}
}

// BenchmarkVideosPartsScattered asks for random sets of 20 among the
// videos of a world with a long history, each answered from the entry cache
// and then read through, as the kernel reads an answer it sends: the reads
// of the answers push the videos out of the CPU's caches, as on a server
// (ci/load/bench.sh, random sets).
func BenchmarkVideosPartsScattered(b *testing.B) {
	w, err := New(Config{Seed: 1, History: 200 * 24 * time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	a := w.CreateAccount(Pro)
	for i := 0; i < len(w.videos); i += schemas.MaxVideoIDs { // every entry cached
		var ids []string
		for _, v := range w.videos[i:min(i+schemas.MaxVideoIDs, len(w.videos))] {
			ids = append(ids, v.ID)
		}
		if _, err := w.Videos(a.ID, ids); err != nil {
			b.Fatal(err)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	sets := make([][]string, 512)
	for i := range sets {
		for range schemas.MaxVideoIDs {
			sets[i] = append(sets[i], w.videos[r.IntN(len(w.videos))].ID)
		}
	}
	var parts [][]byte
	var buf []byte
	var sum byte
	i := 0
	for b.Loop() {
		parts, buf, _, err = w.VideosParts(parts[:0], buf[:0], a.ID, sets[i%len(sets)])
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer() // what is timed is VideosParts alone
		for _, p := range parts {
			for j := 0; j < len(p); j += 64 {
				sum += p[j]
			}
		}
		b.StartTimer()
		i++
	}
	b.ReportMetric(float64(len(w.videos)), "videos")
	_ = sum
}
