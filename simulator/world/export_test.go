package world

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tcmkit/tcmkit/schemas"
)

func TestExportImportRoundTrip(t *testing.T) {
	w := newWorld(t, Config{Seed: 21, Channels: 6, History: 8 * 24 * time.Hour, EdgeRate: 0.3})
	w.CreateAccount(Pro)
	w.CreateAccount(Free)
	w.SetPlan("acc_2", Pro)
	// Stop mid-tick, with A/B tests running, so the schedule's state matters.
	w.AdvanceTo(w.Now().Add(7*time.Hour + 7*time.Minute + 7*time.Millisecond))
	w.SetEdgeRate(0.6)

	saved := export(t, w)
	back, err := Import(bytes.NewReader(saved))
	if err != nil {
		t.Fatalf("Import: %v", err)
	}
	if again := export(t, back); !bytes.Equal(saved, again) {
		t.Fatalf("export of the import differs (%d vs %d bytes)", len(saved), len(again))
	}
	same := func(what string) {
		t.Helper()
		for _, acc := range []string{"acc_1", "acc_2"} {
			pa, _ := page(t, w, acc, "", schemas.MaxPageSize)
			_, ra := page(t, w, acc, "", schemas.MaxPageSize)
			_, rb := page(t, back, acc, "", schemas.MaxPageSize)
			if !bytes.Equal(ra, rb) {
				t.Errorf("%s: first pages of %s differ", what, acc)
			}
			if pa.NextCursor != nil {
				_, ra = page(t, w, acc, *pa.NextCursor, 3)
				_, rb = page(t, back, acc, *pa.NextCursor, 3) // a cursor survives the round trip
				if !bytes.Equal(ra, rb) {
					t.Errorf("%s: second pages of %s differ", what, acc)
				}
			}
			ids := []string{w.videos[0].ID, w.videos[len(w.videos)-1].ID, "nope"}
			va, _ := w.Videos(acc, ids)
			vb, _ := back.Videos(acc, ids)
			if !bytes.Equal(va, vb) {
				t.Errorf("%s: Videos of %s differ", what, acc)
			}
		}
	}
	same("after import")

	for _, x := range []*World{w, back} {
		x.AdvanceTo(x.Now().Add(3 * 24 * time.Hour))
		x.PollAll()
		x.CreateAccount(Pro)
		x.AdvanceTo(x.Now().Add(90 * time.Minute))
	}
	same("after 3 days more")
	if a, b := export(t, w), export(t, back); !bytes.Equal(a, b) {
		t.Errorf("the original and the import evolved differently (%d vs %d bytes)", len(a), len(b))
	}
}

func TestImportRejectsBrokenExports(t *testing.T) {
	w := newWorld(t, Config{Seed: 3, Channels: 2, History: 24 * time.Hour})
	w.CreateAccount(Pro)
	good := string(export(t, w))
	stream := binary.AppendVarint(nil, 1000)
	stream = append(stream, 0)
	stream = binary.AppendVarint(stream, -5) // views fall below zero
	negative := base64.StdEncoding.EncodeToString(append(stream, 0, 0))
	cases := map[string]string{
		"empty":            "",
		"not JSON":         "{nope",
		"truncated":        good[:len(good)/2],
		"wrong version":    strings.Replace(good, `"version":1`, `"version":99`, 1),
		"bad channels":     strings.Replace(good, `"channels":2`, `"channels":3`, 1),
		"bad edge rate":    strings.Replace(good, `"edgeRate":0,"now"`, `"edgeRate":2,"now"`, 1),
		"unknown type":     strings.Replace(good, `"type":"video_published"`, `"type":"video_deleted"`, 1),
		"unknown plan":     strings.Replace(good, `"plan":"pro"`, `"plan":"gold"`, 1),
		"corrupt samples":  strings.Replace(good, `"samples":"`, `"samples":"/w==","x":"`, 1),
		"negative sample":  strings.Replace(good, `"samples":"`, `"samples":"`+negative+`","x":"`, 1),
		"unknown channel":  strings.Replace(good, `"channel":{"id":"ch_`, `"channel":{"id":"xx_`, 1),
		"event not object": strings.Replace(good, `"events":[{`, `"events":[7,{`, 1),
		"invalid event":    strings.Replace(good, `"isMembersOnly":`, `"isMembersOnlyX":`, 1),
		"avatar not a URI": strings.Replace(good, `"avatar":"https://`, `"avatar":"::`, 1),
		"negative views":   strings.Replace(good, `"views":`, `"views":-`, 1),
	}
	for name, doc := range cases {
		if doc == good {
			t.Fatalf("%s: the case did not change the export", name)
		}
		if _, err := Import(strings.NewReader(doc)); err == nil {
			t.Errorf("%s: Import accepted it", name)
		}
	}
}

// The export is written piece by piece, in the bytes one json.Marshal of
// the whole snapshot gives (the format does not move), and the size told
// ahead is the size written; a refusal writes nothing.
func TestExportStreamsTheSameBytesAndTellsItsSize(t *testing.T) {
	w, err := New(Config{Seed: 3, Channels: 3, History: 48 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	var told int64
	var got bytes.Buffer
	if err := w.ExportSized(&got, func(n int64) error { told = n; return nil }); err != nil {
		t.Fatal(err)
	}
	if told != int64(got.Len()) {
		t.Errorf("told %d bytes, wrote %d", told, got.Len())
	}
	s := snapshot{Version: exportVersion, Config: configState{Seed: w.cfg.Seed, Channels: w.cfg.Channels, HistoryMs: w.cfg.History.Milliseconds(),
		Start: w.cfg.Start.UnixMilli(), EdgeRate: w.cfg.EdgeRate}, EdgeRate: w.edgeRate, Now: w.now.Load(), Tick: w.sched.tick,
		Channels: w.channels, Videos: w.videos}
	for _, a := range w.accounts {
		pa := a.public(w)
		s.Accounts = append(s.Accounts, accountState{pa.ID, pa.Plan, pa.Channels})
	}
	whole, _ := json.Marshal(s)
	if head, _, _ := bytes.Cut(got.Bytes(), []byte(`,"events":[`)); !bytes.Equal(head, whole[:len(whole)-1]) {
		t.Errorf("the streamed head differs from json.Marshal's:\n%.300s\n%.300s", head, whole)
	}
	var none bytes.Buffer
	if err := w.ExportSized(&none, func(int64) error { return errors.New("no") }); err == nil || none.Len() != 0 {
		t.Errorf("a refused export wrote %d bytes (err %v)", none.Len(), err)
	}
}

// TestAnAccountCreatedAfterAnImportHasAnIDOfItsOwn: an import may hold
// any account ids (a recording leaves out an account whose feed showed
// nothing); the account created next takes an id that none holds, as in
// a world built in memory, where an id names one account.
func TestAnAccountCreatedAfterAnImportHasAnIDOfItsOwn(t *testing.T) {
	w := newWorld(t, Config{Seed: 3, Channels: 3, History: 24 * time.Hour})
	w.CreateAccount(Pro)
	w.CreateAccount(Free)
	var s map[string]json.RawMessage
	if err := json.Unmarshal(export(t, w), &s); err != nil {
		t.Fatal(err)
	}
	var accs []accountState
	json.Unmarshal(s["accounts"], &accs)
	s["accounts"], _ = json.Marshal(accs[1:]) // acc_2 only
	raw, _ := json.Marshal(s)
	back, err := Import(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	a := back.CreateAccount(Pro)
	b := back.CreateAccount(Free)
	if a.ID == "acc_2" || b.ID == "acc_2" || a.ID == b.ID {
		t.Fatalf("accounts created after the import: %s and %s, beside acc_2", a.ID, b.ID)
	}
	if p, _ := back.PlanOf("acc_2"); p != Free {
		t.Errorf("acc_2 is now %s: another account took its id", p)
	}
}
