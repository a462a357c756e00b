package clients

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tcmkit/tcmkit/schemas/catalogue"
	"github.com/tcmkit/tcmkit/simulator"
)

// Each scenario: a client that does what a good client must is passed, one
// that does not is failed, and the behaviour says what it did.

func scenarioOf(t *testing.T, c Client, want string) {
	t.Helper()
	if c.Scenario == nil || c.Scenario.Result != want {
		t.Fatalf("scenario result %+v, want %s", c.Scenario, want)
	}
}

// walkTo reads the first page and follows nextCursor n times; it returns
// the cursor of the last page.
func walkTo(h *harness, key string, limit string, n int) string {
	h.t.Helper()
	cursor := h.feed(key, limit).next()
	for range n {
		cursor = h.feed(key, limit+"&cursor="+cursor).next()
	}
	return cursor
}

func TestScenarioKeyRegenerated(t *testing.T) {
	for _, tc := range []struct {
		name  string
		after int // requests with the revoked key after its first 401
		want  string
	}{{"stops", 1, Passed}, {"hammers", 5, Failed}} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, Config{Scenario: "key-regenerated-mid-walk"})
			pro := h.keys.Pro
			cursor := walkTo(h, pro, "limit=5", 1) // the walk begins: the key is regenerated
			if a := h.feed(pro, "limit=5&cursor="+cursor); a.status != http.StatusUnauthorized {
				t.Fatalf("after the regeneration: %d", a.status)
			}
			for range tc.after {
				h.feed(pro, "limit=5&cursor="+cursor)
			}
			c := h.client(true, pro)
			scenarioOf(t, c, tc.want)
			expectFailed(t, c) // the walk was cut by the server, not abandoned
			if !strings.Contains(c.Scenario.Behaviour, "got 401 revoked_api_key") {
				t.Errorf("behaviour: %s", c.Scenario.Behaviour)
			}
			v := h.j.Snapshot(true)
			if v.Scenario.State != "acted" || !strings.Contains(v.Scenario.Acted, "regenerated the key of acc_1") || v.Scenario.Key == "" {
				t.Errorf("run: %+v", v.Scenario)
			}
		})
	}
}

func TestScenario429Storm(t *testing.T) {
	for _, tc := range []struct {
		name string
		wait time.Duration
		want string
		fail []catalogue.ID
	}{{"waits", 2 * time.Second, Passed, nil}, {"hammers", 0, Failed, []catalogue.ID{catalogue.ClientRetryAfter}}} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, Config{Scenario: "429-storm"})
			pro := h.keys.Pro
			for range 10 {
				a := h.feed(pro, "limit=1")
				if a.status == http.StatusOK {
					break
				}
				if a.header.Get("Retry-After") != "2" {
					t.Fatalf("storm answer: %d %v", a.status, a.header)
				}
				h.advance(tc.wait)
			}
			c := h.client(true, pro)
			scenarioOf(t, c, tc.want)
			expectFailed(t, c, tc.fail...)
			if !strings.Contains(c.Scenario.Behaviour, "met 5 injected 429s") {
				t.Errorf("behaviour: %s", c.Scenario.Behaviour)
			}
		})
	}
}

func TestScenarioVideos5xx(t *testing.T) {
	for _, tc := range []struct {
		name  string
		waits []time.Duration
		want  string
		says  string
	}{
		{"backs off", []time.Duration{time.Second, 2 * time.Second, 4 * time.Second}, Passed, "retried after 1 s, 2 s, 4 s; got its videos"},
		{"at once", []time.Duration{0, 0, 0}, Failed, "(3 at once: no pause)"},
		{"shrinking", []time.Duration{4 * time.Second, time.Second, time.Second}, Failed, "a pause shrank"},
		{"gives up", nil, Passed, "then stopped asking"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, Config{Scenario: "videos-5xx"})
			pro := h.keys.Pro
			h.videos(pro, "application/json", `{"videoIds":["a"]}`)
			for _, w := range tc.waits {
				h.advance(w)
				h.videos(pro, "application/json", `{"videoIds":["a"]}`)
			}
			c := h.client(true, pro)
			scenarioOf(t, c, tc.want)
			if !strings.Contains(c.Scenario.Behaviour, tc.says) {
				t.Errorf("behaviour: %s", c.Scenario.Behaviour)
			}
		})
	}
}

func TestScenarioSlowAnswers(t *testing.T) {
	t.Run("waits", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, Config{Scenario: "slow-answers"})
		h.feed(h.keys.Pro, "limit=1")
		h.feed(h.keys.Pro, "limit=1")
		c := h.client(true, h.keys.Pro)
		scenarioOf(t, c, Passed)
		if c.Scenario.Behaviour != "met 2 answers slowed by 1s; waited for each; sent nothing else meanwhile" {
			t.Errorf("behaviour: %s", c.Scenario.Behaviour)
		}
	})
	t.Run("gives up and piles up", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, Config{Scenario: "slow-answers"})
		pro := h.keys.Pro
		// A client that gives up after 100 ms...
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		r := httptest.NewRequest(http.MethodGet, "/api/public-feed?limit=1", nil).WithContext(ctx)
		r.Header.Set("Authorization", "Bearer "+pro)
		h.s.Handler().ServeHTTP(httptest.NewRecorder(), r)
		// ...and one that sends another request (#3, ids follow arrival)
		// while a slow one (#2) is pending.
		var wg sync.WaitGroup
		started := make(chan struct{})
		wg.Go(func() {
			close(started)
			h.feed(pro, "limit=1") // slowed by 1 s
		})
		<-started
		time.Sleep(100 * time.Millisecond) // only to send the next request inside that second; nothing is timed
		h.health("application/json", "{}", bearer(pro)...)
		wg.Wait()
		c := h.client(true, pro)
		scenarioOf(t, c, Failed)
		if !strings.Contains(c.Scenario.Behaviour, "gave up waiting on #1") || !strings.Contains(c.Scenario.Behaviour, "sent 1 other request while one was pending (#3)") {
			t.Errorf("behaviour: %s", c.Scenario.Behaviour)
		}
	})
}

func TestScenarioNewEvents(t *testing.T) {
	for _, tc := range []struct {
		name         string
		finish, look bool
		want         string
		fail         []catalogue.ID
	}{
		{"finishes and looks again", true, true, Passed, nil},
		{"finishes, never looks again", true, false, Failed, nil},
		{"leaves its walk", false, true, Failed, []catalogue.ID{catalogue.ClientWalkEnd}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, Config{Scenario: "new-events-mid-walk"})
			pro := h.keys.Pro
			cursor := walkTo(h, pro, "limit=200", 1) // the walk begins: new events arrive
			if v := h.j.Snapshot(false); v.Scenario.State != "acted" || !strings.Contains(v.Scenario.Acted, "new events") {
				t.Fatalf("run %+v", v.Scenario)
			}
			for tc.finish && cursor != "" {
				cursor = h.feed(pro, "limit=200&cursor="+cursor).next()
			}
			if tc.look {
				h.feed(pro, "limit=200")
			}
			c := h.client(true, pro)
			scenarioOf(t, c, tc.want)
			expectFailed(t, c, tc.fail...)
		})
	}
}

func TestScenarioMalformedBody(t *testing.T) {
	for _, tc := range []struct {
		name  string
		again bool
		want  string
	}{{"asks again", true, Passed}, {"skips the page", false, Failed}} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, Config{Scenario: "malformed-body"})
			pro := h.keys.Pro
			cursor := walkTo(h, pro, "limit=5", 1)
			cut := h.feed(pro, "limit=5&cursor="+cursor)
			if _, ok := nextCursor(cut.body); ok || cut.status != http.StatusOK {
				t.Fatalf("the cut answer: %d %s", cut.status, cut.body)
			}
			if tc.again {
				h.feed(pro, "limit=5&cursor="+cursor)
			}
			h.walk(pro, 200)
			c := h.client(true, pro)
			scenarioOf(t, c, tc.want)
			expectFailed(t, c)
		})
	}
}

// The scenario of the control API: armed in place of another, not reached
// by a client it never met, acting again after a reset, refused by name.
func TestScenarioRuns(t *testing.T) {
	h := newHarness(t, Config{})
	if _, err := h.j.StartScenario("nope"); !errors.Is(err, simulator.ErrNoScenario) {
		t.Fatalf("an unknown scenario: %v", err)
	}
	if _, err := simulator.New(simulator.Config{Clients: Judging(Config{Scenario: "nope"})}); !errors.Is(err, simulator.ErrNoScenario) {
		t.Fatalf("an unknown scenario at start: %v", err)
	}
	if _, err := h.j.StartScenario("videos-5xx"); err != nil {
		t.Fatal(err)
	}
	h.feed(h.keys.Pro, "limit=1")
	scenarioOf(t, h.client(true, h.keys.Pro), NotReached)
	if err := h.s.Reset(); err != nil {
		t.Fatal(err)
	}
	if v := h.j.Snapshot(true); v.Scenario == nil || v.Scenario.State != "acted" || len(v.Scenario.Faults) != 1 {
		t.Fatalf("after a reset: %+v", v.Scenario)
	}
	if a := h.videos(h.keys.Pro, "application/json", `{"videoIds":["a"]}`); a.status != http.StatusInternalServerError {
		t.Fatalf("the scenario's fault after a reset: %d", a.status)
	}
	h.j.StopScenario()
	if v := h.j.Snapshot(true); v.Scenario != nil || v.Clients[0].Scenario != nil {
		t.Errorf("stopped: %+v", v.Scenario)
	}
}
