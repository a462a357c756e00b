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

// TestControlUIGuard: the page is behind the control API's guard. With a
// token, a browser is asked for it (Basic, the token as the password) and
// then sends it with the page's calls; a wrong one is refused, and so is a
// Host that is not loopback.
func TestControlUIGuard(t *testing.T) {
	s := newServer(t, Config{Seed: 1, ControlToken: testToken})
	s.sleep = func(context.Context, time.Duration) {} // no back-off wait in tests
	basic := func(user, password string) http.Header {
		return http.Header{"Authorization": {"Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+password))}}
	}
	r := s.serve(t, ctl("GET", "ui", ""))
	if r.status != http.StatusUnauthorized || !strings.HasPrefix(r.header.Get("WWW-Authenticate"), "Basic ") {
		t.Errorf("no token: %d, WWW-Authenticate %q; want 401 asking for Basic", r.status, r.header.Get("WWW-Authenticate"))
	}
	if strings.Contains(string(r.body), "<script>") {
		t.Error("the page was served without the token")
	}
	for _, tc := range []struct {
		what   string
		path   string
		header http.Header
		want   int
	}{
		{"the token as Basic's password", "ui", basic("me", testToken), 200},
		{"the page's call, Basic", "clock", basic("", testToken), 200},
		{"a wrong password", "ui", basic("me", "not-the-token-at-all"), 401},
		{"the header", "ui", http.Header{controlTokenHeader: {testToken}}, 200},
	} {
		if got := s.serve(t, req{method: "GET", target: ControlPrefix + tc.path, header: tc.header}); got.status != tc.want {
			t.Errorf("%s: %d, want %d", tc.what, got.status, tc.want)
		}
	}
	if got := s.serve(t, ctl("GET", "clock", "")); got.header.Get("WWW-Authenticate") != "" {
		t.Error("a JSON route asks for Basic: only the page does")
	}
	open := newServer(t, Config{Seed: 1})
	if got := open.serveHost(t, "attacker.example", ctl("GET", "ui", "")); got.status != http.StatusForbidden {
		t.Errorf("a Host beyond loopback: %d, want 403", got.status)
	}
	if got := open.serve(t, req{method: "GET", target: ControlPrefix + "ui", header: http.Header{"Sec-Fetch-Site": {"cross-site"}}}); got.status != http.StatusForbidden {
		t.Errorf("a page of another site: %d, want 403", got.status)
	}
}
