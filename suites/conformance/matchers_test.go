package conformance

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/suites/client"
)

func response(status int, contentType, body string) *client.Response {
	h := http.Header{}
	if contentType != "" {
		h.Set("Content-Type", contentType)
	}
	req := client.Get(schemas.PathFeed, map[string][]string{"limit": {"2"}}, "")
	return &client.Response{Request: req, Status: status, Header: h, Body: []byte(body)}
}

// A failure names the request, the JSON pointer, the value and the rule.
func TestMatcherMessages(t *testing.T) {
	for _, tc := range []struct {
		name    string
		match   func(*client.Response) (bool, string)
		resp    *client.Response
		ok      bool
		mention []string
	}{
		{"status", matcher(HaveStatus(401)), response(200, "application/json", `{"events":[]}`), false,
			[]string{"GET /api/public-feed?limit=2", "status 200, want 401", `{"events":[]}`}},
		{"not JSON", errorBody, response(401, "application/json", `<html>`), false, []string{"not valid JSON"}},
		{"error body", errorBody, response(401, "application/json", `{"error":401,"message":"m"}`), false,
			[]string{"status 401", "/error", "want string"}},
		// The contract types error and message as strings, nothing more.
		{"error body with empty strings", errorBody, response(401, "application/json", `{"error":"","message":""}`), true, nil},
		{"error body missing message", errorBody, response(401, "application/json", `{"error":"e"}`), false,
			[]string{"missing property 'message'"}},
		{"error body ok", errorBody, response(401, "application/json", `{"error":"e","message":"m","details":[1]}`), true, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ok, msg := tc.match(tc.resp)
			if ok != tc.ok {
				t.Fatalf("match = %v, want %v (%s)", ok, tc.ok, msg)
			}
			for _, m := range tc.mention {
				if !strings.Contains(msg, m) {
					t.Errorf("message does not say %q:\n%s", m, msg)
				}
			}
		})
	}
}

// errorBody is notErrorBody as a matcher's result.
func errorBody(r *client.Response) (bool, string) {
	msg, _ := notErrorBody(r)
	return msg == "", msg
}

func matcher(m interface {
	Match(any) (bool, error)
	FailureMessage(any) string
}) func(*client.Response) (bool, string) {
	return func(r *client.Response) (bool, string) {
		ok, err := m.Match(r)
		if err != nil {
			return false, err.Error()
		}
		if ok {
			return true, ""
		}
		return false, m.FailureMessage(r)
	}
}

func TestPreflight(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == schemas.PathFeed && r.Header.Get("Authorization") != "Bearer tcm_goodgoodgoodgood" {
			w.WriteHeader(401)
			w.Write([]byte(`{"error":"unauthorized","message":"no"}`))
			return
		}
		w.Write([]byte(`{"events":[],"nextCursor":null}`))
	})
	srv := httptest.NewServer(ok)
	defer srv.Close()
	closed := httptest.NewServer(ok)
	closed.Close()
	for _, tc := range []struct {
		name, target, key, want string
	}{
		{"accepted", srv.URL, "tcm_goodgoodgoodgood", ""},
		{"key refused", srv.URL, "tcm_badbadbadbadbad", "the Pro key (tcm_…#cf52) is not accepted: GET /api/public-feed answered 401"},
		{"no answer", closed.URL, "tcm_goodgoodgoodgood", "nothing accepts connections at " + closed.URL + " (connection refused, to POST /api/public/health)"},
		{"no key", srv.URL, "", "--pro-key"},
		{"no target", "", "tcm_goodgoodgoodgood", "--target"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := NewConfig()
			c.Target, c.ProKey = tc.target, tc.key
			s := newSession(c)
			err := s.Preflight(context.Background())
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("Preflight: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("Preflight = %v, want an error saying %q", err, tc.want)
			}
			if err != nil && tc.key != "" && strings.Contains(err.Error(), tc.key) {
				t.Errorf("the error holds the whole key: %v", err)
			}
			// the verdict is kept: a second call sends nothing
			if tc.target == srv.URL {
				before := s.Client().Total()
				s.Preflight(context.Background())
				if s.Client().Total() != before {
					t.Errorf("a second preflight sent requests")
				}
			}
		})
	}
}
