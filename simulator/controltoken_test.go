package simulator

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/tcmkit/tcmkit/schemas/redact"
)

// testToken is a control token long enough to be accepted.
const testToken = "a-test-token-0123456789"

// The control API stays closed to web pages whatever the configuration:
// a Host beyond loopback needs a token, and a token must be worth one.
func TestControlAccessNeedsAToken(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		want string // in the error; "" : accepted
	}{
		{"any Host without a token", Config{ControlHosts: []string{"*"}}, "control host \"*\""},
		{"a name without a token", Config{ControlHosts: []string{"sim.internal"}}, "set a control token"},
		{"an address without a token", Config{ControlHosts: []string{"10.0.0.5:8080"}}, "set a control token"},
		{"loopback names without a token", Config{ControlHosts: []string{"localhost", "127.0.0.2", "[::1]:80", "app.localhost"}}, ""},
		{"any Host with a token", Config{ControlHosts: []string{"*"}, ControlToken: testToken}, ""},
		{"any Host, the control API off", Config{ControlHosts: []string{"*"}, NoControl: true}, ""},
		{"a blank token", Config{ControlToken: "                    "}, "blank"},
		{"a token of tabs", Config{ControlToken: "\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t"}, "blank"},
		{"a token with a trailing space", Config{ControlToken: testToken + " "}, "space"},
		{"a short token", Config{ControlToken: "s3cret"}, "fewer than 16"},
		{"a token of 16", Config{ControlToken: "0123456789abcdef"}, ""},
	} {
		tc.cfg.Seed, tc.cfg.Channels, tc.cfg.History = 1, 2, time.Hour
		s, err := New(tc.cfg)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want an error about %q", tc.name, err, tc.want)
		}
		if s != nil {
			s.Close()
		}
	}
}

// Failed tries of the token wait, longer each time, one at a time; the
// right token never waits.
func TestFailedTokenTriesAreSlowed(t *testing.T) {
	s := newServer(t, Config{Seed: 1, ControlToken: testToken})
	var waits []time.Duration
	s.sleep = func(_ context.Context, d time.Duration) { waits = append(waits, d) }
	try := func(token string) int {
		q := ctl("GET", "info", "")
		q.header.Set(controlTokenHeader, token)
		return s.serve(t, q).status
	}
	for range 8 {
		if st := try("wrong-token-0123456789"); st != 401 {
			t.Fatalf("a wrong token: %d", st)
		}
	}
	if st := try(testToken); st != 200 {
		t.Fatalf("the right token: %d", st)
	}
	if len(waits) != 8 || waits[0] <= 0 || waits[7] <= waits[0] || waits[7] > maxTokenWait {
		t.Errorf("waits %v: want 8, growing, at most %s", waits, maxTokenWait)
	}
}

// TestControlTokenInAURLIsNotKept: the control token put in a URL by
// mistake (a query of the API or of the control API, plain or
// percent-encoded, or the path) is in neither the debug log nor the
// journal, whole or in part.
func TestControlTokenInAURLIsNotKept(t *testing.T) {
	var log strings.Builder
	logger := slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	s := newServer(t, Config{Seed: 1, ControlToken: testToken, Logger: logger})
	pro := s.Seeded().Pro
	escaped := ""
	for _, c := range []byte(testToken) {
		escaped += fmt.Sprintf("%%%02X", c)
	}
	for _, q := range []req{
		feedReq(pro, "token="+testToken),
		feedReq(pro, "limit=5&X-Control-Token="+escaped),
		ctl("GET", "info?token="+testToken, ""),
		{method: "GET", target: "/" + testToken},
	} {
		s.serve(t, q)
	}
	q := ctl("GET", "requests", "")
	q.header.Set(controlTokenHeader, testToken)
	journal := s.serve(t, q)
	if journal.status != 200 || !strings.Contains(string(journal.body), `X-Control-Token=`) {
		t.Fatalf("the journal: %d %s", journal.status, journal.body)
	}
	for what, text := range map[string]string{"the journal": string(journal.body), "the debug log": log.String()} {
		for i := 0; i+redact.MinSecret <= len(testToken); i++ {
			if piece := testToken[i : i+redact.MinSecret]; strings.Contains(text, piece) {
				t.Errorf("%s holds %q of the control token:\n%s", what, piece, text)
				break
			}
		}
	}
	if !strings.Contains(log.String(), "X-Control-Token=") {
		t.Errorf("the debug log lost the request:\n%s", log.String())
	}
}
