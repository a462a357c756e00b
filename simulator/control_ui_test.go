package simulator

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestControlUIPage: the page is HTML that runs only its own inline script
// and style (their hashes in the policy match them), fetches nothing from
// elsewhere, never reads the whole keys, and holds none.
func TestControlUIPage(t *testing.T) {
	s := newServer(t, Config{Seed: 1})
	r := s.serve(t, ctl("GET", "ui", ""))
	if r.status != http.StatusOK || !strings.HasPrefix(r.header.Get("Content-Type"), "text/html") {
		t.Fatalf("GET /_control/ui: %d %s", r.status, r.header.Get("Content-Type"))
	}
	page := string(r.body)
	policy := r.header.Get("Content-Security-Policy")
	for _, part := range []struct{ open, close string }{{"<script>", "</script>"}, {"<style>", "</style>"}} {
		i, j := strings.Index(page, part.open), strings.Index(page, part.close)
		sum := sha256.Sum256([]byte(page[i+len(part.open) : j]))
		if want := "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"; !strings.Contains(policy, want) {
			t.Errorf("the policy %q lacks the hash of the page's %s", policy, part.open)
		}
	}
	for _, want := range []string{"default-src 'none'", "connect-src 'self'", "frame-ancestors 'none'"} {
		if !strings.Contains(policy, want) {
			t.Errorf("the policy %q lacks %s", policy, want)
		}
	}
	if m := regexp.MustCompile(`(src|href)=["']?(https?:)?//`).FindString(page); m != "" {
		t.Errorf("the page loads something from elsewhere: %s", m)
	}
	if strings.Contains(page, `"info"`) || strings.Contains(page, "proKey") {
		t.Error("the page reads GET /_control/info, which holds the whole keys")
	}
	k := s.Seeded()
	for _, key := range []string{k.Pro, k.Free, k.Revoked} {
		if strings.Contains(page, key) {
			t.Error("the page holds a key")
		}
	}
	// The routes it reads are routes of the control API.
	for _, m := range regexp.MustCompile(`get\("([a-z/]+)`).FindAllStringSubmatch(page, -1) {
		if got := s.serve(t, ctl("GET", m[1], "")); got.status == http.StatusNotFound && m[1] != "clients" && m[1] != "scenarios" {
			t.Errorf("the page reads %s, which answers 404", m[1])
		}
	}
}

// TestControlUIGuard: the page holds nothing but itself: it is served
// without the token (it asks for it), and every call it makes is behind
// the control API's guard: the token in X-Control-Token (what the page
// sends) or as Basic's password; a wrong one is refused, no route asks
// the browser for Basic (the page asks), and a Host beyond loopback or a
// page of another site gets nothing, the page included.
func TestControlUIGuard(t *testing.T) {
	s := newServer(t, Config{Seed: 1, ControlToken: testToken})
	s.sleep = func(context.Context, time.Duration) {} // no back-off wait in tests
	basic := func(user, password string) http.Header {
		return http.Header{"Authorization": {"Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+password))}}
	}
	r := s.serve(t, ctl("GET", "ui", ""))
	if r.status != http.StatusOK || !strings.Contains(string(r.body), "<script>") || r.header.Get("WWW-Authenticate") != "" {
		t.Errorf("no token: %d, WWW-Authenticate %q; want the page, which asks for the token itself", r.status, r.header.Get("WWW-Authenticate"))
	}
	for _, tc := range []struct {
		what   string
		method string
		path   string
		header http.Header
		want   int
	}{
		{"the page's call without the token", "GET", "clock", nil, 401},
		{"the page's call, the header", "GET", "clock", http.Header{controlTokenHeader: {testToken}}, 200},
		{"the page's call, Basic", "GET", "clock", basic("", testToken), 200},
		{"a wrong password", "GET", "clock", basic("me", "not-the-token-at-all"), 401},
		{"a wrong header", "GET", "accounts", http.Header{controlTokenHeader: {"not-the-token-at-all"}}, 401},
		{"the page's route, another method", "POST", "ui", nil, 401},
	} {
		if got := s.serve(t, req{method: tc.method, target: ControlPrefix + tc.path, header: tc.header}); got.status != tc.want || got.header.Get("WWW-Authenticate") != "" {
			t.Errorf("%s: %d (WWW-Authenticate %q), want %d and no Basic asked for", tc.what, got.status, got.header.Get("WWW-Authenticate"), tc.want)
		}
	}
	if got := s.serveHost(t, "attacker.example", ctl("GET", "ui", "")); got.status != http.StatusForbidden {
		t.Errorf("the page to a Host beyond loopback, with a token set: %d, want 403", got.status)
	}
	open := newServer(t, Config{Seed: 1})
	if got := open.serveHost(t, "attacker.example", ctl("GET", "ui", "")); got.status != http.StatusForbidden {
		t.Errorf("a Host beyond loopback: %d, want 403", got.status)
	}
	if got := open.serve(t, req{method: "GET", target: ControlPrefix + "ui", header: http.Header{"Sec-Fetch-Site": {"cross-site"}}}); got.status != http.StatusForbidden {
		t.Errorf("a page of another site: %d, want 403", got.status)
	}
}
