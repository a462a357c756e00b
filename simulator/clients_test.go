package simulator_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tcmkit/tcmkit/simulator"
	"github.com/tcmkit/tcmkit/simulator/clients"
)

// The routes of a client judge answer as their document says, with the
// real judge of package simulator/clients; the verdicts survive clearing
// the journal, and start again on DELETE /_control/clients and a reset.
func TestClientRoutesMatchTheirDocument(t *testing.T) {
	s, err := simulator.New(simulator.Config{Seed: 1, Clients: clients.Judging(clients.Config{})})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	j := clients.Of(s)
	do := func(method, target, body string, header ...string) *httptest.ResponseRecorder {
		var r *http.Request
		if body != "" {
			r = httptest.NewRequest(method, "http://127.0.0.1:8080"+target, strings.NewReader(body))
		} else {
			r = httptest.NewRequest(method, "http://127.0.0.1:8080"+target, nil)
		}
		for i := 0; i+1 < len(header); i += 2 {
			r.Header.Set(header[i], header[i+1])
		}
		w := httptest.NewRecorder()
		s.Handler().ServeHTTP(w, r)
		return w
	}
	pro := s.Seeded().Pro
	// A client with findings and a walk, so every part of a verdict shows.
	do("GET", "/api/public-feed?limit=2&cursor=made-up&key="+pro, "", "Authorization", "Bearer "+pro)
	first := do("GET", "/api/public-feed?limit=2", "", "Authorization", "Bearer "+pro)
	next := first.Body.String()
	next = next[strings.LastIndex(next, `"nextCursor":"`)+len(`"nextCursor":"`):]
	next = next[:strings.IndexByte(next, '"')]
	do("GET", "/api/public-feed?limit=2&cursor="+next, "", "Authorization", "Bearer "+pro)
	do("POST", "/api/public/videos", `{"videoIds":[]}`, "Authorization", "Bearer "+pro, "Content-Type", "text/plain")
	do("POST", "/api/public/health", "")

	for _, tc := range []struct {
		route, method, target, body string
		want                        int
	}{
		{"POST /scenarios", "POST", "/_control/scenarios", `{"name":"malformed-body"}`, 201},
		{"POST /scenarios", "POST", "/_control/scenarios", `{"name":"nope"}`, 404},
		{"GET /scenarios", "GET", "/_control/scenarios", "", 200},
		{"GET /clients", "GET", "/_control/clients", "", 200},
		{"GET /clients", "GET", "/_control/clients?final=true", "", 200},
		{"GET /clients", "GET", "/_control/clients?final=maybe", "", 400},
		{"DELETE /scenarios", "DELETE", "/_control/scenarios", "", 200},
	} {
		w := do(tc.method, tc.target, tc.body, "Content-Type", "application/json")
		if w.Code != tc.want {
			t.Fatalf("%s %s: %d, want %d: %s", tc.method, tc.target, w.Code, tc.want, w.Body)
		}
		simulator.CheckControlAnswer(t, tc.route, w.Code, w.Header(), w.Body.Bytes())
		if strings.Contains(w.Body.String(), pro[4:12]) {
			t.Fatalf("%s %s shows a key: %s", tc.method, tc.target, w.Body)
		}
	}
	v := j.Snapshot(true)
	if len(v.Clients) != 2 || v.Passed || len(v.Clients[0].Findings) < 4 {
		t.Fatalf("verdicts: %+v", v)
	}
	do("DELETE", "/_control/requests", "")
	if v := j.Snapshot(true); len(v.Clients) != 2 || v.Requests != 5 || v.Outcome != clients.Failed {
		t.Errorf("after the journal was cleared: %d clients, %d requests, %s", len(v.Clients), v.Requests, v.Outcome)
	}
	w := do("DELETE", "/_control/clients", "")
	simulator.CheckControlAnswer(t, "DELETE /clients", w.Code, w.Header(), w.Body.Bytes())
	if v := j.Snapshot(true); w.Code != 200 || len(v.Clients) != 0 || v.Requests != 0 || v.Outcome != clients.Errored {
		t.Errorf("after DELETE /_control/clients: %d, %d clients, %d requests, %s", w.Code, len(v.Clients), v.Requests, v.Outcome)
	}
	do("GET", "/api/public-feed?limit=1", "", "Authorization", "Bearer "+pro)
	if err := s.Reset(); err != nil {
		t.Fatal(err)
	}
	if v := j.Snapshot(true); len(v.Clients) != 0 {
		t.Errorf("after a reset: %d clients", len(v.Clients))
	}
}

// Config.Clients is called once, from New, with the server New returns:
// the judge has its server from the start, Server.Clients is that judge,
// and a judge that cannot be made is a setting New refuses.
func TestTheJudgeIsMadeWithItsServer(t *testing.T) {
	var made []*simulator.Server
	s, err := simulator.New(simulator.Config{Seed: 1, Clients: func(s *simulator.Server) (simulator.ClientJudge, error) {
		made = append(made, s)
		return clients.New(s, clients.Config{Scenario: "429-storm"})
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if len(made) != 1 || made[0] != s {
		t.Fatalf("Config.Clients was called %d times, with the server New returned: %v", len(made), len(made) == 1 && made[0] == s)
	}
	j := clients.Of(s)
	if j == nil || s.Clients() != simulator.ClientJudge(j) {
		t.Fatalf("Server.Clients is not the judge Config.Clients made: %v", s.Clients())
	}
	// The scenario armed from the start acted through its server at once.
	if st := j.Snapshot(false).Scenario; st == nil || st.State != "acted" {
		t.Errorf("the 429-storm armed from the start: %+v", st)
	}
	if none, err := simulator.New(simulator.Config{Seed: 1}); err != nil || none.Clients() != nil || clients.Of(none) != nil {
		t.Errorf("without Config.Clients: judge %v, err %v", none.Clients(), err)
	}
	_, err = simulator.New(simulator.Config{Clients: clients.Judging(clients.Config{Scenario: "429-strom"})})
	if !errors.Is(err, simulator.ErrNoScenario) || !strings.Contains(err.Error(), "did you mean 429-storm") {
		t.Errorf("an unknown scenario: %v", err)
	}
}
