package clients_test

// Two clients of a blind corpus (written from CONTRACT.md alone) that the
// judge once accused falsely, as tests of the judge: the client that
// conforms in its unusual way passes; the same client breaking one rule
// fails that rule alone (clienttest.Options.Expect: exactly those).

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tcmkit/tcmkit/schemas/catalogue"
	"github.com/tcmkit/tcmkit/simulator"
	"github.com/tcmkit/tcmkit/simulator/clienttest"
	"github.com/tcmkit/tcmkit/simulator/mutants"
)

// pool is a client with a thread pool: n requests, each on a connection
// of its own, written at one instant before any answer is read.
type pool struct {
	t     *testing.T
	sim   *clienttest.Sim
	conns []*http.Client
}

func newPool(t *testing.T, sim *clienttest.Sim, n int) *pool {
	p := &pool{t: t, sim: sim}
	for range n {
		tr := &http.Transport{MaxConnsPerHost: 1}
		t.Cleanup(tr.CloseIdleConnections)
		p.conns = append(p.conns, &http.Client{Transport: tr})
	}
	return p
}

// videos sends the tracked-videos request on the connections named, all at
// once, and returns each answer's status and Retry-After.
func (p *pool) videos(which []int) (status []int, retryAfter []string) {
	status, retryAfter = make([]int, len(which)), make([]string, len(which))
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, c := range which {
		wg.Go(func() {
			req, _ := http.NewRequest(http.MethodPost, p.sim.URL+"/api/public/videos", strings.NewReader(`{"videoIds":["vid_`+strconv.Itoa(c)+`"]}`))
			req.Header.Set("Authorization", "Bearer "+p.sim.Keys.Pro)
			req.Header.Set("Content-Type", "application/json")
			<-start
			resp, err := p.conns[c].Do(req)
			if err != nil {
				p.t.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			status[i], retryAfter[i] = resp.StatusCode, resp.Header.Get("Retry-After")
		})
	}
	close(start)
	wg.Wait()
	return status, retryAfter
}

// The pool writes 25 tracked-videos requests on 25 connections at one
// instant; those answered 429 it sends again, on their connections, after
// the longest Retry-After (CLIENT-RETRY-AFTER: the requests in flight when
// the first 429 came are no retries of it). The same client that sends
// them again at once breaks CLIENT-RETRY-AFTER alone.
func TestPoolOf25RetriesAfterTheLongestRetryAfter(t *testing.T) {
	for _, tc := range []struct {
		name   string
		waits  bool
		expect []catalogue.ID
	}{
		{"waits the longest Retry-After", true, nil},
		{"sends them again at once", false, []catalogue.ID{catalogue.ClientRetryAfter}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sim := clienttest.Start(t, clienttest.Options{Expect: tc.expect})
			p := newPool(t, sim, 25)
			all := make([]int, 25)
			for i := range all {
				all[i] = i
			}
			status, ra := p.videos(all)
			var refused []int
			var longest time.Duration
			for i, st := range status {
				if st != http.StatusTooManyRequests {
					continue
				}
				refused = append(refused, i)
				secs, err := strconv.Atoi(ra[i])
				if err != nil {
					t.Fatalf("a 429 with Retry-After %q", ra[i])
				}
				longest = max(longest, time.Duration(secs)*time.Second)
			}
			if len(refused) == 0 {
				t.Fatalf("no 429 among 25 requests at once: %v", status)
			}
			if tc.waits {
				if err := sim.Sleep(t.Context(), longest); err != nil {
					t.Fatal(err)
				}
			}
			status, _ = p.videos(refused)
			for i, st := range status {
				if tc.waits && st != http.StatusOK {
					t.Errorf("request %d sent again after %v: %d", refused[i], longest, st)
				}
			}
		})
	}
}

// walker reads the feed a page of one event at a time, three seconds
// apart (20 a minute at most), and when the server refuses a cursor it
// handed out, tries it once more five seconds later and stops, saying so.
type walker struct {
	t      *testing.T
	sim    *clienttest.Sim
	giveUp int // stops on its own after this many pages (0: never)
}

func (w *walker) get(ctx context.Context, cursor string) (status int, next string) {
	q := "limit=1"
	if cursor != "" {
		q += "&cursor=" + url.QueryEscape(cursor)
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, w.sim.URL+"/api/public-feed?"+q, nil)
	req.Header.Set("Authorization", "Bearer "+w.sim.Keys.Pro)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		w.t.Fatal(err)
	}
	defer resp.Body.Close()
	var page struct {
		NextCursor *string `json:"nextCursor"`
	}
	if resp.StatusCode == http.StatusOK {
		if err := json.NewDecoder(resp.Body).Decode(&page); err != nil {
			w.t.Fatal(err)
		}
		if page.NextCursor != nil {
			next = *page.NextCursor
		}
	}
	return resp.StatusCode, next
}

// walk returns how many pages it read and why it stopped.
func (w *walker) walk(ctx context.Context) (int, string) {
	cursor := ""
	for pages := 0; ; {
		status, next := w.get(ctx, cursor)
		if status == http.StatusBadRequest && cursor != "" {
			_ = w.sim.Sleep(ctx, 5*time.Second)
			if status, next = w.get(ctx, cursor); status == http.StatusBadRequest {
				return pages, "the server refused its own cursor"
			}
		}
		if status != http.StatusOK {
			w.t.Fatalf("page %d: %d", pages+1, status)
		}
		pages++
		if next == "" {
			return pages, "the end"
		}
		if w.giveUp > 0 && pages == w.giveUp {
			return pages, "gave up"
		}
		cursor = next
		_ = w.sim.Sleep(ctx, 3100*time.Millisecond)
	}
}

// A walk cut by the server (cursor-store-fills@long-walk answers 400 to
// the 101st cursor it hands out): the client retries once and stops, and
// CLIENT-WALK-END excuses it. The same client stopping halfway on its own
// breaks CLIENT-WALK-END alone.
func TestWalkCutByTheServerRetriedOnce(t *testing.T) {
	for _, tc := range []struct {
		name   string
		giveUp int
		why    string
		expect []catalogue.ID
	}{
		{"stops where the server refused its cursor", 0, "the server refused its own cursor", nil},
		{"stops halfway on its own", 50, "gave up", []catalogue.ID{catalogue.ClientWalkEnd}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			layers, err := mutants.Layers("cursor-store-fills@long-walk")
			if err != nil {
				t.Fatal(err)
			}
			sim := clienttest.Start(t, clienttest.Options{Config: simulator.Config{Layers: layers}, Expect: tc.expect})
			w := &walker{t: t, sim: sim, giveUp: tc.giveUp}
			pages, why := w.walk(t.Context())
			if why != tc.why {
				t.Fatalf("the walk stopped after %d pages: %s, want %s", pages, why, tc.why)
			}
		})
	}
}
