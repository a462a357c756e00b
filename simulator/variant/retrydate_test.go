package variant

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/tcmkit/tcmkit/schemas/catalogue"
	"github.com/tcmkit/tcmkit/simulator"
	"github.com/tcmkit/tcmkit/simulator/clients"
)

// A Retry-After that is an HTTP-date is read against the answer's Date,
// as a client reads it (RFC 9110), on the world's clock: the judge passes
// a client that waits that long, and fails one that waits a second less.
func TestTheJudgeReadsAnHTTPDateAgainstDate(t *testing.T) {
	for _, short := range []time.Duration{0, time.Second} {
		d := New(3)
		d.RetryAfter, d.Shared, d.VideosLimit, d.Growth = "date", false, 20, 0
		d.Start = time.Date(2028, 2, 29, 23, 0, 0, 0, time.UTC) // not this machine's year
		sim, err := d.Server(simulator.Config{Clients: clients.Judging(clients.Config{})})
		if err != nil {
			t.Fatal(err)
		}
		defer sim.Close()
		pro := sim.Seeded().Pro
		send := func() *httptest.ResponseRecorder {
			r := httptest.NewRequest(http.MethodPost, "/api/public/videos", strings.NewReader(`{"videoIds":["a"]}`))
			r.Header.Set("Authorization", "Bearer "+pro)
			r.Header.Set("Content-Type", "application/json")
			w := httptest.NewRecorder()
			sim.Handler().ServeHTTP(w, r)
			return w
		}
		var refused *httptest.ResponseRecorder
		for range 21 {
			if w := send(); w.Code == http.StatusTooManyRequests {
				refused = w
				break
			}
		}
		if refused == nil {
			t.Fatal("no 429 in 21 tracked-videos requests at once")
		}
		date, err1 := http.ParseTime(refused.Header().Get("Date"))
		until, err2 := http.ParseTime(refused.Header().Get("Retry-After"))
		if err1 != nil || err2 != nil {
			t.Fatalf("Date %q, Retry-After %q", refused.Header().Get("Date"), refused.Header().Get("Retry-After"))
		}
		sim.Advance(until.Sub(date) - short)
		send()
		c := clients.Of(sim).Snapshot(false).Clients[0]
		var failed []catalogue.ID
		for _, r := range c.Requirements {
			if r.Result == clients.Failed {
				failed = append(failed, r.ID)
			}
		}
		switch {
		case short == 0 && len(failed) != 0:
			t.Errorf("waited Retry-After minus Date (%v): failed %v", until.Sub(date), failed)
		case short > 0 && (len(failed) != 1 || failed[0] != catalogue.ClientRetryAfter):
			t.Errorf("waited a second less than Retry-After minus Date: failed %v, want CLIENT-RETRY-AFTER", failed)
		}
	}
}
