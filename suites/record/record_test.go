package record

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tcmkit/tcmkit/schemas/redact"
	"github.com/tcmkit/tcmkit/schemas/redact/redacttest"
	"github.com/tcmkit/tcmkit/simulator"
	"github.com/tcmkit/tcmkit/simulator/clients"
	"github.com/tcmkit/tcmkit/simulator/variant"
	"github.com/tcmkit/tcmkit/simulator/world"
)

// simClock is a simulator's manual clock: a wait moves it, at once.
type simClock struct{ sim *simulator.Server }

func (c simClock) Now() time.Time { return c.sim.RateNow() }
func (c simClock) Sleep(ctx context.Context, d time.Duration) error {
	c.sim.Advance(d)
	return ctx.Err()
}

// original is a small simulator on a manual clock, in-process.
func original(t *testing.T, cfg simulator.Config) (*simulator.Server, string) {
	t.Helper()
	if cfg.Channels == 0 {
		cfg.Channels, cfg.History = 4, 5*24*time.Hour
	}
	if cfg.Seed == 0 {
		cfg.Seed = 11
	}
	cfg.EdgeRate = 0.1
	sim, err := simulator.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(sim.Handler())
	t.Cleanup(func() { srv.Close(); sim.Close() })
	return sim, srv.URL
}

func recordTo(t *testing.T, sim *simulator.Server, url, out string, log io.Writer, mod func(*Recorder)) *Result {
	t.Helper()
	k := sim.Seeded()
	r := &Recorder{Target: url, ProKey: k.Pro, FreeKey: k.Free, Out: out, Clock: simClock{sim}, Log: log}
	if mod != nil {
		mod(r)
	}
	res, err := r.Run(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func replay(t *testing.T, file string, cfg simulator.Config) (*simulator.Server, string) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	cfg.World = b
	sim, err := simulator.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(sim.Handler())
	t.Cleanup(func() { srv.Close(); sim.Close() })
	return sim, srv.URL
}

func call(t *testing.T, method, u, key, body string) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, _ := http.NewRequest(method, u, rd)
	req.Header.Set("Authorization", "Bearer "+key)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// feed walks a whole feed at a page size: its events, and the videos they name.
func feed(t *testing.T, base, key string, limit int) (events []json.RawMessage, videos []string) {
	t.Helper()
	seen := map[string]bool{}
	for cursor := ""; ; {
		q := url.Values{"limit": {fmt.Sprint(limit)}}
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		st, b := call(t, http.MethodGet, base+"/api/public-feed?"+q.Encode(), key, "")
		if st != 200 {
			t.Fatalf("feed: %d %s", st, b)
		}
		var p struct {
			Events     []json.RawMessage `json:"events"`
			NextCursor *string           `json:"nextCursor"`
		}
		json.Unmarshal(b, &p)
		for _, e := range p.Events {
			var ev struct {
				Video *struct {
					ID string `json:"platformVideoId"`
				} `json:"video"`
			}
			json.Unmarshal(e, &ev)
			if ev.Video != nil && !seen[ev.Video.ID] {
				seen[ev.Video.ID] = true
				videos = append(videos, ev.Video.ID)
			}
		}
		events = append(events, p.Events...)
		if p.NextCursor == nil {
			return events, videos
		}
		cursor = *p.NextCursor
	}
}

// TestRoundTrip records a simulator and serves the recording: the feeds
// (at two page sizes) and the tracked videos answer byte for byte as the
// original did, the clock starts at the recording's time, and the Pro
// gate holds.
func TestRoundTrip(t *testing.T) {
	t.Parallel()
	unlimited := simulator.Config{FeedLimit: -1, VideosLimit: -1}
	orig, ourl := original(t, unlimited)
	out := filepath.Join(t.TempDir(), "world.json")
	res := recordTo(t, orig, ourl, out, io.Discard, nil)
	if res.Waited != 0 || !res.Recording.Complete {
		t.Fatalf("a small world needs no wait and no bound: waited %s, complete %v", res.Waited, res.Recording.Complete)
	}
	rep, rurl := replay(t, out, unlimited)
	if !rep.Now().Equal(orig.Now()) {
		t.Errorf("the replay starts at %v, the recording was made at %v", rep.Now(), orig.Now())
	}
	if info := rep.Info(rurl); info.Recording == nil || !strings.Contains(info.Recording.String(), "kit's own conforming shape") {
		t.Errorf("the replay's info does not say it serves a recording: %+v", info.Recording)
	}
	ok, rk := orig.Seeded(), rep.Seeded()
	if rk.Pro == "" || rk.Pro == ok.Pro || rk.Free == ok.Free {
		t.Fatalf("the recording's accounts want fresh keys")
	}
	var ids []string
	for _, pair := range [][2]string{{ok.Pro, rk.Pro}, {ok.Free, rk.Free}} {
		for _, limit := range []int{200, 7} {
			want, wv := feed(t, ourl, pair[0], limit)
			got, _ := feed(t, rurl, pair[1], limit)
			if len(want) == 0 || len(got) != len(want) {
				t.Fatalf("limit %d: %d events, the original had %d", limit, len(got), len(want))
			}
			for i := range want {
				if !bytes.Equal(want[i], got[i]) {
					t.Fatalf("limit %d, event %d:\n got %s\nwant %s", limit, i, got[i], want[i])
				}
			}
			if pair[0] == ok.Pro {
				ids = wv
			}
		}
	}
	for i := 0; i < len(ids); i += 20 {
		doc, _ := json.Marshal(map[string][]string{"videoIds": ids[i:min(i+20, len(ids))]})
		ws, want := call(t, http.MethodPost, ourl+"/api/public/videos", ok.Pro, string(doc))
		gs, got := call(t, http.MethodPost, rurl+"/api/public/videos", rk.Pro, string(doc))
		if ws != 200 || gs != 200 || !bytes.Equal(want, got) {
			t.Fatalf("videos %d..: %d %d\n got %.2000s\nwant %.2000s", i, gs, ws, got, want)
		}
		if fs, _ := call(t, http.MethodPost, rurl+"/api/public/videos", rk.Free, string(doc)); fs != http.StatusForbidden {
			t.Fatalf("the free key got %d from the replay's tracked videos, want 403", fs)
		}
	}
	if st, _ := call(t, http.MethodGet, rurl+"/api/public-feed", rk.Revoked, ""); st != http.StatusUnauthorized {
		t.Errorf("the replay's revoked key got %d, want 401", st)
	}
	// No key of the recorded simulator is valid in a replay, in any role,
	// whatever the replay's seed (the recorded simulator's included, whose
	// seeded world is the original), and the printed Pro key is Pro.
	same, surl := replay(t, out, simulator.Config{Seed: 11})
	for _, r := range []struct {
		url string
		rep *simulator.Server
	}{{rurl, rep}, {surl, same}} {
		for i, key := range []string{ok.Pro, ok.Free, ok.Revoked} {
			if st, body := call(t, http.MethodGet, r.url+"/api/public-feed", key, ""); st != http.StatusUnauthorized || !bytes.Contains(body, []byte(simulator.CodeUnknownKey)) {
				t.Errorf("key %d of the recorded simulator: %d %.120s in the replay, want 401 %s", i, st, body, simulator.CodeUnknownKey)
			}
		}
		info := r.rep.Info(r.url)
		if len(info.Keys) == 0 || info.Keys[0].Role != simulator.RolePro || info.Keys[0].Key != info.ProKey {
			t.Errorf("the replay's first key: %+v", info.Keys)
		}
		if st, _ := call(t, http.MethodPost, r.url+"/api/public/videos", info.ProKey, `{"videoIds":["x"]}`); st != 200 {
			t.Errorf("the replay's printed Pro key got %d from tracked videos, want 200", st)
		}
	}
	// It grows with time, unless frozen.
	if n := rep.Advance(72 * time.Hour); n == 0 {
		t.Error("three days of a recorded world made no event")
	}
	frozen, _ := replay(t, out, simulator.Config{Frozen: true})
	if n := frozen.Advance(72 * time.Hour); n != 0 {
		t.Errorf("three days of a frozen recording made %d events", n)
	}
}

// TestPacedAndPolite records a server that allows 3 requests a minute:
// the recorder meets 429s, honours each Retry-After, and the simulator's
// client judge finds nothing to blame; the recording has every event.
func TestPacedAndPolite(t *testing.T) {
	t.Parallel()
	orig, ourl := original(t, simulator.Config{FeedLimit: 3, VideosLimit: 3, Frozen: true, Clients: clients.Judging(clients.Config{}), Channels: 6, History: 7 * 24 * time.Hour})
	judge, start := clients.Of(orig), orig.Now()
	out := filepath.Join(t.TempDir(), "world.json")
	var log bytes.Buffer
	res := recordTo(t, orig, ourl, out, &log, nil)
	if res.Waited < time.Minute || !strings.Contains(log.String(), "429 with Retry-After") || !strings.Contains(log.String(), "left, about") {
		t.Fatalf("waited %s; the log:\n%s", res.Waited, log.String())
	}
	v := judge.Snapshot(true)
	if !v.Passed {
		t.Fatalf("the recorder broke a client rule: %+v", v)
	}
	b, _ := os.ReadFile(out)
	var rec struct {
		World struct {
			Events []json.RawMessage `json:"events"`
		} `json:"world"`
	}
	json.Unmarshal(b, &rec)
	orig.Advance(time.Hour) // a fresh window for the comparison below
	want, _ := feed(t, ourl, orig.Seeded().Pro, 200)
	if len(rec.World.Events) < len(want) {
		t.Errorf("%d events recorded, the Pro feed alone has %d", len(rec.World.Events), len(want))
	}
	if orig.Now().Sub(start) < res.Waited {
		t.Errorf("the clock moved %s, less than the waits", orig.Now().Sub(start))
	}

	// Paced before any 429: at 3 a minute, the recorder waits by itself.
	log.Reset()
	orig.Advance(time.Hour) // the server's window forgets the first recording
	res = recordTo(t, orig, ourl, filepath.Join(t.TempDir(), "paced.json"), &log, func(r *Recorder) { r.Rate = 3 })
	if strings.Contains(log.String(), "429 with Retry-After") || !strings.Contains(log.String(), "3 requests in the last minute with this key: waiting") {
		t.Errorf("at 3 a minute, the recorder paced itself badly:\n%s", log.String())
	}
	if v := judge.Snapshot(true); !v.Passed {
		t.Fatalf("the recorder broke a client rule: %+v", v)
	}
}

// TestResumeEqualsOneGo interrupts a recording half-way, resumes it, and
// gets the file a recording in one go writes.
func TestResumeEqualsOneGo(t *testing.T) {
	t.Parallel()
	unlimited := simulator.Config{FeedLimit: -1, VideosLimit: -1}
	orig, ourl := original(t, unlimited)
	dir := t.TempDir()
	one := filepath.Join(dir, "one.json")
	res := recordTo(t, orig, ourl, one, io.Discard, nil)
	half := res.Recording.Requests / 2

	two := filepath.Join(dir, "two.json")
	ctx, cancel := context.WithCancel(t.Context())
	k := orig.Seeded()
	r := &Recorder{Target: ourl, ProKey: k.Pro, FreeKey: k.Free, Out: two, Clock: simClock{orig},
		AfterRequest: func(n int) {
			if n == half {
				cancel()
			}
		}}
	if _, err := r.Run(ctx); err == nil || !strings.Contains(err.Error(), "partial") {
		t.Fatalf("an interrupted recording says where its progress is: %v", err)
	}
	if _, err := os.Stat(two); err == nil {
		t.Fatal("an interrupted recording wrote the recording")
	}
	r.AfterRequest = nil
	res2, err := r.Run(t.Context())
	if err != nil || !res2.Resumed {
		t.Fatalf("resume: %v (resumed %v)", err, res2 != nil && res2.Resumed)
	}
	a, _ := os.ReadFile(one)
	b, _ := os.ReadFile(two)
	if !bytes.Equal(a, b) {
		os.WriteFile("/tmp/rec-one.json", a, 0o644)
		os.WriteFile("/tmp/rec-two.json", b, 0o644)
		t.Fatalf("resumed (%d bytes) differs from one go (%d bytes)", len(b), len(a))
	}
	if _, err := os.Stat(two + ".partial"); err == nil {
		t.Error("the progress file outlived the recording")
	}
}

// TestNoKeyInRecordingOrLog: neither the recording, its progress, nor its
// log holds a key, whole or in the encodings the redactor decodes.
func TestNoKeyInRecordingOrLog(t *testing.T) {
	t.Parallel()
	orig, ourl := original(t, simulator.Config{FeedLimit: 3, Frozen: true})
	dir := t.TempDir()
	out := filepath.Join(dir, "world.json")
	var log bytes.Buffer
	k := orig.Seeded()
	r := &Recorder{Target: ourl, ProKey: k.Pro, FreeKey: k.Free, Out: out, Clock: simClock{orig}, Log: &log,
		AfterRequest: func(n int) {
			if n == 4 {
				b, _ := os.ReadFile(out + ".partial")
				log.Write(b) // the progress is checked with the log
			}
		}}
	if _, err := r.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	// An error that quotes the target: a server that echoes the key back,
	// whole and encoded.
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a := r.Header.Get("Authorization")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"error":"echo","message":%q,"details":[%q,%q]}`, a, base64.StdEncoding.EncodeToString([]byte(a)), url.QueryEscape(a))
	}))
	defer echo.Close()
	bad := &Recorder{Target: echo.URL, ProKey: k.Pro, Out: filepath.Join(dir, "x.json"), Clock: simClock{orig}, Log: &log}
	_, err := bad.Run(t.Context())
	if err == nil || !strings.Contains(err.Error(), "400") {
		t.Fatalf("a 400 from the target: %v", err)
	}
	// The command writes its errors through the redactor, as here.
	rw := redact.New(k.Pro, k.Free).Writer(&log)
	fmt.Fprintln(rw, err)
	rw.Flush()
	rec, _ := os.ReadFile(out)
	for _, key := range []string{k.Pro, k.Free} {
		secret := key[strings.IndexByte(key, '_')+1:]
		forms := map[string]string{
			"whole": key, "secret": secret, "base64": base64.StdEncoding.EncodeToString([]byte(key)),
			"base64url": base64.RawURLEncoding.EncodeToString([]byte(key)), "url-encoded": url.QueryEscape("Bearer " + key),
		}
		js, _ := json.Marshal(key)
		forms["JSON"] = string(js)
		var esc, pct strings.Builder
		for _, c := range []byte(secret) {
			fmt.Fprintf(&esc, `\u%04x`, c)
			fmt.Fprintf(&pct, "%%%02X", c)
		}
		forms["JSON \\u escapes"], forms["percent, every byte"] = esc.String(), pct.String()
		for name, f := range forms {
			for what, text := range map[string][]byte{"recording": rec, "log": log.Bytes()} {
				if bytes.Contains(text, []byte(f)) {
					t.Errorf("the %s holds a key (%s)", what, name)
				}
			}
		}
	}
	if !strings.Contains(log.String(), "record:") {
		t.Errorf("no progress in the log:\n%s", log.String())
	}
}

// TestTargetChecked: a key goes nowhere but an http(s) origin.
func TestTargetChecked(t *testing.T) {
	t.Parallel()
	for _, target := range []string{"ftp://x", "http://u:p@host", "http://host/?q=1", "host:8080", "http://"} {
		r := &Recorder{Target: target, ProKey: "tcm_x", Out: filepath.Join(t.TempDir(), "w.json")}
		if _, err := r.Run(t.Context()); err == nil || !strings.Contains(err.Error(), "--target") {
			t.Errorf("%s: %v", target, err)
		}
	}
}

// TestRedirectNotFollowed: a target that redirects gets no key elsewhere.
func TestRedirectNotFollowed(t *testing.T) {
	t.Parallel()
	var elsewhere int
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			elsewhere++
		}
	}))
	defer other.Close()
	redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer redirect.Close()
	r := &Recorder{Target: redirect.URL, ProKey: "tcm_ABCDEFGHIJKLMNOPQRSTUVWXYZ012345", Out: filepath.Join(t.TempDir(), "w.json")}
	if _, err := r.Run(t.Context()); err == nil || elsewhere != 0 {
		t.Fatalf("err %v, the key went elsewhere %d times", err, elsewhere)
	}
}

// TestRecordingOfADraw records a conforming server of unusual choices
// (reversed key order, escapes of every non-ASCII rune, extra members,
// cursors of spaces and non-ASCII, another error vocabulary): the replay
// serves the same events in the kit's own shape, with the kit's cursors
// and errors, and says so.
func TestRecordingOfADraw(t *testing.T) {
	t.Parallel()
	d := variant.New(3)
	d.Channels, d.History, d.Growth, d.EdgeRate = 4, 3*24*time.Hour, 0, 0.2
	d.KeyOrder, d.Escape, d.ExtraEvent, d.ExtraPage, d.Cursor = "reversed", "ascii", true, true, "unicode"
	d.Vocabulary = "upper"
	sim, err := d.Server(simulator.Config{Frozen: true})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(sim.Handler())
	t.Cleanup(func() { srv.Close(); sim.Close() })
	out := filepath.Join(t.TempDir(), "world.json")
	res := recordTo(t, sim, srv.URL, out, io.Discard, nil)
	if res.Recording.Reshaped == 0 {
		t.Errorf("a draw of reversed key order recorded with no event reshaped")
	}
	sim.Advance(time.Hour)
	rep, rurl := replay(t, out, simulator.Config{})
	info := rep.Info(rurl)
	if info.Recording == nil || info.Recording.Shape != simulator.RecordingShape {
		t.Fatalf("the replay does not say in what shape it serves: %+v", info.Recording)
	}
	want, _ := feed(t, srv.URL, sim.Seeded().Pro, 200)
	got, _ := feed(t, rurl, rep.Seeded().Pro, 50)
	if len(want) == 0 || len(got) != len(want) {
		t.Fatalf("%d events, the draw had %d", len(got), len(want))
	}
	for i := range want {
		canon, _, err := world.CanonicalEvent(want[i])
		if err != nil || !bytes.Equal(canon, got[i]) {
			t.Fatalf("event %d: %v\n got %s\nwant %s", i, err, got[i], canon)
		}
	}
	if _, own := call(t, http.MethodGet, srv.URL+"/api/public-feed", "", ""); bytes.Contains(own, []byte(`"`+simulator.CodeMalformedKey+`"`)) {
		t.Fatalf("the draw speaks the kit's error vocabulary (%s): this test proves nothing", own)
	}
	st, body := call(t, http.MethodGet, rurl+"/api/public-feed", "", "")
	var eb struct {
		Error string `json:"error"`
	}
	json.Unmarshal(body, &eb)
	if st != http.StatusUnauthorized || eb.Error != simulator.CodeMalformedKey {
		t.Errorf("the replay's 401 says %q, not the kit's %q", eb.Error, simulator.CodeMalformedKey)
	}
}

// TestBounds: --max-events and --max-requests cut a recording, which
// says so and still serves; --max-bytes too.
func TestBounds(t *testing.T) {
	t.Parallel()
	unlimited := simulator.Config{FeedLimit: -1, VideosLimit: -1}
	orig, ourl := original(t, unlimited)
	for _, tc := range []struct {
		name string
		mod  func(*Recorder)
		ok   func(rec simulator.Recording) bool
	}{
		{"max-events", func(r *Recorder) { r.MaxEvents = 30 }, func(rec simulator.Recording) bool { return rec.Events <= 30 }},
		{"max-requests", func(r *Recorder) { r.MaxRequests = 2 }, func(rec simulator.Recording) bool { return rec.Requests == 2 }},
		{"max-bytes", func(r *Recorder) { r.MaxBytes = 200_000 }, func(rec simulator.Recording) bool { return rec.Events > 0 }},
	} {
		out := filepath.Join(t.TempDir(), "w.json")
		res := recordTo(t, orig, ourl, out, io.Discard, tc.mod)
		if res.Recording.Complete || !tc.ok(res.Recording) || !strings.Contains(strings.Join(res.Recording.Unknown, " "), "--"+tc.name) {
			t.Errorf("%s: %+v", tc.name, res.Recording)
		}
		replay(t, out, simulator.Config{})
	}
}

// TestPutRecording: PUT /_control/world takes a recording as it takes an
// export; the accounts get fresh keys, which GET /_control/info shows.
func TestPutRecording(t *testing.T) {
	t.Parallel()
	orig, ourl := original(t, simulator.Config{FeedLimit: -1, VideosLimit: -1})
	out := filepath.Join(t.TempDir(), "w.json")
	recordTo(t, orig, ourl, out, io.Discard, nil)
	_, surl := original(t, simulator.Config{Seed: 99})
	b, _ := os.ReadFile(out)
	req, _ := http.NewRequest(http.MethodPut, surl+"/_control/world", bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("PUT a recording: %d %s", resp.StatusCode, body)
	}
	st, raw := call(t, http.MethodGet, surl+"/_control/info", "", "")
	var info simulator.Info
	json.Unmarshal(raw, &info)
	if st != 200 || info.Recording == nil || info.ProKey == "" || info.ProKey == orig.Seeded().Pro {
		t.Fatalf("info after the PUT: %d %s", st, raw)
	}
	want, _ := feed(t, ourl, orig.Seeded().Pro, 200)
	got, _ := feed(t, surl, info.ProKey, 200)
	if len(got) != len(want) {
		t.Errorf("%d events served, %d recorded", len(got), len(want))
	}
}

// TestEchoedKeyNotRecorded: a server that serves the key in a title,
// whole and in random stacks of the encodings the redactor promises to
// read (package redacttest: hex dumps, compressed tokens, the key up to
// case, ...), does not get it into the recording or its progress.
func TestEchoedKeyNotRecorded(t *testing.T) {
	t.Parallel()
	orig, _ := original(t, simulator.Config{FeedLimit: -1, VideosLimit: -1})
	k := orig.Seeded()
	h := orig.Handler()
	var mu sync.Mutex
	rng := rand.New(rand.NewPCG(35, 1))
	var cases []redacttest.Case
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		mu.Lock()
		enc := redacttest.Encode(rng, redacttest.Stack(rng), k.Pro)
		cases = append(cases, redacttest.Case{Encoded: enc, Key: k.Pro})
		mu.Unlock()
		quoted, _ := json.Marshal(enc)
		body := bytes.ReplaceAll(rec.Body.Bytes(), []byte(`"currentTitle":"`), []byte(`"currentTitle":"`+k.Pro+" "+string(quoted[1:len(quoted)-1])+" "))
		for name, v := range rec.Header() {
			if name != "Content-Length" {
				w.Header()[name] = v
			}
		}
		w.WriteHeader(rec.Code)
		w.Write(body)
	}))
	defer srv.Close()
	out := filepath.Join(t.TempDir(), "w.json")
	res := recordTo(t, orig, srv.URL, out, io.Discard, nil)
	b, _ := os.ReadFile(out)
	if bytes.Contains(b, []byte(k.Pro[len(k.Pro)-12:])) || res.Recording.Events == 0 {
		t.Fatalf("the echoed key is in the recording (%d events)", res.Recording.Events)
	}
	// The recording is JSON: an encoded key is searched as written and as
	// a JSON string holds it.
	var all []redacttest.Case
	for _, c := range cases {
		quoted, _ := json.Marshal(c.Encoded)
		all = append(all, c, redacttest.Case{Encoded: string(quoted[1 : len(quoted)-1]), Key: c.Key})
	}
	if i, leak := redacttest.FirstLeak(string(b), all); i >= 0 {
		t.Errorf("the recording holds %.60q of the key encoded as %.80q", leak, all[i].Encoded)
	}
}

// TestNoProxyForPlainHTTP: a plain-HTTP target is reached directly, never
// through HTTP_PROXY, which would read the key; HTTPS may be tunnelled.
func TestNoProxyForPlainHTTP(t *testing.T) {
	t.Parallel()
	if httpClient("http://staging.example").Transport.(*http.Transport).Proxy != nil {
		t.Error("a plain-HTTP target would go through a proxy")
	}
	if httpClient("https://staging.example").Transport.(*http.Transport).Proxy == nil {
		t.Error("an HTTPS target ignores the proxy settings: a tunnel sees no key")
	}
}

// TestCursorCycleStops: a server whose cursors cycle stops the walk at
// once, not after --max-requests.
func TestCursorCycleStops(t *testing.T) {
	t.Parallel()
	var n int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n++
		next := "A"
		if r.URL.Query().Get("cursor") == "A" {
			next = "B"
		}
		fmt.Fprintf(w, `{"events":[{"id":"e%d","createdAt":%d,"type":"channel_renamed","channel":{"id":"c","platformChannelId":"UC","title":"t","thumbnailUrl":null},"oldChannelTitle":"a","newChannelTitle":"b"}],"nextCursor":%q}`, n, 1000-n, next)
	}))
	defer srv.Close()
	r := &Recorder{Target: srv.URL, ProKey: "tcm_ABCDEFGHIJKLMNOPQRSTUVWXYZ012345", Out: filepath.Join(t.TempDir(), "w.json")}
	if _, err := r.Run(t.Context()); err == nil || !strings.Contains(err.Error(), "never end") || n > 4 {
		t.Fatalf("after %d requests: %v", n, err)
	}
}

// fakeClock is a clock whose waits pass at once, and are added up.
type fakeClock struct {
	now    time.Time
	waited time.Duration
}

func (c *fakeClock) Now() time.Time { return c.now }
func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	c.now = c.now.Add(d)
	c.waited += d
	return ctx.Err()
}

// renamed is a channel_renamed event of channel ch.
func renamed(id string, at int64, title string) string {
	return fmt.Sprintf(`{"id":%q,"createdAt":%d,"type":"channel_renamed","channel":{"id":"ch1","platformChannelId":"UC1","title":%q,"thumbnailUrl":null},"oldChannelTitle":"a","newChannelTitle":%q}`, id, at, title, title)
}

// feedServer serves a feed of pages pages of per events each, event n
// made by ev (nil: not served); its tracked videos are empty.
func feedServer(t *testing.T, pages, per int, ev func(n int) string, mod func(w http.ResponseWriter, r *http.Request) bool) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if mod != nil && mod(w, r) {
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/api/public/videos" {
			fmt.Fprint(w, `{"videos":[],"missingVideoIds":[]}`)
			return
		}
		page := 0
		fmt.Sscan(r.URL.Query().Get("cursor"), &page)
		var evs []string
		for i := range per {
			evs = append(evs, ev(page*per+i))
		}
		next := "null"
		if page+1 < pages {
			next = fmt.Sprintf(`"%d"`, page+1)
		}
		fmt.Fprintf(w, `{"events":[%s],"nextCursor":%s}`, strings.Join(evs, ","), next)
	}))
	t.Cleanup(srv.Close)
	return srv
}

const hostileKey = "tcm_ABCDEFGHIJKLMNOPQRSTUVWXYZ012345"

var recordedAt = time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)

// TestRepeatedIDsAreNotLostSilently: a server that gives 705 events 439
// ids (the contract's EVENT-ID-UNIQUE broken) gets a recording of the 439
// it can hold that says it is incomplete and names the 266 it dropped; an
// event shown twice with the same content is one event, and nothing is
// dropped for it.
func TestRepeatedIDsAreNotLostSilently(t *testing.T) {
	t.Parallel()
	base := recordedAt.UnixMilli()
	srv := feedServer(t, 5, 141, func(n int) string {
		return renamed(fmt.Sprintf("e%d", n%439), base-int64(n)*1000, fmt.Sprintf("title %d", n))
	}, nil)
	var log bytes.Buffer
	out := filepath.Join(t.TempDir(), "w.json")
	r := &Recorder{Target: srv.URL, ProKey: hostileKey, Out: out, Clock: &fakeClock{now: recordedAt}, Log: &log}
	res, err := r.Run(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	rec := res.Recording
	if rec.Complete || rec.Events != 439 || len(rec.Dropped) == 0 || !strings.HasPrefix(rec.Dropped[0], "266 events") || !strings.Contains(rec.Dropped[0], "EVENT-ID-UNIQUE") {
		t.Fatalf("complete %v, %d events, dropped %q", rec.Complete, rec.Events, rec.Dropped)
	}
	if !strings.Contains(rec.Dropped[1], `event 440, id "e0"`) || !strings.Contains(rec.String(), "incomplete: 266 events") {
		t.Errorf("the dropped events are not named: %q; %s", rec.Dropped, rec.String())
	}
	b, _ := os.ReadFile(out)
	if !bytes.Contains(b, []byte(`"dropped":["266 events`)) {
		t.Errorf("the file does not say what it dropped")
	}
	if !strings.Contains(log.String(), "was shown before with other content (EVENT-ID-UNIQUE)") {
		t.Errorf("the log does not tell the clash as it comes:\n%s", log.String())
	}

	// The same event shown again (an overlap of pages): one event, complete.
	same := feedServer(t, 3, 10, func(n int) string {
		n = min(n, 25)
		return renamed(fmt.Sprintf("e%d", n), base-int64(n)*1000, "same")
	}, nil)
	r = &Recorder{Target: same.URL, ProKey: hostileKey, Out: filepath.Join(t.TempDir(), "w.json"), Clock: &fakeClock{now: recordedAt}}
	res, err = r.Run(t.Context())
	if err != nil || !res.Recording.Complete || res.Recording.Events != 26 || len(res.Recording.Dropped) != 0 {
		t.Fatalf("%v: %+v", err, res)
	}
}

// TestTimeOutOfRangeStopsAtOnce: an event of the year 300000, or of
// createdAt -1, stops the recording at the page that holds it, named, not
// after every request; the page is not kept, so a resume against a server
// that mended it completes.
func TestTimeOutOfRangeStopsAtOnce(t *testing.T) {
	t.Parallel()
	for _, bad := range []int64{9_400_000_000_000_000, -1} {
		base := recordedAt.UnixMilli()
		broken := true
		var requests int
		srv := feedServer(t, 5, 20, func(n int) string {
			at := base - int64(n)*1000
			if n == 47 && broken {
				at = bad
			}
			return renamed(fmt.Sprintf("e%d", n), at, "t")
		}, func(w http.ResponseWriter, r *http.Request) bool { requests++; return false })
		out := filepath.Join(t.TempDir(), "w.json")
		r := &Recorder{Target: srv.URL, ProKey: hostileKey, Out: out, Clock: &fakeClock{now: recordedAt}}
		_, err := r.Run(t.Context())
		if err == nil || !strings.Contains(err.Error(), `pro feed, page 3, event 8 (id "e47")`) || !strings.Contains(err.Error(), fmt.Sprintf("createdAt %d is out of range", bad)) || requests != 3 {
			t.Fatalf("createdAt %d: after %d requests: %v", bad, requests, err)
		}
		if b, _ := os.ReadFile(out + ".partial"); bytes.Contains(b, []byte(`e47`)) || !bytes.Contains(b, []byte(`e39`)) {
			t.Fatalf("createdAt %d: the progress holds the bad page, or not the pages before it", bad)
		}
		broken = false
		res, err := r.Run(t.Context())
		if err != nil || !res.Resumed || res.Recording.Events != 100 {
			t.Fatalf("createdAt %d: the resume: %v %+v", bad, err, res)
		}
	}
}

// TestImplausibleDateIsNotTheClock: a Date of 9999 is not taken as the
// recording's time (served, the world would be stuck there); a Date a
// little ahead of the events is.
func TestImplausibleDateIsNotTheClock(t *testing.T) {
	t.Parallel()
	base := recordedAt.UnixMilli()
	for _, tc := range []struct {
		date string
		want time.Time
	}{
		{"Fri, 31 Dec 9999 23:59:59 GMT", recordedAt},
		{recordedAt.Add(time.Hour).Format(http.TimeFormat), recordedAt.Add(time.Hour)},
	} {
		srv := feedServer(t, 2, 10, func(n int) string { return renamed(fmt.Sprintf("e%d", n), base-int64(n)*1000, "t") },
			func(w http.ResponseWriter, r *http.Request) bool { w.Header().Set("Date", tc.date); return false })
		var log bytes.Buffer
		r := &Recorder{Target: srv.URL, ProKey: hostileKey, Out: filepath.Join(t.TempDir(), "w.json"), Clock: &fakeClock{now: recordedAt}, Log: &log}
		res, err := r.Run(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if got := time.UnixMilli(res.Recording.RecordedAt).UTC(); !got.Equal(tc.want) {
			t.Errorf("Date %s: recorded at %s, want %s", tc.date, got, tc.want)
		}
		if said := strings.Contains(log.String(), "not taken as the recording's time"); said != (tc.want == recordedAt) {
			t.Errorf("Date %s: the log says it was not taken: %v\n%s", tc.date, said, log.String())
		}
	}
}

// TestServerWaitsAreBounded: a server that answers every request after
// the first with 429 and Retry-After: 599 (each within --max-wait) makes
// the recorder wait no more than --max-total-wait in all: the recording
// ends there, cut and saying so, instead of waiting for weeks.
func TestServerWaitsAreBounded(t *testing.T) {
	t.Parallel()
	base := recordedAt.UnixMilli()
	var requests int
	srv := feedServer(t, 50, 10, func(n int) string { return renamed(fmt.Sprintf("e%d", n), base-int64(n)*1000, "t") },
		func(w http.ResponseWriter, r *http.Request) bool {
			requests++
			if requests == 1 {
				return false
			}
			w.Header().Set("Retry-After", "599")
			w.WriteHeader(http.StatusTooManyRequests)
			return true
		})
	clock := &fakeClock{now: recordedAt}
	var log bytes.Buffer
	r := &Recorder{Target: srv.URL, ProKey: hostileKey, Out: filepath.Join(t.TempDir(), "w.json"), Clock: clock, Log: &log, MaxTotalWait: 30 * time.Minute}
	res, err := r.Run(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if clock.waited > 30*time.Minute || res.Recording.Complete || res.Recording.Bounded != "--max-total-wait" || res.Recording.Events != 10 {
		t.Fatalf("waited %s; %+v", clock.waited, res.Recording)
	}
	if !strings.Contains(log.String(), "more than --max-total-wait 30m0s") || !strings.Contains(res.Recording.String(), "incomplete: --max-total-wait stopped it") {
		t.Errorf("it does not say why it ended: %s\n%s", res.Recording.String(), log.String())
	}
}

// TestNothingRecordedNamesTheBound: a bound met before the first answer
// was kept fails naming the bound and its value.
func TestNothingRecordedNamesTheBound(t *testing.T) {
	t.Parallel()
	base := recordedAt.UnixMilli()
	srv := feedServer(t, 2, 10, func(n int) string { return renamed(fmt.Sprintf("e%d", n), base-int64(n)*1000, "t") }, nil)
	out := filepath.Join(t.TempDir(), "w.json")
	r := &Recorder{Target: srv.URL, ProKey: hostileKey, Out: out, Clock: &fakeClock{now: recordedAt}, MaxBytes: 1}
	_, err := r.Run(t.Context())
	if err == nil || !strings.Contains(err.Error(), "--max-bytes 1") {
		t.Fatalf("%v", err)
	}
	// Raised, the same command resumes and records.
	r.MaxBytes = 0
	if res, err := r.Run(t.Context()); err != nil || res.Recording.Events != 20 || !res.Recording.Complete {
		t.Fatalf("with the bound raised: %v %+v", err, res)
	}
}

// TestErrorsNameOnlyItsFlags: what stops a recording names no setting
// that record does not have (the suite's --max-body, --request-timeout).
func TestErrorsNameOnlyItsFlags(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "5000000")
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	r := &Recorder{Target: srv.URL, ProKey: hostileKey, Out: filepath.Join(t.TempDir(), "w.json"), Clock: &fakeClock{now: recordedAt}}
	_, err := r.Run(t.Context())
	if err == nil || !strings.Contains(err.Error(), "larger than 4 MiB") {
		t.Fatalf("%v", err)
	}
	for _, flag := range []string{"--max-body", "--request-timeout"} {
		if strings.Contains(err.Error(), flag) {
			t.Errorf("the error names %s, which record does not have: %v", flag, err)
		}
	}
}
