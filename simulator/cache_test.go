package simulator

import (
	"bytes"
	"encoding/json"
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
