package simulator

import (
	"bytes"
	"encoding/json"
	"strconv"
	"sync"
	"testing"
	"time"
)

// TestVideosCacheNeverServesAStaleAnswer compares every answer with one the
// world builds afresh, across the changes that can alter it.
func TestVideosCacheNeverServesAStaleAnswer(t *testing.T) {
	s := newServer(t, Config{Seed: 4, VideosLimit: -1, FeedLimit: -1})
	key := s.Seeded().Pro
	p := decodePage(t, s.serve(t, feedReq(key, "limit=200")))
	var ids []string
	for _, e := range p.Events {
		if e.Video != nil && len(ids) < 5 {
			ids = append(ids, e.Video.PlatformVideoID)
		}
	}
	body, _ := json.Marshal(map[string]any{"videoIds": ids})
	acct := s.st.Load().world.Accounts()[0].ID
	same := func(step string) {
		t.Helper()
		r := s.serve(t, videosReq(key, string(body)))
		want, err := s.st.Load().world.Videos(acct, ids)
		if err != nil {
			t.Fatal(err)
		}
		if r.status != 200 || !bytes.Equal(r.body, want) {
			t.Fatalf("%s: the answer differs from a fresh one", step)
		}
	}
	feedSame := func(step string) {
		t.Helper()
		r := s.serve(t, feedReq(key, "limit=20"))
		want, err := s.st.Load().world.FeedPage(acct, "", 20)
		if err != nil {
			t.Fatal(err)
		}
		if r.status != 200 || !bytes.Equal(r.body, want) {
			t.Fatalf("%s: the feed page differs from a fresh one", step)
		}
	}
	defer feedSame("last")
	feedSame("first")
	feedSame("cached")
	same("first")
	same("cached")
	s.serve(t, ctl("POST", "poll", ""))
	same("after a poll")
	feedSame("after a poll")
	s.Advance(3 * time.Hour)
	same("after an advance")
	feedSame("after an advance")
	s.serve(t, ctl("PUT", "accounts/"+acct+"/plan", `{"plan":"free"}`))
	s.serve(t, ctl("PUT", "accounts/"+acct+"/plan", `{"plan":"pro"}`))
	same("after a plan change")
	s.serve(t, ctl("PUT", "edge-rate", `{"rate":1}`))
	s.serve(t, ctl("POST", "poll", ""))
	same("after edge rate and poll")
	if r := s.serve(t, videosReq(key, `{"videoIds":["`+ids[0]+`"]}`)); r.status != 200 || bytes.Contains(r.body, []byte(ids[1])) {
		t.Fatal("another request got a cached answer of other ids")
	}
}

func TestVideosKeyIsUnambiguous(t *testing.T) {
	if videosKey("a", []string{"b\x001:c"}) == videosKey("a", []string{"b", "c"}) || feedKey("a", "", 1) == videosKey("a", nil) {
		t.Fatal("two requests share a key")
	}
}

// In a live world a feed page is kept until an event is recorded: every
// answer equals one the world builds afresh at that moment, and one
// client's first pages never go back in time while the world moves under
// concurrent readers.
func TestFeedCacheInALiveWorld(t *testing.T) {
	var mu sync.Mutex
	real := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); return real }
	move := func(d time.Duration) { mu.Lock(); real = real.Add(d); mu.Unlock() }
	s := newServer(t, Config{Seed: 5, Speed: 60, FeedLimit: -1, now: now})
	key := s.Seeded().Pro
	acct := s.st.Load().world.Accounts()[0].ID
	var last string
	var cursors []string
	before := s.st.Load().world.Stats().Events
	for i := range 40 {
		move(20 * time.Second) // 20 virtual minutes: now and then an event
		s.catchUp(s.clock.Now())
		for range 2 {
			r := s.serve(t, feedReq(key, "limit=5"))
			want, err := s.st.Load().world.FeedPage(acct, "", 5)
			if err != nil {
				t.Fatal(err)
			}
			if r.status != 200 || !bytes.Equal(r.body, want) {
				t.Fatalf("step %d: the page differs from a fresh one", i)
			}
			last = string(r.body)
			// Pages after a cursor (three deep) are kept while events are
			// recorded: each still equals a fresh one.
			for p, depth := decodePage(t, r), 0; p.NextCursor != nil && depth < 3; depth++ {
				c := *p.NextCursor
				r := s.serve(t, feedReq(key, "limit=5&cursor="+c))
				want, err := s.st.Load().world.FeedPage(acct, c, 5)
				if err != nil {
					t.Fatal(err)
				}
				if r.status != 200 || !bytes.Equal(r.body, want) {
					t.Fatalf("step %d: the page after a cursor differs from a fresh one", i)
				}
				cursors = append(cursors, c)
				p = decodePage(t, r)
			}
		}
	}
	// Every cursor met on the way, asked again once the world moved on:
	// the page (kept or not) is the one the world builds now.
	for _, c := range cursors {
		r := s.serve(t, feedReq(key, "limit=5&cursor="+c))
		want, _ := s.st.Load().world.FeedPage(acct, c, 5)
		if r.status != 200 || !bytes.Equal(r.body, want) {
			t.Fatalf("cursor %s: the page differs from a fresh one", c)
		}
	}
	t.Logf("%d cursors, %d kept, %d events recorded", len(cursors), len(s.st.Load().cursorPages.byKey), s.st.Load().world.Stats().Events-before)
	if len(s.st.Load().cursorPages.byKey) == 0 || s.st.Load().world.Stats().Events == before {
		t.Error("no page after a cursor was kept, or no event was recorded")
	}
	if last == "" {
		t.Fatal("no page")
	}

	// Readers while the world moves: a reader's newest event never gets older.
	var wg sync.WaitGroup
	stop := make(chan struct{})
	go func() {
		for {
			select {
			case <-stop:
				return
			default:
				move(time.Second)
				s.catchUp(s.clock.Now())
			}
		}
	}()
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var newest int64
			for range 300 {
				p := decodePage(t, s.serve(t, feedReq(key, "limit=1")))
				if len(p.Events) == 0 {
					continue
				}
				c := p.Events[0].CreatedAt
				if c < newest {
					t.Errorf("the first page went back in time: %d after %d", c, newest)
					return
				}
				newest = c
			}
		}()
	}
	wg.Wait()
	close(stop)
}

// A full cache that evicts keeps the newest answer and stays within its
// bound; one that does not keeps what it holds.
func TestAnswerCacheEvicts(t *testing.T) {
	body := make([]byte, 1<<20)
	m := cacheMoment{changes: 1}
	for _, evict := range []bool{true, false} {
		c := &answerCache{evict: evict}
		n := 2 * maxCacheBytes / len(body)
		for i := range n {
			k := strconv.Itoa(i)
			c.Put(m, k, body)
			c.Put(m, k, body) // the same key twice counts once
		}
		_, newest := c.Get(m, strconv.Itoa(n-1))
		_, first := c.Get(m, "0")
		total := 0
		for _, b := range c.byKey {
			total += len(b)
		}
		switch {
		case c.bytes != total || c.bytes > maxCacheBytes:
			t.Errorf("evict %v: %d bytes counted, %d held, bound %d", evict, c.bytes, total, maxCacheBytes)
		case evict && !newest, !evict && (newest || !first):
			t.Errorf("evict %v: newest kept %v, first kept %v", evict, newest, first)
		case evict != c.hasRoom(m):
			t.Errorf("evict %v: hasRoom %v when full", evict, c.hasRoom(m))
		}
	}
}
