package simulator

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/tcmkit/tcmkit/schemas"
)

// newServer builds a manual-clock simulator for a test and closes it after.
func newServer(t testing.TB, cfg Config) *Server {
	t.Helper()
	if cfg.Channels == 0 {
		cfg.Channels = 4
	}
	if cfg.History == 0 {
		cfg.History = 3 * 24 * time.Hour
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// req is one request to the handler.
type req struct {
	method string
	target string
	key    string // "" : no Authorization header
	header http.Header
	body   string
}

// response is a request's answer, read once.
type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) ErrorBody(t testing.TB) ErrorBody {
	t.Helper()
	var e ErrorBody
	if err := json.Unmarshal(r.body, &e); err != nil {
		t.Fatalf("body is not an ErrorBody: %v: %s", err, r.body)
	}
	return e
}

func (s *Server) serve(t testing.TB, q req) response {
	t.Helper()
	var body io.Reader
	if q.body != "" {
		body = strings.NewReader(q.body)
	}
	r := httptest.NewRequest(q.method, "http://127.0.0.1:8080"+q.target, body)
	if q.target != "" && !strings.HasPrefix(q.target, "/") {
		r.URL.Path = q.target // an unclean or relative path that NewRequest would refuse
	}
	for k, vs := range q.header {
		for _, v := range vs {
			r.Header.Add(k, v)
		}
	}
	if q.key != "" {
		r.Header.Set("Authorization", "Bearer "+q.key)
	}
	if q.method == http.MethodPost && r.Header.Get("Content-Type") == "" && q.header == nil {
		r.Header.Set("Content-Type", "application/json")
	}
	w := httptest.NewRecorder()
	s.Handler().ServeHTTP(w, r)
	return response{status: w.Code, header: w.Header(), body: w.Body.Bytes()}
}

// check asserts the invariants of every answer: JSON Content-Type, and a
// body that validates as ErrorBody for an error or as want for a 200.
func check(t testing.TB, r response, want schemas.Resource) {
	t.Helper()
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q, want application/json", ct)
	}
	res := want
	if r.status != http.StatusOK && r.status != http.StatusCreated {
		res = schemas.ErrorBody
	}
	if res == "" {
		return
	}
	if err := schemas.ValidateJSON(res, r.body); err != nil {
		t.Errorf("status %d: %v\nbody: %.300s", r.status, err, r.body)
	}
}

func feedReq(key, query string) req {
	target := schemas.PathFeed
	if query != "" {
		target += "?" + query
	}
	return req{method: http.MethodGet, target: target, key: key}
}

func videosReq(key, body string) req {
	return req{method: http.MethodPost, target: schemas.PathVideos, key: key, body: body}
}

type feedPage struct {
	Events []struct {
		ID        string `json:"id"`
		CreatedAt int64  `json:"createdAt"`
		Type      string `json:"type"`
		Video     *struct {
			PlatformVideoID string `json:"platformVideoId"`
		} `json:"video"`
	} `json:"events"`
	NextCursor *string `json:"nextCursor"`
}

func decodePage(t testing.TB, r response) feedPage {
	t.Helper()
	if r.status != http.StatusOK {
		t.Fatalf("feed: status %d: %s", r.status, r.body)
	}
	var p feedPage
	if err := json.Unmarshal(r.body, &p); err != nil {
		t.Fatalf("feed page: %v", err)
	}
	return p
}
