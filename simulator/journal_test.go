package simulator

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/tcmkit/tcmkit/schemas"
)

type journalPage struct {
	Requests []Entry
	Matched  int
	Capacity int
	Dropped  uint64
	Settled  uint64
}

func TestJournalRecordsRequestsWithoutKeys(t *testing.T) {
	var mu sync.Mutex
	var seen []*Exchange
	s := newServer(t, Config{Seed: 1, FeedLimit: 2, JournalSize: 5, Observers: []Observer{func(x *Exchange) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, x)
	}}})
	k := s.Seeded()
	s.serve(t, feedReq(k.Pro, "limit=1"))
	s.serve(t, feedReq(k.Pro, "limit=2"))
	s.serve(t, feedReq(k.Pro, "limit=3"))                                                                           // 429
	s.serve(t, videosReq(k.Pro, `{"videoIds":["a"]}`))                                                              // 200
	s.serve(t, req{method: "GET", target: schemas.PathFeed + "?api_key=" + strings.Replace(k.Free, "_", "%5F", 1)}) // 401, key in the URL, escaped
	s.serve(t, ctl("GET", "info", ""))                                                                              // not journaled
	s.serve(t, req{method: "GET", target: "/api/" + k.Revoked})                                                     // 404, key in the path

	all := decode[journalPage](t, s.serve(t, ctl("GET", "requests", "")), 200)
	if all.Capacity != 5 || all.Dropped != 1 || len(all.Requests) != 5 || all.Requests[0].ID != 2 || all.Requests[4].ID != 6 {
		t.Fatalf("ring: capacity %d, dropped %d, ids %v", all.Capacity, all.Dropped, ids(all.Requests))
	}
	rl := all.Requests[1]
	if rl.Status != 429 || rl.Error != CodeRateLimited || rl.RetryAfter == "" || rl.Operation != OpFeed || rl.Account != "acc_1" ||
		rl.KeyHint != hint(k.Pro) || len(rl.KeyID) != 16 || rl.Query != "limit=3" || rl.VirtualTime != DefaultStart.UnixMilli() {
		t.Errorf("the 429: %+v", rl)
	}
	if v := all.Requests[2]; v.Operation != OpVideos || v.Status != 200 || v.RequestBytes != int64(len(`{"videoIds":["a"]}`)) || v.ResponseBytes == 0 || v.ContentType != "application/json" {
		t.Errorf("the videos request: %+v", v)
	}
	if e := all.Requests[3]; !e.KeyInURL || e.Status != 401 || strings.Contains(e.Query, k.Free[4:]) || !strings.Contains(e.Query, url.QueryEscape(hint(k.Free))) {
		t.Errorf("a key in the query: %+v", e)
	}
	if e := all.Requests[4]; !e.KeyInURL || e.Status != 404 || e.Path != "/api/"+hint(k.Revoked) {
		t.Errorf("a key in the path: %+v", e)
	}
	raw := string(s.serve(t, ctl("GET", "requests", "")).body)
	for _, key := range []string{k.Pro, k.Free, k.Revoked} {
		if strings.Contains(raw, key[4:12]) {
			t.Fatal("the journal holds a fragment of a key")
		}
	}

	for _, tc := range []struct {
		query string
		want  []uint64
	}{
		{"status=429", []uint64{3}},
		{"status=4xx", []uint64{3, 5, 6}},
		{"operation=feed", []uint64{2, 3, 5}},
		{"key=" + strings.TrimPrefix(hint(k.Pro), "tcm_…#"), []uint64{2, 3, 4}},
		{"key=" + url.QueryEscape(hint(k.Pro)), []uint64{2, 3, 4}},
		{"account=acc_1&limit=1", []uint64{4}},
		{"path=" + schemas.PathVideos, []uint64{4}},
		{"after=4", []uint64{5, 6}},
		{"since=0&until=1", nil},
		{"method=get&status=200", []uint64{2}},
	} {
		got := decode[journalPage](t, s.serve(t, ctl("GET", "requests?"+tc.query, "")), 200)
		if !equalIDs(ids(got.Requests), tc.want) {
			t.Errorf("%s: ids %v, want %v", tc.query, ids(got.Requests), tc.want)
		}
	}
	for _, bad := range []string{"key=" + k.Pro[len(k.Pro)-8:], "key=" + k.Pro[len(k.Pro)-4:] + "xyz", "status=abc", "since=x", "limit=0", "operation=nope"} {
		if r := s.serve(t, ctl("GET", "requests?"+bad, "")); r.status != 400 {
			t.Errorf("%s: %d, want 400", bad, r.status)
		}
	}

	mu.Lock()
	if len(seen) != 6 {
		t.Fatalf("observers saw %d exchanges, want 6", len(seen))
	}
	v := seen[3]
	if string(v.RequestBody) != `{"videoIds":["a"]}` || v.RequestHeader.Get("Authorization") != "" || v.RequestHeader.Get("Content-Type") != "application/json" ||
		v.ResponseBody != nil || v.ResponseHeader.Get("Content-Type") != "application/json" || v.KeyID != rl.KeyID {
		t.Errorf("the videos exchange (its answer's body is not copied for observers): %+v", v.Entry)
	}
	mu.Unlock()

	decode[journalPage](t, s.serve(t, ctl("DELETE", "requests", "")), 200)
	s.serve(t, feedReq(k.Free, ""))
	after := decode[journalPage](t, s.serve(t, ctl("GET", "requests", "")), 200)
	if len(after.Requests) != 1 || after.Requests[0].ID != 1 || after.Dropped != 0 {
		t.Errorf("after DELETE: %+v", after)
	}
	decode[map[string]any](t, s.serve(t, ctl("POST", "reset", "")), 200)
	if n := decode[journalPage](t, s.serve(t, ctl("GET", "requests", "")), 200).Matched; n != 0 {
		t.Errorf("a reset left %d entries", n)
	}
}

func TestJournalOff(t *testing.T) {
	s := newServer(t, Config{Seed: 1, JournalSize: -1})
	s.serve(t, feedReq(s.Seeded().Pro, ""))
	if r := s.serve(t, ctl("GET", "requests", "")); r.status != http.StatusNotFound {
		t.Errorf("journal off: %d", r.status)
	}
}

func ids(es []Entry) []uint64 {
	var out []uint64
	for _, e := range es {
		out = append(out, e.ID)
	}
	return out
}

func equalIDs(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestCORS(t *testing.T) {
	page := "http://localhost:5173"
	preflight := func(s *Server, origin, method string) response {
		return s.serve(t, req{method: "OPTIONS", target: schemas.PathVideos, header: http.Header{
			"Origin": {origin}, "Access-Control-Request-Method": {method}, "Access-Control-Request-Headers": {"authorization,content-type"}}})
	}
	t.Run("off by default", func(t *testing.T) {
		s := newServer(t, Config{Seed: 1})
		if r := preflight(s, page, "POST"); r.status != 403 || r.header.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("preflight: %d %v", r.status, r.header)
		}
		r := s.serve(t, req{method: "GET", target: schemas.PathFeed, key: s.Seeded().Pro, header: http.Header{"Origin": {page}}})
		if r.status != 200 || r.header.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("a request from a page: %d %v", r.status, r.header)
		}
	})
	t.Run("listed origins", func(t *testing.T) {
		s := newServer(t, Config{Seed: 1, FeedLimit: 1, CORSOrigins: []string{page}})
		r := preflight(s, page, "POST")
		h := r.header
		if r.status != 204 || h.Get("Access-Control-Allow-Origin") != page || !strings.Contains(h.Get("Access-Control-Allow-Headers"), "Authorization") ||
			!strings.Contains(h.Get("Access-Control-Allow-Methods"), "POST") || len(r.body) != 0 || h.Get("Content-Type") != "" {
			t.Errorf("preflight: %d %v", r.status, h)
		}
		if r := preflight(s, "http://evil.example", "POST"); r.status != 403 || r.header.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("another origin's preflight: %d %v", r.status, r.header)
		}
		for _, want := range []int{200, 429} {
			r := s.serve(t, req{method: "GET", target: schemas.PathFeed, key: s.Seeded().Pro, header: http.Header{"Origin": {page}}})
			if r.status != want || r.header.Get("Access-Control-Allow-Origin") != page || !strings.Contains(r.header.Get("Access-Control-Expose-Headers"), "Retry-After") {
				t.Errorf("status %d (want %d), %v", r.status, want, r.header)
			}
		}
	})
	t.Run("any origin", func(t *testing.T) {
		s := newServer(t, Config{Seed: 1, CORSOrigins: []string{"*"}})
		if r := preflight(s, "http://anywhere.example", "GET"); r.status != 204 || r.header.Get("Access-Control-Allow-Origin") != "*" {
			t.Errorf("preflight: %d %v", r.status, r.header)
		}
		// "*" does not open the control API to every page.
		r := s.serve(t, req{method: "GET", target: ControlPrefix + "info", header: http.Header{"Origin": {"http://anywhere.example"}}})
		if r.status != 403 {
			t.Errorf("control from any page: %d", r.status)
		}
	})
	for _, bad := range []string{"localhost:5173", "http://x/path", "ftp://x", ""} {
		if _, err := New(Config{CORSOrigins: []string{bad}}); err == nil {
			t.Errorf("origin %q accepted", bad)
		}
	}
}

// A test of a client asserts on what the client sent, through the Go
// client of the control API.
func TestControlClientReadsTheJournal(t *testing.T) {
	s := newServer(t, Config{Seed: 1, FeedLimit: 1})
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	c := Control{URL: srv.URL}
	ctx := context.Background()
	for range 2 {
		req, _ := http.NewRequest("GET", srv.URL+schemas.PathFeed, nil)
		req.Header.Set("Authorization", "Bearer "+s.Seeded().Pro)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	limited, err := c.Requests(ctx, url.Values{"status": {"429"}, "key": {hint(s.Seeded().Pro)}})
	if err != nil || len(limited) != 1 || limited[0].RetryAfter != "60" {
		t.Fatalf("429s of the Pro key: %+v, %v", limited, err)
	}
	if err := c.ClearRequests(ctx); err != nil {
		t.Fatal(err)
	}
	if all, err := c.Requests(ctx, nil); err != nil || len(all) != 0 {
		t.Errorf("after clearing: %+v, %v", all, err)
	}
}

// The journal hashes the key once and the server reuses it, but only for
// the header it was read from: a layer that changes the key is heard.
func TestKeyHashedOnceFollowsTheHeader(t *testing.T) {
	var free string
	swap := Layer{Name: "swap", Wrap: func(_ *Server, op Operation, next Answerer) Answerer {
		return func(r *http.Request) Answer {
			r.Header.Set("Authorization", "Bearer "+free)
			return next(r)
		}
	}}
	s := newServer(t, Config{Seed: 1, Layers: []Layer{swap}})
	free = s.Seeded().Free
	if r := s.serve(t, videosReq(s.Seeded().Pro, `{"videoIds":["a"]}`)); r.status != http.StatusForbidden {
		t.Errorf("the swapped-in free key: %d, want 403", r.status)
	}
}

// A piece of a key (8 characters or more of its random part) that a client
// put in a URL is hidden in the journal and the log as the whole key is,
// also for the keys of an imported export; a cursor stays as it was.
func TestJournalHidesPiecesOfKeys(t *testing.T) {
	var log strings.Builder
	s := newServer(t, Config{Seed: 1, JournalSize: 10, Logger: slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	k := s.Seeded()
	first := s.serve(t, feedReq(k.Pro, "limit=1"))
	var page struct{ NextCursor string }
	if err := json.Unmarshal(first.body, &page); err != nil || page.NextCursor == "" {
		t.Fatalf("first page: %v %s", err, first.body)
	}
	random := func(key string) string { return key[len(key)-KeyRandomLen:] }
	s.serve(t, feedReq(k.Pro, "limit=1&cursor="+page.NextCursor))
	s.serve(t, feedReq(k.Pro, "limit=1&half="+random(k.Free)[:16]))                   // half a key
	s.serve(t, feedReq(k.Pro, "limit=1&tail=x"+random(k.Revoked)[20:]+"&n=12345678")) // 12 characters of a revoked key, and digits of none
	s.serve(t, req{method: "GET", target: "/api/" + random(k.Pro)[3:14] + "/feed"})   // in the path

	all := decode[journalPage](t, s.serve(t, ctl("GET", "requests", "")), 200)
	got := []string{}
	for _, e := range all.Requests {
		got = append(got, e.Path+"?"+e.Query)
	}
	want := []string{
		"/api/public-feed?limit=1",
		"/api/public-feed?limit=1&cursor=" + page.NextCursor,
		"/api/public-feed?limit=1&half=…",
		"/api/public-feed?limit=1&tail=x…&n=12345678",
		"/api/…/feed?",
	}
	if !slices.Equal(got, want) {
		t.Errorf("journal:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !strings.Contains(log.String(), "tail=x…") {
		t.Errorf("the log shows no request:\n%s", log.String())
	}
	for _, key := range []string{k.Pro, k.Free, k.Revoked} {
		for i := 0; i+8 <= KeyRandomLen; i++ {
			if f := random(key)[i : i+8]; strings.Contains(log.String(), f) {
				t.Fatalf("the log holds %q, a piece of a key", f)
			}
		}
	}

	// An export imported again: its keys come from the same seed, and
	// their pieces are known again.
	exp := s.serve(t, ctl("GET", "world", ""))
	if exp.status != 200 {
		t.Fatalf("export: %d", exp.status)
	}
	if r := s.serve(t, ctl("PUT", "world", string(exp.body))); r.status != 200 {
		t.Fatalf("import: %d %s", r.status, r.body)
	}
	s.serve(t, feedReq(k.Pro, "limit=1&half="+random(k.Free)[8:24]))
	all = decode[journalPage](t, s.serve(t, ctl("GET", "requests", "")), 200)
	if e := all.Requests[len(all.Requests)-1]; e.Query != "limit=1&half=…" {
		t.Errorf("after an import: %q", e.Query)
	}
}
