package variant

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/schemas/jsondoc"
	"github.com/tcmkit/tcmkit/simulator"
)

// A heavy draw conforms (every answer validates) and serves what it says:
// titles of 300+ characters with combining marks, emoji sequences,
// right-to-left and zero-width characters, in the feed and in VideoEntries;
// channel-level events in VideoEntries; hourly stat samples over
// the last 30 days; members the contract does not list on every event.
func TestHeavyDrawServesAHeavyWorld(t *testing.T) {
	d := New(3).Heavy()
	d.Escape, d.EdgeRate, d.Channels, d.History = "minimal", 0, 6, 14*24*time.Hour
	checkDraw(t, d)

	sim, err := d.Server(simulator.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
	h := &harness{t: t, d: d, sim: sim, h: sim.Handler()}
	pro := "Bearer " + sim.Seeded().Pro
	heavy := func(where, s string) {
		t.Helper()
		if utf8.RuneCountInString(s) < 300 || !strings.Contains(s, "\u200b") || !strings.Contains(s, "\u0301") || !strings.Contains(s, "\u202b") {
			t.Errorf("%s is not a heavy title: %q", where, s)
		}
	}
	page := h.do("GET", schemas.PathFeed+"?limit=200", pro, "", "")
	var ids []string
	for _, e := range jsondoc.Items(page.doc, "/events") {
		if !jsondoc.Has(e, "/object") || !jsondoc.Has(e, "/source/poller") {
			t.Errorf("an event without the draw's extra members: %s", jsondoc.Encode(e))
		}
		for _, ptr := range []string{"/channel/title", "/video/currentTitle", "/newTitle", "/newChannelTitle", "/titles/0"} {
			if s, ok := jsondoc.String(e, ptr); ok {
				heavy("feed event "+ptr, s)
			}
		}
		if v, ok := jsondoc.String(e, "/video/platformVideoId"); ok && !slices.Contains(ids, v) && len(ids) < schemas.MaxVideoIDs {
			ids = append(ids, v)
		}
	}
	body, _ := json.Marshal(map[string][]string{"videoIds": ids})
	answer := h.do("POST", schemas.PathVideos, pro, "application/json", string(body))
	channelLevel, hourlyWeek := 0, 0
	for _, entry := range jsondoc.Items(answer.doc, "/videos") {
		for _, ptr := range []string{"/video/currentTitle", "/video/channel/title"} {
			s, _ := jsondoc.String(entry, ptr)
			heavy("entry "+ptr, s)
		}
		for _, e := range jsondoc.Items(entry, "/events") {
			if typ, _ := jsondoc.String(e, "/type"); schemas.IsChannelLevel(typ) {
				channelLevel++
			}
		}
		var last int64
		hourly := 0
		for i, s := range jsondoc.Items(entry, "/statSamples") {
			at, _ := jsondoc.Int(s, "/createdAt")
			if i > 0 && at-last <= time.Hour.Milliseconds() {
				hourly++
			}
			last = at
		}
		if hourly >= 6*24 {
			hourlyWeek++
		}
	}
	if channelLevel == 0 {
		t.Error("no VideoEntry holds a channel-level event")
	}
	if hourlyWeek == 0 {
		t.Error("no VideoEntry has a week of hourly samples")
	}
}

// A string written in each escaping reads back as itself, and holds no
// character that escaping forbids.
func TestStringsEscapeAndReadBack(t *testing.T) {
	texts := []string{"", "plain", "e\u0301 👨\u200d👩\u200d👧 \u202bשלום\u202c </script> & a/b \"q\" \\ \n\r\t\x01 \u2028\u2029 𝔘", New(1).Heavy().title("x")}
	for _, esc := range escapes {
		d := Draw{Escape: esc}
		for _, s := range texts {
			var b bytes.Buffer
			d.str(&b, s)
			var back string
			if err := json.Unmarshal(b.Bytes(), &back); err != nil || back != s {
				t.Errorf("%s: %q wrote %s, read back %q (%v)", esc, s, b.Bytes(), back, err)
			}
			out := b.String()
			if esc == "ascii" && strings.ContainsFunc(out, func(r rune) bool { return r >= 0x80 }) ||
				esc == "html" && strings.ContainsAny(out, "<>&") || esc == "slash" && strings.Contains(strings.ReplaceAll(out, `\/`, ""), "/") ||
				strings.ContainsAny(out, "\n\r\t\x01\u2028\u2029") {
				t.Errorf("%s: %q wrote %s", esc, s, out)
			}
		}
	}
}
