package clients

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/tcmkit/tcmkit/schemas/catalogue"
)

// Each client requirement: a client that breaks it is caught, with a
// finding that names the request and the rule, and one that keeps it is
// not. Every other requirement stays clean in each case.

func TestBearer(t *testing.T) {
	h := newHarness(t, Config{})
	pro := h.keys.Pro
	h.feed(pro, "limit=1")
	h.do(http.MethodGet, "/api/public-feed?limit=1", "", "Authorization", "bearer "+pro) // the scheme in any case
	expectFailed(t, h.client(true, pro))
	if r := results(h.client(true, pro))[catalogue.ClientBearer]; r != Passed {
		t.Errorf("a polite client: %s", r)
	}

	h.do(http.MethodGet, "/api/public-feed", "", "Authorization", "Token "+h.keys.Free)                   // another scheme: still that key's
	h.do(http.MethodGet, "/api/public-feed", "", "X-Api-Key", h.keys.Free)                                // another header
	h.do(http.MethodPost, "/api/public/videos", `{"videoIds":["a"]}`, "Content-Type", "application/json") // no key at all
	free := h.client(true, h.keys.Free)
	expectFailed(t, free, catalogue.ClientBearer)
	if len(free.Findings) != 2 || !strings.Contains(free.Findings[1].Evidence, "another header") {
		t.Errorf("findings:\n%s", findingsText(free))
	}
	expectFailed(t, h.client(true, ""), catalogue.ClientBearer)
}

func TestKeyNotInURL(t *testing.T) {
	h := newHarness(t, Config{})
	pro, free := h.keys.Pro, h.keys.Free
	h.feed(pro, "limit=1")
	h.do(http.MethodPost, "/api/public/health", "{}", "Content-Type", "application/json")
	expectFailed(t, h.client(true, pro))

	h.feed(free, "limit=1&api_key="+free)                                     // in the query, beside the header
	h.do(http.MethodGet, "/api/public-feed?key="+url.QueryEscape(free), "")   // alone in the query
	h.do(http.MethodGet, "/api/"+free+"/feed", "")                            // in a path
	h.videos(free, "application/json", `{"videoIds":["a"],"key":"`+free+`"}`) // a 403: the body is judged as sent
	c := h.client(true, free)
	expectFailed(t, c, catalogue.ClientBearer, catalogue.ClientKeyNotInURL) // the keyless two
	var where []string
	for _, f := range c.Findings {
		if f.Requirement == catalogue.ClientKeyNotInURL {
			where = append(where, f.Evidence[strings.Index(f.Evidence, " in the ")+8:strings.Index(f.Evidence, ":")])
			if strings.Contains(f.Request.Path+f.Request.Query, free[4:12]) {
				t.Errorf("the finding quotes the key: %s", f.Request)
			}
		}
	}
	if got := strings.Join(where, ","); got != "query string,query string,path,body" {
		t.Errorf("found in %s", got)
	}
}

func TestRetryAfter(t *testing.T) {
	h := newHarness(t, Config{})
	pro := h.keys.Pro
	burst(h, pro)
	h.advance(60 * time.Second) // the Retry-After of a burst
	if a := h.feed(pro, "limit=1"); a.status != http.StatusOK {
		t.Fatalf("after the wait: %d", a.status)
	}
	c := h.client(true, pro)
	expectFailed(t, c)
	if r := results(c)[catalogue.ClientRetryAfter]; r != Passed {
		t.Errorf("a client that waited: %s", r)
	}

	free := h.keys.Free
	burst(h, free)
	h.advance(10 * time.Second)
	h.feed(free, "limit=1") // 50 s too soon
	c = h.client(true, free)
	expectFailed(t, c, catalogue.ClientRetryAfter)
	f := c.Findings[0]
	if f.Related == nil || f.Related.Status != http.StatusTooManyRequests || !strings.Contains(f.Evidence, "sent 10.0 s after the 429") || !strings.Contains(f.Evidence, "asked for 60.0 s") {
		t.Errorf("finding: %s", f)
	}
}

// burst sends 21 feed requests at one instant: the 21st is a 429.
func burst(h *harness, key string) {
	h.t.Helper()
	for i := range 21 {
		a := h.feed(key, "limit=1")
		if want := map[bool]int{true: 429, false: 200}[i == 20]; a.status != want {
			h.t.Fatalf("request %d: %d, want %d", i+1, a.status, want)
		}
	}
}

func TestRate(t *testing.T) {
	h := newHarness(t, Config{})
	pro := h.keys.Pro
	// Bursting into the limit once is the server's answer, not a fault.
	burst(h, pro)
	h.advance(time.Minute)
	for range 3 {
		h.feed(pro, "limit=1")
		h.advance(3 * time.Second)
	}
	expectFailed(t, h.client(true, pro))

	free := h.keys.Free
	burst(h, free)
	h.advance(time.Minute) // the Retry-After, waited out: a whole new window
	for i := range 21 {    // and then a second burst: the 429 again, not slowing down
		h.feed(free, "limit=1")
		_ = i
	}
	c := h.client(true, free)
	expectFailed(t, c, catalogue.ClientRate)
	if !strings.Contains(c.Findings[0].Evidence, "429 by the rate limit again") {
		t.Errorf("finding: %s", c.Findings[0])
	}
}

func TestCursorIssued(t *testing.T) {
	h := newHarness(t, Config{})
	pro, free := h.keys.Pro, h.keys.Free
	next := h.feed(pro, "limit=5").next()
	h.feed(pro, "limit=5&cursor="+next)
	h.feed(pro, "limit=5&cursor=") // an empty cursor is the first page
	expectFailed(t, h.client(false, pro))

	freeNext := h.feed(free, "limit=5").next()
	edited := next[:len(next)-1] + map[bool]string{true: "B", false: "A"}[next[len(next)-1] == 'A']
	h.feed(free, "limit=5&cursor="+next)     // the Pro account's
	h.feed(free, "limit=5&cursor=made-up")   // invented
	h.feed(free, "limit=5&cursor="+edited)   // edited
	h.feed(free, "limit=5&cursor="+freeNext) // its own: fine
	c := h.client(false, free)
	expectFailed(t, c, catalogue.ClientCursorIssued)
	if len(c.Findings) != 3 || !strings.Contains(c.Findings[0].Evidence, "another account (acc_1)") || !strings.Contains(c.Findings[1].Evidence, "never handed out") {
		t.Errorf("findings:\n%s", findingsText(c))
	}
	for _, f := range c.Findings {
		if strings.Contains(f.Evidence, "made-up") || strings.Contains(f.Evidence, edited) {
			t.Errorf("a finding quotes the cursor: %s", f)
		}
	}

	// A key regenerated mid-walk: the new key goes on with the old key's
	// cursor, which the server handed to the same account.
	newKey, err := h.s.RegenerateKey("acc_1")
	if err != nil {
		t.Fatal(err)
	}
	h.feed(newKey, "limit=5&cursor="+next)
	expectFailed(t, h.client(false, newKey))
}

func TestWalkEnd(t *testing.T) {
	h := newHarness(t, Config{IdleAfter: 10 * time.Minute})
	pro := h.keys.Pro
	h.walk(pro, 200)
	c := h.client(true, pro)
	expectFailed(t, c)
	if c.Walks.Begun != 1 || c.Walks.Finished != 1 {
		t.Errorf("walks %+v", c.Walks)
	}

	// Left halfway: in progress while the client is active, abandoned once
	// it is idle or when the run ends.
	free := h.keys.Free
	first := h.feed(free, "limit=5")
	second := h.feed(free, "limit=5&cursor="+first.next())
	h.feed(free, "limit=5&cursor="+second.next())
	expectFailed(t, h.client(false, free))
	c = h.client(true, free)
	expectFailed(t, c, catalogue.ClientWalkEnd)
	if f := c.Findings[0]; !strings.Contains(f.Evidence, "after 2 pages") || !strings.Contains(f.Evidence, "the run ended") || f.Related == nil {
		t.Errorf("finding: %s", f)
	}
	h.advance(11 * time.Minute)
	if c = h.client(false, free); !strings.Contains(c.Findings[0].Evidence, "no feed request for 660.0 s") {
		t.Errorf("idle: %s", c.Findings[0])
	}

	// Starting over from the first page and walking that one to its end
	// closes the walk left behind (CLIENT-FIRST-PAGE-AGAIN).
	h.walk(free, 200)
	c = h.client(true, free)
	expectFailed(t, c)
	if len(c.Notes) != 1 || !strings.Contains(c.Notes[0], "CLIENT-FIRST-PAGE-AGAIN: read the first page 2 times") {
		t.Errorf("notes %q", c.Notes)
	}
}

func TestWalkCutByARevokedKey(t *testing.T) {
	h := newHarness(t, Config{})
	pro := h.keys.Pro
	first := h.feed(pro, "limit=5")
	second := h.feed(pro, "limit=5&cursor="+first.next())
	if _, err := h.s.RegenerateKey("acc_1"); err != nil {
		t.Fatal(err)
	}
	if a := h.feed(pro, "limit=5&cursor="+second.next()); a.status != http.StatusUnauthorized {
		t.Fatalf("revoked: %d", a.status)
	}
	c := h.client(true, pro)
	expectFailed(t, c)
	if c.Walks.Cut != 1 {
		t.Errorf("walks %+v", c.Walks)
	}
}

func TestVideoIDs(t *testing.T) {
	h := newHarness(t, Config{})
	pro := h.keys.Pro
	twenty := make([]string, 20)
	for i := range twenty {
		twenty[i] = `"` + strings.Repeat("v", 32) + `"`
	}
	h.videos(pro, "application/json", `{"videoIds":[`+strings.Join(twenty, ",")+`]}`)
	h.videos(pro, "application/json; charset=utf-8", `{"videoIds":["a"],"extra":1}`) // unknown fields are tolerated
	expectFailed(t, h.client(true, pro))

	h2 := newHarness(t, Config{})
	for _, body := range []string{
		`{"videoIds":[` + strings.Join(append(twenty, `"x"`), ",") + `]}`, // 21 ids
		`{"videoIds":["` + strings.Repeat("v", 33) + `"]}`,                // 33 characters
		`{"videoIds":[]}`,
		`{"ids":["a"]}`,
		`{"videoIds":[1]}`,
	} {
		h2.videos(pro, "application/json", body)
	}
	c := h2.client(true, pro)
	expectFailed(t, c, catalogue.ClientVideoIDs)
	if len(c.Findings) != 5 || !strings.Contains(c.Findings[0].Evidence, "/videoIds: maxItems") || !strings.Contains(c.Findings[1].Evidence, "/videoIds/0: maxLength") {
		t.Errorf("findings:\n%s", findingsText(c))
	}
}

func TestJSONBody(t *testing.T) {
	h := newHarness(t, Config{})
	pro := h.keys.Pro
	h.videos(pro, "application/json", `{"videoIds":["a"]}`)
	h.health("application/json", "{}")
	expectFailed(t, h.client(true, pro))

	h2 := newHarness(t, Config{})
	h2.videos(pro, "text/plain", `{"videoIds":["a"]}`)  // the Content-Type only: the ids are fine
	h2.videos(pro, "application/json", `["a"]`)         // not an object
	h2.videos(pro, "application/json", `{"videoIds":[`) // not JSON
	h2.videos(pro, "", `{"videoIds":["a"]}`)            // no Content-Type
	c := h2.client(true, pro)
	expectFailed(t, c, catalogue.ClientJSONBody)
	if len(c.Findings) != 4 || !strings.Contains(c.Findings[0].Evidence, `Content-Type "text/plain"`) || !strings.Contains(c.Findings[3].Evidence, "no Content-Type") {
		t.Errorf("findings:\n%s", findingsText(c))
	}
	// The health check: a JSON object as application/json ({} is the usage shown).
	h2.health("", "")
	h2.health("application/json", "")
	expectFailed(t, h2.client(true, ""), catalogue.ClientJSONBody)
	if n := len(h2.client(true, "").Findings); n != 2 {
		t.Errorf("health findings: %d", n)
	}
}

// The open points are never findings: reading the first page again, and
// sending a key to the health check.
func TestOpenPointsAreNoFindings(t *testing.T) {
	h := newHarness(t, Config{})
	pro := h.keys.Pro
	for range 5 {
		h.feed(pro, "")
		h.advance(3 * time.Second)
	}
	h.health("application/json", "{}", bearer(pro)...)
	c := h.client(true, pro)
	expectFailed(t, c)
	if len(c.Notes) != 2 || !strings.Contains(c.Notes[1], "CLIENT-HEALTH-KEY: sent its key to the health check 1 times") {
		t.Errorf("notes %q", c.Notes)
	}
	if r := results(c)[catalogue.ClientWalkEnd]; r != NotExercised {
		t.Errorf("walk end: %s", r)
	}
}

// A client that syncs walks the new events and stops at the first page
// that reaches events it already had: that walk is done, not abandoned.
// One that never had them all cannot stop early.
func TestWalkEndStopsAtWhatTheClientHas(t *testing.T) {
	h := newHarness(t, Config{})
	pro := h.keys.Pro
	h.walk(pro, 200) // everything, once
	for n := 0; n < 5; {
		n += h.s.Advance(time.Hour)
	}
	h.advance(time.Minute) // a fresh rate window
	a := h.feed(pro, "limit=1")
	pages := 1
	for ; pages < 50; pages++ {
		b := h.feed(pro, "limit=1&cursor="+a.next())
		// Stop at the first page whose event is older than what the first
		// walk read (its events are known: the judge reads createdAt).
		if h.client(false, pro).Walks.Finished == 2 {
			break
		}
		a = b
	}
	c := h.client(true, pro)
	expectFailed(t, c)
	if pages < 2 || c.Walks.Open != 0 {
		t.Errorf("pages %d, walks %+v", pages, c.Walks)
	}

	// The first page twice, then a walk left after a page: abandoned.
	free := h.keys.Free
	h.feed(free, "limit=5")
	next := h.feed(free, "limit=5").next()
	h.feed(free, "limit=5&cursor="+next)
	expectFailed(t, h.client(true, free), catalogue.ClientWalkEnd)
}
