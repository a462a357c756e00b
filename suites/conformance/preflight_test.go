package conformance

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tcmkit/tcmkit/schemas"
)

// Each way a target can be wrongly given or misbehave before any spec gets
// a one-line preflight error that points at the cause; a key never goes to
// a listener the target redirects to.
func TestPreflightPointsAtTheCause(t *testing.T) {
	var caught atomic.Int32
	catcher := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { caught.Add(1) }))
	defer catcher.Close()
	serve := func(h http.HandlerFunc) string {
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		return srv.URL
	}
	api := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case schemas.PathHealth:
			w.Write([]byte(`{"status":"ok"}`))
		case schemas.PathFeed:
			w.Write([]byte(`{"events":[],"nextCursor":null}`))
		default:
			http.NotFound(w, r)
		}
	}
	tlsSrv := httptest.NewTLSServer(http.HandlerFunc(api))
	defer tlsSrv.Close()
	plain := serve(api)
	for _, tc := range []struct{ name, target, want string }{
		{"a wrong path prefix", plain + "/v2", "answered 404 to GET /api/public-feed (and 404 to POST /api/public/health): check the base URL and its path prefix"},
		{"a redirect", serve(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, catcher.URL+r.URL.Path, http.StatusTemporaryRedirect)
		}), "redirects: POST /api/public/health: answered 307 Temporary Redirect to " + catcher.URL + "/api/public/health; the suite follows no redirect"},
		{"a web page", serve(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte("<html>welcome</html>"))
		}), `answered 200 to GET /api/public-feed with a body that is not JSON (Content-Type "text/html")`},
		{"an untrusted certificate", tlsSrv.URL, "the TLS certificate of " + tlsSrv.URL + " is not trusted"},
		{"https to a plain server", strings.Replace(plain, "http:", "https:", 1), "does not speak TLS: use http://"},
		{"rate-limited", serve(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "31536000")
			w.WriteHeader(http.StatusTooManyRequests)
		}), `keeps rate-limiting the Pro key: GET /api/public-feed → 429 (not retried: Retry-After "31536000" asks for 365 days`},
		{"a drip", serve(func(w http.ResponseWriter, r *http.Request) {
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		}), "is too slow: POST /api/public/health: no complete answer within 500ms (--request-timeout)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := NewConfig()
			c.Target, c.ProKey, c.RequestTimeout = tc.target, "tcm_goodgoodgoodgood", 10*time.Second
			if tc.name == "a drip" {
				c.RequestTimeout = 500 * time.Millisecond
			}
			s := newSession(c)
			defer s.Close()
			err := s.Preflight(context.Background())
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Preflight = %v\nwant it to say %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("not one line: %q", err)
			}
		})
	}
	if caught.Load() != 0 {
		t.Errorf("the listener the target redirected to got %d requests", caught.Load())
	}
}
