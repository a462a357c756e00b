package simulator

import (
	"bytes"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/tcmkit/tcmkit/schemas/redact/redacttest"
)

// TestControlHostShowsOnlyAHint: a Host that holds a key, refused by the
// control API, is not echoed whole in the 403's details.
func TestControlHostShowsOnlyAHint(t *testing.T) {
	s := newServer(t, Config{Seed: 3})
	key := s.Seeded().Pro
	r := s.serveHost(t, key, req{method: http.MethodGet, target: ControlPrefix + "info"})
	if r.status != http.StatusForbidden {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	if strings.Contains(string(r.body), key[4:12]) {
		t.Errorf("the 403 echoes the key: %s", r.body)
	}
}

// TestJournalShowsOnlyHints: a key a client puts in the query in
// fullwidth letters or as decimal bytes is not in the journal nor the
// debug log.
func TestJournalShowsOnlyHints(t *testing.T) {
	var log bytes.Buffer
	s := newServer(t, Config{Seed: 3, Logger: slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	key := s.Seeded().Pro
	var decimals []string
	for i := range len(key) {
		decimals = append(decimals, fmt.Sprint(key[i]))
	}
	for _, v := range []string{redacttest.Fullwidth(key), strings.Join(decimals, ","), "[" + strings.Join(decimals, ", ") + "]"} {
		s.serve(t, req{method: http.MethodGet, target: "/api/public-feed?api_key=" + url.QueryEscape(v), key: key})
	}
	j := s.serve(t, req{method: http.MethodGet, target: ControlPrefix + "requests"})
	for name, out := range map[string]string{"journal": string(j.body), "log": log.String()} {
		if strings.Count(out, "api_key") < 3 {
			t.Fatalf("the %s does not show the requests: %.300s", name, out)
		}
		if leak := redacttest.Leaks(out, key, key); leak != "" || strings.Contains(out, redacttest.Fullwidth(key[4:12])) {
			t.Errorf("the %s shows %q of the key", name, leak)
		}
		for _, d := range []string{strings.Join(decimals[4:14], ","), strings.Join(decimals[4:14], ", ")} {
			if strings.Contains(out, d) || strings.Contains(out, url.QueryEscape(d)) {
				t.Errorf("the %s shows the key's decimal bytes", name)
			}
		}
	}
}
