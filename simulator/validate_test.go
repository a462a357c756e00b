package simulator

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tcmkit/tcmkit/schemas"
)

// TestEveryDocumentValidates walks the whole feed of a generated world with
// edge cases turned up, then asks for every video it names, and validates
// every document against the schemas the suite judges with.
func TestEveryDocumentValidates(t *testing.T) {
	for _, tc := range []struct {
		edge    float64
		history time.Duration
	}{{0, DefaultHistory}, {0.5, 7 * 24 * time.Hour}, {1, 2 * 24 * time.Hour}} {
		edge := tc.edge
		s := newServer(t, Config{Seed: 11, EdgeRate: edge, FeedLimit: -1, VideosLimit: -1, Channels: DefaultChannels, History: tc.history})
		s.Advance(12 * time.Hour)
		key := s.Seeded().Pro
		ids := map[string]bool{}
		var order []string
		cursor, pages, events := "", 0, 0
		for {
			q := "limit=" + "200"
			if cursor != "" {
				q += "&cursor=" + cursor
			}
			r := s.serve(t, feedReq(key, q))
			check(t, r, schemas.FeedPage)
			p := decodePage(t, r)
			pages++
			events += len(p.Events)
			for _, e := range p.Events {
				if e.Video != nil && !ids[e.Video.PlatformVideoID] {
					ids[e.Video.PlatformVideoID] = true
					order = append(order, e.Video.PlatformVideoID)
				}
			}
			if p.NextCursor == nil {
				break
			}
			cursor = *p.NextCursor
		}
		order = append(order, "no-such-video")
		entries := 0
		for len(order) > 0 {
			n := min(len(order), schemas.MaxVideoIDs)
			body, _ := json.Marshal(map[string]any{"videoIds": order[:n]})
			order = order[n:]
			r := s.serve(t, videosReq(key, string(body)))
			if r.status != http.StatusOK {
				t.Fatalf("videos: %d %s", r.status, r.body)
			}
			check(t, r, schemas.VideosResponse)
			var v struct {
				Videos  []json.RawMessage `json:"videos"`
				Missing []string          `json:"missingVideoIds"`
			}
			if err := json.Unmarshal(r.body, &v); err != nil {
				t.Fatal(err)
			}
			for _, e := range v.Videos {
				if err := schemas.ValidateJSON(schemas.VideoEntry, e); err != nil {
					t.Errorf("entry: %v", err)
				}
			}
			entries += len(v.Videos)
			if len(order) == 0 && !strings.Contains(strings.Join(v.Missing, ","), "no-such-video") {
				t.Errorf("an unknown id is not in missingVideoIds: %v", v.Missing)
			}
		}
		t.Logf("edge rate %v: %d pages, %d events, %d video entries", edge, pages, events, entries)
		if events == 0 {
			t.Fatal("the feed is empty")
		}
	}
}
