package simulate

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/simulator"
	"github.com/tcmkit/tcmkit/simulator/mutants"
)

// env is a set of environment variables a test case runs with.
type env []string

func envOf(kv ...string) env { return kv }

// set puts the variables into the test's environment (t.Setenv undoes it).
func (e env) set(t *testing.T) {
	for i := 0; i+1 < len(e); i += 2 {
		t.Setenv(e[i], e[i+1])
	}
}

func TestOptionsPrecedence(t *testing.T) {
	for _, tc := range []struct {
		name  string
		args  []string
		env   env
		check func(t *testing.T, o Settings)
	}{
		{"defaults", nil, envOf(), func(t *testing.T, o Settings) {
			if o.Addr != "127.0.0.1:8080" || o.Sim.Seed != 1 || o.Sim.Speed != 1 || o.Sim.Channels != simulator.DefaultChannels ||
				o.Sim.History != simulator.DefaultHistory || o.Sim.FeedLimit != schemas.FeedRequestsPerMinute ||
				o.Sim.VideosLimit != simulator.DefaultVideosLimit || !o.Sim.Start.Equal(simulator.DefaultStart) || o.LogFormat != "text" {
				t.Errorf("defaults: %+v", o)
			}
		}},
		{"environment over defaults", nil, envOf("TCM_SIM_SEED", "42", "TCM_SIM_ADDR", "127.0.0.1:0", "TCM_SIM_SPEED", "0", "TCM_SIM_HISTORY", "48h", "TCM_SIM_CHANNELS", "3", "TCM_SIM_NO_CONTROL", "true"), func(t *testing.T, o Settings) {
			if o.Sim.Seed != 42 || o.Addr != "127.0.0.1:0" || o.Sim.Speed != 0 || o.Sim.History != 48*time.Hour || o.Sim.Channels != 3 || !o.Sim.NoControl {
				t.Errorf("env: %+v", o)
			}
		}},
		{"flags over environment", []string{"--seed", "7", "--speed=60", "--channels", "5"}, envOf("TCM_SIM_SEED", "42", "TCM_SIM_SPEED", "2", "TCM_SIM_CHANNELS", "3", "TCM_SIM_EDGE_RATE", "0.25"), func(t *testing.T, o Settings) {
			if o.Sim.Seed != 7 || o.Sim.Speed != 60 || o.Sim.Channels != 5 || o.Sim.EdgeRate != 0.25 {
				t.Errorf("flags: %+v", o.Sim)
			}
		}},
		{"a flag set to its default still wins", []string{"--seed=1"}, envOf("TCM_SIM_SEED", "42"), func(t *testing.T, o Settings) {
			if o.Sim.Seed != 1 {
				t.Errorf("seed %d, want 1", o.Sim.Seed)
			}
		}},
		{"limit -1 is unlimited", []string{"--feed-limit", "-1"}, envOf("TCM_SIM_VIDEOS_LIMIT", "-1"), func(t *testing.T, o Settings) {
			if o.Sim.FeedLimit >= 0 || o.Sim.VideosLimit >= 0 {
				t.Errorf("limits %d %d, want unlimited (<0)", o.Sim.FeedLimit, o.Sim.VideosLimit)
			}
		}},
		{"zero is the default, as in simulator.Config", []string{"--feed-limit", "0", "--channels", "0", "--journal-size", "0"}, envOf("TCM_SIM_VIDEOS_LIMIT", "0"), func(t *testing.T, o Settings) {
			if o.Sim.FeedLimit != schemas.FeedRequestsPerMinute || o.Sim.VideosLimit != simulator.DefaultVideosLimit || o.Sim.Channels != simulator.DefaultChannels || o.Sim.JournalSize != simulator.DefaultJournalSize {
				t.Errorf("limits %d %d, channels %d, journal %d", o.Sim.FeedLimit, o.Sim.VideosLimit, o.Sim.Channels, o.Sim.JournalSize)
			}
		}},
		{"journal-size -1 is no journal", []string{"--journal-size=-1"}, envOf(), func(t *testing.T, o Settings) {
			if o.Sim.JournalSize != -1 {
				t.Errorf("journal %d", o.Sim.JournalSize)
			}
		}},
		{"other settings", []string{"--key-prefix", "abc", "--control-token", "tok-of-16-characters", "--log-format", "json", "--log-level", "debug", "--info-file", "/tmp/x", "--start", "2025-06-01T12:00:00Z"}, envOf(), func(t *testing.T, o Settings) {
			if o.Sim.KeyPrefix != "abc" || o.Sim.ControlToken != "tok-of-16-characters" || o.LogFormat != "json" || o.InfoFile != "/tmp/x" || o.Sim.Start.Month() != time.June {
				t.Errorf("%+v", o)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.env.set(t)
			o, err := parseOptions("simulator", tc.args, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, o)
		})
	}
}

func TestBadOptionsExit2WithOneLine(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  env
	}{
		{[]string{"--seed", "x"}, envOf()},
		{[]string{"--nope"}, envOf()},
		{[]string{"--speed", "-1"}, envOf()},
		{[]string{"--feed-limit", "-5"}, envOf()},
		{[]string{"--log-format", "xml"}, envOf()},
		{[]string{"--log-level", "loud"}, envOf()},
		{[]string{"--start", "yesterday"}, envOf()},
		{[]string{"--channels", "-1"}, envOf()},
		{[]string{"--journal-size", "-2"}, envOf()},
		{[]string{"--key-prefix", "a_b"}, envOf()},
		{[]string{"--edge-rate", "2"}, envOf()},
		{[]string{"--faults", "no-such-fault"}, envOf()},
		{[]string{"--scenario", "no-such-scenario"}, envOf()},
		{[]string{"--no-client-judge", "--client-report", "x"}, envOf()},
		{[]string{"extra"}, envOf()},
		{nil, envOf("TCM_SIM_SEED", "nope")},
	} {
		t.Run(fmt.Sprint(tc.args, tc.env), func(t *testing.T) {
			tc.env.set(t)
			var stdout, stderr bytes.Buffer
			code := Run(context.Background(), "tcmkit simulate", tc.args, &stdout, &stderr)
			if code != 2 {
				t.Errorf("%v: exit %d, want 2", tc.args, code)
			}
			if lines := strings.Count(strings.TrimSpace(stderr.String()), "\n"); lines != 0 || stderr.Len() == 0 {
				t.Errorf("%v: want one line on stderr, got %q", tc.args, stderr.String())
			}
			// The program's own name, once, and not the package's.
			if !strings.HasPrefix(stderr.String(), "tcmkit simulate: ") || strings.Contains(stderr.String(), "simulator:") || stdout.Len() != 0 {
				t.Errorf("%v: stderr %q, stdout %q", tc.args, stderr.String(), stdout.String())
			}
		})
	}
}

// TestDidYouMean: a mistyped flag, fault or scenario gets the name it was
// meant to be, and not the list of every fault.
func TestDidYouMean(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--sped", "60"}, "did you mean --speed?"},
		{[]string{"--fault", "oldest-frist"}, "did you mean oldest-first?"},
		{[]string{"--fault", "events-without-channel@pro.frist-page.default"}, "did you mean events-without-channel@pro.first-page.default?"},
		{[]string{"--scenario", "429-strom"}, "did you mean 429-storm?"},
	} {
		var stderr bytes.Buffer
		if code := Run(context.Background(), "tcmkit simulate", tc.args, io.Discard, &stderr); code != 2 {
			t.Errorf("%v: exit %d, want 2", tc.args, code)
		}
		if got := stderr.String(); !strings.Contains(got, tc.want) || len(got) > 400 {
			t.Errorf("%v: stderr %q, want %q in a short line", tc.args, got, tc.want)
		}
	}
}

func TestHelp(t *testing.T) {
	var stdout bytes.Buffer
	if code := run(context.Background(), []string{"--help"}, &stdout, io.Discard); code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"--addr", "TCM_SIM_SEED", "--feed-limit", "unlimited", "--info-file", "--speed"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("help lacks %q", want)
		}
	}
	if _, err := parseOptions("simulator", []string{"-h"}, io.Discard); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("-h: %v", err)
	}
}

// TestRunServesAndShutsDown starts the binary's run on a free port, reads
// the banner, uses the API, and stops it as SIGTERM would.
func TestRunServesAndShutsDown(t *testing.T) {
	infoPath := filepath.Join(t.TempDir(), "info.json")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	var stderr bytes.Buffer
	code := make(chan int, 1)
	go func() {
		code <- run(ctx, []string{"--addr", "127.0.0.1:0", "--speed", "0", "--channels", "2", "--history", "24h", "--info-file", infoPath}, pw, &stderr)
		pw.Close()
	}()
	banner := map[string]string{}
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), ": ")
		if ok {
			banner[k] = strings.TrimSpace(v)
			if strings.HasSuffix(k, " key") {
				banner[k], _, _ = strings.Cut(banner[k], " ") // the key, then its role and hint
			}
		}
		if k == "revoked key" {
			break
		}
	}
	go io.Copy(io.Discard, pr)
	raw, err := os.ReadFile(infoPath)
	if err != nil {
		t.Fatalf("info file: %v (stderr %s)", err, stderr.String())
	}
	var info map[string]string
	if err := unmarshalInfo(raw, &info); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"url", "controlUrl", "proKey", "freeKey", "revokedKey"} {
		if info[k] == "" {
			t.Errorf("info file lacks %s: %s", k, raw)
		}
	}
	if banner["url"] != info["url"] || banner["pro key"] != info["proKey"] || banner["control"] != info["controlUrl"] {
		t.Errorf("banner %v and info file %v differ", banner, info)
	}
	req, _ := http.NewRequest("GET", info["url"]+schemas.PathFeed, nil)
	req.Header.Set("Authorization", "Bearer "+info["proKey"])
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("feed: %d %s", resp.StatusCode, body)
	}
	if err := schemas.ValidateJSON(schemas.FeedPage, body); err != nil {
		t.Error(err)
	}
	cancel()
	if c := <-code; c != 0 {
		t.Fatalf("exit %d after shutdown: %s", c, stderr.String())
	}
	for _, k := range []string{info["proKey"], info["freeKey"], info["revokedKey"]} {
		if strings.Contains(stderr.String(), k) {
			t.Error("a key appears whole in the log")
		}
	}
}

// signalWriter closes seen once a line containing want was written.
type signalWriter struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	want string
	seen chan struct{}
	once sync.Once
}

func (w *signalWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if strings.Contains(w.buf.String(), w.want) {
		w.once.Do(func() { close(w.seen) })
	}
	return len(p), nil
}

// TestShutdownFinishesInFlightRequests holds a tracked-videos request in
// the middle of its body (Expect: 100-continue tells when the handler reads
// it), stops the server as SIGTERM does, then sends the rest: the request
// is answered and run returns 0.
func TestShutdownFinishesInFlightRequests(t *testing.T) {
	infoPath := filepath.Join(t.TempDir(), "info.json")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	logs := &signalWriter{want: "shutting down", seen: make(chan struct{})}
	code := make(chan int, 1)
	go func() {
		code <- run(ctx, []string{"--addr", "127.0.0.1:0", "--speed", "0", "--channels", "2", "--history", "24h", "--info-file", infoPath}, pw, logs)
		pw.Close()
	}()
	sc := bufio.NewScanner(pr)
	for sc.Scan() && !strings.Contains(sc.Text(), "revoked key") {
	}
	go io.Copy(io.Discard, pr)
	raw, err := os.ReadFile(infoPath)
	if err != nil {
		t.Fatal(err)
	}
	var info map[string]string
	if err := unmarshalInfo(raw, &info); err != nil {
		t.Fatal(err)
	}
	host := strings.TrimPrefix(info["url"], "http://")
	conn, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	body := `{"videoIds":["a"]}`
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\nExpect: 100-continue\r\n\r\n",
		schemas.PathVideos, host, info["proKey"], len(body))
	br := bufio.NewReader(conn)
	line, err := br.ReadString('\n')
	if err != nil || !strings.Contains(line, "100 Continue") {
		t.Fatalf("want 100 Continue, got %q %v", line, err)
	}
	br.ReadString('\n') // the empty line after it

	cancel()
	<-logs.seen
	// The listener closes when Shutdown starts; then the body goes out.
	for {
		c, err := net.Dial("tcp", host)
		if err != nil {
			break
		}
		c.Close()
	}
	io.WriteString(conn, body)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("the in-flight request was not answered: %v", err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("in-flight request: %d %s", resp.StatusCode, got)
	}
	if c := <-code; c != 0 {
		t.Fatalf("exit %d", c)
	}
}

func TestListFaultsNamesEachRequirement(t *testing.T) {
	var out, errOut strings.Builder
	if code := run(t.Context(), []string{"--list-faults"}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	for _, m := range mutants.All() {
		if !strings.Contains(out.String(), m.Name) || !strings.Contains(out.String(), string(m.Requirement)) {
			t.Errorf("--list-faults does not show %s with its requirement %q", m.Name, m.Requirement)
		}
	}
}

// --fault takes every fault mutants.Layers knows: the named ones and the
// cell faults of the probe grid (FAULT@ROLE.SHAPE.CLASS), which
// --list-faults says how to name.
func TestFaultFlagTakesCellFaults(t *testing.T) {
	cell := "events-without-channel@free.cursor-page.default"
	o, err := parseOptions("simulator", []string{"--fault", cell + ",oldest-first"}, io.Discard)
	if err != nil || len(o.Sim.Layers) != 2 || o.Sim.Layers[0].Name != cell || !o.Sim.Layers[0].Fault {
		t.Fatalf("--fault %s: layers %v, err %v", cell, o.Sim.Layers, err)
	}
	if _, err := parseOptions("simulator", []string{"--fault", "events-without-channel@free.cursor-page.nope"}, io.Discard); err == nil {
		t.Error("a cell of no probe's class is accepted: a fault that never fires")
	}
	var out strings.Builder
	if code := run(t.Context(), []string{"--list-faults"}, &out, io.Discard); code != 0 || !strings.Contains(out.String(), "FAULT@ROLE.SHAPE.CLASS") ||
		!strings.Contains(out.String(), "read-by-other-key") || !strings.Contains(out.String(), "events-without-channel,") {
		t.Errorf("--list-faults does not say how cell faults are named (exit %d):\n%s", code, out.String())
	}
}

func TestFaultFlagRepeats(t *testing.T) {
	o, err := parseOptions("simulator", []string{"--fault", "oldest-first", "--fault", "health-not-ok"}, io.Discard)
	if err != nil || !slices.Equal(o.faults, []string{"oldest-first", "health-not-ok"}) || len(o.Sim.Layers) != 2 || o.Sim.Layers[1].Name != "health-not-ok" || !o.Sim.Layers[1].Fault {
		t.Fatalf("faults = %v, err %v", o.faults, err)
	}
}

// run is the simulator binary's Run.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return Run(ctx, "simulator", args, stdout, stderr)
}

// unmarshalInfo reads an info file's string members (url, controlUrl,
// proKey, ...) into info; its other members (keys, recording) are not
// strings.
func unmarshalInfo(raw []byte, info *map[string]string) error {
	var all map[string]any
	if err := json.Unmarshal(raw, &all); err != nil {
		return err
	}
	*info = map[string]string{}
	for k, v := range all {
		if s, ok := v.(string); ok {
			(*info)[k] = s
		}
	}
	return nil
}
