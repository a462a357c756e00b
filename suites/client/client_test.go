package client_test

import (
	"bytes"
	"context"
	"errors"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tcmkit/tcmkit/schemas/redact"
	"github.com/tcmkit/tcmkit/suites/client"
)

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		in      string
		want    time.Duration
		wantErr bool
	}{
		{"0", 0, false},
		{"3", 3 * time.Second, false},
		{" 60 ", 60 * time.Second, false},
		{"Thu, 01 Jan 2026 12:00:30 GMT", 30 * time.Second, false}, // IMF-fixdate
		{"Thursday, 01-Jan-26 12:01:00 GMT", time.Minute, false},   // RFC 850
		{"Thu Jan  1 12:00:05 2026", 5 * time.Second, false},       // asctime
		{"Thu, 01 Jan 2026 11:59:00 GMT", 0, false},                // in the past: no wait
		{"", 0, true},
		{"-1", 0, true},
		{"-5", 0, true},
		{"+5", 0, true},
		{"1.5", 0, true},
		{"3s", 0, true},
		{"abc", 0, true},
		{"soon", 0, true},
		{"31536000", 365 * 24 * time.Hour, false},                     // a year: valid, however long
		{"99999999999999999999", time.Duration(math.MaxInt64), false}, // past a Duration: the longest
		{"\t7\t", 7 * time.Second, false},
		{"2026-01-01T12:00:30Z", 0, true}, // ISO 8601 is not an HTTP-date
	} {
		got, err := client.ParseRetryAfter(tc.in, now)
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("ParseRetryAfter(%q) = %v, %v; want %v, error %v", tc.in, got, err, tc.want, tc.wantErr)
		}
	}
	if _, err := client.ParseRetryAfter("", now); !errors.Is(err, client.ErrNoRetryAfter) {
		t.Errorf("missing header: %v, want ErrNoRetryAfter", err)
	}
}

func TestServerTime(t *testing.T) {
	fallback := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	h := http.Header{"Date": {"Thu, 01 Jan 2026 12:00:00 GMT"}}
	if got := client.ServerTime(h, fallback); !got.Equal(time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)) {
		t.Errorf("ServerTime = %v", got)
	}
	if got := client.ServerTime(http.Header{"Date": {"garbage"}}, fallback); !got.Equal(fallback) {
		t.Errorf("ServerTime(garbage) = %v, want the fallback", got)
	}
}

// fakeClock records the waits instead of sleeping.
type fakeClock struct{ waited []time.Duration }

func (f *fakeClock) Wait(_ context.Context, d time.Duration) error {
	f.waited = append(f.waited, d)
	return nil
}
func (f *fakeClock) Now(context.Context) (time.Time, error) { return time.Unix(0, 0), nil }

const key = "tcm_AbCdEfGhIjKlMnOpQrStUvWxYz012345"

// throttling answers 429 with the given Retry-After to the first n requests.
func throttling(n int32, retryAfter string) (*httptest.Server, *atomic.Int32) {
	var seen atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if seen.Add(1) <= n {
			if retryAfter != "" {
				w.Header().Set("Retry-After", retryAfter)
			}
			w.WriteHeader(http.StatusTooManyRequests)
			w.Write([]byte(`{"error":"rate_limited","message":"slow down ` + r.Header.Get("Authorization") + `"}`))
			return
		}
		w.Write([]byte(`{"events":[],"nextCursor":null}`))
	}))
	return srv, &seen
}

func TestDoHonoursRetryAfter(t *testing.T) {
	for _, tc := range []struct {
		name       string
		throttled  int32
		retryAfter string
		wantStatus int
		wantWaits  []time.Duration
	}{
		{"no 429", 0, "3", 200, nil},
		{"delta-seconds", 1, "3", 200, []time.Duration{3 * time.Second}},
		{"a missing header is not waited for", 1, "", 429, nil},
		{"garbage is not waited for", 1, "later", 429, nil},
		{"a negative value is not waited for", 1, "-5", 429, nil},
		{"a Retry-After that proved short becomes a window; still 429 after it, the limiter does not release", 10, "1", 0, []time.Duration{time.Second, time.Minute}},
		{"a lying Retry-After: 0", 2, "0", 200, []time.Duration{0, time.Minute}},
		{"a wait beyond MaxWait is not taken", 1, "3600", 429, nil},
		{"a year is not waited for", 1, "31536000", 429, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, seen := throttling(tc.throttled, tc.retryAfter)
			defer srv.Close()
			clock := &fakeClock{}
			var log bytes.Buffer
			c := &client.Client{BaseURL: srv.URL, Clock: clock, Log: &log, Redact: redact.New(key).String}
			resp, err := c.Do(context.Background(), client.Get("/api/public-feed", nil, client.Bearer(key)))
			var stuck *client.NotReleasedError
			if tc.wantStatus == 0 {
				if !errors.As(err, &stuck) || !slices.Equal(clock.waited, tc.wantWaits) {
					t.Fatalf("err %v, waited %v; want a limiter that does not release, after waiting %v", err, clock.waited, tc.wantWaits)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if resp.Status != tc.wantStatus {
				t.Errorf("status %d, want %d", resp.Status, tc.wantStatus)
			}
			if len(clock.waited) != len(tc.wantWaits) {
				t.Fatalf("waited %v, want %v", clock.waited, tc.wantWaits)
			}
			for i := range clock.waited {
				if clock.waited[i] != tc.wantWaits[i] {
					t.Errorf("waited %v, want %v", clock.waited, tc.wantWaits)
				}
			}
			if int(seen.Load()) != c.Total() || resp.Attempts != c.Total() {
				t.Errorf("server saw %d, client counted %d, attempts %d", seen.Load(), c.Total(), resp.Attempts)
			}
			if len(tc.wantWaits) > 0 && !strings.Contains(log.String(), "for the rate limit") {
				t.Errorf("no visible waiting line: %q", log.String())
			}
			if resp.Status == 429 && (!strings.Contains(resp.Note, "not retried") || !strings.Contains(resp.String(), resp.Note)) {
				t.Errorf("a 429 returned without a note that says why: %q", resp.String())
			}
			n, script := c.Take()
			if n != c.Total() {
				t.Errorf("Take counted %d, total %d", n, c.Total())
			}
			if strings.Contains(script, key) || strings.Contains(log.String(), key) {
				t.Errorf("the key leaked into the transcript or log:\n%s\n%s", script, log.String())
			}
			if strings.Count(script, "=== GET /api/public-feed") != n {
				t.Errorf("transcript has not one block per request:\n%s", script)
			}
			if again, _ := c.Take(); again != 0 {
				t.Errorf("Take did not start afresh: %d", again)
			}
		})
	}
}

func TestCachedSendsOnce(t *testing.T) {
	srv, seen := throttling(0, "")
	defer srv.Close()
	c := &client.Client{BaseURL: srv.URL, Clock: &fakeClock{}}
	ctx := context.Background()
	req := client.Get("/api/public-feed", map[string][]string{"limit": {"5"}}, client.Bearer(key))
	first, err := c.Cached(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	second, err := c.Cached(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	other, err := c.Cached(ctx, client.Get("/api/public-feed", map[string][]string{"limit": {"5"}}, client.Bearer(key+"x")))
	if err != nil {
		t.Fatal(err)
	}
	if seen.Load() != 2 || c.Total() != 2 {
		t.Errorf("server saw %d requests, client %d; want 2 (one per distinct request)", seen.Load(), c.Total())
	}
	if first.Reused || !second.Reused || other.Reused || !bytes.Equal(first.Body, second.Body) {
		t.Errorf("reuse flags %v %v %v", first.Reused, second.Reused, other.Reused)
	}
	if _, script := c.Take(); !strings.Contains(script, "reused") {
		t.Errorf("a reused response is not marked in the transcript:\n%s", script)
	}
}

func TestCachedKeepsFailedExchanges(t *testing.T) {
	c := &client.Client{BaseURL: "http://127.0.0.1:1", Clock: &fakeClock{}}
	req := client.Get("/api/public-feed", nil, "")
	for range 2 {
		if _, err := c.Cached(context.Background(), req); err == nil {
			t.Fatal("no error from a closed port")
		}
	}
	if c.Total() != 1 {
		t.Errorf("a failed exchange was sent again: %d requests", c.Total())
	}
	// ... unless the caller gave up before it finished
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	other := client.Get("/api/public-feed", map[string][]string{"limit": {"1"}}, "")
	c.Cached(ctx, other)
	c.Cached(context.Background(), other)
	if c.Total() != 3 {
		t.Errorf("an exchange the caller cancelled was kept: %d requests", c.Total())
	}
}

func TestSendKeepsQueryVerbatim(t *testing.T) {
	var got string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.URL.RawQuery
	}))
	defer srv.Close()
	c := &client.Client{BaseURL: srv.URL}
	req := client.Request{Method: "GET", Path: "/api/public-feed", Query: "limit=1.5&limit=%zz"}
	if _, err := c.Send(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if got != req.Query {
		t.Errorf("query arrived as %q, want %q", got, req.Query)
	}
	if req.String() != "GET /api/public-feed?limit=1.5&limit=%zz" {
		t.Errorf("String = %q", req.String())
	}
}

func TestRecentUses(t *testing.T) {
	srv, _ := throttling(0, "")
	defer srv.Close()
	c := &client.Client{BaseURL: srv.URL}
	for range 3 {
		c.Send(context.Background(), client.Get("/api/public-feed", nil, client.Bearer(key)))
	}
	c.Send(context.Background(), client.Get("/api/public-feed", nil, ""))
	if n := len(c.RecentUses(key, time.Minute)); n != 3 {
		t.Errorf("RecentUses = %d, want 3", n)
	}
	if n := len(c.RecentUses(key, 0)); n != 0 {
		t.Errorf("RecentUses over an empty window = %d", n)
	}
	c.Forget(key)
	if n := len(c.RecentUses(key, time.Minute)); n != 0 {
		t.Errorf("after Forget: %d", n)
	}
}

func TestScopesAreClaimedByTheSpecThatUsesThem(t *testing.T) {
	srv, _ := throttling(0, "")
	defer srv.Close()
	c := &client.Client{BaseURL: srv.URL}
	ahead := client.WithScope(context.Background(), "walk")
	c.Send(ahead, client.Get("/api/public-feed", map[string][]string{"cursor": {"a"}}, ""))
	c.Send(ahead, client.Get("/api/public-feed", map[string][]string{"cursor": {"b"}}, ""))
	c.Send(context.Background(), client.Get("/api/public/health", nil, ""))
	if n, script := c.Take(); n != 1 || strings.Contains(script, "cursor") {
		t.Errorf("the current spec got the scope's requests: %d\n%s", n, script)
	}
	c.Claim("walk")
	c.Claim("walk") // a second claim finds nothing
	n, script := c.Take()
	if n != 2 || !strings.Contains(script, "cursor=a") || !strings.Contains(script, "ahead of time") {
		t.Errorf("claimed %d requests:\n%s", n, script)
	}
	if c.Total() != 3 {
		t.Errorf("total %d", c.Total())
	}
}

// A key that the cut of an excerpt would split is redacted first, so not
// even its start reaches a message or a transcript.
func TestExcerptRedactsBeforeCutting(t *testing.T) {
	const key = "tcm_AbCdEfGhIjKlMnOpQrStUvWxYz012345"
	body := strings.Repeat("x", client.MaxExcerpt-10) + key + strings.Repeat("y", 50)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(body))
	}))
	defer srv.Close()
	c := &client.Client{BaseURL: srv.URL, Redact: redact.New(key).String}
	resp, err := c.Send(t.Context(), client.PostJSON("/echo", `{"key":"`+strings.Repeat("z", client.MaxExcerpt-12)+key+`"}`, ""))
	if err != nil {
		t.Fatal(err)
	}
	_, transcript := c.Take()
	for name, s := range map[string]string{"excerpt": resp.Excerpt(), "transcript": transcript} {
		if strings.Contains(s, key[:8]) {
			t.Errorf("the %s holds the start of the key:\n%s", name, s)
		}
		if !strings.Contains(s, "tcm_…") || !strings.Contains(s, " bytes)") {
			t.Errorf("the %s lacks the redacted key or the size of the cut body:\n%s", name, s)
		}
	}
}

// A body the client read is decoded only up to MaxDecode (a decoded
// document takes ten to twenty times its body), and one that is not UTF-8
// is no JSON: both are errors of the body, which the spec judges.
func TestDecodeIsBounded(t *testing.T) {
	big := "[" + strings.Repeat("1,", 1<<20) + "1]" // 2 MiB
	for _, tc := range []struct {
		name, body, want string
	}{
		{"past MaxDecode", big, "larger than the suite decodes"},
		{"not UTF-8", "{\"a\":\"\xff\"}", "not UTF-8: invalid bytes at offset 6"},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(tc.body)) }))
		c := &client.Client{BaseURL: srv.URL, MaxBody: 8 << 20, MaxDecode: 1 << 20}
		resp, err := c.Send(context.Background(), client.Get("/x", nil, ""))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := resp.JSON(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: JSON() = %v, want an error saying %q", tc.name, err, tc.want)
		}
		srv.Close()
		c.Close()
	}
}

// The transcript shows the Accept line a request sent, and says when it
// sent none: an empty "Accept:" line once stood for no header at all.
func TestTranscriptShowsTheAcceptSent(t *testing.T) {
	srv, _ := throttling(0, "")
	defer srv.Close()
	c := &client.Client{BaseURL: srv.URL, Clock: &fakeClock{}}
	ctx := context.Background()
	for _, tc := range []struct{ accept, want string }{
		{client.NoAccept, "> (no Accept header)\n"},
		{"text/html", "> Accept: text/html\n"},
	} {
		req := client.Get("/api/public-feed", nil, client.Bearer(key))
		req.Accept = tc.accept
		if _, err := c.Send(ctx, req); err != nil {
			t.Fatal(err)
		}
		_, script := c.Take()
		if !strings.Contains(script, tc.want) || strings.Contains(script, "> Accept: \n") {
			t.Errorf("Accept %q: the transcript does not say %q:\n%s", tc.accept, tc.want, script)
		}
	}
}
