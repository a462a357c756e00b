package variant_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/simulator"
	"github.com/tcmkit/tcmkit/simulator/mutants"
	"github.com/tcmkit/tcmkit/simulator/variant"
)

// clockDraws are the conforming draws the clock is checked on: the first
// ten, and one of each Retry-After form whatever the first ten hold.
func clockDraws() []variant.Draw {
	var draws []variant.Draw
	for n := range uint64(10) {
		draws = append(draws, variant.New(n))
	}
	for _, form := range []string{"exact", "padded", "date"} {
		d := variant.New(11)
		d.RetryAfter, d.RetryPad = form, 3
		draws = append(draws, d)
	}
	return draws
}

// Every time the simulator writes is the world's clock: the Date of every
// answer (a 429 as a 200, a fault's, the control API's), a Retry-After
// that is an HTTP-date (after that Date, by the wait), on each conforming
// draw and each named fault, on the manual clock and at speed 60.
func TestEveryDateIsTheWorldsClock(t *testing.T) {
	sawDate := false
	for _, speed := range []float64{0, 60} {
		for _, d := range clockDraws() {
			t.Run(fmt.Sprintf("speed %v draw %d %s", speed, d.N, d.RetryAfter), func(t *testing.T) {
				cfg := simulator.Config{Speed: speed, Channels: 4, History: 24 * time.Hour}
				d.Apply(&cfg)
				sawDate = checkDates(t, cfg) || sawDate
			})
		}
		for _, name := range mutants.Names() {
			t.Run(fmt.Sprintf("speed %v fault %s", speed, name), func(t *testing.T) {
				layers, err := mutants.Layers(name)
				if err != nil {
					t.Fatal(err)
				}
				checkDates(t, simulator.Config{Speed: speed, Channels: 4, History: 24 * time.Hour, Layers: layers})
			})
		}
	}
	if !sawDate {
		t.Error("no answer carried a Retry-After that is an HTTP-date: the property was not tried on that form")
	}
}

// checkDates sends a run of requests that meets every kind of answer (200s,
// the limiter's 429s, an injected 429 and 503, errors, the control API) and
// checks each answer's dates against the server's clock read just before
// and after it. It reports whether a Retry-After was an HTTP-date.
func checkDates(t *testing.T, cfg simulator.Config) (sawDate bool) {
	t.Helper()
	sim, err := simulator.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
	hs := httptest.NewServer(sim.Handler())
	defer hs.Close()
	keys := sim.Seeded()
	if _, err := sim.AddFault(simulator.FaultSpec{Operation: "videos", Status: http.StatusTooManyRequests, RetryAfter: new(7), Count: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := sim.AddFault(simulator.FaultSpec{Operation: "health", Status: http.StatusServiceUnavailable, Count: 1}); err != nil {
		t.Fatal(err)
	}
	type send struct{ method, path, key, body string }
	sends := []send{{"GET", schemas.PathHealth, "", ""}, {"GET", schemas.PathHealth, "", ""}, {"GET", schemas.PathHealth, keys.Free, ""},
		{"POST", schemas.PathVideos, keys.Pro, `{"videoIds":["x"]}`}, {"POST", schemas.PathVideos, keys.Pro, `{"videoIds":["x"]}`},
		{"POST", schemas.PathVideos, keys.Free, `{"videoIds":["x"]}`}, {"GET", schemas.PathFeed, keys.Revoked, ""},
		{"GET", "/no/such/path", "", ""}, {"GET", simulator.ControlPrefix + "info", "", ""}}
	for range 23 { // past the feed's 20 a minute: the limiter's 429s
		sends = append(sends, send{"GET", schemas.PathFeed + "?limit=2", keys.Pro, ""})
	}
	for _, s := range sends {
		req, _ := http.NewRequest(s.method, hs.URL+s.path, strings.NewReader(s.body))
		if s.key != "" {
			req.Header.Set("Authorization", "Bearer "+s.key)
		}
		if s.body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		before := sim.Now().Truncate(time.Second)
		resp, err := hs.Client().Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", s.method, s.path, err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		after := sim.Now()
		sawDate = checkAnswerDates(t, s.method+" "+s.path, resp, before, after) || sawDate
	}
	return sawDate
}

// checkAnswerDates checks one answer's Date, Last-Modified and Retry-After
// against the clock's bracket [before, after].
func checkAnswerDates(t *testing.T, what string, resp *http.Response, before, after time.Time) (sawDate bool) {
	t.Helper()
	what = fmt.Sprintf("%s (%d)", what, resp.StatusCode)
	dates := resp.Header.Values("Date")
	if len(dates) != 1 {
		t.Fatalf("%s: %d Date headers, want 1", what, len(dates))
	}
	date, err := http.ParseTime(dates[0])
	if err != nil {
		t.Fatalf("%s: Date %q: %v", what, dates[0], err)
	}
	if date.Before(before) || date.After(after) {
		t.Errorf("%s: Date %s is not the world's clock (between %s and %s)", what, dates[0], before.Format(http.TimeFormat), after.Format(http.TimeFormat))
	}
	if lm := resp.Header.Get("Last-Modified"); lm != "" {
		if m, err := http.ParseTime(lm); err != nil || m.After(date) {
			t.Errorf("%s: Last-Modified %q is not a date on the world's clock, at or before Date %s", what, lm, dates[0])
		}
	}
	ra := resp.Header.Get("Retry-After")
	if ra == "" {
		return false
	}
	if secs, err := strconv.Atoi(ra); err == nil {
		if secs < 0 || secs > 3600 {
			t.Errorf("%s: Retry-After %d s", what, secs)
		}
		return false
	}
	at, err := http.ParseTime(ra)
	if err != nil {
		t.Fatalf("%s: Retry-After %q is neither delta-seconds nor an HTTP-date", what, ra)
	}
	// The wait is Retry-After minus Date: at least a second, at most the
	// window and its padding.
	if wait := at.Sub(date); wait < time.Second || wait > 2*time.Minute {
		t.Errorf("%s: Retry-After %s is %v after Date %s: not a wait on the world's clock", what, ra, wait, dates[0])
	}
	return true
}
