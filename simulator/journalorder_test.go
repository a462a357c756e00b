package simulator

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tcmkit/tcmkit/schemas"
)

// The journal's ids follow arrival: 64 clients at once, the first request
// held back by a delay so that it is answered last; listed by id, the
// entries arrive in order, and settled says how far the list is whole.
func TestJournalIDsFollowArrival(t *testing.T) {
	s := newServer(t, Config{Seed: 1, FeedLimit: -1, VideosLimit: -1, JournalSize: 1000})
	hs := httptest.NewServer(s.Handler())
	defer hs.Close()
	k := s.Seeded()
	if _, err := s.AddFault(FaultSpec{Operation: "health", DelayMs: 300, Count: 1}); err != nil {
		t.Fatal(err)
	}
	get := func(method, path, key string) {
		req, _ := http.NewRequest(method, hs.URL+path, nil)
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		resp, err := hs.Client().Do(req)
		if err != nil {
			t.Error(err)
			return
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	slow := make(chan struct{})
	go func() { defer close(slow); get(http.MethodPost, schemas.PathHealth, "") }()
	for deadline := time.Now().Add(5 * time.Second); len(s.journalIDsGiven()) == 0; { // the slow one arrives first
		if time.Now().After(deadline) {
			t.Fatal("the slow request never arrived")
		}
		time.Sleep(time.Millisecond)
	}
	if page := decode[journalPage](t, s.serve(t, ctl("GET", "requests", "")), 200); page.Settled != 0 {
		t.Errorf("settled %d while request 1 is still answered", page.Settled)
	}
	var wg sync.WaitGroup
	for i := range 64 {
		wg.Go(func() {
			for j := range 4 {
				get(http.MethodGet, fmt.Sprintf("%s?limit=%d", schemas.PathFeed, 1+(i+j)%5), k.Pro)
			}
		})
	}
	wg.Wait()
	<-slow
	page := decode[journalPage](t, s.serve(t, ctl("GET", "requests", "")), 200)
	if len(page.Requests) != 1+64*4 || page.Settled != uint64(len(page.Requests)) {
		t.Fatalf("%d entries, settled %d, want %d and %d", len(page.Requests), page.Settled, 1+64*4, 1+64*4)
	}
	if e := page.Requests[0]; e.ID != 1 || e.Operation != OpHealth {
		t.Errorf("the first entry is %d %s, want the health request that arrived first, answered last", e.ID, e.Operation)
	}
	for i, e := range page.Requests {
		if e.ID != uint64(i+1) {
			t.Fatalf("entry %d has id %d", i, e.ID)
		}
		if i > 0 {
			if prev := page.Requests[i-1]; e.Time.Before(prev.Time) || e.VirtualTime < prev.VirtualTime {
				t.Errorf("entry %d arrived at %s, before entry %d (%s)", e.ID, e.Time.Format("15:04:05.000000"), prev.ID, prev.Time.Format("15:04:05.000000"))
			}
		}
	}
}

// journalIDsGiven are the ids given to requests still being answered.
func (s *Server) journalIDsGiven() []uint64 {
	s.journal.mu.Lock()
	defer s.journal.mu.Unlock()
	var ids []uint64
	for id := range s.journal.answering {
		ids = append(ids, id)
	}
	return ids
}

// Two Content-Type lines are two lines in the journal, as the judge sees
// them; a 403 whose body the judge read counts its bytes.
func TestJournalKeepsWhatWasSent(t *testing.T) {
	s := newServer(t, Config{Seed: 1, JournalSize: 10, Observers: []Observer{func(*Exchange) {}}})
	k := s.Seeded()
	body := `{"videoIds":["a","b"]}`
	s.serve(t, req{method: http.MethodPost, target: schemas.PathVideos, key: k.Pro, body: body, header: http.Header{"Content-Type": {"application/json", "text/plain"}}})
	s.serve(t, videosReq(k.Free, body)) // 403: refused before the handler reads the body
	s.serve(t, req{method: http.MethodPost, target: schemas.PathVideos, key: k.Pro, body: body, header: http.Header{"Content-Type": {strings.Repeat("x", 200), strings.Repeat("y", 200), strings.Repeat("z", 200), strings.Repeat("v", 200), "w"}}})
	page := decode[journalPage](t, s.serve(t, ctl("GET", "requests", "")), 200)
	if len(page.Requests) != 3 {
		t.Fatalf("%d entries", len(page.Requests))
	}
	if e := page.Requests[0]; e.ContentType != "application/json\ntext/plain" {
		t.Errorf("two Content-Type lines are journaled as %q", e.ContentType)
	}
	if e := page.Requests[1]; e.Status != http.StatusForbidden || e.RequestBytes != int64(len(body)) {
		t.Errorf("the 403 whose body the judge read: status %d, %d request bytes, want 403 and %d", e.Status, e.RequestBytes, len(body))
	}
	if e := page.Requests[2]; len(e.ContentType) > maxContentTypes+len("\n…") || strings.Count(e.ContentType, "\n") != 3 || !strings.HasSuffix(e.ContentType, "\n…") {
		t.Errorf("five Content-Type lines are journaled as %q (%d bytes)", e.ContentType, len(e.ContentType))
	}
}
