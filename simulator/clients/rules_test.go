package clients

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tcmkit/tcmkit/schemas/catalogue"
	"github.com/tcmkit/tcmkit/simulator"
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
	if f := finding(free, catalogue.ClientBearer); len(free.Findings) != 1 || f.Count != 2 || !strings.Contains(latest(f), "another header") {
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

	var where []string
	for _, send := range []func(){
		func() { h.feed(free, "limit=1&api_key="+free) },                                     // in the query, beside the header
		func() { h.do(http.MethodGet, "/api/public-feed?key="+url.QueryEscape(free), "") },   // alone in the query
		func() { h.do(http.MethodGet, "/api/"+free+"/feed", "") },                            // in a path
		func() { h.videos(free, "application/json", `{"videoIds":["a"],"key":"`+free+`"}`) }, // a 403: the body is judged as sent
	} {
		send()
		f := finding(h.client(true, free), catalogue.ClientKeyNotInURL)
		e := latest(f)
		where = append(where, e[strings.Index(e, " in the ")+8:strings.Index(e, ":")])
		for _, r := range []*Ref{&f.Request, f.Last} {
			if r != nil && strings.Contains(r.Path+r.Query, free[4:12]) {
				t.Errorf("the finding quotes the key: %s", r)
			}
		}
	}
	c := h.client(true, free)
	expectFailed(t, c, catalogue.ClientBearer, catalogue.ClientKeyNotInURL) // the keyless two
	if got := strings.Join(where, ","); got != "query string,query string,path,body" || finding(c, catalogue.ClientKeyNotInURL).Count != 4 {
		t.Errorf("found in %s; findings:\n%s", got, findingsText(c))
	}
}

// A key beside a correct Bearer header is still a key where it must not
// be: in another header or a cookie it breaks CLIENT-BEARER (the key goes
// in Authorization and nowhere else), in a Referer (a URL) CLIENT-KEY-NOT-IN-URL.
func TestKeyBesideABearerHeader(t *testing.T) {
	for _, tc := range []struct {
		header, value string
		want          catalogue.ID
		says          string
	}{
		{"X-Api-Key", "%s", catalogue.ClientBearer, "came in another header too"},
		{"Cookie", "session=1; api_key=%s", catalogue.ClientBearer, "came in a cookie too"},
		{"Referer", "https://app.example/sync?key=%s", catalogue.ClientKeyNotInURL, "Referer header (a URL)"},
		{"X-Api-Key", "%x", catalogue.ClientBearer, "another header"}, // hex: encoded, still the key
	} {
		h := newHarness(t, Config{})
		pro := h.keys.Pro
		h.do(http.MethodGet, "/api/public-feed?limit=1", "", append(bearer(pro), tc.header, fmt.Sprintf(tc.value, pro))...)
		c := h.client(true, pro)
		expectFailed(t, c, tc.want)
		if f := finding(c, tc.want); !strings.Contains(latest(f), tc.says) {
			t.Errorf("%s: %s", tc.header, findingsText(c))
		}
	}
}

func TestRetryAfter(t *testing.T) {
	h := newHarness(t, Config{})
	pro := h.keys.Pro
	// A 429 the client did not cause (an injected one), waited out.
	if _, err := h.s.AddFault(simulator.FaultSpec{Operation: "feed", Status: http.StatusTooManyRequests, RetryAfter: new(5), Count: 1}); err != nil {
		t.Fatal(err)
	}
	h.feed(pro, "limit=1")
	h.advance(5 * time.Second)
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
	h.feed(free, "limit=1") // 50 s too soon (and more than 20 in a minute)
	c = h.client(true, free)
	expectFailed(t, c, catalogue.ClientRetryAfter, catalogue.ClientRate)
	f := finding(c, catalogue.ClientRetryAfter)
	if f.Related == nil || f.Related.Status != http.StatusTooManyRequests || !strings.Contains(f.Evidence, "sent 10 s after the 429") || !strings.Contains(f.Evidence, "asked for 60 s") {
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

// CLIENT-RATE: more than 20 feed requests of a key within any 60 s,
// however the 429s came (see the catalogue's CLIENT-RATE).
func TestRate(t *testing.T) {
	t.Run("20 a minute, paced, passes", func(t *testing.T) {
		h := newHarness(t, Config{})
		for range 60 { // three minutes at one request every 3 s
			if a := h.feed(h.keys.Pro, "limit=1"); a.status != http.StatusOK {
				t.Fatalf("paced: %d", a.status)
			}
			h.advance(3 * time.Second)
		}
		c := h.client(true, h.keys.Pro)
		expectFailed(t, c)
		if r := results(c)[catalogue.ClientRate]; r != Passed {
			t.Errorf("paced: %s", r)
		}
	})
	t.Run("on the manual clock the minute is exact: no second of transit", func(t *testing.T) {
		h := newHarness(t, Config{})
		send := func(key string, span time.Duration) {
			for i := range 21 { // 21 requests over 20 gaps
				h.feed(key, "limit=1")
				if i < 20 {
					h.advance(span / 20)
				}
			}
		}
		send(h.keys.Pro, 60*time.Second)          // 3 s apart: the limit, met
		send(h.keys.Free, 59999*time.Millisecond) // 59.999 s: virtual time has no transit
		expectFailed(t, h.client(true, h.keys.Pro))
		expectFailed(t, h.client(true, h.keys.Free), catalogue.ClientRate)
	})
	t.Run("30 at one instant, retried through the 429s at once, fails", func(t *testing.T) {
		h := newHarness(t, Config{})
		for range 30 {
			h.feed(h.keys.Pro, "limit=1") // 20 admitted, then 10 429s asked again at once
		}
		c := h.client(true, h.keys.Pro)
		expectFailed(t, c, catalogue.ClientRetryAfter, catalogue.ClientRate)
		f := finding(c, catalogue.ClientRate)
		if f.Count != 10 || f.Request.ID != 21 || f.Last == nil || f.Last.ID != 30 ||
			!strings.Contains(f.Evidence, "21 feed requests of the key within 0 s (this one and the 20 before it, from request #1)") ||
			!strings.Contains(f.LastEvidence, "from request #10)") {
			t.Errorf("finding: %s", f)
		}
	})
	t.Run("one burst of 21 then Retry-After honoured is a finding", func(t *testing.T) {
		h := newHarness(t, Config{})
		burst(h, h.keys.Pro)
		h.advance(time.Minute) // the Retry-After, waited out
		for range 3 {
			h.feed(h.keys.Pro, "limit=1")
			h.advance(3 * time.Second)
		}
		c := h.client(true, h.keys.Pro)
		expectFailed(t, c, catalogue.ClientRate)
		if f := finding(c, catalogue.ClientRate); f.Count != 1 || f.Request.ID != 21 || f.Last != nil {
			t.Errorf("finding: %s", f)
		}
	})
	t.Run("429s it did not cause are no finding", func(t *testing.T) {
		h := newHarness(t, Config{Scenario: "429-storm"})
		for range 8 { // through the storm's 5, waiting each out
			a := h.feed(h.keys.Pro, "limit=1")
			if a.status == http.StatusTooManyRequests {
				h.advance(stormRetryAfter * time.Second)
			}
		}
		c := h.client(true, h.keys.Pro)
		expectFailed(t, c)
		if c.Scenario == nil || c.Scenario.Result != Passed {
			t.Errorf("scenario: %+v", c.Scenario)
		}
	})
	t.Run("requests the server counted on no key are not counted", func(t *testing.T) {
		h := newHarness(t, Config{})
		for range 25 {
			h.do(http.MethodGet, "/api/public-feed?limit=1&key="+h.keys.Pro, "") // no header: the key's, but no Bearer
		}
		if r := results(h.client(true, h.keys.Pro))[catalogue.ClientRate]; r != NotExercised {
			t.Errorf("rate: %s", r)
		}
	})
}

func TestCursorIssued(t *testing.T) {
	h := newHarness(t, Config{})
	pro, free := h.keys.Pro, h.keys.Free
	next := h.feed(pro, "limit=5").next()
	h.feed(pro, "limit=5&cursor="+next)
	expectFailed(t, h.client(false, pro))

	freeNext := h.feed(free, "limit=5").next()
	edited := next[:len(next)-1] + map[bool]string{true: "B", false: "A"}[next[len(next)-1] == 'A']
	for i, step := range []struct{ cursor, evidence string }{
		{next, "another account (acc_1)"}, // the Pro account's
		{"made-up", "never handed out"},   // invented
		{edited, "never handed out"},      // edited
		{freeNext, "never handed out"},    // its own: fine, no new finding
	} {
		h.feed(free, "limit=5&cursor="+step.cursor)
		f := finding(h.client(false, free), catalogue.ClientCursorIssued)
		if f.Count != min(i+1, 3) || !strings.Contains(latest(f), step.evidence) {
			t.Errorf("cursor %d: %s", i, f)
		}
		if s := f.Evidence + f.LastEvidence; strings.Contains(s, "made-up") || strings.Contains(s, edited) {
			t.Errorf("a finding quotes the cursor: %s", f)
		}
	}
	expectFailed(t, h.client(false, free), catalogue.ClientCursorIssued)

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
	if c = h.client(false, free); !strings.Contains(c.Findings[0].Evidence, "no feed request for 660 s") {
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
	if f := c.Findings[0]; len(c.Findings) != 1 || f.Count != 5 || !strings.Contains(f.Evidence, "/videoIds: maxItems") || f.Last == nil || f.Last.ID != 5 || !strings.Contains(f.LastEvidence, "/videoIds/0") {
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
	if f := c.Findings[0]; len(c.Findings) != 1 || f.Count != 4 || !strings.Contains(f.Evidence, `Content-Type "text/plain"`) || !strings.Contains(f.LastEvidence, "no Content-Type") {
		t.Errorf("findings:\n%s", findingsText(c))
	}
	// The health check: a JSON object as application/json ({} is the usage shown).
	h2.health("", "")
	h2.health("application/json", "")
	expectFailed(t, h2.client(true, ""), catalogue.ClientJSONBody)
	if f := h2.client(true, "").Findings; len(f) != 1 || f[0].Count != 2 {
		t.Errorf("health findings: %v", f)
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

// TestCursorUsedBeforeItsPageIsJudged: observers see an exchange once its
// answer is written, so a client quick on a new connection can be judged
// on a cursor before the page that handed it out. The judge waits for that
// page; a cursor no earlier page hands out stays a finding.
func TestCursorUsedBeforeItsPageIsJudged(t *testing.T) {
	var xs []*simulator.Exchange
	s, err := simulator.New(simulator.Config{Seed: 1,
		Observers: []simulator.Observer{func(x *simulator.Exchange) { xs = append(xs, x) }}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	pro := s.Seeded().Pro
	var get func(query string)
	get = func(query string) {
		r := httptest.NewRequest(http.MethodGet, "/api/public-feed?"+query, nil)
		r.Header.Set("Authorization", "Bearer "+pro)
		w := httptest.NewRecorder()
		s.Handler().ServeHTTP(w, r)
		var page struct{ NextCursor string }
		if err := json.Unmarshal(w.Body.Bytes(), &page); err != nil || page.NextCursor == "" {
			t.Fatalf("%s: %d %s", query, w.Code, w.Body)
		}
		if query == "limit=5" {
			get("limit=5&cursor=" + url.QueryEscape(page.NextCursor))
		}
	}
	get("limit=5")
	if len(xs) != 2 {
		t.Fatalf("%d exchanges", len(xs))
	}
	for _, order := range [][]int{{0, 1}, {1, 0}} {
		j, err := New(s, Config{})
		if err != nil {
			t.Fatal(err)
		}
		for _, i := range order {
			j.Observe(xs[i])
		}
		if cs := j.Snapshot(true).Clients; len(cs) != 1 || finding(cs[0], catalogue.ClientCursorIssued).Count != 0 {
			t.Errorf("order %v: %+v", order, cs)
		}
	}
	// The same cursor, presented by a request that arrived before the page
	// that hands it out: made up then.
	early := *xs[1]
	early.Time = xs[0].Time.Add(-time.Millisecond)
	j, _ := New(s, Config{})
	j.Observe(&early)
	j.Observe(xs[0])
	if cs := j.Snapshot(true).Clients; len(cs) != 1 || !strings.Contains(finding(cs[0], catalogue.ClientCursorIssued).Evidence, "never handed out") {
		t.Errorf("a cursor used before any page handed it out: %+v", cs)
	}
}

// recorded is a simulator (seed 1) whose exchanges are recorded, not
// judged, so that a test can show them to a judge in any order.
type recorded struct {
	t  *testing.T
	s  *simulator.Server
	xs []*simulator.Exchange
}

func newRecorded(t *testing.T) *recorded {
	r := &recorded{t: t}
	s, err := simulator.New(simulator.Config{Seed: 1,
		Observers: []simulator.Observer{func(x *simulator.Exchange) { r.xs = append(r.xs, x) }}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	r.s = s
	return r
}

type event struct{ CreatedAt int64 }

// page reads a feed page with the Pro key ("": nextCursor null); anything
// but a 200 fails the test.
func (r *recorded) page(limit int, cursor string) (events []event, next string) {
	r.t.Helper()
	target := "/api/public-feed?limit=" + strconv.Itoa(limit)
	if cursor != "" {
		target += "&cursor=" + url.QueryEscape(cursor)
	}
	req := httptest.NewRequest(http.MethodGet, target, nil)
	req.Header.Set("Authorization", "Bearer "+r.s.Seeded().Pro)
	w := httptest.NewRecorder()
	r.s.Handler().ServeHTTP(w, req)
	var p struct {
		Events     []event
		NextCursor *string
	}
	if err := json.Unmarshal(w.Body.Bytes(), &p); err != nil || w.Code != http.StatusOK {
		r.t.Fatalf("%s: %d %s", target, w.Code, w.Body)
	}
	if p.NextCursor != nil {
		next = *p.NextCursor
	}
	return p.Events, next
}

// walk reads the feed to its end; it returns the createdAt of the newest
// event.
func (r *recorded) walk(limit int) (top int64) {
	r.t.Helper()
	for cursor, n := "", 0; n == 0 || cursor != ""; n++ {
		var events []event
		events, cursor = r.page(limit, cursor)
		if n == 0 && len(events) > 0 {
			top = events[0].CreatedAt
		}
	}
	return top
}

// judge shows a new judge the exchanges in that order, and checks that
// the one client finished every walk it began, finished walks in all.
func (r *recorded) judge(name string, xs []*simulator.Exchange, walks int) {
	r.t.Helper()
	j, err := New(r.s, Config{})
	if err != nil {
		r.t.Fatal(err)
	}
	for _, x := range xs {
		j.Observe(x)
	}
	cs := j.Snapshot(true).Clients
	if len(cs) != 1 {
		r.t.Fatalf("%s: %d clients", name, len(cs))
	}
	if c := cs[0]; c.Walks.Open != 0 || c.Walks.Finished != walks || !c.Passed {
		r.t.Errorf("%s: walks %+v, findings:\n%s", name, c.Walks, findingsText(c))
	}
}

// TestWalkPagesJudgedOutOfOrder: observers may see a client's pages out
// of order (a client quick on new connections sends the next page before
// the observers of the last one have run). A walk read to its end in
// order is finished whatever order the judge sees its pages in: a page
// whose cursor the judge has not seen handed out, or seen handed out by
// a page it has not walked yet, waits for that page. Before, the last
// page seen before the page that handed out its cursor was never walked,
// and the walk was abandoned (a false CLIENT-WALK-END that
// FuzzTCMClient found: 2bd4a3565de7fffe).
func TestWalkPagesJudgedOutOfOrder(t *testing.T) {
	r := newRecorded(t)
	r.walk(200)
	n := len(r.xs)
	if n < 4 {
		t.Fatalf("a walk of %d pages: too short for the test", n)
	}
	shown := func(order func(o []int)) []*simulator.Exchange {
		o := make([]int, n)
		for i := range o {
			o[i] = i
		}
		order(o)
		xs := make([]*simulator.Exchange, n)
		for i, k := range o {
			xs[i] = r.xs[k]
		}
		return xs
	}
	r.judge("in order", r.xs, 1)
	for i := 0; i+1 < n; i++ {
		r.judge(fmt.Sprintf("page %d seen before page %d", i+2, i+1), shown(func(o []int) { o[i], o[i+1] = o[i+1], o[i] }), 1)
	}
	for i := 0; i+2 < n; i++ {
		r.judge(fmt.Sprintf("pages %d and %d seen before page %d", i+2, i+3, i+1), shown(func(o []int) { o[i], o[i+1], o[i+2] = o[i+1], o[i+2], o[i] }), 1)
	}
	r.judge("in reverse", shown(slices.Reverse[[]int]), 1)
}

// TestSyncJudgedBeforeTheWalkBeforeIt: a client walks the feed to its
// end, new events come, and it syncs: the first page and the next, which
// reaches down to events it had, and it stops there. Observers may see
// the last page of the first walk after the sync's pages (a client quick
// on new connections): the sync's walk began after that page arrived,
// with every event of the first walk, and is done. Before, it was called
// abandoned (FuzzTCMClient input f45377d784db1c3f).
func TestSyncJudgedBeforeTheWalkBeforeIt(t *testing.T) {
	r := newRecorded(t)
	top := r.walk(200)
	walk := len(r.xs)
	r.s.Advance(24 * time.Hour)
	probe, _ := r.page(200, "") // not shown to the judge
	fresh := 0
	for _, e := range probe {
		if e.CreatedAt > top {
			fresh++
		}
	}
	if fresh < 2 || walk < 2 {
		t.Fatalf("%d new events after a walk of %d pages: too few for the test", fresh, walk)
	}
	limit := fresh/2 + 1 // the first page new events only, the second down to events the client had
	first, cursor := r.page(limit, "")
	second, _ := r.page(limit, cursor)
	if first[len(first)-1].CreatedAt <= top || second[len(second)-1].CreatedAt > top {
		t.Fatalf("the sync's pages do not reach down to what the client had where the test means them to")
	}
	xs, sync := r.xs[:walk], r.xs[walk+1:]
	r.judge("in order", slices.Concat(xs, sync), 2)
	r.judge("the walk's last page after the sync", slices.Concat(xs[:walk-1], sync, xs[walk-1:]), 2)
	r.judge("the walk's last page after sync page 1", slices.Concat(xs[:walk-1], sync[:1], xs[walk-1:], sync[1:]), 2)
}
