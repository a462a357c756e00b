package simulator

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tcmkit/tcmkit/schemas"
)

func TestSeededAccounts(t *testing.T) {
	s := newServer(t, Config{Seed: 7})
	k := s.Seeded()
	for _, key := range []string{k.Pro, k.Free, k.Revoked} {
		if !wellFormed(key, DefaultKeyPrefix) {
			t.Errorf("seeded key %s is not <prefix>_<32 alnum>", hint(key))
		}
	}
	if k.Pro == k.Free || k.Pro == k.Revoked || k.Free == k.Revoked {
		t.Fatal("seeded keys are not distinct")
	}
	for _, tc := range []struct {
		name string
		q    req
		want int
	}{
		{"pro reads the feed", feedReq(k.Pro, ""), http.StatusOK},
		{"free reads the feed", feedReq(k.Free, ""), http.StatusOK},
		{"revoked key on the feed", feedReq(k.Revoked, ""), http.StatusUnauthorized},
		{"pro reads videos", videosReq(k.Pro, `{"videoIds":["x"]}`), http.StatusOK},
		{"free is refused videos", videosReq(k.Free, `{"videoIds":["x"]}`), http.StatusForbidden},
		{"revoked key on videos", videosReq(k.Revoked, `{"videoIds":["x"]}`), http.StatusUnauthorized},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := s.serve(t, tc.q)
			if r.status != tc.want {
				t.Fatalf("status %d, want %d: %s", r.status, tc.want, r.body)
			}
			want := schemas.FeedPage
			if tc.q.target == schemas.PathVideos {
				want = schemas.VideosResponse
			}
			check(t, r, want)
		})
	}
	// Same seed, same keys; another seed, other keys.
	if again := newServer(t, Config{Seed: 7}).Seeded(); again != k {
		t.Error("same seed gave other keys")
	}
	if other := newServer(t, Config{Seed: 8}).Seeded(); other.Pro == k.Pro {
		t.Error("another seed gave the same Pro key")
	}
}

func TestAuthentication(t *testing.T) {
	s := newServer(t, Config{Seed: 1})
	k := s.Seeded()
	random := strings.TrimPrefix(k.Pro, DefaultKeyPrefix+"_")
	for _, tc := range []struct {
		name   string
		values []string // Authorization header values
		want   int
		code   string
	}{
		{"missing", nil, 401, "missing_api_key"},
		{"empty", []string{""}, 401, "missing_api_key"},
		{"scheme only", []string{"Bearer"}, 401, "malformed_api_key"},
		{"scheme and space", []string{"Bearer "}, 401, "malformed_api_key"},
		{"basic scheme", []string{"Basic " + k.Pro}, 401, "malformed_api_key"},
		{"no scheme", []string{k.Pro}, 401, "malformed_api_key"},
		{"no prefix", []string{"Bearer " + random}, 401, "malformed_api_key"},
		{"other prefix", []string{"Bearer abc_" + random}, 401, "malformed_api_key"},
		{"too short", []string{"Bearer " + k.Pro[:len(k.Pro)-1]}, 401, "malformed_api_key"},
		{"bad character", []string{"Bearer " + k.Pro[:len(k.Pro)-1] + "!"}, 401, "malformed_api_key"},
		{"unknown", []string{"Bearer " + DefaultKeyPrefix + "_" + strings.Repeat("A", KeyRandomLen)}, 401, "invalid_api_key"},
		{"revoked", []string{"Bearer " + k.Revoked}, 401, "revoked_api_key"},
		{"two headers", []string{"Bearer " + k.Pro, "Bearer " + k.Pro}, 401, "malformed_api_key"},
		{"lower-case scheme", []string{"bearer " + k.Pro}, 200, ""},
		{"valid", []string{"Bearer " + k.Pro}, 200, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := s.serve(t, req{method: http.MethodGet, target: schemas.PathFeed, header: http.Header{"Authorization": tc.values}})
			if r.status != tc.want {
				t.Fatalf("status %d, want %d: %s", r.status, tc.want, r.body)
			}
			check(t, r, schemas.FeedPage)
			if tc.want != 401 {
				return
			}
			if e := r.ErrorBody(t); e.Error != tc.code {
				t.Errorf("error %q, want %q", e.Error, tc.code)
			}
			if strings.Contains(string(r.body), random) {
				t.Error("the 401 body quotes the key")
			}
		})
	}
}

func TestFeedQuery(t *testing.T) {
	s := newServer(t, Config{Seed: 1, FeedLimit: -1, Channels: DefaultChannels, History: 10 * 24 * time.Hour})
	key := s.Seeded().Pro
	for _, tc := range []struct {
		query   string
		invalid []string // nil: 200
		events  int      // events on the page when 200 (the world has more than MaxPageSize)
	}{
		{"", nil, schemas.DefaultPageSize},
		{"limit=1", nil, 1},
		{"limit=" + strconv.Itoa(schemas.MaxPageSize), nil, schemas.MaxPageSize},
		{"limit=" + strconv.Itoa(schemas.MaxPageSize+1), nil, schemas.MaxPageSize},
		{"limit=99999999999999999999999", nil, schemas.MaxPageSize},
		{"limit=007", nil, 7},
		{"cursor=", nil, schemas.DefaultPageSize},
		{"other=1&limit=2", nil, 2},
		{"limit=0", []string{"limit"}, 0},
		{"limit=-1", []string{"limit"}, 0},
		{"limit=1.5", []string{"limit"}, 0},
		{"limit=1e99", []string{"limit"}, 0},
		{"limit=+5", []string{"limit"}, 0},
		{"limit=", []string{"limit"}, 0},
		{"limit=ten", []string{"limit"}, 0},
		{"limit=%zz", []string{"limit"}, 0},
		{"limit=5&limit=5", []string{"limit"}, 0},
		{"cursor=garbage", []string{"cursor"}, 0},
		{"cursor=a&cursor=b", []string{"cursor"}, 0},
		{"limit=x&cursor=garbage", []string{"limit", "cursor"}, 0}, // every invalid parameter named: a cursor the account was never handed beside a bad limit
		{"limit=x&cursor=a&cursor=b", []string{"limit", "cursor"}, 0},
	} {
		t.Run(tc.query, func(t *testing.T) {
			r := s.serve(t, feedReq(key, tc.query))
			check(t, r, schemas.FeedPage)
			if tc.invalid == nil {
				if p := decodePage(t, r); len(p.Events) != tc.events {
					t.Errorf("%d events, want %d", len(p.Events), tc.events)
				}
				return
			}
			if r.status != http.StatusBadRequest {
				t.Fatalf("status %d, want 400: %s", r.status, r.body)
			}
			e := r.ErrorBody(t)
			d, _ := e.Details.(map[string]any)
			var got []string
			for _, v := range asSlice(d["invalid"]) {
				got = append(got, fmt.Sprint(v))
			}
			if !slices.Equal(got, tc.invalid) {
				t.Errorf("details.invalid %v, want %v (body %s)", got, tc.invalid, r.body)
			}
		})
	}
}

func asSlice(v any) []any { s, _ := v.([]any); return s }

func TestFeedWalkNeverRepeatsOrSkips(t *testing.T) {
	s := newServer(t, Config{Seed: 3, FeedLimit: -1})
	key := s.Seeded().Pro
	seen := map[string]bool{}
	cursor := ""
	var last int64 = 1 << 62
	for pages := 0; ; pages++ {
		q := "limit=7"
		if cursor != "" {
			q += "&cursor=" + cursor
		}
		p := decodePage(t, s.serve(t, feedReq(key, q)))
		for _, e := range p.Events {
			if seen[e.ID] {
				t.Fatalf("event %s repeated on page %d", e.ID, pages)
			}
			seen[e.ID] = true
			if e.CreatedAt > last {
				t.Fatalf("event %s is newer than the one before it", e.ID)
			}
			last = e.CreatedAt
		}
		if pages == 1 {
			// New events arrive at the head while the walk goes on.
			s.Advance(6 * time.Hour)
		}
		if p.NextCursor == nil {
			break
		}
		cursor = *p.NextCursor
	}
	if len(seen) == 0 {
		t.Fatal("the feed is empty")
	}
}

func TestForeignCursor(t *testing.T) {
	s := newServer(t, Config{Seed: 1, FeedLimit: -1})
	k := s.Seeded()
	p := decodePage(t, s.serve(t, feedReq(k.Pro, "limit=1")))
	if p.NextCursor == nil {
		t.Fatal("no next cursor")
	}
	r := s.serve(t, feedReq(k.Free, "cursor="+*p.NextCursor))
	if r.status != http.StatusBadRequest {
		t.Fatalf("another account's cursor: status %d, want 400: %s", r.status, r.body)
	}
	check(t, r, "")
}

func TestVideosRequest(t *testing.T) {
	s := newServer(t, Config{Seed: 1, VideosLimit: -1})
	key := s.Seeded().Pro
	ids := func(n, length int) string {
		var items []string
		for i := range n {
			items = append(items, strconv.Quote(strings.Repeat(string(rune('a'+i%26)), length)))
		}
		return `{"videoIds":[` + strings.Join(items, ",") + `]}`
	}
	for _, tc := range []struct {
		name        string
		contentType string
		body        string
		want        int
		pointer     string // a violation expected at this pointer, for schema failures
	}{
		{"one id", "application/json", ids(1, 1), 200, ""},
		{"max ids of max length", "application/json", ids(schemas.MaxVideoIDs, schemas.MaxVideoIDLen), 200, ""},
		{"charset", "application/json; charset=utf-8", ids(1, 3), 200, ""},
		{"unknown fields are tolerated", "application/json", `{"videoIds":["a"],"x":1}`, 200, ""},
		{"no content type", "", ids(1, 1), 400, ""},
		{"text/plain", "text/plain", ids(1, 1), 400, ""},
		{"latin1", "application/json; charset=latin1", ids(1, 1), 400, ""},
		{"empty body", "application/json", "", 400, ""},
		{"not JSON", "application/json", "videoIds=a", 400, ""},
		{"truncated", "application/json", `{"videoIds":["a"`, 400, ""},
		{"trailing data", "application/json", `{"videoIds":["a"]} {}`, 400, ""},
		{"not an object", "application/json", `["a"]`, 400, ""},
		{"null", "application/json", `null`, 400, ""},
		{"missing videoIds", "application/json", `{}`, 400, ""},
		{"videoIds not an array", "application/json", `{"videoIds":"a"}`, 400, "/videoIds"},
		{"zero ids", "application/json", ids(0, 1), 400, "/videoIds"},
		{"too many ids", "application/json", ids(schemas.MaxVideoIDs+1, 1), 400, "/videoIds"},
		{"empty id", "application/json", `{"videoIds":[""]}`, 400, "/videoIds/0"},
		{"id too long", "application/json", ids(1, schemas.MaxVideoIDLen+1), 400, "/videoIds/0"},
		{"number id", "application/json", `{"videoIds":["a",5]}`, 400, "/videoIds/1"},
		{"null id", "application/json", `{"videoIds":[null]}`, 400, "/videoIds/0"},
		{"invalid UTF-8", "application/json", "{\"videoIds\":[\"\xff\"]}", 400, ""},
		{"huge body", "application/json", `{"videoIds":["` + strings.Repeat("a", MaxBodyBytes) + `"]}`, 400, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := videosReq(key, tc.body)
			q.header = http.Header{}
			if tc.contentType != "" {
				q.header.Set("Content-Type", tc.contentType)
			}
			r := s.serve(t, q)
			if r.status != tc.want {
				t.Fatalf("status %d, want %d: %.300s", r.status, tc.want, r.body)
			}
			check(t, r, schemas.VideosResponse)
			if tc.want != 400 {
				return
			}
			d, _ := r.ErrorBody(t).Details.(map[string]any)
			if len(asSlice(d["violations"])) == 0 {
				t.Fatalf("a 400 without details.violations: %s", r.body)
			}
			if tc.pointer == "" {
				return
			}
			found := false
			for _, v := range asSlice(d["violations"]) {
				if m, _ := v.(map[string]any); m["pointer"] == tc.pointer && m["rule"] != "" {
					found = true
				}
			}
			if !found {
				t.Errorf("no violation at %s in %s", tc.pointer, r.body)
			}
		})
	}
}

func TestHealth(t *testing.T) {
	s := newServer(t, Config{Seed: 1})
	for _, body := range []string{"{}", "", "not json"} {
		r := s.serve(t, req{method: http.MethodPost, target: schemas.PathHealth, body: body})
		if r.status != 200 || string(r.body) != `{"status":"ok"}` {
			t.Errorf("health with %q: %d %s", body, r.status, r.body)
		}
		check(t, r, schemas.HealthBody)
	}
}

func TestNotFoundAndMethodNotAllowed(t *testing.T) {
	s := newServer(t, Config{Seed: 1})
	for _, tc := range []struct {
		method, target string
		want           int
		allow          string
	}{
		{"GET", "/", 404, ""},
		{"GET", "/api/public-feed/", 404, ""},
		{"GET", "/api/public/feed", 404, ""},
		{"GET", "//api/public-feed", 404, ""},
		{"GET", "/api/x/../public-feed", 404, ""},
		{"POST", "/api/public-feed", 405, "GET, HEAD"},
		{"DELETE", "/api/public-feed", 405, "GET, HEAD"},
		{"GET", "/api/public/videos", 405, "POST"},
		{"GET", "/api/public/health", 405, "POST"},
		{"DELETE", "/_control/clock", 405, "GET, HEAD"},
		{"GET", "/_control/nope", 404, ""},
	} {
		t.Run(tc.method+" "+tc.target, func(t *testing.T) {
			r := s.serve(t, req{method: tc.method, target: tc.target})
			if r.status != tc.want {
				t.Fatalf("status %d, want %d: %s", r.status, tc.want, r.body)
			}
			check(t, r, "")
			if got := r.header.Get("Allow"); got != tc.allow {
				t.Errorf("Allow %q, want %q", got, tc.allow)
			}
		})
	}
}

func TestPrecedence(t *testing.T) {
	s := newServer(t, Config{Seed: 1, FeedLimit: 1, VideosLimit: 1})
	k := s.Seeded()
	// 401 before everything: a bad key with a bad body is a 401.
	if r := s.serve(t, videosReq(k.Revoked, "{")); r.status != 401 {
		t.Errorf("revoked key, bad body: %d, want 401", r.status)
	}
	// 403 before 400: a free account with a bad body is a 403, and it counted.
	if r := s.serve(t, videosReq(k.Free, "{")); r.status != 403 {
		t.Errorf("free account, bad body: %d, want 403", r.status)
	}
	if r := s.serve(t, videosReq(k.Free, `{"videoIds":["a"]}`)); r.status != 429 {
		t.Errorf("free account, second request: %d, want 429", r.status)
	}
	// 400 counts too.
	if r := s.serve(t, feedReq(k.Pro, "limit=0")); r.status != 400 {
		t.Errorf("bad limit: %d, want 400", r.status)
	}
	if r := s.serve(t, feedReq(k.Pro, "")); r.status != 429 {
		t.Errorf("after a 400: %d, want 429", r.status)
	}
	// Unauthenticated requests do not count: the Pro key's videos budget is whole.
	if r := s.serve(t, videosReq(k.Pro, `{"videoIds":["a"]}`)); r.status != 200 {
		t.Errorf("pro videos: %d, want 200", r.status)
	}
}
