package world

import (
	"bytes"
	"reflect"
	"testing"
	"time"
)

// A world New hands out from its templates is the world it would have
// built: the same export, pages and answers after both moved on, and a
// copy that moved on leaves the template as it was.
func TestCopiedWorldIsTheBuiltWorld(t *testing.T) {
	for _, cfg := range []Config{
		{Seed: 11, Channels: 3, History: 2 * 24 * time.Hour},
		{Seed: 12, Channels: 5, History: 10 * 24 * time.Hour, EdgeRate: 0.3},
		{Seed: 13, Channels: 2, History: time.Millisecond, EdgeRate: 1},
	} {
		n, err := cfg.normalize()
		if err != nil {
			t.Fatal(err)
		}
		first, _ := New(cfg)
		copied, _ := New(cfg)
		if copied == first {
			t.Fatal("New handed out one world twice")
		}
		// The copy moves far, another way (its events differ from the
		// others'); a second copy must still be the world built.
		copied.CreateAccount(Pro)
		copied.SetEdgeRate(1 - cfg.EdgeRate)
		copied.AdvanceTo(n.Start.Add(40 * 24 * time.Hour))
		again, _ := New(cfg)
		for _, w := range []*World{first, copied, again} {
			if w != copied {
				w.CreateAccount(Pro)
			}
			w.CreateAccount(Free)
			w.AdvanceTo(n.Start.Add(3 * 24 * time.Hour))
		}
		fresh := build(n)
		fresh.CreateAccount(Pro)
		fresh.CreateAccount(Free)
		fresh.AdvanceTo(n.Start.Add(3 * 24 * time.Hour))
		// The same calls on a world built afresh, checked after the
		// others moved on: copies share no array they write to.
		far := build(n)
		far.CreateAccount(Pro)
		far.SetEdgeRate(1 - cfg.EdgeRate)
		far.AdvanceTo(n.Start.Add(40 * 24 * time.Hour))
		far.CreateAccount(Free)
		if !bytes.Equal(export(t, copied), export(t, far)) {
			t.Errorf("seed %d: a copy that moved on differs from a world built afresh that did the same", cfg.Seed)
		}
		want := export(t, fresh)
		for name, w := range map[string]*World{"built by New": first, "copied after a copy moved on": again} {
			if got := export(t, w); !bytes.Equal(got, want) {
				t.Errorf("seed %d: the world %s differs from one built afresh (%d and %d bytes of export)", cfg.Seed, name, len(got), len(want))
			}
			for _, acc := range []string{"acc_1", "acc_2"} {
				p1, err1 := w.FeedPage(acc, "", 200)
				p2, err2 := fresh.FeedPage(acc, "", 200)
				if err1 != nil || err2 != nil || !bytes.Equal(p1, p2) {
					t.Errorf("seed %d, %s: the first page of %s differs (%v, %v)", cfg.Seed, name, acc, err1, err2)
				}
			}
		}
	}
}

// clone copies every field: a field added to World or video and left out
// of clone fails here (each field of video is set in some video of this
// world, but the entry cache, which clone leaves empty).
func TestCloneCopiesEveryField(t *testing.T) {
	w := build(mustNormalize(t, Config{Seed: 5, Channels: 12, History: 30 * 24 * time.Hour, EdgeRate: 0.5}))
	w.CreateAccount(Pro)
	w.CreateAccount(Free)
	w.videos[0].Unknown = []string{"likeCount"} // set only by a recording
	if c := w.clone(); !reflect.DeepEqual(c, w) {
		t.Error("the copy of a world differs from it")
	}
	typ := reflect.TypeFor[video]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		if f.Name == "cache" {
			continue
		}
		set := false
		for _, v := range w.videos {
			if !reflect.ValueOf(v).Elem().Field(i).IsZero() {
				set = true
				if !reflect.DeepEqual(v.clone(), v) {
					t.Fatalf("the copy of video %s differs from it", v.ID)
				}
				break
			}
		}
		if !set {
			t.Errorf("no video of the test world sets %s: the test cannot tell whether clone copies it", f.Name)
		}
	}
}

func mustNormalize(t *testing.T, c Config) Config {
	t.Helper()
	n, err := c.normalize()
	if err != nil {
		t.Fatal(err)
	}
	return n
}
