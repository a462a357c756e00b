package record

import (
	"bytes"
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tcmkit/tcmkit/simulator"
)

func TestRecordCommand(t *testing.T) {
	sim, err := simulator.New(simulator.Config{Seed: 2, Channels: 2, History: 48 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(sim.Handler())
	defer func() { srv.Close(); sim.Close() }()
	k := sim.Seeded()
	out := filepath.Join(t.TempDir(), "w.json")
	var stdout, stderr bytes.Buffer
	code := Run(context.Background(), "tcmkit record", []string{"--target", srv.URL, "--pro-key", k.Pro, "--free-key", k.Free, "--out", out}, &stdout, &stderr)
	if code != 0 || !strings.Contains(stdout.String(), "tcmkit simulate --world "+out) {
		t.Fatalf("exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
	if _, err := os.Stat(out); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{k.Pro, k.Free} {
		if strings.Contains(stdout.String()+stderr.String(), key[len(key)-12:]) {
			t.Error("a key in the command's output")
		}
	}
}

func TestRecordCommandSettings(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--help"}, 0, "TCM_RECORD_"},
		{nil, 2, "--target and --pro-key are required"},
		{[]string{"--target", "http://x", "--pro-key", "k", "--max-events", "-2"}, 2, "--max-events"},
		// A setting out of range is refused before a request, exit 2 in
		// one line: never silently the default, never exit 1 as a failed
		// recording would.
		{[]string{"--target", "ftp://x", "--pro-key", "k"}, 2, "--target"},
		{[]string{"--target", "http://user:secret@127.0.0.1:9", "--pro-key", "k"}, 2, "without user, query or fragment"},
		{[]string{"--target", "http://127.0.0.1:9/?a=b", "--pro-key", "k"}, 2, "without user, query or fragment"},
		// the key in the host goes to the DNS resolver: refused first
		{[]string{"--target", "http://tcm_secretsecretsecretsecret.localhost:9", "--pro-key", "tcm_secretsecretsecretsecret"}, 2, "its host holds a key"},
		{[]string{"--target", "http://127.0.0.1:9", "--pro-key", "k", "--max-wait", "-1s"}, 2, "invalid value -1s for --max-wait"},
		{[]string{"--target", "http://127.0.0.1:9", "--pro-key", "k", "--max-total-wait", "-1m"}, 2, "invalid value -1m0s for --max-total-wait"},
		{[]string{"--target", "http://127.0.0.1:9", "--pro-key", "k", "--out", ""}, 2, "--out is required"},
	} {
		var stdout, stderr bytes.Buffer
		code := Run(context.Background(), "tcmkit record", tc.args, &stdout, &stderr)
		if code != tc.code || !strings.Contains(stdout.String()+stderr.String(), tc.want) {
			t.Errorf("%v: exit %d, want %d and %q:\n%s%s", tc.args, code, tc.code, tc.want, stdout.String(), stderr.String())
		}
		if strings.Contains(stderr.String(), "secret") {
			t.Errorf("%v: the target's password in the message: %q", tc.args, stderr.String())
		}
		if code == 2 && strings.Count(stderr.String(), "\n") != 1 {
			t.Errorf("%v: want one line: %q", tc.args, stderr.String())
		}
	}
}
