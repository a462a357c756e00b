package clients

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tcmkit/tcmkit/schemas/catalogue"
	"github.com/tcmkit/tcmkit/schemas/redact"
)

// A finding on a request without a key is shown on the key whose client
// sent it, when the run has that key alone; it fails the requests without
// a key (and the run), not the key.
func TestKeylessFindingIsTheOnlyKeys(t *testing.T) {
	h := newHarness(t, Config{})
	h.feed(h.keys.Pro, "limit=5")
	h.health("application/json", "not json")
	pro := h.client(false, h.keys.Pro)
	expectFailed(t, pro)
	if f := sentWithoutKey(pro, catalogue.ClientJSONBody); f.SentBy == "" {
		t.Errorf("the Pro key's finding does not say why it is its own: %q", f.SentBy)
	}
	if !strings.Contains(pro.Keyless, "CLIENT-JSON-BODY") {
		t.Errorf("the Pro key's verdicts do not name the requests without a key: %q", pro.Keyless)
	}
	keyless := h.client(false, "")
	if f := finding(keyless, catalogue.ClientJSONBody); !strings.Contains(f.SentBy, redact.Form(h.keys.Pro)) {
		t.Errorf("the keyless finding does not name its sender: %q", f.SentBy)
	}
}

// With two keys, the connection tells: a request without a key on a
// connection that carried one key alone is that key's; one on a
// connection that carried none is no key's, and every key's verdicts name
// the requests without a key.
func TestKeylessFindingFollowsItsConnection(t *testing.T) {
	h := newHarness(t, Config{})
	hs := httptest.NewServer(h.s.Handler())
	defer hs.Close()
	send := func(c *http.Client, method, path, key, body string) {
		req, _ := http.NewRequest(method, hs.URL+path, strings.NewReader(body))
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	conn := func() *http.Client { return &http.Client{Transport: &http.Transport{MaxConnsPerHost: 1}} }
	proConn, freeConn, bare := conn(), conn(), conn()
	send(proConn, http.MethodGet, "/api/public-feed?limit=5", h.keys.Pro, "")
	send(freeConn, http.MethodGet, "/api/public-feed?limit=5", h.keys.Free, "")
	send(proConn, http.MethodPost, "/api/public/health", "", "[1]") // the Pro client's, by its connection
	pro, free := h.client(false, h.keys.Pro), h.client(false, h.keys.Free)
	expectFailed(t, pro)
	expectFailed(t, free)
	if len(free.SentWithoutKey) != 0 {
		t.Errorf("the free key is shown a request it did not send: %+v", free.SentWithoutKey)
	}
	if f := sentWithoutKey(pro, catalogue.ClientJSONBody); !strings.Contains(f.SentBy, "connection") {
		t.Errorf("the Pro key's finding does not say it came on its connection: %q", f.SentBy)
	}
	for _, c := range []Client{pro, free} {
		if !strings.Contains(c.Keyless, "CLIENT-JSON-BODY") {
			t.Errorf("%s: the verdicts do not name the requests without a key: %q", c.Name(), c.Keyless)
		}
	}

	h.j.Reset()
	send(proConn, http.MethodGet, "/api/public-feed?limit=5", h.keys.Pro, "")
	send(freeConn, http.MethodGet, "/api/public-feed?limit=5", h.keys.Free, "")
	send(bare, http.MethodPost, "/api/public/health", "", "[1]") // no key's: its connection carried none
	pro, free = h.client(false, h.keys.Pro), h.client(false, h.keys.Free)
	expectFailed(t, pro)
	expectFailed(t, free)
	if len(pro.SentWithoutKey)+len(free.SentWithoutKey) != 0 {
		t.Errorf("a request on a connection of no key is shown on a key: %+v %+v", pro.SentWithoutKey, free.SentWithoutKey)
	}
	if f := finding(h.client(false, ""), catalogue.ClientJSONBody); f.Requirement == "" || f.SentBy != "" {
		t.Errorf("the keyless finding on a connection of no key: %+v", f)
	}
	if !strings.Contains(pro.Keyless, "CLIENT-JSON-BODY") || pro.Keyless != free.Keyless {
		t.Errorf("the keys' verdicts do not name the requests without a key: %q, %q", pro.Keyless, free.Keyless)
	}
}

// sentWithoutKey is a client's finding of a requirement among those of
// its requests without a key.
func sentWithoutKey(c Client, id catalogue.ID) Finding {
	for _, f := range c.SentWithoutKey {
		if f.Requirement == id {
			return f
		}
	}
	return Finding{}
}
