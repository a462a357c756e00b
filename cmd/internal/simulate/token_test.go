package simulate

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
)

// The control API stays closed to web pages whatever the flags: a control
// host beyond loopback needs a token, and a token must be worth one.
func TestRefusesAControlAPIOpenToWebPages(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  string
		want string
	}{
		{[]string{"--control-host", "*"}, "", "control token"},
		{[]string{"--control-host", "sim.internal"}, "", "control token"},
		{nil, "                    ", "blank"},
		{nil, "short", "fewer than 16"},
	} {
		t.Setenv("TCM_SIM_CONTROL_TOKEN", tc.env)
		var stderr bytes.Buffer
		args := append([]string{"--addr", "127.0.0.1:0"}, tc.args...)
		if code := run(context.Background(), args, io.Discard, &stderr); code != 2 || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%v, token %q: exit %d: %s", tc.args, tc.env, code, stderr.String())
		}
	}
}
