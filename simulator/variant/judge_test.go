package variant

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/tcmkit/tcmkit/schemas/jsondoc"
	"github.com/tcmkit/tcmkit/simulator"
	"github.com/tcmkit/tcmkit/simulator/clients"
)

// The journal, the observers and the client judge see what a draw means,
// not how it spells it: the server's cause of an error (whatever the draw's
// vocabulary says), and a feed page as JSON (not its gzip). A client that
// walks politely through a draw's cursors passes the judge.
func TestTheJudgeSeesTheDrawsMeaning(t *testing.T) {
	d := New(3)
	d.Framing, d.Cursor, d.Vocabulary, d.RetryAfter = "gzip", "hex", "empty", "date"
	var mu sync.Mutex
	var seen []*simulator.Exchange
	observe := func(x *simulator.Exchange) { mu.Lock(); seen = append(seen, x); mu.Unlock() }
	sim, err := d.Server(simulator.Config{Clients: clients.Judging(clients.Config{}), Observers: []simulator.Observer{observe}})
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
	srv := httptest.NewServer(sim.Handler())
	defer srv.Close()
	get := func(key, query string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest("GET", srv.URL+"/api/public-feed?"+query, nil)
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := srv.Client().Do(req) // asks for gzip, and reads it
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	keys := sim.Seeded()

	// A polite walk of the Pro key, paced at 3 s a request.
	cursor := ""
	for pages := 0; ; pages++ {
		q := url.Values{"limit": {"200"}}
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		resp := get(keys.Pro, q.Encode())
		var page struct {
			NextCursor *string `json:"nextCursor"`
		}
		err := json.NewDecoder(resp.Body).Decode(&page)
		resp.Body.Close()
		if resp.StatusCode != 200 || err != nil {
			t.Fatalf("page %d: %d %v", pages, resp.StatusCode, err)
		}
		sim.Advance(3 * time.Second)
		if page.NextCursor == nil {
			break
		}
		cursor = *page.NextCursor
	}
	// The free key: 21 at once (the 21st a 429), and the revoked key.
	for range 21 {
		get(keys.Free, "limit=1").Body.Close()
	}
	get(keys.Revoked, "").Body.Close()

	mu.Lock()
	defer mu.Unlock()
	causes := map[int]string{}
	for _, x := range seen {
		if x.Status >= 400 {
			causes[x.Status] = x.Error
		}
		if x.Status == 200 {
			if _, err := jsondoc.Decode(x.ResponseBody); err != nil {
				t.Errorf("an observer got a feed page that is not JSON: %v", err)
			}
		}
	}
	if causes[429] != simulator.CodeRateLimited || causes[401] != simulator.CodeRevokedKey {
		t.Errorf("the journal's causes: %v, want 429 %s and 401 %s", causes, simulator.CodeRateLimited, simulator.CodeRevokedKey)
	}
	judged := false
	for _, c := range clients.Of(sim).Snapshot(true).Clients {
		if c.Account != "acc_1" { // the seeded Pro account
			continue
		}
		judged = true
		if !c.Passed || c.Requests < 2 {
			raw, _ := json.Marshal(c)
			t.Errorf("the polite walk of the Pro key through the draw's cursors did not pass the judge: %s", raw)
		}
	}
	if !judged {
		t.Error("the judge did not judge the Pro key")
	}
}
