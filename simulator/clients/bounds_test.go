package clients

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/tcmkit/tcmkit/schemas/catalogue"
	"github.com/tcmkit/tcmkit/simulator"
)

// What a judge keeps is bounded whatever clients send: keys, findings,
// open walks, remembered cursors.

func TestBoundedWalks(t *testing.T) {
	h := newHarness(t, Config{})
	pro := h.keys.Pro
	for k := 1; k <= maxOpenWalks+1; k++ {
		// A first page of 10k events hands out a cursor of its own; one
		// page from it begins a walk that waits on a cursor of its own.
		cursor := h.feed(pro, "limit="+strconv.Itoa(10*k)).next()
		h.feed(pro, "limit=1&cursor="+cursor)
	}
	c := h.client(false, pro)
	expectFailed(t, c, catalogue.ClientWalkEnd)
	if c.Walks.Open != maxOpenWalks || c.Walks.Begun != maxOpenWalks+1 || !strings.Contains(c.Findings[0].Evidence, "more than 8 walks open at once") {
		t.Errorf("walks %+v; findings:\n%s", c.Walks, findingsText(c))
	}
}

func TestHandedIndexForgetsTheOldest(t *testing.T) {
	h := newHandedIndex(2)
	h.add(1, "a")
	h.add(2, "b")
	h.add(1, "a") // known: no change
	if h.forgot {
		t.Fatal("forgot before it was full")
	}
	h.add(3, "c")
	if _, ok := h.owner[1]; ok || !h.forgot || h.owner[3] != "c" || len(h.owner) != 2 {
		t.Errorf("%+v", h)
	}
}

// Whatever a client sends, the judge neither fails nor keeps a key, and
// its verdicts are JSON.
func TestHostileRequests(t *testing.T) {
	h := newHarness(t, Config{})
	pro := h.keys.Pro
	long := strings.Repeat("x", 100_000)
	for _, r := range []struct {
		method, target, body string
		header               []string
	}{
		{"GET", "/api/public-feed?cursor=" + long, "", bearer(pro)},
		{"GET", "/api/public-feed?cursor=%zz&limit=-1&limit=2", "", bearer(pro)},
		{"GET", "/api/public-feed?cursor=" + pro[:20], "", bearer(pro)},
		{"POST", "/api/public/videos", "\xff\xfe" + long, append(bearer(pro), "Content-Type", "application/json")},
		{"POST", "/api/public/videos", `{"videoIds":["` + pro + `"]}`, append(bearer(pro), "Content-Type", "application/json")},
		{"POST", "/api/public/health", strings.Repeat("[", 10_000), []string{"Content-Type", "application/json; charset=latin1"}},
		{"GET", "/api/public-feed", "", []string{"Authorization", "Bearer " + pro + " " + pro}},
		{"DELETE", "/api/public-feed?k=" + pro, "", nil},
		{"GET", "/nowhere/" + pro + "/" + long[:5000], "", nil},
		{"OPTIONS", "/api/public-feed", "", []string{"Origin", "http://localhost:5173", "Access-Control-Request-Method", "GET"}}, // a browser's: not judged
	} {
		h.do(r.method, r.target, r.body, r.header...)
	}
	v := h.j.Snapshot(true)
	h.noKeys(v)
	if _, err := json.Marshal(v); err != nil {
		t.Fatal(err)
	}
	for _, c := range v.Clients {
		for _, f := range c.Findings {
			if len(f.Request.Query) > excerptLen+8 || len(f.Request.Path) > excerptLen+8 {
				t.Errorf("a finding quotes a long request: %d, %d bytes", len(f.Request.Path), len(f.Request.Query))
			}
		}
	}
	if v.Requests != 9 || v.Passed {
		t.Errorf("%d requests judged, passed %v", v.Requests, v.Passed)
	}
}

// Without a journal the requests a finding names still have ids.
func TestIDsWithoutAJournal(t *testing.T) {
	s, err := simulator.New(simulator.Config{Seed: 1, Clients: Judging(Config{}), JournalSize: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	h := &harness{t: t, s: s, j: Of(s), keys: s.Seeded()}
	h.videos(h.keys.Pro, "text/plain", `{"videoIds":["a"]}`)
	h.videos(h.keys.Pro, "text/plain", `{"videoIds":["a"]}`)
	c := h.client(true, h.keys.Pro)
	if len(c.Findings) != 1 || c.Findings[0].Request.ID != 1 || c.Findings[0].Last == nil || c.Findings[0].Last.ID != 2 {
		t.Errorf("findings:\n%s", findingsText(c))
	}
}
