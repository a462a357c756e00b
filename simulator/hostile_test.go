package simulator

import (
	"bytes"
	"encoding/base64"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/tcmkit/tcmkit/schemas"
)

// lockedWriter lets concurrent handlers share one log buffer.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func newTestLogger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(&lockedWriter{w: w}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// TestHostileInputs: every one gets an ErrorBody with a status below 500,
// and nothing of the input reaches a response header.
func TestHostileInputs(t *testing.T) {
	var logs bytes.Buffer
	s := newServer(t, Config{Seed: 2, FeedLimit: -1, VideosLimit: -1, Logger: newTestLogger(&logs)})
	k := s.Seeded()
	p := decodePage(t, s.serve(t, feedReq(k.Pro, "limit=1")))
	if p.NextCursor == nil {
		t.Fatal("no cursor to replay")
	}
	proCursor := *p.NextCursor
	json := http.Header{"Content-Type": {"application/json"}}
	for _, tc := range []struct {
		name string
		q    req
	}{
		{"truncated JSON", videosReq(k.Pro, `{"videoIds":["a",`)},
		{"malformed JSON", videosReq(k.Pro, `{videoIds:[a]}`)},
		{"deeply nested JSON", videosReq(k.Pro, strings.Repeat("[", 10000)+strings.Repeat("]", 10000))},
		{"huge body", videosReq(k.Pro, strings.Repeat(" ", 10*MaxBodyBytes)+"{}")},
		{"huge number", videosReq(k.Pro, `{"videoIds":1e999999}`)},
		{"invalid UTF-8 in body", videosReq(k.Pro, "{\"videoIds\":[\"\xc3\x28\"]}")},
		{"duplicate keys", videosReq(k.Pro, `{"videoIds":["a"],"videoIds":5}`)},
		{"repeated limit", feedReq(k.Pro, "limit=1&limit=2")},
		{"limit=1e99", feedReq(k.Pro, "limit=1e99")},
		{"limit=-1", feedReq(k.Pro, "limit=-1")},
		{"limit=1.5", feedReq(k.Pro, "limit=1.5")},
		{"limit=NaN", feedReq(k.Pro, "limit=NaN")},
		{"limit=0x10", feedReq(k.Pro, "limit=0x10")},
		{"limit with CRLF", feedReq(k.Pro, "limit=1%0d%0aX-Evil:%201")},
		{"invalid UTF-8 limit", feedReq(k.Pro, "limit=%ff")},
		{"bad escape", feedReq(k.Pro, "limit=%")},
		{"garbage cursor", feedReq(k.Pro, "cursor=%00%01garbage")},
		{"base64 garbage cursor", feedReq(k.Pro, "cursor="+base64.RawURLEncoding.EncodeToString([]byte(`{"a":1}`)))},
		{"huge cursor", feedReq(k.Pro, "cursor="+strings.Repeat("A", 100000))},
		{"cursor with CRLF", feedReq(k.Pro, "cursor=x%0d%0aX-Evil:%201")},
		{"truncated cursor", feedReq(k.Pro, "cursor="+proCursor[:len(proCursor)/2])},
		{"foreign cursor", feedReq(k.Free, "cursor="+proCursor)},
		{"CRLF in Authorization", req{method: "GET", target: schemas.PathFeed, header: http.Header{"Authorization": {"Bearer x\r\nX-Evil: 1"}}}},
		{"NUL in Authorization", req{method: "GET", target: schemas.PathFeed, header: http.Header{"Authorization": {"Bearer \x00"}}}},
		{"huge Authorization", req{method: "GET", target: schemas.PathFeed, header: http.Header{"Authorization": {"Bearer " + strings.Repeat("a", 1<<16)}}}},
		{"CRLF in content type", req{method: "POST", target: schemas.PathVideos, key: k.Pro, body: `{"videoIds":["a"]}`, header: http.Header{"Content-Type": {"application/json\r\nX-Evil: 1"}}}},
		{"two content types", req{method: "POST", target: schemas.PathVideos, key: k.Pro, body: `{"videoIds":["a"]}`, header: http.Header{"Content-Type": {"application/json", "text/plain"}}}},
		{"wrong method", req{method: "PATCH", target: schemas.PathFeed, key: k.Pro}},
		{"wrong method with body", req{method: "PUT", target: schemas.PathVideos, key: k.Pro, body: "{}", header: json}},
		{"unknown path", req{method: "GET", target: "/api/public-feed.json"}},
		{"encoded slash", req{method: "GET", target: "/api%2Fpublic-feed"}},
		{"traversal", req{method: "GET", target: "/api/public/../../etc/passwd"}},
		{"CRLF in path", req{method: "GET", target: "/api/%0d%0aX-Evil:%201"}},
		{"control id with CRLF", req{method: "POST", target: "/_control/accounts/%0d%0aX-Evil:%201/key"}},
		{"control body not JSON", req{method: "POST", target: "/_control/faults", body: "\xff\xfe"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := s.serve(t, tc.q)
			if r.status < 400 || r.status >= 500 {
				t.Fatalf("status %d, want a 4xx: %.200s", r.status, r.body)
			}
			check(t, r, "")
			for name, vs := range r.header {
				for _, v := range vs {
					if strings.ContainsAny(v, "\r\n") || strings.EqualFold(name, "X-Evil") {
						t.Errorf("header %s: %q carries input", name, v)
					}
				}
			}
			if e := r.ErrorBody(t); e.Message == "" || e.Error == "" {
				t.Errorf("ErrorBody without error or message: %s", r.body)
			}
		})
	}
	for _, key := range []string{k.Pro, k.Free, k.Revoked} {
		if strings.Contains(logs.String(), key) {
			t.Fatal("a key appears whole in the log")
		}
	}
}

func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		"tcm_abcdefghijklmnopqrstuvwxyz012345": "tcm_…#84b7",
		"tcm_short":                            "tcm_…",
		"nounderscore":                         "…#218b",
		"short":                                "…",
		"":                                     "…",
	} {
		if got := hint(in); got != want {
			t.Errorf("hint(%q) = %q, want %q", in, got, want)
		}
	}
}
