package clients

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tcmkit/tcmkit/schemas/catalogue"
	"github.com/tcmkit/tcmkit/simulator"
)

// requirement is the verdict of one requirement of a client.
func requirement(t *testing.T, c Client, id catalogue.ID) Verdict {
	t.Helper()
	for _, r := range c.Requirements {
		if r.ID == id {
			return r
		}
	}
	t.Fatalf("no verdict on %s", id)
	return Verdict{}
}

// CLIENT-BACKOFF: a key that asks again at once after error answers, five
// times, is in a tight loop; a key that waits a second or more between
// attempts is not.
func TestBackoff(t *testing.T) {
	h := newHarness(t, Config{})
	if _, err := h.s.AddFault(simulator.FaultSpec{Operation: "feed", Status: http.StatusServiceUnavailable, Count: 1 + TightLoop}); err != nil {
		t.Fatal(err)
	}
	for range 1 + TightLoop {
		if a := h.feed(h.keys.Pro, "limit=1"); a.status != http.StatusServiceUnavailable {
			t.Fatalf("%d", a.status)
		}
	}
	c := h.client(true, h.keys.Pro)
	expectFailed(t, c, catalogue.ClientBackoff)
	if f := c.Findings[0]; !strings.Contains(f.Evidence, "tight loop: after the 503 of request #1 the client asked the feed again 5 times") || f.Related == nil {
		t.Errorf("finding: %s", f)
	}

	if _, err := h.s.AddFault(simulator.FaultSpec{Operation: "feed", Status: http.StatusInternalServerError, Count: 1 + TightLoop}); err != nil {
		t.Fatal(err)
	}
	for range 1 + TightLoop {
		h.feed(h.keys.Free, "limit=1")
		h.advance(time.Second)
	}
	c = h.client(true, h.keys.Free)
	expectFailed(t, c)
	if r := requirement(t, c, catalogue.ClientBackoff); r.Result != Passed {
		t.Errorf("waiting a second between attempts: %s", r.Result)
	}
}

// cycleLayer is a server that breaks FEED-CURSOR-END: a page reached with
// a cursor hands that cursor back as its nextCursor.
var cycleLayer = simulator.Layer{Name: "cycle", Wrap: func(_ *simulator.Server, op simulator.Operation, next simulator.Answerer) simulator.Answerer {
	if op != simulator.OpFeed {
		return next
	}
	return func(r *http.Request) simulator.Answer {
		a := next(r)
		cursor := r.URL.Query().Get("cursor")
		if a.Status != http.StatusOK || cursor == "" {
			return a
		}
		if real, ok := nextCursor(a.Body); ok && real != "" {
			a.Body = bytes.Replace(a.Body, []byte(`"nextCursor":"`+real+`"`), []byte(`"nextCursor":"`+cursor+`"`), 1)
			a.Breaks = string(catalogue.FeedCursorEnd)
		}
		return a
	}
}}

// CLIENT-CURSOR-CYCLE: following a cursor that leads back to its own page
// three times is a finding; and the walk the server broke may be left
// (CLIENT-WALK-END is no finding).
func TestCursorCycle(t *testing.T) {
	s, err := simulator.New(simulator.Config{Seed: 1, Clients: Judging(Config{}), Layers: []simulator.Layer{cycleLayer}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	h := &harness{t: t, s: s, j: Of(s), keys: s.Seeded()}
	first := h.feed(h.keys.Pro, "limit=5")
	cursor := first.next()
	for lap := range CycleLaps + 1 {
		if a := h.feed(h.keys.Pro, "limit=5&cursor="+cursor); a.next() != cursor {
			t.Fatalf("lap %d: no cycle: %.200s", lap, a.body)
		}
	}
	c := h.client(true, h.keys.Pro)
	expectFailed(t, c, catalogue.ClientCursorCycle)
	if f := c.Findings[0]; !strings.Contains(f.Evidence, "cursor cycle followed") {
		t.Errorf("finding: %s", f)
	}
	if c.Walks.Cut == 0 {
		t.Errorf("the walk the server broke is not cut: %+v", c.Walks)
	}
}

// A 429 that refuses the key for longer than the rate window stops its
// walks: a client may give up rather than wait (not abandoned).
func TestLongRefusalStopsTheWalk(t *testing.T) {
	h := newHarness(t, Config{})
	first := h.feed(h.keys.Pro, "limit=5")
	second := h.feed(h.keys.Pro, "limit=5&cursor="+first.next())
	if _, err := h.s.AddFault(simulator.FaultSpec{Operation: "feed", Status: http.StatusTooManyRequests, RetryAfter: new(3600), Count: 1}); err != nil {
		t.Fatal(err)
	}
	if a := h.feed(h.keys.Pro, "limit=5&cursor="+second.next()); a.status != http.StatusTooManyRequests {
		t.Fatalf("%d", a.status)
	}
	c := h.client(true, h.keys.Pro)
	expectFailed(t, c)
	if c.Walks.Cut != 1 {
		t.Errorf("walks %+v", c.Walks)
	}
}
