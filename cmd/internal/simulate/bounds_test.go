package simulate

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Every setting past what the simulator can do is refused before any
// work: exit 2, one line that names the range, no banner, no info file.
func TestSettingsOutOfRangeExit2BeforeTheBanner(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "a-file")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	faults := []string{}
	for range 257 {
		faults = append(faults, "--fault", "oldest-first") // repeats count against the cap
	}
	info := filepath.Join(dir, "info.json")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--feed-limit", "9223372036854775807"}, "1..10000"},
		{[]string{"--feed-limit", "1000000000"}, "1..10000"},
		{[]string{"--videos-limit", "-2"}, "-1 (unlimited)"},
		{[]string{"--journal-size", "100000000"}, "1..100000"},
		{[]string{"--max-events", "100000000000"}, "1..10000000"},
		{[]string{"--speed", "1e300"}, "up to 100000"},
		{faults, "at most 256"},
		{[]string{"--tls-cert", "/dev/zero", "--tls-key", "/dev/zero"}, "larger than"},
		{[]string{"--tls-cert", filepath.Join(dir, "missing.pem"), "--tls-key", filepath.Join(dir, "missing.pem"), "--info-file", info}, "--tls-cert"},
		{[]string{"--tls-cert", file, "--tls-key", file}, "--tls-cert and --tls-key"},
		{[]string{"--client-report", file}, "--client-report"},
		{[]string{"--info-file", filepath.Join(file, "info.json")}, "--info-file"},
		{[]string{"--start", "0000-01-01T00:00:00Z"}, "1970-01-31T00:00:00Z..9999-12-31"},
		{[]string{"--start", "0001-01-01T00:00:00Z"}, "the zero time"}, // not the default start
		{[]string{"--start", "0001-01-01T01:00:00+01:00"}, "the zero time"},
		{[]string{"--start", "9999-12-31T00:00:00Z", "--history", "1h"}, ""}, // in range: it starts (see below)
	} {
		var stdout, stderr bytes.Buffer
		ctx, cancel := context.WithCancel(context.Background())
		// A run that starts ends at once: its banner cancels it.
		code := run(ctx, append([]string{"--addr", "127.0.0.1:0", "--speed", "0"}, tc.args...), cancelOnWrite{&stdout, cancel}, &stderr)
		cancel()
		if tc.want == "" {
			if code != 0 {
				t.Errorf("%.80v: exit %d, want 0: %s", tc.args, code, stderr.String())
			}
			continue
		}
		if code != 2 || strings.Count(strings.TrimSpace(stderr.String()), "\n") != 0 || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%.80v: exit %d, stderr %q; want exit 2 and one line with %q", tc.args, code, stderr.String(), tc.want)
		}
		if stdout.Len() != 0 {
			t.Errorf("%.80v: a banner before the refusal: %q", tc.args, stdout.String())
		}
		if _, err := os.Stat(info); err == nil {
			t.Errorf("%.80v: an info file was written", tc.args)
		}
	}
}

// A shutdown ends the process whatever a handler does: a clock advance
// of the longest kind in flight stops between two steps, and Run returns
// well within the grace.
func TestShutdownStopsAnAdvanceInFlight(t *testing.T) {
	infoPath := filepath.Join(t.TempDir(), "info.json")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	code := make(chan int, 1)
	go func() {
		code <- run(ctx, []string{"--addr", "127.0.0.1:0", "--speed", "0", "--info-file", infoPath}, io.Discard, io.Discard)
	}()
	var info map[string]string
	for range 400 {
		if raw, err := os.ReadFile(infoPath); err == nil && unmarshalInfo(raw, &info) == nil {
			break
		}
		time.Sleep(25 * time.Millisecond)
	}
	if info == nil {
		t.Fatal("no info file")
	}
	answered := make(chan int, 1)
	go func() {
		resp, err := http.Post(info["controlUrl"]+"/clock/advance", "application/json", strings.NewReader(`{"duration":"8784h"}`))
		if err != nil {
			answered <- 0
			return
		}
		resp.Body.Close()
		answered <- resp.StatusCode
	}()
	time.Sleep(300 * time.Millisecond) // the advance is polling a year forward
	stopped := time.Now()
	cancel()
	select {
	case c := <-code:
		if took := time.Since(stopped); took > 10*time.Second {
			t.Errorf("Run returned %s after the shutdown began", took)
		}
		if c != 0 && c != 1 {
			t.Errorf("exit %d", c)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return 30 s after the shutdown began")
	}
	<-answered
}

// cancelOnWrite cancels a run once it writes (its banner).
type cancelOnWrite struct {
	w      io.Writer
	cancel context.CancelFunc
}

func (c cancelOnWrite) Write(p []byte) (int, error) {
	c.cancel()
	return c.w.Write(p)
}
