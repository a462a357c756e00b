package simulator

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// serveHost sends a control request with a given Host and extra headers.
func (s *Server) serveHost(t *testing.T, host string, q req) response {
	t.Helper()
	r := httptest.NewRequest(q.method, "http://"+host+q.target, strings.NewReader(q.body))
	for k, vs := range q.header {
		r.Header[k] = vs
	}
	if q.key != "" {
		r.Header.Set("Authorization", "Bearer "+q.key)
	}
	w := httptest.NewRecorder()
	s.Handler().ServeHTTP(w, r)
	return response{status: w.Code, header: w.Header(), body: w.Body.Bytes()}
}

func TestControlRefusesForeignHostsAndOrigins(t *testing.T) {
	s := newServer(t, Config{Seed: 1, ControlHosts: []string{"sim.internal"}, ControlToken: testToken, CORSOrigins: []string{"http://localhost:5173"}})
	info := ctl("GET", "info", "")
	for _, tc := range []struct {
		name   string
		host   string
		header http.Header
		want   int
		code   string
	}{
		{"loopback IP", "127.0.0.1:8080", nil, 200, ""},
		{"localhost", "localhost:8080", nil, 200, ""},
		{"IPv6 loopback", "[::1]:8080", nil, 200, ""},
		{"configured name", "SIM.internal:9000", nil, 200, ""},
		{"DNS rebinding: a name of another site", "attacker.example:8080", nil, 403, CodeForbiddenHost},
		{"another address", "10.1.2.3:8080", nil, 403, CodeForbiddenHost},
		{"a page of another site", "127.0.0.1:8080", http.Header{"Origin": {"http://evil.example"}}, 403, CodeForbiddenOrigin},
		{"the null origin", "127.0.0.1:8080", http.Header{"Origin": {"null"}}, 403, CodeForbiddenOrigin},
		{"a listed origin", "127.0.0.1:8080", http.Header{"Origin": {"http://localhost:5173"}}, 200, ""},
		{"its own origin", "127.0.0.1:8080", http.Header{"Origin": {"http://127.0.0.1:8080"}}, 200, ""},
		{"marked cross-site by the browser", "127.0.0.1:8080", http.Header{"Sec-Fetch-Site": {"cross-site"}}, 403, CodeForbiddenOrigin},
		{"marked same-origin", "127.0.0.1:8080", http.Header{"Sec-Fetch-Site": {"same-origin"}}, 200, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := info
			q.header = tc.header.Clone()
			if q.header == nil {
				q.header = http.Header{}
			}
			q.header.Set(controlTokenHeader, testToken) // a Host beyond loopback needs a token
			r := s.serveHost(t, tc.host, q)
			if r.status != tc.want {
				t.Fatalf("status %d, want %d: %s", r.status, tc.want, r.body)
			}
			check(t, r, "")
			if tc.code != "" {
				if e := r.ErrorBody(t); e.Error != tc.code {
					t.Errorf("error %q, want %q", e.Error, tc.code)
				}
				if bytes.Contains(r.body, []byte(s.Seeded().Pro)) {
					t.Error("a refused request got a key")
				}
			}
		})
	}
	// The API itself answers any Host: it needs a key.
	if r := s.serveHost(t, "attacker.example", feedReq(s.Seeded().Pro, "limit=1")); r.status != 200 {
		t.Errorf("API on a foreign Host: %d", r.status)
	}
}

// A browser sends a text/plain or form POST to another site without a
// preflight; the control API takes JSON bodies only.
func TestControlTakesJSONBodiesOnly(t *testing.T) {
	s := newServer(t, Config{Seed: 1})
	for _, ct := range []string{"text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", ""} {
		r := s.serve(t, req{method: "POST", target: ControlPrefix + "accounts", body: `{"plan":"pro"}`, header: http.Header{"Content-Type": {ct}}})
		if r.status != http.StatusUnsupportedMediaType {
			t.Errorf("Content-Type %q: %d, want 415", ct, r.status)
		}
		check(t, r, "")
	}
	if n := len(s.st.Load().world.Accounts()); n != 3 {
		t.Errorf("%d accounts, want the 3 seeded: a refused request made one", n)
	}
	// A POST without a body needs no Content-Type.
	decode[map[string]int64](t, s.serve(t, ctl("POST", "reset", "")), 200)
}

func TestControlIndexListsTheRoutes(t *testing.T) {
	s := newServer(t, Config{Seed: 1})
	idx := decode[struct {
		Routes  []controlRoute
		OpenAPI string
	}](t, s.serve(t, ctl("GET", "", "")), 200)
	if len(idx.Routes) != len(controlTable()) {
		t.Fatalf("%d routes listed, want %d", len(idx.Routes), len(controlTable()))
	}
	for _, rt := range idx.Routes {
		if rt.About == "" || !strings.HasPrefix(rt.Path, ControlPrefix) {
			t.Errorf("route %+v", rt)
		}
	}
	r := s.serve(t, ctl("GET", "openapi.yaml", ""))
	if r.status != 200 || !bytes.HasPrefix(r.body, []byte("openapi: 3.1")) {
		t.Errorf("openapi.yaml: %d %.40s", r.status, r.body)
	}
	// A path below the index that is no route is a 404, not the index.
	if r := s.serve(t, ctl("GET", "nope", "")); r.status != 404 {
		t.Errorf("GET /_control/nope: %d", r.status)
	}
}

func TestAccountsAreCapped(t *testing.T) {
	s := newServer(t, Config{Seed: 1, MaxAccounts: 4})
	decode[Account](t, s.serve(t, ctl("POST", "accounts", `{"plan":"pro"}`)), 201)
	r := s.serve(t, ctl("POST", "accounts", `{"plan":"pro"}`))
	if r.status != http.StatusConflict || r.ErrorBody(t).Error != CodeLimitReached {
		t.Fatalf("fifth account: %d %s", r.status, r.body)
	}
}

func TestImportIsBoundedAndStreamed(t *testing.T) {
	s := newServer(t, Config{Seed: 1, MaxImportBytes: 1 << 20})
	var export bytes.Buffer
	if err := s.Export(&export); err != nil {
		t.Fatal(err)
	}
	if export.Len() > 1<<20 {
		t.Skipf("the export is %d bytes, more than the test's limit", export.Len())
	}
	big := `{"format":"tcmkit-simulator/1","world":"` + strings.Repeat("x", 2<<20) + `"}`
	for _, tc := range []struct {
		name, body string
		want       int
	}{
		{"larger than the limit", big, http.StatusRequestEntityTooLarge},
		{"another format, refused before the rest is read", `{"format":"other/9","world":` + strings.Repeat("[", 1000), 400},
		{"format not first", `{"now":1,"format":"tcmkit-simulator/1"}`, 400},
		{"no world", `{"format":"tcmkit-simulator/1","now":1}`, 400},
		{"not an object", `[1]`, 400},
		{"the export itself", export.String(), 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := s.serve(t, ctl("PUT", "world", tc.body))
			if r.status != tc.want {
				t.Fatalf("status %d, want %d: %.300s", r.status, tc.want, r.body)
			}
			check(t, r, "")
		})
	}
	// Content-Length above the limit is refused before a byte is read.
	r := httptest.NewRequest("PUT", "http://127.0.0.1"+ControlPrefix+"world", &endless{})
	r.ContentLength = 2 << 20
	r.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	s.Handler().ServeHTTP(w, r)
	if w.Code != http.StatusRequestEntityTooLarge {
		t.Errorf("Content-Length over the limit: %d", w.Code)
	}
	// One import at a time.
	s.importing.Lock()
	if r := s.serve(t, ctl("PUT", "world", export.String())); r.status != http.StatusConflict {
		t.Errorf("a second import: %d, want 409", r.status)
	}
	s.importing.Unlock()
}

// endless fails the test's import if it is ever read.
type endless struct{}

func (endless) Read(p []byte) (int, error) { panic("the body was read") }

// A request never runs more than one step of polls, however far behind
// the clock the world is: the catching up is the advance's (or the
// poller's), in steps that each hold the world's lock briefly.
func TestRequestsDoNotCatchUpLongGaps(t *testing.T) {
	s := newServer(t, Config{Seed: 1})
	st := s.st.Load()
	before := st.world.Now()
	s.clock.Advance(30 * 24 * time.Hour) // the clock jumps; the world has not moved
	if r := s.serve(t, feedReq(s.Seeded().Pro, "limit=1")); r.status != 200 {
		t.Fatalf("feed: %d", r.status)
	}
	if !st.world.Now().Equal(before) {
		t.Fatalf("a request caught the world up by %s", st.world.Now().Sub(before))
	}
	s.catchUp(s.clock.Now())
	if !st.world.Now().Equal(s.clock.Now()) {
		t.Fatalf("catchUp stopped at %s, clock at %s", st.world.Now(), s.clock.Now())
	}
	// A gap of one step is caught up by the request itself.
	s.clock.Advance(advanceStep)
	s.serve(t, feedReq(s.Seeded().Pro, "limit=1"))
	if !st.world.Now().Equal(s.clock.Now()) {
		t.Errorf("a request did not catch up one step")
	}
}

func TestTheWorldStopsGrowingWhenFull(t *testing.T) {
	s := newServer(t, Config{Seed: 1})
	limit := s.st.Load().world.Stats().Events + 50
	s = newServer(t, Config{Seed: 1, MaxEvents: limit})
	adv := decode[struct {
		Events int
		Full   bool
	}](t, s.serve(t, ctl("POST", "clock/advance", `{"duration":"2160h"}`)), 200)
	if !adv.Full {
		t.Fatalf("90 days made %d events and the world is not full", adv.Events)
	}
	events := s.st.Load().world.Stats().Events
	if events < limit || events > limit+500 {
		t.Errorf("%d events, want the limit %d and at most one step more", events, limit)
	}
	if r := s.serve(t, ctl("POST", "poll", "")); r.status != http.StatusConflict || r.ErrorBody(t).Error != CodeWorldFull {
		t.Errorf("poll of a full world: %d %s", r.status, r.body)
	}
	decode[map[string]any](t, s.serve(t, ctl("POST", "clock/advance", `{"duration":"24h"}`)), 200)
	if n := s.st.Load().world.Stats().Events; n != events {
		t.Errorf("a full world grew from %d to %d events", events, n)
	}
	if r := s.serve(t, feedReq(s.Seeded().Pro, "")); r.status != 200 {
		t.Errorf("a full world still serves: %d", r.status)
	}
	decode[map[string]any](t, s.serve(t, ctl("POST", "reset", "")), 200)
	if c := decode[map[string]any](t, s.serve(t, ctl("GET", "clock", "")), 200); c["full"] != false {
		t.Errorf("after a reset: %v", c)
	}
}

func TestServerAnswersOptionsStarItself(t *testing.T) {
	s := newServer(t, Config{Seed: 1})
	srv := httptest.NewUnstartedServer(nil)
	srv.Config = s.HTTPServer()
	srv.Start()
	defer srv.Close()
	r := rawRequest(t, srv.Listener.Addr().String(), "OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n")
	if !strings.HasPrefix(r, "HTTP/1.1 404") || !strings.Contains(r, "application/json") || !strings.Contains(r, `"error":"not_found"`) {
		t.Errorf("OPTIONS *: %q", r)
	}
}
