package simulator

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/tcmkit/tcmkit/schemas"
)

// A key that a client sends encoded, or without its prefix, is redacted
// in the journal, the debug log and what observers quote, and counted as
// a key seen where it was.
func TestEncodedKeysAreRedactedAndSeen(t *testing.T) {
	var logs bytes.Buffer
	var mu sync.Mutex
	seen := map[uint64][]KeySeen{}
	s := newServer(t, Config{Seed: 1, Logger: newTestLogger(&logs), Observers: []Observer{func(x *Exchange) {
		mu.Lock()
		defer mu.Unlock()
		seen[x.ID] = x.KeysSeen
	}}})
	key := s.Seeded().Pro
	secret := key[len("tcm_"):]
	pct := func(s string) string {
		var b strings.Builder
		for i := range len(s) {
			fmt.Fprintf(&b, "%%%02X", s[i])
		}
		return b.String()
	}
	html := func(s string) string {
		var b strings.Builder
		for i := range len(s) {
			fmt.Fprintf(&b, "&#%d;", s[i])
		}
		return b.String()
	}
	b64 := base64.RawURLEncoding.EncodeToString([]byte("key=" + secret))
	// A plain body of the world's own ids is not searched (call.knownBody):
	// one more id, the key in base64, and it is.
	feed := s.serve(t, req{method: "GET", target: schemas.PathFeed + "?limit=1", key: key})
	known := regexp.MustCompile(`"platformVideoId":"([^"]+)"`).FindSubmatch(feed.body)
	if known == nil {
		t.Fatalf("no video id in the feed: %s", feed.body)
	}
	cases := []struct {
		name, where string
		q           req
	}{
		{"a secret without prefix, percent-encoded, in the query", "query", req{method: "GET", target: schemas.PathFeed + "?p=" + pct(secret)}},
		{"a secret without prefix in the query", "query", req{method: "GET", target: schemas.PathFeed + "?token=" + secret}},
		{"a piece of a secret as a cursor", "query", req{method: "GET", target: schemas.PathFeed + "?limit=50&cursor=" + secret[:16], key: key}},
		{"base64url in the path", "path", req{method: "GET", target: "/api/" + b64}},
		{"base64 in the query", "query", req{method: "GET", target: schemas.PathFeed + "?t=" + base64.StdEncoding.EncodeToString([]byte(key))}},
		{"HTML references in the query", "query", req{method: "GET", target: schemas.PathFeed + "?t=" + strings.ReplaceAll(html(secret), "&", "%26")}},
		{"percent-encoded in a Content-Type parameter", "", req{method: "POST", target: schemas.PathVideos, key: key,
			header: http.Header{"Content-Type": {"application/json; k=" + pct(secret)}}, body: `{"videoIds":["a"]}`}},
		{"\\u escapes in the body", "body", req{method: "POST", target: schemas.PathVideos, key: key, body: `{"videoIds":["a"],"k":"` + jsonEscaped(secret) + `"}`}},
		{"base64 in the body", "body", req{method: "POST", target: schemas.PathVideos, key: key, body: `{"videoIds":["a"],"k":"` + base64.StdEncoding.EncodeToString([]byte(secret)) + `"}`}},
		{"base64 as an id beside a known one", "body", req{method: "POST", target: schemas.PathVideos, key: key, body: `{"videoIds":["` + string(known[1]) + `","` + base64.RawURLEncoding.EncodeToString([]byte(secret[:20])) + `"]}`}},
		// The key up to case: lower-cased in a value, and in a header's
		// name (which Go's server puts in its canonical case).
		{"lower-cased in a header's value", "header", req{method: "GET", target: schemas.PathFeed, key: key, header: http.Header{"X-Key": {strings.ToLower(key)}}}},
		{"in a header's name", "header", req{method: "GET", target: schemas.PathFeed, key: key, header: http.Header{"X-" + key: {"1"}}}},
	}
	for _, tc := range cases {
		s.serve(t, tc.q)
	}
	page := decode[journalPage](t, s.serve(t, ctl("GET", "requests", "")), 200)
	raw, _ := json.Marshal(page)
	for i := 0; i+8 <= len(secret); i++ {
		if bytes.Contains(raw, []byte(secret[i:i+8])) || strings.Contains(logs.String(), secret[i:i+8]) {
			t.Fatalf("a piece of the key in the journal or the log:\n%s\n%s", raw, logs.String())
		}
	}
	for _, enc := range []string{pct(secret)[:24], b64[4:20], html(secret)[6:30]} {
		if bytes.Contains(raw, []byte(enc)) || strings.Contains(logs.String(), enc) {
			t.Errorf("the journal or the log holds an encoded key %q:\n%s\n%s", enc, raw, logs.String())
		}
	}
	for i, e := range page.Requests[1:] { // the first: the feed read for an id
		tc := cases[i]
		if tc.where == "query" || tc.where == "path" {
			if !e.KeyInURL {
				t.Errorf("%s: keyInUrl false: %+v", tc.name, e)
			}
		}
		if tc.where == "" {
			continue
		}
		ks := seen[e.ID]
		found := false
		for _, k := range ks {
			found = found || k.Where == tc.where
		}
		if !found {
			t.Errorf("%s: no key seen in the %s: %+v", tc.name, tc.where, ks)
		}
	}
}

func jsonEscaped(s string) string {
	var b strings.Builder
	for i := range len(s) {
		if i%2 == 0 {
			fmt.Fprintf(&b, `\u%04x`, s[i])
		} else {
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// A header value found clean is kept as such (hideHeaderFragments) only
// while no key is issued: the next key's secret, sent in a header before
// the key exists, is found once it does.
func TestCleanHeaderValuesForgottenWhenAKeyIsIssued(t *testing.T) {
	k := newKeyring("tcm", keyGen{seed: 1})
	k.Issue("a")
	next := k.generate(k.counter)
	value := "note " + base64.StdEncoding.EncodeToString([]byte(next[len("tcm_"):]))
	form := func(string) string { return "…" }
	for range 2 { // searched, then kept as clean
		if _, found := k.hideHeaderFragments(value, form); found {
			t.Fatalf("a key not issued yet was found in %q", value)
		}
	}
	if _, ok := k.clean.Load(value); !ok {
		t.Fatal("a clean header value was not kept")
	}
	if got := k.Issue("b"); got != next {
		t.Fatalf("issued %s, want the key generated before", hint(got))
	}
	if out, found := k.hideHeaderFragments(value, form); !found || strings.Contains(out, next[len("tcm_"):]) {
		t.Fatalf("the issued key's secret, base64 in a header value, was not hidden: found %v", found)
	}
}

// The header values kept as clean stay bounded.
func TestCleanHeaderValuesBounded(t *testing.T) {
	k := newKeyring("tcm", keyGen{seed: 1})
	k.Issue("a")
	form := func(string) string { return "…" }
	for i := range 3 * maxCleanTexts {
		k.hideHeaderFragments(fmt.Sprintf("agent/%d", i), form)
	}
	if n := k.cleanCount.Load(); n < 1 || n > maxCleanTexts {
		t.Fatalf("%d clean values kept, want 1..%d", n, maxCleanTexts)
	}
	long := strings.Repeat("x", maxCleanText+1)
	k.hideHeaderFragments(long, form)
	if _, ok := k.clean.Load(long); ok {
		t.Fatalf("a value of %d bytes was kept", len(long))
	}
}
