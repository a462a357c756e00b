package simulator

import (
	"net/http"
	"strings"
	"testing"
)

// TestControlRootRedirects: the control URL the banner prints, without
// its slash, leads to the list of routes (and keeps the method on a POST).
func TestControlRootRedirects(t *testing.T) {
	s := newServer(t, Config{Seed: 1})
	for _, tc := range []struct {
		method, target, location string
		status                   int
	}{
		{"GET", "/_control", "/_control/", http.StatusMovedPermanently},
		{"GET", "/_control?x=1", "/_control/?x=1", http.StatusMovedPermanently},
		{"POST", "/_control", "/_control/", http.StatusPermanentRedirect},
	} {
		r := s.serve(t, req{method: tc.method, target: tc.target})
		if r.status != tc.status || r.header.Get("Location") != tc.location {
			t.Errorf("%s %s: %d Location %q, want %d %q", tc.method, tc.target, r.status, r.header.Get("Location"), tc.status, tc.location)
		}
	}
	// With the control API off, /_control is a path like any other.
	off := newServer(t, Config{Seed: 1, NoControl: true})
	if r := off.serve(t, req{method: "GET", target: "/_control"}); r.status != http.StatusNotFound {
		t.Errorf("control API off: GET /_control: %d, want 404", r.status)
	}
}

// TestControlUnknownFieldNamesTheFields: a misspelt field of a control
// body is refused with the fields the route reads.
func TestControlUnknownFieldNamesTheFields(t *testing.T) {
	s := newServer(t, Config{Seed: 1})
	r := s.serve(t, ctl("POST", "clock/advance", `{"by":"1h"}`))
	if r.status != http.StatusBadRequest {
		t.Fatalf("status %d, want 400", r.status)
	}
	check(t, r, "")
	if msg := r.ErrorBody(t).Message; !strings.Contains(msg, `unknown field "by"`) || !strings.Contains(msg, `the fields are "duration"`) {
		t.Errorf("message %q: want the unknown field and the expected one", msg)
	}
	r = s.serve(t, ctl("POST", "accounts", `{"plna":"pro"}`))
	if msg := r.ErrorBody(t).Message; !strings.Contains(msg, `"plan"`) {
		t.Errorf("accounts: message %q: want the field plan named", msg)
	}
}
