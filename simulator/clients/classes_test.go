package clients

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tcmkit/tcmkit/schemas/catalogue"
	"github.com/tcmkit/tcmkit/schemas/redact"
	"github.com/tcmkit/tcmkit/simulator"
)

// The five classes of issue 34's client judge, each with a client that
// keeps the rule and one that breaks it: rules that never contradict each
// other, a parameter present but empty, every part of the request target,
// a request charged to the key it carries wherever it carries it, and
// evidence that says exact counts and times.

// --- Rules that never contradict each other --------------------------------

// graphServer is a simulator whose feed (the Pro key's, a page an event)
// hands out its real cursors in the order of a graph: page i's nextCursor
// is page next[i]'s cursor, or null for -1. Page 0 is the first page
// (asked without a cursor); a cursor leads to its own real page. A graph
// with a loop is a server that breaks FEED-CURSOR-END and does not say so
// (as the named fault cursor-cycles).
func graphServer(t *testing.T, next []int) *harness {
	t.Helper()
	cfg := simulator.Config{Seed: 1, Channels: 2, History: 48 * time.Hour, Frozen: true}
	plain, err := simulator.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cursors := []string{""}
	h0 := &harness{t: t, s: plain, keys: plain.Seeded()}
	for len(cursors) < len(next) {
		c := h0.feed(h0.keys.Pro, "limit=1"+map[bool]string{true: "", false: "&cursor=" + cursors[len(cursors)-1]}[len(cursors) == 1]).next()
		if c == "" {
			t.Fatalf("the feed has fewer than %d pages", len(next))
		}
		cursors = append(cursors, c)
	}
	plain.Close()
	layer := simulator.Layer{Name: "graph", Wrap: func(_ *simulator.Server, op simulator.Operation, serve simulator.Answerer) simulator.Answerer {
		if op != simulator.OpFeed {
			return serve
		}
		return func(r *http.Request) simulator.Answer {
			a := serve(r)
			i := slices.Index(cursors, r.URL.Query().Get("cursor"))
			if a.Status != http.StatusOK || i < 0 {
				return a
			}
			real, _ := nextCursor(a.Body)
			from, to := "null", "null"
			if real != "" {
				from = `"` + real + `"`
			}
			if next[i] >= 0 {
				to = `"` + cursors[next[i]] + `"`
			}
			a.Body = bytes.Replace(a.Body, []byte(`"nextCursor":`+from), []byte(`"nextCursor":`+to), 1)
			return a
		}
	}}
	cfg.Clients, cfg.Layers = Judging(Config{}), []simulator.Layer{layer}
	s, err := simulator.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return &harness{t: t, s: s, j: Of(s), keys: s.Seeded()}
}

// follow reads the first page, then follows nextCursor at most k times,
// or, with smart, until nextCursor is null or a cursor it followed, 3 s
// apart (within the rate). It returns the final verdict's failed rules and
// whether its last page had a nextCursor.
func follow(t *testing.T, next []int, k int, smart bool) (map[catalogue.ID]bool, bool) {
	h := graphServer(t, next)
	a := h.feed(h.keys.Pro, "limit=1")
	var followed []string
	for range k {
		c := a.next()
		if c == "" || (smart && slices.Contains(followed, c)) {
			break
		}
		followed = append(followed, c)
		h.advance(3 * time.Second)
		a = h.feed(h.keys.Pro, "limit=1&cursor="+c)
		if a.status != http.StatusOK {
			t.Fatalf("%d %s", a.status, a.body)
		}
	}
	out := map[catalogue.ID]bool{}
	for _, id := range failed(h.client(true, h.keys.Pro)) {
		out[id] = true
	}
	return out, a.next() != ""
}

// TestWalkRulesNeverContradict: on a server whose cursors follow any
// graph (chains, loops back to any page, self-loops), no step of a client
// is required by one rule and forbidden by another. At every point where
// the client holds a nextCursor, stopping is allowed (no CLIENT-WALK-END
// finding) or following it is (no new CLIENT-CURSOR-CYCLE finding); and
// the client that follows until nextCursor is null or leads back to a
// cursor it followed passes every rule. Issue 34: a client that followed
// a loop once, saw the same page and stopped passed CLIENT-CURSOR-CYCLE
// and failed CLIENT-WALK-END.
func TestWalkRulesNeverContradict(t *testing.T) {
	graphs := [][]int{
		{1, 2, 2},       // the named fault cursor-cycles: the last page hands back its own cursor
		{1, 2, 3, 1},    // back to the walk's first cursor
		{1, 1},          // a self-loop at once
		{1, 2, 3, -1},   // a conforming chain
		{1, 2, 3, 2, 4}, // a loop of two in the middle
	}
	r := rand.New(rand.NewPCG(34, 5))
	for len(graphs) < 16 {
		n := 2 + r.IntN(4)
		g := make([]int, n)
		for i := range g {
			g[i] = 1 + r.IntN(n-1)
			if r.IntN(4) == 0 {
				g[i] = -1
			}
		}
		graphs = append(graphs, g)
	}
	for _, g := range graphs {
		t.Run(fmt.Sprint(g), func(t *testing.T) {
			if got, _ := follow(t, g, len(g)+CycleLaps+2, true); len(got) > 0 {
				t.Errorf("the client that stops at a cursor it followed fails %v", keys(got))
			}
			max := len(g) + CycleLaps + 2
			fails := make([]map[catalogue.ID]bool, max+1)
			holds := make([]bool, max+1)
			for k := range max + 1 {
				fails[k], holds[k] = follow(t, g, k, false)
			}
			for k := range max {
				if !holds[k] {
					continue // no nextCursor: nothing to choose
				}
				stopForbidden := fails[k][catalogue.ClientWalkEnd]
				followForbidden := fails[k+1][catalogue.ClientCursorCycle] && !fails[k][catalogue.ClientCursorCycle]
				if stopForbidden && followForbidden {
					t.Errorf("after %d follows, stopping fails CLIENT-WALK-END and following fails CLIENT-CURSOR-CYCLE", k)
				}
			}
		})
	}
}

func keys(m map[catalogue.ID]bool) []catalogue.ID {
	var out []catalogue.ID
	for id := range m {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

// TestLeavingALoopIsNotAbandoningAWalk: the client of issue 34 that
// follows a loop once, sees the same page and stops passes both rules;
// one that follows it round and round fails CLIENT-CURSOR-CYCLE (with the
// count of its follows), and one that leaves a walk with no loop halfway
// still fails CLIENT-WALK-END.
func TestLeavingALoopIsNotAbandoningAWalk(t *testing.T) {
	loop := []int{1, 2, 2}
	once, _ := follow(t, loop, 3, false) // c1, c2, c2 again: the same page, then it stops
	if len(once) > 0 {
		t.Errorf("following the loop once and stopping fails %v", keys(once))
	}
	h := graphServer(t, loop)
	a := h.feed(h.keys.Pro, "limit=1")
	for range 9 {
		h.advance(3 * time.Second)
		a = h.feed(h.keys.Pro, "limit=1&cursor="+a.next())
	}
	c := h.client(true, h.keys.Pro)
	expectFailed(t, c, catalogue.ClientCursorCycle)
	f := finding(c, catalogue.ClientCursorCycle)
	if !strings.Contains(f.Evidence, "followed the cycle back 3 times") || !strings.Contains(f.LastEvidence, "followed the cycle back 7 times") || f.Count != 5 {
		t.Errorf("finding: %s", f)
	}
	if c.Walks.Begun != 1 || c.Walks.Cut != 1 || c.Walks.Open != 0 {
		t.Errorf("walks %+v, want the one walk, cut by the loop", c.Walks)
	}
	halfway, _ := follow(t, []int{1, 2, 3, -1}, 2, false)
	if !halfway[catalogue.ClientWalkEnd] || len(halfway) != 1 {
		t.Errorf("leaving a chain halfway fails %v, want CLIENT-WALK-END", keys(halfway))
	}
}

// --- A parameter present but empty -----------------------------------------

// TestEmptyCursorIsNotAnOmittedOne: ?limit=20&cursor= is not an omitted
// cursor: "" was never handed out, and the contract says to omit cursor
// for the first page. Two cursors are not the one handed out either.
func TestEmptyCursorIsNotAnOmittedOne(t *testing.T) {
	h := newHarness(t, Config{})
	pro, free := h.keys.Pro, h.keys.Free
	h.feed(pro, "limit=200")
	h.feed(pro, "limit=20&cursor=") // the server serves the first page
	c := h.client(true, pro)
	expectFailed(t, c, catalogue.ClientCursorIssued)
	if f := finding(c, catalogue.ClientCursorIssued); f.Count != 1 || f.Request.ID != 2 || !strings.Contains(f.Evidence, "an empty cursor (cursor= with no value)") {
		t.Errorf("finding: %s", f)
	}
	n := h.feed(free, "limit=20").next()
	h.feed(free, "limit=20&cursor="+n+"&cursor="+n)
	if f := finding(h.client(true, free), catalogue.ClientCursorIssued); !strings.Contains(f.Evidence, "2 cursor parameters") {
		t.Errorf("two cursors: %s", f)
	}

	good := newHarness(t, Config{})
	good.walk(good.keys.Pro, 200)
	if r := results(good.client(true, good.keys.Pro))[catalogue.ClientCursorIssued]; r != Passed {
		t.Errorf("a client that omits cursor for the first page: %s", r)
	}
}

// --- Every part of the request target ----------------------------------------

// rawServer serves h's simulator on a loopback port, for requests written
// by hand.
func rawServer(t *testing.T, h *harness) string {
	srv := httptest.NewServer(h.s.Handler())
	t.Cleanup(srv.Close)
	return srv.Listener.Addr().String()
}

// raw sends one request as written (target and headers) and returns its
// status.
func raw(t *testing.T, addr, method, target string, header ...string) int {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\n", method, target)
	host := "Host: " + addr + "\r\n"
	for i := 0; i+1 < len(header); i += 2 {
		if strings.EqualFold(header[i], "Host") {
			host = ""
		}
		fmt.Fprintf(&b, "%s: %s\r\n", header[i], header[i+1])
	}
	b.WriteString(host + "Connection: close\r\n\r\n")
	conn.Write([]byte(b.String()))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestKeyInEveryPartOfTheRequestTarget: a key in any part of the request
// target (the userinfo of an absolute-form target included, which RFC
// 9110 forbids sending, and the host) is a key in a URL; the key's own
// entry fails CLIENT-KEY-NOT-IN-URL, and a request with the key only in
// its Authorization header passes.
func TestKeyInEveryPartOfTheRequestTarget(t *testing.T) {
	h := newHarness(t, Config{})
	addr := rawServer(t, h)
	pro := h.keys.Pro
	auth := []string{"Authorization", "Bearer " + pro}
	raw(t, addr, "GET", "/api/public-feed?limit=1", auth...)
	expectFailed(t, h.client(true, pro))

	for _, tc := range []struct {
		name, target string
		header       []string
		where        string
	}{
		{"userinfo, as the password", "http://user:" + pro + "@" + "127.0.0.1/api/public-feed?limit=1", nil, "userinfo"},
		{"userinfo, as the user", "http://" + pro + "@127.0.0.1/api/public-feed?limit=1", nil, "userinfo"},
		{"userinfo, percent-encoded", "http://" + strings.ReplaceAll(pro, "_", "%5F") + ":x@127.0.0.1/api/public-feed?limit=1", nil, "userinfo"},
		{"the host", "/api/public-feed?limit=1", []string{"Host", pro + ".example"}, "host"},
		{"the query", "/api/public-feed?limit=1&key=" + pro, nil, "query string"},
		{"the path", "/api/public-feed/" + pro, nil, "path"},
		{"a fragment sent", "/api/public-feed?limit=1#" + pro, nil, "query string"},
		{"the Referer", "/api/public-feed?limit=1", []string{"Referer", "http://app.example/?key=" + pro}, "Referer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, Config{})
			addr := rawServer(t, h)
			raw(t, addr, "GET", tc.target, append([]string{"Authorization", "Bearer " + h.keys.Pro}, tc.header...)...)
			c := h.client(true, h.keys.Pro)
			f := finding(c, catalogue.ClientKeyNotInURL)
			if f.Requirement == "" || !strings.Contains(f.Evidence, tc.where) || !strings.Contains(f.Evidence, redact.Form(h.keys.Pro)) {
				t.Errorf("the key in %s: findings:\n%s", tc.name, findingsText(c))
			}
		})
	}
}

// --- A request belongs to the key it carries ---------------------------------

// TestARequestIsChargedToTheKeyItCarries: a request whose key is not in a
// Bearer header (Basic credentials in any order, another scheme, another
// header, a cookie, the URL) is that key's, wherever the key stands, and
// the key's entry fails the rule it broke; the keyless entry is not
// charged with it. A key sent as Bearer passes.
func TestARequestIsChargedToTheKeyItCarries(t *testing.T) {
	basic := func(userpass string) []string {
		return []string{"Authorization", "Basic " + base64.StdEncoding.EncodeToString([]byte(userpass))}
	}
	for _, tc := range []struct {
		name   string
		header func(key string) []string
		query  func(key string) string
		rule   catalogue.ID
	}{
		{"Basic, the key as password", func(k string) []string { return basic(":" + k) }, nil, catalogue.ClientBearer},
		{"Basic, the key as user", func(k string) []string { return basic(k + ":") }, nil, catalogue.ClientBearer},
		{"Basic, a user and the key", func(k string) []string { return basic("me:" + k) }, nil, catalogue.ClientBearer},
		{"Basic, the key and a password", func(k string) []string { return basic(k + ":secret") }, nil, catalogue.ClientBearer},
		{"another scheme", func(k string) []string { return []string{"Authorization", "Token " + k} }, nil, catalogue.ClientBearer},
		{"another header only", func(k string) []string { return []string{"X-Api-Key", k} }, nil, catalogue.ClientBearer},
		{"a cookie only", func(k string) []string { return []string{"Cookie", "key=" + k} }, nil, catalogue.ClientBearer},
		{"the query only", nil, func(k string) string { return "&api_key=" + k }, catalogue.ClientKeyNotInURL},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, Config{})
			key := h.keys.Free
			var header []string
			if tc.header != nil {
				header = tc.header(key)
			}
			q := ""
			if tc.query != nil {
				q = tc.query(key)
			}
			h.do(http.MethodGet, "/api/public-feed?limit=1"+q, "", header...)
			v := h.j.Snapshot(true)
			var own *Client
			for i, c := range v.Clients {
				if c.Key == redact.Form(key) {
					own = &v.Clients[i]
				}
				if c.Key == "" {
					t.Errorf("the keyless entry was charged with %d requests", c.Requests)
				}
			}
			if own == nil {
				t.Fatalf("no entry for the key: %+v", v.Clients)
			}
			if r := results(*own)[tc.rule]; r != Failed {
				t.Errorf("the key's own entry: %s is %s, want failed; findings:\n%s", tc.rule, r, findingsText(*own))
			}
		})
	}
	h := newHarness(t, Config{})
	h.feed(h.keys.Free, "limit=1")
	expectFailed(t, h.client(true, h.keys.Free))
}

// --- Exact counts and times --------------------------------------------------

// TestEvidenceIsExact: a retry 1 ms early says 4.999 s against 5 s; two
// walks of many pages count two; a tight loop and a loop followed say how
// many times, not the threshold.
func TestEvidenceIsExact(t *testing.T) {
	h := newHarness(t, Config{})
	pro, free := h.keys.Pro, h.keys.Free
	for _, wait := range []time.Duration{5*time.Second - time.Millisecond, 5 * time.Second} {
		key := map[bool]string{true: pro, false: free}[wait < 5*time.Second]
		if _, err := h.s.AddFault(simulator.FaultSpec{Operation: "feed", Status: http.StatusTooManyRequests, RetryAfter: new(5), Count: 1}); err != nil {
			t.Fatal(err)
		}
		h.feed(key, "limit=1")
		h.advance(wait)
		h.feed(key, "limit=1")
	}
	f := finding(h.client(true, pro), catalogue.ClientRetryAfter)
	if !strings.Contains(f.Evidence, "sent 4.999 s after the 429 of request #1, whose Retry-After asked for 5 s") {
		t.Errorf("1 ms early: %s", f)
	}
	if r := results(h.client(true, free))[catalogue.ClientRetryAfter]; r != Passed {
		t.Errorf("on time: %s", r)
	}

	w := newHarness(t, Config{})
	pages := 0
	for range 2 {
		pages += w.walk(w.keys.Pro, 20)
		w.advance(time.Minute)
	}
	if c := w.client(true, w.keys.Pro); pages < 10 || c.Walks != (Walks{Begun: 2, Finished: 2}) {
		t.Errorf("two walks of %d pages: %+v", pages/2, c.Walks)
	}

	b := newHarness(t, Config{})
	if _, err := b.s.AddFault(simulator.FaultSpec{Operation: "feed", Status: http.StatusServiceUnavailable, Count: 10}); err != nil {
		t.Fatal(err)
	}
	for range 10 {
		b.feed(b.keys.Pro, "limit=1")
	}
	f = finding(b.client(true, b.keys.Pro), catalogue.ClientBackoff)
	if !strings.Contains(f.Evidence, "asked the feed again 5 times") || !strings.Contains(f.LastEvidence, "asked the feed again 9 times") || f.Count != 5 {
		t.Errorf("a tight loop of 9: %s", f)
	}
}

// --- Two more, from the blind corpus of issue 34 ---------------------------

// TestInterleavedWalksStopAtWhatTheClientWasGiven: a client that walks two
// pages, reads a newer first page later and follows it down to the events
// of the first page it read before, then finishes its first walk, began
// two walks and finished both: the second stopped at events it was given.
// One that stops the second walk before reaching them left it.
func TestInterleavedWalksStopAtWhatTheClientWasGiven(t *testing.T) {
	for _, tc := range []struct {
		name  string
		reach bool
		want  []catalogue.ID
	}{{"down to what it had", true, nil}, {"stopped short", false, []catalogue.ID{catalogue.ClientWalkEnd}}} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, Config{})
			pro := h.keys.Pro
			first := h.feed(pro, "limit=10")
			top := pageTop(t, first.body)
			h.advance(3 * time.Second)
			cursor := h.feed(pro, "limit=10&cursor="+first.next()).next()
			h.advance(6 * time.Hour)
			a := h.feed(pro, "limit=10")
			if pageTop(t, a.body) <= top {
				t.Fatal("no new events in 6 h")
			}
			for steps := 0; ; steps++ {
				_, oldest, _ := pageSpan(a.body)
				if oldest <= top || (!tc.reach && steps == 1) || a.next() == "" {
					break
				}
				h.advance(3 * time.Second)
				a = h.feed(pro, "limit=10&cursor="+a.next())
			}
			for cursor != "" {
				h.advance(3 * time.Second)
				cursor = h.feed(pro, "limit=10&cursor="+cursor).next()
			}
			c := h.client(true, pro)
			expectFailed(t, c, tc.want...)
			if tc.reach && c.Walks != (Walks{Begun: 2, Finished: 2}) {
				t.Errorf("walks %+v", c.Walks)
			}
		})
	}
}

func pageTop(t *testing.T, body []byte) int64 {
	t.Helper()
	newest, _, ok := pageSpan(body)
	if !ok {
		t.Fatalf("not a page: %.100s", body)
	}
	return newest
}

// TestACutAnswerIsAnErrorAnswer: a feed answer 200 whose body is cut short
// (not a page) is an error answer for CLIENT-BACKOFF, as the catalogue
// says: asking again at once five times is a tight loop; waiting a second
// between attempts is not.
func TestACutAnswerIsAnErrorAnswer(t *testing.T) {
	for _, tc := range []struct {
		gap  time.Duration
		want []catalogue.ID
	}{{100 * time.Millisecond, []catalogue.ID{catalogue.ClientBackoff}}, {1500 * time.Millisecond, nil}} {
		h := newHarness(t, Config{})
		if _, err := h.s.AddFault(simulator.FaultSpec{Operation: "feed", Malformed: true, Count: 6}); err != nil {
			t.Fatal(err)
		}
		for range 7 {
			h.feed(h.keys.Pro, "limit=1")
			h.advance(tc.gap)
		}
		c := h.client(true, h.keys.Pro)
		expectFailed(t, c, tc.want...)
		if r := results(c)[catalogue.ClientBackoff]; tc.want == nil && r != Passed {
			t.Errorf("a second between attempts: %s", r)
		}
	}
}
