package simulate

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/schemas/redact"
	"github.com/tcmkit/tcmkit/simulator"
	"github.com/tcmkit/tcmkit/suites/record"
)

type simClock struct{ sim *simulator.Server }

func (c simClock) Now() time.Time { return c.sim.RateNow() }
func (c simClock) Sleep(ctx context.Context, d time.Duration) error {
	c.sim.Advance(d)
	return ctx.Err()
}

// TestServesARecording: --world FILE serves a recording, from its time,
// and the banner and the info file say where it came from and in what
// shape it is served.
func TestServesARecording(t *testing.T) {
	orig, err := simulator.New(simulator.Config{Seed: 4, Channels: 2, History: 48 * time.Hour, Start: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	osrv := httptest.NewServer(orig.Handler())
	defer func() { osrv.Close(); orig.Close() }()
	dir := t.TempDir()
	file := filepath.Join(dir, "world.json")
	k := orig.Seeded()
	if _, err := (&record.Recorder{Target: osrv.URL, ProKey: k.Pro, Out: file, Clock: simClock{orig}}).Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	infoPath := filepath.Join(dir, "info.json")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	var stderr bytes.Buffer
	code := make(chan int, 1)
	go func() {
		code <- run(ctx, []string{"--addr", "127.0.0.1:0", "--speed", "0", "--world", file, "--frozen", "--info-file", infoPath}, pw, &stderr)
		pw.Close()
	}()
	var banner, head string
	keyLine := map[string]string{}
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if head == "" {
			head = line
		}
		if label, rest, ok := strings.Cut(line, " key:"); ok {
			keyLine[label] = strings.TrimSpace(rest)
		}
		if strings.HasPrefix(line, "recording:") {
			banner = line
			break
		}
	}
	go io.Copy(io.Discard, pr)
	if !strings.Contains(banner, osrv.URL) || !strings.Contains(banner, simulator.RecordingShape) {
		t.Errorf("the banner does not say what it serves: %q (stderr %s)", banner, stderr.String())
	}
	// The first line names the file and its time, not a seed that made none of its data.
	if want := "world " + file + " (recorded at " + orig.Now().UTC().Format(time.RFC3339) + "; frozen: time passes, nothing new happens)"; !strings.Contains(head, want) || strings.Contains(head, "seed") {
		t.Errorf("the banner's first line: %q, want %q", head, want)
	}
	raw, err := os.ReadFile(infoPath)
	if err != nil {
		t.Fatal(err)
	}
	var info simulator.Info
	if err := json.Unmarshal(raw, &info); err != nil || info.Recording == nil || info.Recording.Shape != simulator.RecordingShape {
		t.Fatalf("info file: %v %s", err, raw)
	}
	// Each key is printed with its role and hint, and is what it is
	// printed as; no key of the recorded simulator is valid here.
	status := func(key, path, body string) int {
		req, _ := http.NewRequest("POST", info.URL+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for label, want := range map[string]struct{ key, role string }{"pro": {info.ProKey, "plan pro"}, "free": {info.FreeKey, "plan free"}, "revoked": {info.RevokedKey, "401 revoked_api_key"}} {
		if got := keyLine[label]; !strings.HasPrefix(got, want.key+"  (") || !strings.Contains(got, want.role) || !strings.Contains(got, "hint "+redact.Form(want.key)) {
			t.Errorf("banner %s key: %q, want the key, %q and its hint", label, got, want.role)
		}
	}
	if st := status(info.ProKey, schemas.PathVideos, `{"videoIds":["x"]}`); st != 200 {
		t.Errorf("the printed Pro key's tracked videos: %d, want 200", st)
	}
	for _, key := range []string{k.Pro, k.Free, k.Revoked} {
		if st := status(key, schemas.PathVideos, `{"videoIds":["x"]}`); st != 401 {
			t.Errorf("a key of the recorded simulator answers %d in the replay, want 401", st)
		}
	}
	req, _ := http.NewRequest("GET", info.URL+schemas.PathFeed, nil)
	req.Header.Set("Authorization", "Bearer "+info.ProKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	date, _ := http.ParseTime(resp.Header.Get("Date"))
	if resp.StatusCode != 200 || !date.Equal(orig.Now()) {
		t.Errorf("feed: %d at %v (the recording was made at %v): %.200s", resp.StatusCode, date, orig.Now(), body)
	}
	if err := schemas.ValidateJSON(schemas.FeedPage, body); err != nil {
		t.Error(err)
	}
	cancel()
	if c := <-code; c != 0 {
		t.Fatalf("exit %d: %s", c, stderr.String())
	}
}

func TestWorldFileBounded(t *testing.T) {
	file := filepath.Join(t.TempDir(), "big.json")
	os.WriteFile(file, bytes.Repeat([]byte(" "), 2048), 0o644)
	var stderr bytes.Buffer
	if c := run(context.Background(), []string{"--world", file, "--max-import-bytes", "1024"}, io.Discard, &stderr); c != 2 || !strings.Contains(stderr.String(), "--max-import-bytes") {
		t.Errorf("exit %d: %s", c, stderr.String())
	}
}

// TestBannerNamesAnExportedWorld: --world FILE with an export (GET
// /_control/world) names the file and the export's time, where the clock
// starts, not the seed, which made none of its data.
func TestBannerNamesAnExportedWorld(t *testing.T) {
	export := exported(t, 4)
	file := filepath.Join(t.TempDir(), "export.json")
	if err := os.WriteFile(file, export, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	code := make(chan int, 1)
	go func() {
		code <- run(ctx, []string{"--addr", "127.0.0.1:0", "--speed", "0", "--seed", "9", "--world", file}, pw, io.Discard)
		pw.Close()
	}()
	head, _ := bufio.NewReader(pr).ReadString('\n')
	go io.Copy(io.Discard, pr)
	if want := "world " + file + " (exported at 2026-03-02T08:00:00Z; live: it grows as time passes)"; !strings.Contains(head, want) || strings.Contains(head, "seed") {
		t.Errorf("the banner's first line: %q, want %q", head, want)
	}
	cancel()
	if c := <-code; c != 0 {
		t.Errorf("exit %d", c)
	}
}

// zeros is an endless stream of NUL bytes, counted.
type zeros struct{ n int64 }

func (z *zeros) Read(p []byte) (int, error) {
	clear(p)
	z.n += int64(len(p))
	return len(p), nil
}

// TestWorldBoundedBeforeItIsRead: a --world that is no JSON object
// (/dev/zero) is refused after a few bytes, whatever --max-import-bytes
// is; a file larger than the bound is refused by its size, unread; an
// empty one is refused as PUT /_control/world refuses it, not served as
// the seeded world.
func TestWorldBoundedBeforeItIsRead(t *testing.T) {
	z := &zeros{}
	if _, err := readJSONStream(z, 4<<30); err == nil || !strings.Contains(err.Error(), "not a JSON object") || z.n > 64<<10 {
		t.Errorf("an endless stream of zeros: %v after %d bytes", err, z.n)
	}
	if _, err := os.Stat("/dev/zero"); err == nil {
		if _, err := readWorld("/dev/zero", simulator.MaxImportBytesBound); err == nil || !strings.Contains(err.Error(), "not a JSON object") {
			t.Errorf("/dev/zero: %v", err)
		}
	}
	dir := t.TempDir()
	sparse := filepath.Join(dir, "huge.json")
	f, err := os.Create(sparse)
	if err != nil {
		t.Fatal(err)
	}
	f.Truncate(8 << 30) // 8 GiB, of no disk
	f.Close()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err = readWorld(sparse, simulator.DefaultMaxImportBytes)
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "8589934592 bytes, more than --max-import-bytes") {
		t.Errorf("a file of 8 GiB: %v", err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 1<<20 {
		t.Errorf("refusing a file by its size allocated %d bytes: it was read", got)
	}
	// An object of anything but an export stops at its first member.
	other := io.MultiReader(strings.NewReader(`{"a":"`), z)
	if _, err := readJSONStream(other, 4<<30); err == nil || !strings.Contains(err.Error(), `the first member must be "format"`) {
		t.Errorf("an object that is no export: %v", err)
	}
	// A stream past the bound stops there.
	long := io.MultiReader(strings.NewReader(`{"format":"tcmkit-simulator/1","a":[`), strings.NewReader(strings.Repeat("1,", 1<<20)))
	if _, err := readJSONStream(long, 1<<16); err == nil || !strings.Contains(err.Error(), "more than 65536 bytes") {
		t.Errorf("a stream past the bound: %v", err)
	}
	if _, err := readJSONStream(strings.NewReader(`{"format":"tcmkit-simulator/1"} x`), 1<<16); err == nil || !strings.Contains(err.Error(), "after the end") {
		t.Errorf("data after the object: %v", err)
	}

	for _, body := range []string{"", " \n\t"} {
		empty := filepath.Join(dir, "empty.json")
		os.WriteFile(empty, []byte(body), 0o644)
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), []string{"--addr", "127.0.0.1:0", "--speed", "0", "--world", empty}, &stdout, &stderr)
		if code != 2 || !strings.Contains(stderr.String(), "is empty: want a JSON object") || stdout.Len() != 0 {
			t.Errorf("an empty world %q: exit %d, %q %q", body, code, stdout.String(), stderr.String())
		}
	}
	// PUT /_control/world of the same refuses it too.
	sim, err := simulator.New(simulator.Config{Seed: 1, Channels: 2, History: 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
	srv := httptest.NewServer(sim.Handler())
	defer srv.Close()
	req, _ := http.NewRequest(http.MethodPut, srv.URL+"/_control/world", strings.NewReader(""))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("PUT of an empty world: %d", resp.StatusCode)
	}
}

// exported is the export (GET /_control/world) of a small world of the
// seed, its clock at 2026-03-02T08:00:00Z.
func exported(t *testing.T, seed int64) []byte {
	t.Helper()
	orig, err := simulator.New(simulator.Config{Seed: seed, Channels: 2, History: 24 * time.Hour, Start: time.Date(2026, 3, 2, 8, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	defer orig.Close()
	var export bytes.Buffer
	if err := orig.Export(&export); err != nil {
		t.Fatal(err)
	}
	return export.Bytes()
}

// repeat is a stream of s repeated n times, then tail, made as it is read.
type repeat struct {
	s    string
	n    int
	tail string
	at   int
}

func (r *repeat) Read(p []byte) (int, error) {
	w := 0
	for w < len(p) {
		if r.n == 0 {
			if r.tail == "" {
				break
			}
			k := copy(p[w:], r.tail)
			r.tail, w = r.tail[k:], w+k
			continue
		}
		k := copy(p[w:], r.s[r.at:])
		w += k
		if r.at += k; r.at == len(r.s) {
			r.at, r.n = 0, r.n-1
		}
	}
	if w == 0 {
		return 0, io.EOF
	}
	return w, nil
}

// TestWorldStreamBoundedByWhatItHolds: a --world stream is held to the
// import's depth as it comes (deep nesting stops at the depth, not at the
// byte bound), and blanks, however many, cost time linear in their number.
func TestWorldStreamBoundedByWhatItHolds(t *testing.T) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	deep := &repeat{s: "[", n: 64 << 20}
	_, err := readJSONStream(io.MultiReader(strings.NewReader(`{"format":"tcmkit-simulator/1","a":`), deep), 64<<20)
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "nested deeper than 10000") {
		t.Errorf("deep nesting: %v", err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 8<<20 {
		t.Errorf("deep nesting: %d bytes allocated, want it stopped at the import's depth", got)
	}
	// Blanks: twice as many take about twice as long, not four times.
	took := func(n int) time.Duration {
		start := time.Now()
		blanks := &repeat{s: "          ", n: n / 10, tail: `{"format":"tcmkit-simulator/1"}`}
		if _, err := readJSONStream(blanks, 1<<30); err != nil {
			t.Fatalf("%d blanks: %v", n, err)
		}
		return time.Since(start)
	}
	small, large := took(4<<20), took(16<<20)
	if large > 12*small+time.Second {
		t.Errorf("blanks: 4 MiB in %s, 16 MiB in %s: not linear", small, large)
	}
}
