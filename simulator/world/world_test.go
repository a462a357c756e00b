package world

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tcmkit/tcmkit/schemas"
)

// feedEvent is what the tests read of an event.
type feedEvent struct {
	ID        string `json:"id"`
	CreatedAt int64  `json:"createdAt"`
	Type      string `json:"type"`
	Channel   struct {
		ID string `json:"id"`
	} `json:"channel"`
	Video *struct {
		PlatformVideoID string `json:"platformVideoId"`
	} `json:"video"`
}

type feedPage struct {
	Events     []feedEvent `json:"events"`
	NextCursor *string     `json:"nextCursor"`
}

func newWorld(t testing.TB, cfg Config) *World {
	t.Helper()
	w, err := New(cfg)
	if err != nil {
		t.Fatalf("New(%+v): %v", cfg, err)
	}
	return w
}

func page(t testing.TB, w *World, account, cursor string, limit int) (feedPage, []byte) {
	t.Helper()
	raw, err := w.FeedPage(account, cursor, limit)
	if err != nil {
		t.Fatalf("FeedPage(%s, %q, %d): %v", account, cursor, limit, err)
	}
	var p feedPage
	if err := json.Unmarshal(raw, &p); err != nil {
		t.Fatalf("FeedPage(%s, %q, %d) is not JSON: %v", account, cursor, limit, err)
	}
	return p, raw
}

// walk reads an account's whole feed, validating every page; between pages
// it calls between (which may make the world evolve).
func walk(t testing.TB, w *World, account string, limit int, between func()) []feedEvent {
	t.Helper()
	var all []feedEvent
	cursor := ""
	for pages := 0; ; pages++ {
		p, raw := page(t, w, account, cursor, limit)
		if err := schemas.ValidateJSON(schemas.FeedPage, raw); err != nil {
			t.Fatalf("page %d of %s (limit %d): %v", pages, account, limit, err)
		}
		if len(p.Events) > limit {
			t.Fatalf("page %d has %d events, limit %d", pages, len(p.Events), limit)
		}
		all = append(all, p.Events...)
		if p.NextCursor == nil {
			return all
		}
		if len(p.Events) != limit {
			t.Fatalf("page %d has %d events and a next cursor; want a full page of %d", pages, len(p.Events), limit)
		}
		cursor = *p.NextCursor
		if between != nil {
			between()
		}
	}
}

func TestDefaultWorldHasEveryEventTypeAndAFullFirstPage(t *testing.T) {
	for _, seed := range []int64{0, 1, 2, 3, 42, -7, 1 << 40} {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			w := newWorld(t, Config{Seed: seed})
			seen := map[string]int{}
			for _, h := range w.log.heads {
				seen[schemas.EventTypes[h.typ]]++
			}
			for _, typ := range schemas.EventTypes {
				if seen[typ] == 0 {
					t.Errorf("no %s event in a default world (seen %v)", typ, seen)
				}
			}
			for _, plan := range []Plan{Pro, Free, Pro} {
				a := w.CreateAccount(plan)
				p, _ := page(t, w, a.ID, "", schemas.DefaultPageSize)
				if len(p.Events) != schemas.DefaultPageSize || p.NextCursor == nil {
					t.Errorf("first page of %s has %d events, next cursor %v; want a full page", a.ID, len(p.Events), p.NextCursor)
				}
			}
		})
	}
}

func TestConfigDefaultsAndBounds(t *testing.T) {
	w := newWorld(t, Config{})
	cfg := w.Config()
	if cfg.Channels != DefaultChannels || cfg.History != DefaultHistory || !cfg.Start.Equal(DefaultStart) {
		t.Errorf("defaults: %+v", cfg)
	}
	if !w.Now().Equal(DefaultStart) {
		t.Errorf("Now() = %v, want %v", w.Now(), DefaultStart)
	}
	if st := w.Stats(); st.Channels != DefaultChannels {
		t.Errorf("stats %+v", st)
	}
	for _, bad := range []Config{
		{Channels: -1}, {Channels: MaxChannels + 1}, {History: -time.Hour},
		{History: MaxHistory + time.Hour}, {EdgeRate: -0.1}, {EdgeRate: 1.5},
	} {
		if _, err := New(bad); err == nil {
			t.Errorf("New(%+v) accepted", bad)
		}
	}
}

func TestSameSeedSameBytesHoweverTimeAdvances(t *testing.T) {
	cfg := Config{Seed: 99, Channels: 5, History: 5 * 24 * time.Hour, EdgeRate: 0.2}
	oneStep := newWorld(t, cfg)
	manySteps := newWorld(t, cfg)
	other := newWorld(t, Config{Seed: 100, Channels: 5, History: 5 * 24 * time.Hour, EdgeRate: 0.2})
	for _, w := range []*World{oneStep, manySteps, other} {
		w.CreateAccount(Pro)
		w.CreateAccount(Free)
	}
	start := oneStep.Now()
	end := start.Add(26*time.Hour + 7*time.Minute + 3*time.Millisecond)

	made := oneStep.AdvanceTo(end)
	var sum int
	for t := start; t.Before(end); t = t.Add(schemas.PollInterval) {
		sum += manySteps.AdvanceTo(t)
		if mid := t.Add(7*time.Minute + 11*time.Millisecond); mid.Before(end) {
			sum += manySteps.AdvanceTo(mid) // mid-tick
		}
		sum += manySteps.AdvanceTo(t.Add(-time.Hour)) // the past: nothing
	}
	sum += manySteps.AdvanceTo(end)
	if made == 0 || made != sum {
		t.Errorf("one step made %d events, many steps %d", made, sum)
	}
	other.AdvanceTo(end)
	for _, w := range []*World{oneStep, manySteps, other} {
		w.SetEdgeRate(0.5)
		w.PollAll()
		w.AdvanceTo(end.Add(5 * time.Hour))
	}
	a, b, c := export(t, oneStep), export(t, manySteps), export(t, other)
	if !bytes.Equal(a, b) {
		t.Errorf("exports differ between one AdvanceTo and many (%d vs %d bytes)", len(a), len(b))
	}
	if bytes.Equal(a, c) {
		t.Error("seeds 99 and 100 made the same world")
	}
	for _, acc := range []string{"acc_1", "acc_2"} {
		pa, _ := oneStep.FeedPage(acc, "", schemas.MaxPageSize)
		pb, _ := manySteps.FeedPage(acc, "", schemas.MaxPageSize)
		if !bytes.Equal(pa, pb) {
			t.Errorf("first pages of %s differ", acc)
		}
	}
}

func export(t testing.TB, w *World) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := w.Export(&buf); err != nil {
		t.Fatalf("Export: %v", err)
	}
	return buf.Bytes()
}

// TestEverythingValidates walks every account's whole feed and asks for
// every video found, in worlds with and without edge cases.
func TestEverythingValidates(t *testing.T) {
	for _, edge := range []float64{0, 0.3, 1} {
		t.Run(fmt.Sprint("edge=", edge), func(t *testing.T) {
			w := newWorld(t, Config{Seed: 7, Channels: 6, History: 10 * 24 * time.Hour, EdgeRate: edge})
			w.AdvanceTo(w.Now().Add(3 * time.Hour))
			accounts := []Account{w.CreateAccount(Pro), w.CreateAccount(Pro), w.CreateAccount(Free)}
			for _, a := range accounts {
				events := walk(t, w, a.ID, schemas.MaxPageSize, nil)
				var ids []string
				for _, e := range events {
					if e.Video != nil && !slices.Contains(ids, e.Video.PlatformVideoID) {
						ids = append(ids, e.Video.PlatformVideoID)
					}
				}
				if len(ids) == 0 {
					t.Fatalf("%s: no video in the feed", a.ID)
				}
				for chunk := range slices.Chunk(ids, schemas.MaxVideoIDs) {
					raw, err := w.Videos(a.ID, chunk)
					if err != nil {
						t.Fatalf("Videos(%s): %v", a.ID, err)
					}
					if err := schemas.ValidateJSON(schemas.VideosResponse, raw); err != nil {
						t.Fatalf("Videos(%s, %v): %v", a.ID, chunk, err)
					}
					checkEntries(t, w, a, chunk, raw)
				}
			}
		})
	}
}

type videosResponse struct {
	Videos []struct {
		Video struct {
			PlatformVideoID string `json:"platformVideoId"`
			Channel         struct {
				ID string `json:"id"`
			} `json:"channel"`
		} `json:"video"`
		FirstSeenAt       int64       `json:"firstSeenAt"`
		HistoryWindowDays int         `json:"historyWindowDays"`
		IsGraphLocked     bool        `json:"isGraphLocked"`
		Events            []feedEvent `json:"events"`
		StatSamples       []struct {
			ViewCount *int64 `json:"viewCount"`
			CreatedAt int64  `json:"createdAt"`
		} `json:"statSamples"`
	} `json:"videos"`
	MissingVideoIDs []string `json:"missingVideoIds"`
}

// checkEntries checks what the schema cannot: each entry is the video asked
// for, in request order, with its own events newest first and its samples
// oldest first, inside the window, at most one per hour.
func checkEntries(t *testing.T, w *World, a Account, ids []string, raw []byte) {
	t.Helper()
	var r videosResponse
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Videos)+len(r.MissingVideoIDs) != len(ids) {
		t.Fatalf("%d entries and %d missing for %d distinct ids", len(r.Videos), len(r.MissingVideoIDs), len(ids))
	}
	now := w.Now().UnixMilli()
	for i, e := range r.Videos {
		id := e.Video.PlatformVideoID
		if id != ids[i] {
			t.Errorf("entry %d is %s, want %s (request order)", i, id, ids[i])
		}
		if !slices.Contains(a.Channels, e.Video.Channel.ID) {
			t.Errorf("%s: channel %s is not tracked by %s", id, e.Video.Channel.ID, a.ID)
		}
		if e.HistoryWindowDays != a.Plan.WindowDays() {
			t.Errorf("%s: historyWindowDays %d for plan %s", id, e.HistoryWindowDays, a.Plan)
		}
		from := now - int64(e.HistoryWindowDays)*dayMs
		if want := a.Plan != Pro || e.FirstSeenAt < from; e.IsGraphLocked != want {
			t.Errorf("%s: isGraphLocked %v, want %v", id, e.IsGraphLocked, want)
		}
		if len(e.Events) == 0 {
			t.Errorf("%s: no events, yet it came from the feed", id)
		}
		for j, ev := range e.Events {
			if ev.Video == nil || ev.Video.PlatformVideoID != id {
				t.Errorf("%s: event %s is not about it", id, ev.ID)
			}
			if j > 0 && ev.CreatedAt > e.Events[j-1].CreatedAt {
				t.Errorf("%s: events not newest first at %d", id, j)
			}
		}
		for j, s := range e.StatSamples {
			if s.CreatedAt < from || s.CreatedAt > now {
				t.Errorf("%s: sample at %d outside the window [%d, %d]", id, s.CreatedAt, from, now)
			}
			if j > 0 && s.CreatedAt/hourMs <= e.StatSamples[j-1].CreatedAt/hourMs {
				t.Errorf("%s: samples %d and %d not oldest first, one per hour", id, j-1, j)
			}
			if j > 0 && s.CreatedAt < now-hourlyFor && s.CreatedAt/dayMs == e.StatSamples[j-1].CreatedAt/dayMs {
				t.Errorf("%s: samples %d and %d older than %v on the same day", id, j-1, j, time.Duration(hourlyFor)*time.Millisecond)
			}
		}
	}
}

// createdAt never increases along the feed, and the events of one poll
// share it: the seeded world holds ties for a page boundary to fall in.
func TestCreatedAtNeverIncreasesAlongTheFeed(t *testing.T) {
	w := newWorld(t, Config{Seed: 3})
	w.AdvanceTo(w.Now().Add(48 * time.Hour))
	a := w.CreateAccount(Pro)
	events := walk(t, w, a.ID, 37, nil)
	if len(events) != len(w.log.heads) {
		t.Fatalf("the first account sees %d of %d events; it tracks every channel", len(events), len(w.log.heads))
	}
	ids, ties := map[string]bool{}, 0
	for i, e := range events {
		if i > 0 && e.CreatedAt > events[i-1].CreatedAt {
			t.Fatalf("event %d (%s) createdAt %d, previous %d", i, e.ID, e.CreatedAt, events[i-1].CreatedAt)
		}
		if i > 0 && e.CreatedAt == events[i-1].CreatedAt {
			ties++
		}
		if ids[e.ID] {
			t.Fatalf("event id %s twice", e.ID)
		}
		ids[e.ID] = true
	}
	if ties == 0 {
		t.Error("no two neighbouring events share a createdAt: the events of one poll should")
	}
}

// TestWalkNeverRepeatsOrSkips walks while the world makes events at the head
// between pages: the walk returns exactly the events that existed when it
// started, in order.
func TestWalkNeverRepeatsOrSkips(t *testing.T) {
	for _, limit := range []int{1, 7, schemas.DefaultPageSize, schemas.MaxPageSize} {
		t.Run(fmt.Sprint(limit), func(t *testing.T) {
			w := newWorld(t, Config{Seed: 11, Channels: 8, History: 7 * 24 * time.Hour})
			a := w.CreateAccount(Free)
			before := walk(t, w, a.ID, schemas.MaxPageSize, nil)
			made := 0
			during := walk(t, w, a.ID, limit, func() {
				made += w.AdvanceTo(w.Now().Add(30 * time.Minute))
			})
			if made == 0 {
				t.Fatal("the world made no events during the walk")
			}
			if len(during) != len(before) {
				t.Fatalf("walk during changes saw %d events, before %d", len(during), len(before))
			}
			for i := range before {
				if during[i].ID != before[i].ID {
					t.Fatalf("event %d is %s, want %s", i, during[i].ID, before[i].ID)
				}
			}
			after := walk(t, w, a.ID, schemas.MaxPageSize, nil)
			if len(after) <= len(before) || after[len(after)-len(before)].ID != before[0].ID {
				t.Errorf("new events did not arrive at the head: %d before, %d after", len(before), len(after))
			}
		})
	}
}

func TestNextCursorIsNullExactlyWhenNoOlderEventRemains(t *testing.T) {
	w := newWorld(t, Config{Seed: 5, Channels: 3, History: 3 * 24 * time.Hour})
	a := w.CreateAccount(Pro)
	n := len(walk(t, w, a.ID, schemas.MaxPageSize, nil))
	for _, limit := range []int{1, 2, 3, n - 1, n, n + 1} {
		if limit < 1 {
			continue
		}
		// walk already fails on a short page with a cursor; count pages here.
		pages, cursor := 0, ""
		for {
			p, _ := page(t, w, a.ID, cursor, limit)
			pages++
			if p.NextCursor == nil {
				break
			}
			cursor = *p.NextCursor
		}
		if want := (n + limit - 1) / limit; pages != want {
			t.Errorf("limit %d over %d events: %d pages, want %d (no empty last page)", limit, n, pages, want)
		}
	}
	empty := newWorld(t, Config{Seed: 5, Channels: 1, History: time.Millisecond})
	e := empty.CreateAccount(Pro)
	if raw, err := empty.FeedPage(e.ID, "", 10); err != nil || string(raw) != `{"events":[],"nextCursor":null}` {
		t.Errorf("empty feed: %s, %v", raw, err)
	}
}

func TestAppendFeedPageAppends(t *testing.T) {
	w := newWorld(t, Config{Seed: 1})
	a := w.CreateAccount(Pro)
	want, _ := w.FeedPage(a.ID, "", 10)
	got, err := w.AppendFeedPage([]byte("prefix"), a.ID, "", 10)
	if err != nil || string(got) != "prefix"+string(want) {
		t.Errorf("AppendFeedPage: %v, %.40s", err, got)
	}
	if got, err := w.AppendFeedPage([]byte("prefix"), a.ID, "bad", 10); !errors.Is(err, ErrCursor) || string(got) != "prefix" {
		t.Errorf("AppendFeedPage with a bad cursor: %q, %v", got, err)
	}
}

func TestAppendVideosAppends(t *testing.T) {
	w := newWorld(t, Config{Seed: 1})
	a := w.CreateAccount(Pro)
	ids := []string{w.videos[3].ID, "nope"}
	want, _ := w.Videos(a.ID, ids)
	got, err := w.AppendVideos([]byte("prefix"), a.ID, ids)
	if err != nil || string(got) != "prefix"+string(want) {
		t.Errorf("AppendVideos: %v, %.40s", err, got)
	}
	if got, err := w.AppendVideos([]byte("prefix"), "acc_9", ids); !errors.Is(err, ErrNoAccount) || string(got) != "prefix" {
		t.Errorf("AppendVideos for an unknown account: %q, %v", got, err)
	}
}

func TestLimitIsClamped(t *testing.T) {
	w := newWorld(t, Config{Seed: 1})
	a := w.CreateAccount(Pro)
	for limit, want := range map[int]int{-5: 1, 0: 1, 1: 1, 3: 3, schemas.MaxPageSize + 1: schemas.MaxPageSize, 1 << 30: schemas.MaxPageSize} {
		if p, _ := page(t, w, a.ID, "", limit); len(p.Events) != want {
			t.Errorf("limit %d gave %d events, want %d", limit, len(p.Events), want)
		}
	}
}

func TestBadCursorsAndAccounts(t *testing.T) {
	w := newWorld(t, Config{Seed: 1})
	other := newWorld(t, Config{Seed: 2})
	a, b := w.CreateAccount(Pro), w.CreateAccount(Pro)
	other.CreateAccount(Pro)
	p, _ := page(t, w, a.ID, "", 5)
	good := *p.NextCursor
	pb, _ := page(t, w, b.ID, "", 5)
	po, _ := page(t, other, a.ID, "", 5)
	flip := []byte(good)
	flip[len(flip)-1] ^= 1
	cases := map[string]string{
		"garbage":           "not a cursor!",
		"truncated":         good[:len(good)-1],
		"extended":          good + "A",
		"padded":            good + "==",
		"altered":           string(flip),
		"another account's": *pb.NextCursor,
		"another seed's":    *po.NextCursor,
		"whitespace":        " " + good[1:],
		"non-ASCII":         "é" + good[2:],
	}
	for name, c := range cases {
		if _, err := w.FeedPage(a.ID, c, 5); !errors.Is(err, ErrCursor) {
			t.Errorf("%s cursor %q: err %v, want ErrCursor", name, c, err)
		}
	}
	if _, err := w.FeedPage(a.ID, good, 5); err != nil {
		t.Errorf("good cursor: %v", err)
	}
	if _, err := w.FeedPage("acc_404", "", 5); !errors.Is(err, ErrNoAccount) {
		t.Errorf("unknown account: %v", err)
	}
	if _, err := w.Videos("acc_404", []string{"x"}); !errors.Is(err, ErrNoAccount) {
		t.Errorf("unknown account: %v", err)
	}
	if _, err := w.SetPlan("acc_404", Pro); !errors.Is(err, ErrNoAccount) {
		t.Errorf("unknown account: %v", err)
	}
	if _, err := w.SetPlan(a.ID, "gold"); err == nil {
		t.Error("SetPlan accepted plan gold")
	}
}

func TestAccounts(t *testing.T) {
	w := newWorld(t, Config{Seed: 4, Channels: 20})
	first := w.CreateAccount(Pro)
	if len(first.Channels) != 20 || first.ID != "acc_1" {
		t.Errorf("first account %s tracks %d of 20 channels; want all", first.ID, len(first.Channels))
	}
	var subsets [][]string
	for i := range 5 {
		a := w.CreateAccount(Free)
		if a.ID != fmt.Sprint("acc_", i+2) || len(a.Channels) == 0 || len(a.Channels) == 20 {
			t.Errorf("account %s tracks %d of 20 channels; want a proper subset", a.ID, len(a.Channels))
		}
		subsets = append(subsets, a.Channels)
	}
	if slices.EqualFunc(subsets[0], subsets[1], func(a, b string) bool { return a == b }) {
		t.Error("two accounts track the same subset")
	}
	again := newWorld(t, Config{Seed: 4, Channels: 20})
	again.CreateAccount(Pro)
	if a := again.CreateAccount(Free); !slices.Equal(a.Channels, subsets[0]) {
		t.Error("account subsets are not deterministic")
	}
	got, err := w.SetPlan("acc_2", Pro)
	if err != nil || got.Plan != Pro {
		t.Errorf("SetPlan: %+v, %v", got, err)
	}
	if acc, ok := w.Account("acc_2"); !ok || acc.Plan != Pro {
		t.Errorf("Account after SetPlan: %+v, %v", acc, ok)
	}
	if all := w.Accounts(); len(all) != 6 || all[0].ID != "acc_1" || all[5].ID != "acc_6" {
		t.Errorf("Accounts: %+v", all)
	}
	if _, ok := w.Account("acc_7"); ok {
		t.Error("acc_7 exists")
	}
	// A single-channel world: every account tracks its one channel.
	one := newWorld(t, Config{Seed: 4, Channels: 1})
	for range 3 {
		if a := one.CreateAccount(Free); len(a.Channels) != 1 {
			t.Errorf("%s tracks %d channels", a.ID, len(a.Channels))
		}
	}
}

func TestVideosAnswersEachDistinctIDOnceInRequestOrder(t *testing.T) {
	w := newWorld(t, Config{Seed: 8})
	w.CreateAccount(Pro)
	a := w.CreateAccount(Pro) // a subset: some channels untracked
	var tracked, untracked []string
	for _, v := range w.videos {
		id := v.ID
		if slices.Contains(a.Channels, w.channels[v.Channel].ID) {
			tracked = append(tracked, id)
		} else {
			untracked = append(untracked, id)
		}
	}
	if len(tracked) < 3 || len(untracked) < 1 {
		t.Fatalf("%d tracked, %d untracked videos", len(tracked), len(untracked))
	}
	ids := []string{tracked[2], "nope", untracked[0], tracked[0], tracked[2], "nope", tracked[1], `q"uote\`}
	raw, err := w.Videos(a.ID, ids)
	if err != nil {
		t.Fatal(err)
	}
	if err := schemas.ValidateJSON(schemas.VideosResponse, raw); err != nil {
		t.Fatal(err)
	}
	var r videosResponse
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range r.Videos {
		got = append(got, e.Video.PlatformVideoID)
	}
	if want := []string{tracked[2], tracked[0], tracked[1]}; !slices.Equal(got, want) {
		t.Errorf("videos %v, want %v", got, want)
	}
	if want := []string{"nope", untracked[0], `q"uote\`}; !slices.Equal(r.MissingVideoIDs, want) {
		t.Errorf("missing %v, want %v", r.MissingVideoIDs, want)
	}
	none, _ := w.Videos(a.ID, []string{"nope"})
	if string(none) != `{"videos":[],"missingVideoIds":["nope"]}` {
		t.Errorf("nothing found: %s", none)
	}
}

func TestSamplesAreKeptAndWindowed(t *testing.T) {
	w := newWorld(t, Config{Seed: 2, Channels: 2, History: 50 * 24 * time.Hour})
	a := w.CreateAccount(Pro)
	f := w.CreateAccount(Free)
	for i, v := range w.videos {
		if !slices.Contains(f.Channels, w.channels[v.Channel].ID) {
			continue
		}
		for _, acc := range []Account{a, f} {
			raw, err := w.Videos(acc.ID, []string{v.ID})
			if err != nil {
				t.Fatal(err)
			}
			var r videosResponse
			if err := json.Unmarshal(raw, &r); err != nil {
				t.Fatal(err)
			}
			e := r.Videos[0]
			from := w.Now().UnixMilli() - int64(acc.Plan.WindowDays())*dayMs
			if len(e.StatSamples) == 0 && v.LastPoll >= from {
				t.Errorf("video %d (%s) polled at %d has no sample in the window", i, v.ID, v.LastPoll)
			}
			if n := len(e.StatSamples); n > acc.Plan.WindowDays()*24 {
				t.Errorf("video %s: %d samples in %d days", v.ID, n, acc.Plan.WindowDays())
			}
		}
	}
}

func TestCountsGrowAndVideosAppear(t *testing.T) {
	w := newWorld(t, Config{Seed: 6, Channels: 4, History: 2 * 24 * time.Hour})
	v0 := w.videos[0]
	views, nvideos := v0.Views, len(w.videos)
	w.AdvanceTo(w.Now().Add(10 * 24 * time.Hour))
	if v0.Views <= views {
		t.Errorf("video %s views %d -> %d in 10 days", v0.ID, views, v0.Views)
	}
	if len(w.videos) <= nvideos {
		t.Errorf("no uploads in 10 days (%d videos)", nvideos)
	}
	if w.AdvanceTo(w.Now().Add(-time.Hour)) != 0 {
		t.Error("advancing to the past made events")
	}
}

func TestEdgeRateMakesEdgeCases(t *testing.T) {
	w := newWorld(t, Config{Seed: 12, EdgeRate: 1})
	var long, huge, hidden, nonASCII int
	for _, v := range w.videos {
		if len(v.ID) > platformVideoIDLen {
			long++
		}
		if v.Views > MaxCount/2 {
			huge++
		}
		if v.Hidden != 0 {
			hidden++
		}
		if strings.ContainsFunc(v.Title, func(r rune) bool { return r > 127 || r == '"' }) {
			nonASCII++
		}
		if v.Views > MaxCount || v.Likes > MaxCount || v.Comments > MaxCount {
			t.Fatalf("video %s counts above 2^53-1", v.ID)
		}
	}
	for name, n := range map[string]int{"long ids": long, "huge counts": huge, "hidden counts": hidden, "odd titles": nonASCII} {
		if n == 0 {
			t.Errorf("EdgeRate 1: no %s", name)
		}
	}
	for _, c := range w.channels {
		if c.Avatar != "" {
			t.Errorf("EdgeRate 1: channel %s has an avatar", c.ID)
		}
	}
	plain := newWorld(t, Config{Seed: 12})
	for _, v := range plain.videos {
		if len(v.ID) != platformVideoIDLen || v.Hidden != 0 || v.Views > MaxCount/2 {
			t.Fatalf("EdgeRate 0: video %s is an edge case", v.ID)
		}
	}
	if got := plain.EdgeRate(); got != 0 {
		t.Errorf("EdgeRate() = %v", got)
	}
	plain.SetEdgeRate(7)
	if got := plain.EdgeRate(); got != 1 {
		t.Errorf("SetEdgeRate(7) gave %v, want 1", got)
	}
}

func TestMilestone(t *testing.T) {
	for n, want := range map[int64]int64{0: 0, 1: 1, 9: 9, 10: 10, 19: 10, 999: 900, 1000: 1000, 1999: 1000, 2000: 2000, 123456: 100000, MaxCount: 9000000000000000} {
		if got := milestone(n); got != want {
			t.Errorf("milestone(%d) = %d, want %d", n, got, want)
		}
	}
}

func TestAppendStringIsJSON(t *testing.T) {
	for _, s := range []string{"", "plain", `"q" \ /`, "tab\tnl\ncr\r\x00\x1f", "é日本🔥👩‍👩‍👧", "\u2028\u2029", "bad\xffutf8", "<&>"} {
		raw := appendString(nil, s)
		var got string
		if err := json.Unmarshal(raw, &got); err != nil {
			t.Errorf("%q encodes as %s: %v", s, raw, err)
			continue
		}
		want := strings.ToValidUTF8(s, "\uFFFD")
		if got != want {
			t.Errorf("%q round-trips as %q", s, got)
		}
	}
}

// TestConcurrentReadersAndPoller is for -race: readers walk while time moves.
func TestConcurrentReadersAndPoller(t *testing.T) {
	w := newWorld(t, Config{Seed: 13, Channels: 4, History: 3 * 24 * time.Hour})
	a := w.CreateAccount(Pro)
	start := w.Now()
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 20 {
				w.AdvanceTo(start.Add(time.Duration(g*20+i) * 10 * time.Minute))
				cursor := ""
				for range 3 {
					raw, err := w.FeedPage(a.ID, cursor, 20)
					if err != nil {
						t.Error(err)
						return
					}
					var p feedPage
					if err := json.Unmarshal(raw, &p); err != nil || p.NextCursor == nil {
						break
					}
					cursor = *p.NextCursor
				}
				if _, err := w.Videos(a.ID, []string{w.videoIDAt(i)}); err != nil {
					t.Error(err)
				}
				_ = w.Now()
				_ = w.Accounts()
			}
		})
	}
	wg.Go(func() { w.PollAll(); w.SetEdgeRate(0.1); w.CreateAccount(Free) })
	wg.Wait()
}

func (w *World) videoIDAt(i int) string {
	w.mu.RLock()
	defer w.mu.RUnlock()
	return w.videos[i%len(w.videos)].ID
}

// TestCachedEntriesMatchFreshOnes moves the clock in uneven steps, so that
// entries are served from the cache while samples leave the window and the
// hourly part, videos lock, and polls change them, and compares every
// answer with one encoded afresh.
func TestCachedEntriesMatchFreshOnes(t *testing.T) {
	w := newWorld(t, Config{Seed: 31, Channels: 3, History: 35 * 24 * time.Hour, EdgeRate: 0.2})
	accounts := []Account{w.CreateAccount(Pro), w.CreateAccount(Free)}
	steps := []time.Duration{time.Millisecond, 7 * time.Minute, time.Hour, 13 * time.Hour, 47 * time.Hour, 5 * 24 * time.Hour}
	hits := 0
	for i := range 60 {
		for _, a := range accounts {
			var ids []string
			for _, v := range w.videos {
				ids = append(ids, v.ID)
			}
			for chunk := range slices.Chunk(ids, schemas.MaxVideoIDs) {
				for _, id := range chunk {
					if c := w.videos[w.videoByID[id]].cache.Load(); c != nil && c.plan == a.Plan && c.until >= w.now.Load() {
						hits++
					}
				}
				cached, err := w.Videos(a.ID, chunk)
				if err != nil {
					t.Fatal(err)
				}
				w.noCache = true
				fresh, _ := w.Videos(a.ID, chunk)
				w.noCache = false
				if !bytes.Equal(cached, fresh) {
					t.Fatalf("step %d, %s: a cached answer differs from a fresh one at %v", i, a.ID, w.Now())
				}
			}
		}
		w.AdvanceTo(w.Now().Add(steps[i%len(steps)]))
	}
	if hits == 0 {
		t.Error("no answer came from the cache")
	}
}

// TestEventLogInPlaceAndOversized covers both ways into the log: encoded in
// the chunk's tail, and an event too big for it, which moves and is copied.
func TestEventLogInPlaceAndOversized(t *testing.T) {
	var l eventLog
	small := append(l.tail(), `{"a":1}`...)
	l.commitTail(head{}, small)
	big := append(l.tail(), '"')
	big = append(big, strings.Repeat("x", chunkSize+maxInPlace)...)
	big = append(big, '"')
	l.commitTail(head{}, big)
	after := append(l.tail(), `{"b":2}`...)
	l.commitTail(head{}, after)
	if got := string(l.raw(0)); got != `{"a":1}` {
		t.Errorf("event 0 is %.20q", got)
	}
	if got := l.raw(1); len(got) != chunkSize+maxInPlace+2 || got[1] != 'x' {
		t.Errorf("event 1 has %d bytes", len(got))
	}
	if got := string(l.raw(2)); got != `{"b":2}` {
		t.Errorf("event 2 is %.20q", got)
	}
	if len(l.chunks) != 3 {
		t.Errorf("%d chunks, want 3 (small, oversized, next)", len(l.chunks))
	}
}

// VideosParts is the answer of Videos in pieces: the bytes of an answer
// built afresh, cached entries given as the cache keeps them (not copied),
// whether the entries were built by the call or cached before, and with the
// cache off.
func TestVideosPartsAreTheAnswer(t *testing.T) {
	w := newWorld(t, Config{Seed: 1})
	a := w.CreateAccount(Pro)
	b := w.CreateAccount(Pro)
	ids := []string{w.videos[5].ID, "nope", w.videos[3].ID, w.videos[5].ID, w.videos[8].ID}
	concat := func(parts [][]byte) string {
		var s strings.Builder
		for _, p := range parts {
			s.Write(p)
		}
		return s.String()
	}
	for _, c := range []struct {
		name    string
		noCache bool
	}{{"built", false}, {"cached", false}, {"no cache", true}} {
		for _, acct := range []string{a.ID, b.ID} {
			w.noCache = true // every entry built afresh
			want, _ := w.Videos(acct, ids)
			w.noCache = c.noCache
			parts, buf, missing, err := w.VideosParts([][]byte{[]byte("kept")}, []byte("buf"), acct, ids)
			if err != nil || string(parts[0]) != "kept" || string(buf[:3]) != "buf" {
				t.Fatalf("%s: VideosParts did not append: %v", c.name, err)
			}
			var doc struct{ MissingVideoIds []string }
			if err := json.Unmarshal(want, &doc); err != nil || missing != len(doc.MissingVideoIds) || missing == 0 {
				t.Errorf("%s, account %s: missing %d, the answer lists %v (%v)", c.name, acct, missing, doc.MissingVideoIds, err)
			}
			if got := concat(parts[1:]); got != string(want) {
				t.Errorf("%s, account %s: the pieces make\n%.200s\nwant\n%.200s", c.name, acct, got, want)
			}
		}
	}
	w.noCache = false
	parts, _, _, _ := w.VideosParts(nil, nil, a.ID, ids[:1])
	if e := w.videos[5].cache.Load(); e == nil || &parts[1][0] != &e.b[1] {
		t.Error("a cached entry was copied, not given as the cache keeps it")
	}
	if _, _, _, err := w.VideosParts(nil, nil, "acc_9", ids); !errors.Is(err, ErrNoAccount) {
		t.Errorf("VideosParts for an unknown account: %v", err)
	}
}
