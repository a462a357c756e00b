package world

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"
)

// observe reads an account's whole feed and the entries of every video it
// named, as tcmkit record does through the API.
func observe(t *testing.T, w *World, ids ...string) Observed {
	t.Helper()
	o := Observed{Now: w.Now().UnixMilli()}
	seen := map[string]bool{}
	var videos []string
	var pro string
	for _, id := range ids {
		a, _ := w.Account(id)
		if a.Plan == Pro && pro == "" {
			pro = id
		}
		var feed []json.RawMessage
		chans := map[string]bool{}
		for cursor := ""; ; {
			page, err := w.FeedPage(id, cursor, 200)
			if err != nil {
				t.Fatal(err)
			}
			var p struct {
				Events     []json.RawMessage `json:"events"`
				NextCursor *string           `json:"nextCursor"`
			}
			if err := json.Unmarshal(page, &p); err != nil {
				t.Fatal(err)
			}
			feed = append(feed, p.Events...)
			if p.NextCursor == nil {
				break
			}
			cursor = *p.NextCursor
		}
		slices.Reverse(feed)
		for _, raw := range feed {
			var e struct {
				ID      string `json:"id"`
				Channel struct{ ID string }
				Video   *struct {
					ID string `json:"platformVideoId"`
				}
			}
			json.Unmarshal(raw, &e)
			chans[e.Channel.ID] = true
			if e.Video != nil && !seen[e.Video.ID] {
				seen[e.Video.ID] = true
				videos = append(videos, e.Video.ID)
			}
			o.Events = append(o.Events, raw)
		}
		acc := Account{ID: id, Plan: a.Plan}
		for c := range chans {
			acc.Channels = append(acc.Channels, c)
		}
		o.Accounts = append(o.Accounts, acc)
	}
	for i := 0; i < len(videos); i += 20 {
		body, err := w.Videos(pro, videos[i:min(i+20, len(videos))])
		if err != nil {
			t.Fatal(err)
		}
		var r struct {
			Videos []json.RawMessage `json:"videos"`
		}
		json.Unmarshal(body, &r)
		o.Entries = append(o.Entries, r.Videos...)
	}
	return o
}

func events(t *testing.T, w *World, account string) [][]byte {
	t.Helper()
	var out [][]byte
	for cursor := ""; ; {
		page, err := w.FeedPage(account, cursor, 200)
		if err != nil {
			t.Fatal(err)
		}
		var p struct {
			Events     []json.RawMessage `json:"events"`
			NextCursor *string           `json:"nextCursor"`
		}
		json.Unmarshal(page, &p)
		for _, e := range p.Events {
			out = append(out, e)
		}
		if p.NextCursor == nil {
			return out
		}
		cursor = *p.NextCursor
	}
}

func TestRecordedServesWhatWasShown(t *testing.T) {
	w, err := New(Config{Seed: 3, Channels: 4, History: 10 * 24 * time.Hour, EdgeRate: 0.2})
	if err != nil {
		t.Fatal(err)
	}
	pro := w.CreateAccountTracking(Pro, func(i int) bool { return i != 3 })
	free := w.CreateAccountTracking(Free, func(i int) bool { return i != 0 })
	o := observe(t, w, pro.ID, free.ID)
	r, err := Recorded(o)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{pro.ID, free.ID} {
		want, got := events(t, w, id), events(t, r, id)
		if len(want) != len(got) || len(want) == 0 {
			t.Fatalf("%s: %d events, want %d", id, len(got), len(want))
		}
		for i := range want {
			if !bytes.Equal(want[i], got[i]) {
				t.Fatalf("%s: event %d:\n got %s\nwant %s", id, i, got[i], want[i])
			}
		}
	}
	var ids []string
	for _, raw := range o.Entries {
		var e struct {
			Video struct {
				ID string `json:"platformVideoId"`
			} `json:"video"`
		}
		json.Unmarshal(raw, &e)
		ids = append(ids, e.Video.ID)
	}
	for i := 0; i < len(ids); i += 20 {
		want, _ := w.Videos(pro.ID, ids[i:min(i+20, len(ids))])
		got, err := r.Videos(pro.ID, ids[i:min(i+20, len(ids))])
		if err != nil || !bytes.Equal(want, got) {
			t.Fatalf("videos %d..: %v\n got %.3000s\nwant %.3000s", i, err, got, want)
		}
	}
	var buf bytes.Buffer
	if err := r.Export(&buf); err != nil {
		t.Fatal(err)
	}
	if _, err := Import(&buf); err != nil {
		t.Fatalf("the recording does not import: %v", err)
	}
}

func TestRecordedGrowsUnlessFrozen(t *testing.T) {
	w, err := New(Config{Seed: 5, Channels: 3, History: 7 * 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	a := w.CreateAccount(Pro)
	o := observe(t, w, a.ID)
	for _, frozen := range []bool{false, true} {
		r, err := Recorded(o)
		if err != nil {
			t.Fatal(err)
		}
		if frozen {
			r.Freeze()
		}
		before := r.Stats().Events
		n := r.AdvanceTo(r.Now().Add(20 * 24 * time.Hour))
		switch {
		case frozen && (n != 0 || r.Stats().Events != before):
			t.Errorf("frozen: %d new events", n)
		case !frozen && n == 0:
			t.Errorf("not frozen: no new event in 20 days (%d recorded)", before)
		}
		if got := r.Now(); !got.Equal(time.UnixMilli(o.Now).Add(20 * 24 * time.Hour).UTC()) {
			t.Errorf("frozen %v: now %v", frozen, got)
		}
	}
}

// TestCanonicalEvent: an event of another server's shape (key order, \u
// escapes, spaces, a member the contract does not name) is written in the
// kit's; one the contract refuses is refused.
func TestCanonicalEvent(t *testing.T) {
	kit := `{"id":"e1","createdAt":5,"type":"title_changed","channel":{"id":"c","platformChannelId":"UC1","title":"Caf\u00e9","thumbnailUrl":null},` +
		`"video":{"platformVideoId":"v1","currentTitle":"new","currentThumbnailUrl":"https://i.example/v1.jpg","publishedAt":1},"oldTitle":"old","newTitle":"new"}`
	var doc map[string]any
	json.Unmarshal([]byte(kit), &doc)
	doc["extra"] = true
	other, _ := json.MarshalIndent(doc, "", "  ") // sorted keys, indented
	other = bytes.Replace(other, []byte("é"), []byte(`\u00e9`), 1)
	want, _, err := CanonicalEvent([]byte(kit))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(want, []byte(strings.Replace(kit, `\u00e9`, "é", 1))) {
		t.Fatalf("the kit's own event changed:\n%s", want)
	}
	got, changed, err := CanonicalEvent(other)
	if err != nil || !changed || !bytes.Equal(got, want) {
		t.Fatalf("changed %v, err %v:\n got %s\nwant %s", changed, err, got, want)
	}
	if _, _, err := CanonicalEvent([]byte(`{"id":"e1","createdAt":5,"type":"title_changed"}`)); err == nil {
		t.Error("an event without channel, video or titles was taken")
	}
}
