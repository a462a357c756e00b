package clients

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"

	"github.com/tcmkit/tcmkit/schemas/catalogue"
)

// A key sent encoded, or without its prefix, in the query or the body is a
// key in the URL or body all the same (CLIENT-KEY-NOT-IN-URL).
func TestEncodedKeyInURLOrBody(t *testing.T) {
	pct := func(s string) string {
		var b strings.Builder
		for i := range len(s) {
			fmt.Fprintf(&b, "%%%02X", s[i])
		}
		return b.String()
	}
	for name, send := range map[string]func(h *harness, key string){
		"percent, no prefix, query": func(h *harness, key string) { h.feed(key, "limit=1&k="+pct(key[4:])) },
		"no prefix, query":          func(h *harness, key string) { h.feed(key, "limit=1&k="+key[4:]) },
		"base64url, query": func(h *harness, key string) {
			h.feed(key, "limit=1&k="+base64.RawURLEncoding.EncodeToString([]byte(key)))
		},
		"HTML references, body": func(h *harness, key string) {
			h.videos(key, "application/json", `{"videoIds":["a"],"k":"`+strings.ReplaceAll(pct(key), "%", "&#x")+`"}`)
		},
	} {
		h := newHarness(t, Config{})
		send(h, h.keys.Pro)
		expectFailed(t, h.client(true, h.keys.Pro), catalogue.ClientKeyNotInURL)
		if t.Failed() {
			t.Fatalf("%s", name)
		}
	}
}

// A scenario name that is not one is not echoed whole.
func TestUnknownScenarioNameIsCut(t *testing.T) {
	h := newHarness(t, Config{})
	a := h.do("POST", "http://127.0.0.1/_control/scenarios", `{"name":"`+strings.Repeat("x", 60<<10)+`"}`, "Content-Type", "application/json")
	if a.status != 404 || len(a.body) > 2<<10 {
		t.Errorf("status %d, %d bytes", a.status, len(a.body))
	}
}
