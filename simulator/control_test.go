package simulator

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/tcmkit/tcmkit/schemas"
)

func ctl(method, path, body string) req {
	h := http.Header{}
	if body != "" {
		h.Set("Content-Type", "application/json")
	}
	return req{method: method, target: ControlPrefix + path, body: body, header: h}
}

func decode[T any](t *testing.T, r response, want int) T {
	t.Helper()
	if r.status != want {
		t.Fatalf("status %d, want %d: %s", r.status, want, r.body)
	}
	check(t, r, "")
	var v T
	if err := json.Unmarshal(r.body, &v); err != nil {
		t.Fatalf("decode %s: %v", r.body, err)
	}
	return v
}

func TestControlInfoAndClock(t *testing.T) {
	s := newServer(t, Config{Seed: 1})
	info := decode[Info](t, s.serve(t, ctl("GET", "info", "")), 200)
	k := s.Seeded()
	if info.URL != "http://127.0.0.1:8080" || info.ControlURL != "http://127.0.0.1:8080/_control" || info.ProKey != k.Pro || info.FreeKey != k.Free || info.RevokedKey != k.Revoked {
		t.Errorf("info %+v", info)
	}
	if info.Now != DefaultStart.UnixMilli() {
		t.Errorf("now %d, want the default start", info.Now)
	}
	c := decode[map[string]any](t, s.serve(t, ctl("GET", "clock", "")), 200)
	if c["mode"] != "manual" || c["speed"] != 0.0 {
		t.Errorf("clock %v", c)
	}
	adv := decode[struct{ Now int64 }](t, s.serve(t, ctl("POST", "clock/advance", `{"duration":"90s"}`)), 200)
	if adv.Now != DefaultStart.Add(90*time.Second).UnixMilli() {
		t.Errorf("advance: %v", adv)
	}
	for _, bad := range []string{`{"duration":"-1s"}`, `{"duration":"soon"}`, `{"duration":"9000h"}`, `{"duration":1}`, `{"dur":"1s"}`, `{`, ``} {
		r := s.serve(t, ctl("POST", "clock/advance", bad))
		if r.status != 400 {
			t.Errorf("advance %s: %d, want 400", bad, r.status)
		}
		check(t, r, "")
	}
	decode[map[string]int](t, s.serve(t, ctl("POST", "poll", "")), 200)
}

func TestControlAccounts(t *testing.T) {
	s := newServer(t, Config{Seed: 1})
	list := decode[[]Account](t, s.serve(t, ctl("GET", "accounts", "")), 200)
	if len(list) != 3 {
		t.Fatalf("%d seeded accounts, want 3", len(list))
	}
	for _, a := range list {
		if a.Key != "" || !strings.HasPrefix(a.KeyHint, DefaultKeyPrefix+"_…") || len(a.Channels) == 0 {
			t.Errorf("account %+v: want a redacted hint, no key, channels", a)
		}
	}
	created := decode[Account](t, s.serve(t, ctl("POST", "accounts", `{"plan":"free"}`)), 201)
	if created.Plan != "free" || !wellFormed(created.Key, DefaultKeyPrefix) {
		t.Fatalf("created %+v", created)
	}
	if r := s.serve(t, videosReq(created.Key, `{"videoIds":["a"]}`)); r.status != 403 {
		t.Fatalf("free account on videos: %d", r.status)
	}
	up := decode[Account](t, s.serve(t, ctl("PUT", "accounts/"+created.ID+"/plan", `{"plan":"pro"}`)), 200)
	if up.Plan != "pro" || up.KeyHint != hint(created.Key) {
		t.Fatalf("after plan change %+v", up)
	}
	if r := s.serve(t, videosReq(created.Key, `{"videoIds":["a"]}`)); r.status != 200 {
		t.Fatalf("after upgrade: %d", r.status)
	}
	regen := decode[map[string]string](t, s.serve(t, ctl("POST", "accounts/"+created.ID+"/key", "")), 200)
	if regen["key"] == created.Key || !wellFormed(regen["key"], DefaultKeyPrefix) {
		t.Fatalf("new key %s", hint(regen["key"]))
	}
	if r := s.serve(t, feedReq(created.Key, "")); r.status != 401 {
		t.Errorf("old key after regeneration: %d, want 401", r.status)
	}
	if r := s.serve(t, feedReq(regen["key"], "")); r.status != 200 {
		t.Errorf("new key: %d, want 200", r.status)
	}
	for _, tc := range []struct{ method, path, body string }{
		{"POST", "accounts", `{"plan":"gold"}`},
		{"POST", "accounts", `{}`},
		{"PUT", "accounts/nope/plan", `{"plan":"pro"}`},
		{"POST", "accounts/nope/key", ``},
		{"PUT", "accounts/%0d%0aX-Evil:%201/plan", `{"plan":"pro"}`},
	} {
		r := s.serve(t, ctl(tc.method, tc.path, tc.body))
		if r.status < 400 || r.status >= 500 {
			t.Errorf("%s %s: %d", tc.method, tc.path, r.status)
		}
		check(t, r, "")
		if r.header.Get("X-Evil") != "" {
			t.Errorf("%s: a header was injected", tc.path)
		}
	}
}

func TestControlTokenAndNoControl(t *testing.T) {
	s := newServer(t, Config{Seed: 1, ControlToken: testToken})
	if r := s.serve(t, ctl("GET", "info", "")); r.status != 401 {
		t.Errorf("without token: %d", r.status)
	}
	q := ctl("GET", "info", "")
	q.header.Set("X-Control-Token", "wrong")
	if r := s.serve(t, q); r.status != 401 {
		t.Errorf("wrong token: %d", r.status)
	}
	q.header.Set("X-Control-Token", testToken)
	if r := s.serve(t, q); r.status != 200 {
		t.Errorf("right token: %d", r.status)
	}
	off := newServer(t, Config{Seed: 1, NoControl: true})
	r := off.serve(t, ctl("GET", "info", ""))
	if r.status != 404 {
		t.Errorf("NoControl: %d, want 404", r.status)
	}
	check(t, r, "")
	if off.Info("http://x").ControlURL != "" {
		t.Error("NoControl still names a control URL")
	}
}

func TestControlResetAndExportImport(t *testing.T) {
	s := newServer(t, Config{Seed: 5, FeedLimit: -1})
	k := s.Seeded()
	first := s.serve(t, feedReq(k.Pro, ""))
	created := decode[Account](t, s.serve(t, ctl("POST", "accounts", `{"plan":"pro"}`)), 201)
	s.Advance(2 * time.Hour)
	after := s.serve(t, feedReq(k.Pro, ""))

	exp := s.serve(t, ctl("GET", "world", ""))
	if exp.status != 200 {
		t.Fatalf("export: %d %s", exp.status, exp.body)
	}
	for _, key := range []string{created.Key} {
		if bytes.Contains(exp.body, []byte(key)) {
			t.Error("the export holds a non-seeded key whole")
		}
	}

	decode[map[string]int64](t, s.serve(t, ctl("POST", "reset", "")), 200)
	if !s.Now().Equal(DefaultStart) {
		t.Errorf("after reset the clock is at %v", s.Now())
	}
	if s.Seeded() != k {
		t.Error("reset changed the seeded keys")
	}
	if r := s.serve(t, feedReq(k.Pro, "")); !bytes.Equal(r.body, first.body) {
		t.Error("after reset the first page differs from the start")
	}
	if r := s.serve(t, feedReq(created.Key, "")); r.status != 401 {
		t.Errorf("an account created before the reset: %d, want 401", r.status)
	}

	q := ctl("PUT", "world", string(exp.body))
	decode[Imported](t, s.serve(t, q), 200)
	if r := s.serve(t, feedReq(k.Pro, "")); !bytes.Equal(r.body, after.body) {
		t.Errorf("after import the page differs from the export's time")
	}
	if r := s.serve(t, feedReq(created.Key, "")); r.status != 200 {
		t.Errorf("an imported account's key: %d, want 200", r.status)
	}
	if r := s.serve(t, feedReq(k.Revoked, "")); r.status != 401 {
		t.Errorf("an imported revoked key: %d, want 401", r.status)
	}
	for _, bad := range []string{``, `{}`, `{"format":"other"}`, `not json`} {
		r := s.serve(t, ctl("PUT", "world", bad))
		if r.status != 400 {
			t.Errorf("import %q: %d, want 400", bad, r.status)
		}
		check(t, r, "")
	}
}

func TestInjectedFaults(t *testing.T) {
	s := newServer(t, Config{Seed: 1, FeedLimit: -1})
	key := s.Seeded().Pro
	var slept []time.Duration
	s.sleep = func(_ context.Context, d time.Duration) { slept = append(slept, d) }

	add := func(body string) FaultSpec {
		t.Helper()
		return decode[FaultSpec](t, s.serve(t, ctl("POST", "faults", body)), 201)
	}
	add(`{"operation":"feed","status":500,"count":2}`)
	for i := range 2 {
		r := s.serve(t, feedReq(key, ""))
		if r.status != 500 {
			t.Fatalf("faulted request %d: %d", i, r.status)
		}
		check(t, r, "")
	}
	if r := s.serve(t, feedReq(key, "")); r.status != 200 {
		t.Fatalf("after count ran out: %d", r.status)
	}

	add(`{"operation":"*","status":429,"retryAfter":7,"count":1}`)
	r := s.serve(t, req{method: "POST", target: schemas.PathHealth, body: "{}"})
	if r.status != 429 || r.header.Get("Retry-After") != "7" {
		t.Fatalf("injected 429: %d Retry-After %q", r.status, r.header.Get("Retry-After"))
	}

	add(`{"operation":"feed","delayMs":1500,"count":1}`)
	if r := s.serve(t, feedReq(key, "")); r.status != 200 || len(slept) != 1 || slept[0] != 1500*time.Millisecond {
		t.Fatalf("delay: %d, slept %v", r.status, slept)
	}

	add(`{"operation":"feed","malformed":true,"count":1}`)
	r = s.serve(t, feedReq(key, ""))
	if r.status != 200 || json.Valid(r.body) || len(r.body) == 0 {
		t.Fatalf("malformed: %d, valid JSON %v", r.status, json.Valid(r.body))
	}

	list := decode[[]FaultSpec](t, s.serve(t, ctl("GET", "faults", "")), 200)
	if len(list) != 0 {
		t.Errorf("spent faults are still listed: %v", list)
	}
	add(`{"operation":"videos","status":503,"probability":1}`)
	decode[[]FaultSpec](t, s.serve(t, ctl("DELETE", "faults", "")), 200)
	if r := s.serve(t, videosReq(key, `{"videoIds":["a"]}`)); r.status != 200 {
		t.Errorf("after DELETE: %d", r.status)
	}

	for _, bad := range []string{
		`{"operation":"feeds","status":500,"count":1}`, `{"operation":"feed","status":200,"count":1}`,
		`{"operation":"feed","status":500}`, `{"operation":"feed","count":1}`,
		`{"operation":"feed","delayMs":30001,"count":1}`, `{"operation":"feed","status":500,"probability":1.5}`,
		`{"operation":"feed","status":500,"count":1,"extra":1}`,
	} {
		r := s.serve(t, ctl("POST", "faults", bad))
		if r.status != 400 {
			t.Errorf("fault %s: %d, want 400", bad, r.status)
		}
		check(t, r, "")
	}
}

func TestProbableFaultsAreSeeded(t *testing.T) {
	run := func() []int {
		s := newServer(t, Config{Seed: 9})
		decode[FaultSpec](t, s.serve(t, ctl("POST", "faults", `{"operation":"health","status":500,"probability":0.5}`)), 201)
		var out []int
		for range 40 {
			out = append(out, s.serve(t, req{method: "POST", target: schemas.PathHealth}).status)
		}
		return out
	}
	a, b := run(), run()
	n500 := 0
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("same seed, other faults: %v vs %v", a, b)
		}
		if a[i] == 500 {
			n500++
		}
	}
	if n500 == 0 || n500 == len(a) {
		t.Errorf("probability 0.5 fired %d of %d times", n500, len(a))
	}
}

func TestDroppedConnection(t *testing.T) {
	s := newServer(t, Config{Seed: 1})
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	decode[FaultSpec](t, s.serve(t, ctl("POST", "faults", `{"operation":"health","drop":true,"count":1}`)), 201)
	resp, err := http.Post(ts.URL+schemas.PathHealth, "application/json", strings.NewReader("{}"))
	if err == nil {
		resp.Body.Close()
		t.Fatalf("dropped connection answered %d", resp.StatusCode)
	}
	resp, err = http.Post(ts.URL+schemas.PathHealth, "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatalf("after the drop: %v", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || string(body) != `{"status":"ok"}` {
		t.Errorf("after the drop: %d %s", resp.StatusCode, body)
	}
}

// A layer that panics proves both the hook and the recovery.
func TestLayerAndPanicRecovery(t *testing.T) {
	panicky := Layer{Name: "panicky", Wrap: func(_ *Server, op Operation, next Answerer) Answerer {
		if op != OpFeed {
			return next
		}
		return func(*http.Request) Answer { panic(errors.New("boom")) }
	}}
	teapot := Layer{Name: "teapot", Wrap: func(_ *Server, op Operation, next Answerer) Answerer {
		if op != OpHealth {
			return next
		}
		return func(*http.Request) Answer { return ErrorAnswer(418, "teapot", "status", nil) }
	}}
	var logs bytes.Buffer
	s := newServer(t, Config{Seed: 1, Layers: []Layer{panicky, teapot}, Logger: newTestLogger(&logs)})
	r := s.serve(t, feedReq(s.Seeded().Pro, ""))
	if r.status != 500 {
		t.Fatalf("panic: status %d", r.status)
	}
	check(t, r, "")
	if !strings.Contains(logs.String(), "boom") {
		t.Errorf("the panic is not logged: %s", logs.String())
	}
	if strings.Contains(logs.String(), s.Seeded().Pro) {
		t.Error("the log holds a key")
	}
	if r := s.serve(t, req{method: "POST", target: schemas.PathHealth}); r.status != 418 || string(r.body) != `{"error":"teapot","message":"status"}` {
		t.Errorf("layer: %d %s", r.status, r.body)
	}
}

// An injected 429 or 503 says the Retry-After its fault was given: 0 as
// 0 (the control API's schema allows it), left out as 1.
func TestInjectedRetryAfterAsGiven(t *testing.T) {
	s := newServer(t, Config{})
	k := s.Seeded()
	for _, c := range []struct {
		fault, want string
	}{
		{`{"operation":"feed","status":429,"retryAfter":0,"count":1}`, "0"},
		{`{"operation":"feed","status":429,"count":1}`, "1"},
		{`{"operation":"feed","status":429,"retryAfter":9,"count":1}`, "9"},
		{`{"operation":"feed","status":503,"retryAfter":0,"count":1}`, "0"},
		{`{"operation":"feed","status":503,"count":1}`, "1"},
	} {
		if r := s.serve(t, req{method: http.MethodPost, target: ControlPrefix + "faults", body: c.fault}); r.status != http.StatusCreated && r.status != http.StatusOK {
			t.Fatalf("POST %s: %d %s", c.fault, r.status, r.body)
		}
		r := s.serve(t, req{method: http.MethodGet, target: "/api/public-feed", key: k.Pro})
		if got := r.header.Values("Retry-After"); len(got) != 1 || got[0] != c.want {
			t.Errorf("fault %s: answered %d with Retry-After %q, want %q", c.fault, r.status, got, c.want)
		}
	}
}
