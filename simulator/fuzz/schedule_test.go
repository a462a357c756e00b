package fuzz_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tcmkit/tcmkit/schemas/catalogue"
	"github.com/tcmkit/tcmkit/simulator"
	"github.com/tcmkit/tcmkit/simulator/clients"
	"github.com/tcmkit/tcmkit/simulator/fuzz"
)

// harness is a simulator serving a plan on a real listener (cut bodies and
// dropped connections need one).
type harness struct {
	t     *testing.T
	srv   *simulator.Server
	url   string
	sched *fuzz.Schedule
	key   string
	judge *clients.Judge // nil unless startJudged
}

func start(t *testing.T, w fuzz.World, steps ...fuzz.Step) *harness {
	t.Helper()
	return startWith(t, simulator.Config{}, w, steps...)
}

func startWith(t *testing.T, cfg simulator.Config, w fuzz.World, steps ...fuzz.Step) *harness {
	t.Helper()
	if w.Channels == 0 {
		w = fuzz.World{Seed: 1, Channels: 4, History: 3 * 24 * time.Hour, FeedCap: -1}
	}
	sched := fuzz.Plan{World: w, Steps: steps}.Configure(&cfg)
	srv, err := simulator.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(func() { ts.Close(); _ = srv.Close() })
	return &harness{t: t, srv: srv, url: ts.URL, sched: sched, key: srv.Seeded().Pro}
}

type page struct {
	Events []struct {
		ID        string `json:"id"`
		Type      string `json:"type"`
		CreatedAt int64  `json:"createdAt"`
	} `json:"events"`
	NextCursor *string `json:"nextCursor"`
}

// fresh is a client on a new connection each time: Go's transport asks
// again by itself when a reused connection closes without an answer.
var fresh = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}

// get asks for a feed page; err is a transport error (a cut, a drop).
func (h *harness) get(limit int, cursor string) (*http.Response, []byte, error) {
	q := url.Values{"limit": {strconv.Itoa(limit)}}
	if cursor != "" {
		q.Set("cursor", cursor)
	}
	req, _ := http.NewRequest(http.MethodGet, h.url+"/api/public-feed?"+q.Encode(), nil)
	req.Header.Set("Authorization", "Bearer "+h.key)
	resp, err := fresh.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp, body, err
}

func (h *harness) page(limit int, cursor string) page {
	h.t.Helper()
	resp, body, err := h.get(limit, cursor)
	if err != nil || resp.StatusCode != http.StatusOK {
		h.t.Fatalf("feed: %v %v %s", err, resp, body)
	}
	var p page
	if err := json.Unmarshal(body, &p); err != nil {
		h.t.Fatalf("feed: %v: %.200s", err, body)
	}
	return p
}

func (h *harness) served(want string) {
	h.t.Helper()
	r := h.sched.Snapshot()
	for _, l := range r.Served {
		if strings.Contains(l, want) {
			return
		}
	}
	h.t.Errorf("nothing served says %q:\n%s", want, r)
}

func TestPlansAreDeterministic(t *testing.T) {
	for n := int64(1); n <= 50; n++ {
		a, b := fuzz.FromSeed(n, fuzz.Options{Break: true}), fuzz.FromSeed(n, fuzz.Options{Break: true})
		if !reflect.DeepEqual(a, b) || a.String() != b.String() {
			t.Fatalf("seed %d: two plans", n)
		}
		if c := fuzz.FromBytes(a.Input, a.Opts); !reflect.DeepEqual(c.Steps, a.Steps) || c.World != a.World {
			t.Fatalf("seed %d: its input decodes to another plan", n)
		}
	}
	if reflect.DeepEqual(fuzz.FromSeed(1, fuzz.Options{}).Steps, fuzz.FromSeed(2, fuzz.Options{}).Steps) {
		t.Error("seeds 1 and 2 have the same steps")
	}
	// Without Break no step breaks the contract.
	for n := int64(1); n <= 200; n++ {
		for _, s := range fuzz.FromSeed(n, fuzz.Options{}).Steps {
			if _, breaks := fuzz.Breaks[s.Kind]; breaks {
				t.Fatalf("seed %d serves %s without Break", n, s.Kind)
			}
		}
	}
	if len(fuzz.FromBytes(nil, fuzz.Options{}).Steps) != 0 {
		t.Error("an empty input has steps")
	}
}

// A 429's Retry-After is the truth: the key is refused until it passed,
// and served after.
func TestThrottleIsTruthful(t *testing.T) {
	h := start(t, fuzz.World{}, fuzz.Step{At: 1, Kind: fuzz.Throttle, Op: simulator.OpFeed, Param: 30})
	resp, _, _ := h.get(5, "")
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "30" {
		t.Fatalf("%d Retry-After %q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	h.srv.Advance(20 * time.Second)
	resp, _, _ = h.get(5, "")
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "10" {
		t.Fatalf("10 s early: %d Retry-After %q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	h.srv.Advance(10 * time.Second)
	h.page(5, "")
	h.served("request 1 (GET /api/public-feed?limit=5, page 1): 429 with Retry-After: 30")
}

// The outage ends, and the one judge finds the client that asks again at
// once a tight loop (CLIENT-BACKOFF); the schedule itself judges nothing.
func TestOutageEndsAndTightLoopIsJudged(t *testing.T) {
	h := startJudged(t, fuzz.Step{At: 1, Kind: fuzz.ServerErr, Op: simulator.OpFeed, Param: 503})
	for i := range 1 + clients.TightLoop {
		if resp, _, _ := h.get(5, ""); resp.StatusCode != 503 {
			t.Fatalf("attempt %d at once: %d", i, resp.StatusCode)
		}
	}
	h.srv.Advance(5 * time.Second)
	h.page(5, "")
	if f := h.findings(catalogue.ClientBackoff); len(f) != 1 || !strings.Contains(f[0].Evidence, "tight loop: after the 503 of request #1") {
		t.Fatalf("findings %+v", f)
	}
}

func TestBackingOffIsNoTightLoop(t *testing.T) {
	h := startJudged(t, fuzz.Step{At: 1, Kind: fuzz.ServerErr, Op: simulator.OpFeed, Param: 500})
	for wait := time.Second; ; wait *= 2 {
		if resp, _, _ := h.get(5, ""); resp.StatusCode == 200 {
			break
		}
		h.srv.Advance(wait)
	}
	if f := h.findings(catalogue.ClientBackoff); len(f) != 0 {
		t.Fatalf("findings %+v", f)
	}
}

// startJudged is start with the client judge on.
func startJudged(t *testing.T, steps ...fuzz.Step) *harness {
	t.Helper()
	h := startWith(t, simulator.Config{Clients: clients.Judging(clients.Config{})}, fuzz.World{}, steps...)
	h.judge = clients.Of(h.srv)
	return h
}

// findings are the judge's findings of one requirement.
func (h *harness) findings(id catalogue.ID) []clients.Finding {
	h.t.Helper()
	var out []clients.Finding
	for _, c := range h.judge.Snapshot(true).Clients {
		for _, f := range c.Findings {
			if f.Requirement == id {
				out = append(out, f)
			}
		}
	}
	return out
}

func TestCutAndDrop(t *testing.T) {
	h := start(t, fuzz.World{}, fuzz.Step{At: 1, Kind: fuzz.Cut, Op: simulator.OpFeed, Param: 50}, fuzz.Step{At: 2, Kind: fuzz.Drop, Op: simulator.OpFeed})
	if _, _, err := h.get(5, ""); err == nil {
		t.Fatal("a cut body read whole")
	}
	h.page(5, "") // trouble comes after a success only
	if _, _, err := h.get(5, ""); err == nil {
		t.Fatalf("a dropped connection answered:\n%s", h.sched.Snapshot())
	}
	h.page(5, "")
	h.served("cut after 50%")
	h.served("request 3 (GET /api/public-feed?limit=5, page 1): the connection was closed without an answer")
	if ids := h.sched.EventIDs(); len(ids) != 5 {
		t.Errorf("%d events served whole, want the 5 of the last page", len(ids))
	}
}

// The key regenerated and new events at the head, both during a walk.
func TestDuringAWalk(t *testing.T) {
	h := start(t, fuzz.World{}, fuzz.Step{At: 1, Kind: fuzz.HeadEvents, Param: 360}, fuzz.Step{At: 1, Kind: fuzz.Regenerate})
	p1 := h.page(3, "")
	p2 := h.page(3, *p1.NextCursor) // the clock moves before it
	if p2.Events[0].ID == p1.Events[0].ID {
		t.Fatal("page 2 repeats page 1")
	}
	if resp, _, _ := h.get(3, *p2.NextCursor); resp.StatusCode != 401 {
		t.Fatalf("after the key was regenerated: %d", resp.StatusCode)
	}
	h.served("page 2 of walk 1): before it the clock moved 6h0m0s")
	h.served("page 3 of walk 1): before it the key of acc_1 was regenerated")
	if !h.sched.MayFail() {
		t.Error("a revoked key: a client may fail")
	}
}

func TestBrokenAnswers(t *testing.T) {
	t.Run("page longer than asked", func(t *testing.T) {
		h := start(t, fuzz.World{}, fuzz.Step{At: 1, Kind: fuzz.LongPage})
		if p := h.page(5, ""); len(p.Events) != 6 {
			t.Fatalf("%d events", len(p.Events))
		}
		h.served("page 1 holds 6 events, 5 asked (breaks FEED-LIMIT)")
	})
	t.Run("event repeated", func(t *testing.T) {
		h := start(t, fuzz.World{}, fuzz.Step{At: 1, Kind: fuzz.Repeated})
		p1 := h.page(5, "")
		p2 := h.page(5, *p1.NextCursor)
		if p2.Events[0].ID != p1.Events[4].ID || len(p2.Events) != 5 {
			t.Fatalf("page 2 starts with %s", p2.Events[0].ID)
		}
		h.served("page 2 repeats event " + p1.Events[4].ID + ", the last event of page 1 (breaks FEED-CURSOR-WALK)")
		if p3 := h.page(5, *p2.NextCursor); p3.Events[0].ID == p2.Events[4].ID {
			t.Fatal("page 3 repeats too")
		}
	})
	t.Run("cursor cycle", func(t *testing.T) {
		h := startJudged(t, fuzz.Step{At: 1, Kind: fuzz.Cycle})
		p1 := h.page(5, "")
		c := *p1.NextCursor
		for lap := range clients.CycleLaps + 1 {
			if p := h.page(5, c); *p.NextCursor != c {
				t.Fatalf("lap %d: the cycle ended", lap)
			}
		}
		// The one judge finds it (the schedule only says it served a
		// cycle); the walk the cycle broke is the server's doing, not
		// abandoned.
		if f := h.findings(catalogue.ClientCursorCycle); len(f) != 1 || !strings.Contains(f[0].Evidence, "cursor cycle followed") {
			t.Fatalf("findings %+v", f)
		}
		if f := h.findings(catalogue.ClientWalkEnd); len(f) != 0 {
			t.Fatalf("a walk the server broke counted as abandoned: %+v", f)
		}
	})
	t.Run("unknown type, wrong content type, out of order", func(t *testing.T) {
		h := start(t, fuzz.World{}, fuzz.Step{At: 1, Kind: fuzz.UnknownType, Param: 2}, fuzz.Step{At: 2, Kind: fuzz.WrongType}, fuzz.Step{At: 3, Kind: fuzz.OutOfOrder})
		if p := h.page(5, ""); p.Events[2].Type != fuzz.UnknownEventType {
			t.Fatalf("type %s", p.Events[2].Type)
		}
		if resp, _, _ := h.get(5, ""); !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
			t.Fatalf("Content-Type %s", resp.Header.Get("Content-Type"))
		}
		p := h.page(5, "")
		ordered := true
		for i := 1; i < len(p.Events); i++ {
			ordered = ordered && p.Events[i-1].CreatedAt >= p.Events[i].CreatedAt
		}
		if ordered {
			t.Fatal("the page is newest first")
		}
		if !h.sched.MayFail() {
			t.Error("a broken answer: a client may fail")
		}
	})
	t.Run("truncated JSON, cursor on the last page", func(t *testing.T) {
		h := start(t, fuzz.World{Seed: 1, Channels: 4, History: 3 * 24 * time.Hour, FeedCap: 3}, fuzz.Step{At: 1, Kind: fuzz.Truncated, Param: 50}, fuzz.Step{At: 2, Kind: fuzz.CursorAtEnd})
		resp, body, err := h.get(5, "")
		if err != nil || resp.StatusCode != 200 || json.Valid(body) {
			t.Fatalf("%v %v %s", err, resp, body)
		}
		p := h.page(5, "")
		if len(p.Events) != 3 || p.NextCursor == nil {
			t.Fatalf("%d events, nextCursor %v", len(p.Events), p.NextCursor)
		}
		if end := h.page(5, *p.NextCursor); len(end.Events) != 0 || end.NextCursor != nil {
			t.Fatalf("after the end: %+v", end)
		}
		h.served("an empty last page")
	})
}

// Counts at their edges and ties show the same in every answer.
func TestWorldEdgesAreStable(t *testing.T) {
	w := fuzz.World{Seed: 3, Channels: 4, History: 3 * 24 * time.Hour, FeedCap: -1, Ties: time.Hour, EdgeCounts: true}
	h := start(t, w)
	_, a, _ := h.get(200, "")
	_, b, _ := h.get(200, "")
	if string(a) != string(b) {
		t.Fatal("two answers differ")
	}
	p := h.page(200, "")
	for _, e := range p.Events {
		if e.CreatedAt%time.Hour.Milliseconds() != 0 {
			t.Fatalf("createdAt %d not on the hour", e.CreatedAt)
		}
	}
	for _, edge := range []string{`"viewCount":0`, `"viewCount":null`, `"viewCount":9007199254740991`} {
		if !strings.Contains(string(a), edge) {
			t.Errorf("no %s", edge)
		}
	}
}

func TestControlRoute(t *testing.T) {
	h := start(t, fuzz.World{}, fuzz.Step{At: 1, Kind: fuzz.Throttle, Op: simulator.OpFeed, Param: 0})
	h.get(5, "")
	resp, err := http.Get(h.url + "/_control/fuzz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r fuzz.Report
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil || resp.StatusCode != 200 {
		t.Fatalf("%d %v", resp.StatusCode, err)
	}
	if r.Requests != 1 || len(r.Served) != 1 || !strings.Contains(r.Served[0], "Retry-After: 0") || r.EventIDs == nil {
		t.Fatalf("%+v", r)
	}
}
