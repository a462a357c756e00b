package simulator

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tcmkit/tcmkit/simulator/world"
)

// An import moves the clock no further than an advance may: an export
// whose now (the simulator's, the world's or both) was moved 300 years, or
// MaxAdvance and a millisecond, is a 400 that names the range; one moved
// an hour is imported, and the next feed request is answered at once.
func TestImportMovesTheClockWithinAnAdvance(t *testing.T) {
	s := newServer(t, Config{Seed: 1})
	var buf bytes.Buffer
	if err := s.Export(&buf); err != nil {
		t.Fatal(err)
	}
	moved := func(head, inWorld int64) string { // milliseconds
		var doc map[string]json.RawMessage
		if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
			t.Fatal(err)
		}
		var now int64
		json.Unmarshal(doc["now"], &now)
		doc["now"], _ = json.Marshal(now + head)
		var w map[string]json.RawMessage
		json.Unmarshal(doc["world"], &w)
		var wnow int64
		json.Unmarshal(w["now"], &wnow)
		w["now"], _ = json.Marshal(wnow + inWorld)
		doc["world"], _ = json.Marshal(w)
		// format first, world last, as Import wants them
		var out bytes.Buffer
		out.WriteString(`{"format":` + string(doc["format"]))
		for _, k := range []string{"now", "keyCounter", "seeded", "keys", "world"} {
			out.WriteString(`,"` + k + `":` + string(doc[k]))
		}
		out.WriteString("}")
		return out.String()
	}
	const years300 = 300 * 365 * 24 * 3_600_000
	const hour = 3_600_000
	for name, doc := range map[string]string{
		"both 300 years on":          moved(years300, years300),
		"the world 300 years on":     moved(0, years300),
		"the clock 300 years on":     moved(years300, 0),
		"the clock past an advance":  moved(MaxAdvance.Milliseconds()+1, 0),
		"the clock before the world": moved(-hour, 0),
	} {
		r := s.serve(t, ctl("PUT", "world", doc))
		if e := r.ErrorBody(t); r.status != 400 || !strings.Contains(e.Message, "out of range") && !strings.Contains(e.Message, "behind now") {
			t.Errorf("%s: %d %.300s", name, r.status, r.body)
		}
	}
	if r := s.serve(t, ctl("PUT", "world", moved(hour, 0))); r.status != 200 {
		t.Fatalf("an hour on: %d %s", r.status, r.body)
	}
	done := make(chan response, 1)
	go func() { done <- s.serve(t, feedReq(s.Seeded().Pro, "")) }()
	select {
	case r := <-done:
		if r.status != 200 {
			t.Errorf("feed after the import: %d", r.status)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the feed request after an import did not answer")
	}
}

// A realtime clock stops at the last time it keeps, however fast it runs
// and whenever it started.
func TestRealtimeClockStopsAtTheEnd(t *testing.T) {
	wall := &fakeWall{t: time.Unix(1_000_000, 0)}
	s := newServer(t, Config{Seed: 1, Speed: MaxSpeed, Start: time.UnixMilli(world.MaxTime - 3_600_000), History: time.Hour, now: wall.Now})
	for _, d := range []time.Duration{time.Second, time.Hour, 100 * 365 * 24 * time.Hour} {
		wall.Add(d)
		if now := s.Now().UnixMilli(); now > world.MaxTime || now < world.MaxTime-3_600_000 {
			t.Fatalf("after %s of real time the clock is at %d, past %d", d, now, world.MaxTime)
		}
	}
	if r := s.serve(t, feedReq(s.Seeded().Pro, "")); r.status != 200 {
		t.Errorf("feed at the end of time: %d %s", r.status, r.body)
	}
	var buf bytes.Buffer
	if err := s.Export(&buf); err != nil {
		t.Fatal(err)
	}
	if err := s.Import(&buf); err != nil {
		t.Errorf("its own export at the end of time: %v", err)
	}
}

// Polling forward on behalf of a request stops when the request is gone
// or the server closes, between two steps.
func TestAdvanceStopsWithItsRequest(t *testing.T) {
	s := newServer(t, Config{Seed: 1})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start := s.Now()
	if _, err := s.advance(ctx, MaxAdvance); err == nil {
		t.Fatal("an advance whose request is gone ran to its end")
	}
	if moved := s.Now().Sub(start); moved > advanceStep {
		t.Errorf("it moved the clock %s after its request was gone", moved)
	}
	s.Close()
	if _, err := s.advance(context.Background(), MaxAdvance); err != errClosed {
		t.Errorf("an advance on a closed server: %v", err)
	}
}

// What the simulator exports it can import: the export says its size
// ahead (Content-Length), imports again under the same bound, and an
// export larger than an import takes is a 409 that says so, not a body
// its own import refuses.
func TestExportFitsItsOwnImport(t *testing.T) {
	s := newServer(t, Config{Seed: 1})
	r := s.serve(t, ctl("GET", "world", ""))
	if r.status != 200 || r.header.Get("Content-Length") != strconv.Itoa(len(r.body)) {
		t.Fatalf("export: %d, Content-Length %q for %d bytes", r.status, r.header.Get("Content-Length"), len(r.body))
	}
	size := int64(len(r.body))
	small := newServer(t, Config{Seed: 1, MaxImportBytes: size - 1})
	refused := small.serve(t, ctl("GET", "world", ""))
	if e := refused.ErrorBody(t); refused.status != 409 || !strings.Contains(e.Message, "--max-import-bytes "+strconv.FormatInt(size, 10)) {
		t.Errorf("an export past the import's bound: %d %s", refused.status, refused.body)
	}
	fits := newServer(t, Config{Seed: 1, MaxImportBytes: size})
	exp := fits.serve(t, ctl("GET", "world", ""))
	if back := fits.serve(t, ctl("PUT", "world", string(exp.body))); exp.status != 200 || back.status != 200 {
		t.Errorf("an export of the bound's size: %d, its import %d %s", exp.status, back.status, back.body)
	}
	if again := fits.serve(t, ctl("GET", "world", "")); !bytes.Equal(again.body, exp.body) {
		t.Errorf("the export of the import differs (%d vs %d bytes)", len(again.body), len(exp.body))
	}
}

// New refuses a setting past what the simulator can do before any work,
// naming the setting and its range; the bounds themselves are accepted.
func TestConfigOutOfRange(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{FeedLimit: 1_000_000_000}, "--feed-limit (Config.FeedLimit) 1000000000 is out of range: want -1 (unlimited) or 1..10000"},
		{Config{VideosLimit: -2}, "--videos-limit"},
		{Config{JournalSize: 100_000_000}, "1..100000"},
		{Config{MaxEvents: MaxEventsBound + 1}, "--max-events"},
		{Config{MaxImportBytes: MaxImportBytesBound + 1}, "--max-import-bytes"},
		{Config{MaxAccounts: MaxKeys + 1}, "--max-accounts"},
		{Config{Speed: MaxSpeed * 2}, "--speed"},
		{Config{Start: time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC)}, "--start"},
		{Config{Start: time.UnixMilli(world.MaxTime + 1)}, "--start"},
		{Config{Start: time.Unix(3600, 0), History: 2 * time.Hour}, "the history, 2h0m0s, must begin in 1970 or later"},
	} {
		if _, err := New(tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.cfg, err, tc.want)
		}
	}
	for _, cfg := range []Config{
		{FeedLimit: MaxRateLimit, VideosLimit: -1, JournalSize: -1, Channels: 1, History: time.Hour},
		{JournalSize: MaxJournalSize, Channels: 1, History: time.Hour, Start: time.UnixMilli(world.MaxTime)},
	} {
		s, err := New(cfg)
		if err != nil {
			t.Errorf("%+v: %v", cfg, err)
			continue
		}
		s.Close()
	}
}
