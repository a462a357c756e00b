package simulator

import (
	"context"
	"strings"
	"testing"
	"time"
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
