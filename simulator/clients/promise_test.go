package clients

import (
	"bytes"
	"encoding/json"
	"html"
	"io/fs"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tcmkit/tcmkit/schemas/redact"
	"github.com/tcmkit/tcmkit/schemas/redact/redacttest"
	"github.com/tcmkit/tcmkit/schemas/report"
	"github.com/tcmkit/tcmkit/simulator"
)

// The redaction promise on the simulator's side, generated: a client
// that sends its key in random stacks of the promised encodings, in the
// path, the query, a header, a cookie, a referer or the body, finds it in
// none of the simulator's outputs: the journal, the log (a line a
// request), the judge's verdicts and its report files.
func TestNoEncodedKeyInTheSimulatorsOutputs(t *testing.T) {
	var logs bytes.Buffer
	s, err := simulator.New(simulator.Config{Seed: 1, Clients: Judging(Config{}), Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	j, key := Of(s), s.Seeded().Pro
	r := rand.New(rand.NewPCG(27, 3))
	var sent []string
	for range 60 {
		enc := redacttest.Encode(r, redacttest.Stack(r), key)
		sent = append(sent, enc)
		req := httptest.NewRequest(http.MethodGet, "/api/public-feed", nil)
		req.Header.Set("Authorization", "Bearer "+key)
		switch r.IntN(6) {
		case 0:
			req.URL.RawQuery = "limit=1&k=" + url.QueryEscape(enc)
		case 1:
			req.URL.Path, req.URL.RawPath = "/api/"+enc, "/api/"+url.PathEscape(enc)
		case 2:
			req.Header.Set("X-Api-Key", strings.ReplaceAll(enc, "\n", ""))
		case 3:
			req.Header.Set("Cookie", "k="+url.QueryEscape(enc))
		case 4:
			req.Header.Set("Referer", "https://app.example/?k="+url.QueryEscape(enc))
		case 5:
			req = httptest.NewRequest(http.MethodPost, "/api/public/videos", strings.NewReader(`{"videoIds":["a"],"k":`+jsonQuote(enc)+`}`))
			req.Header.Set("Authorization", "Bearer "+key)
			req.Header.Set("Content-Type", "application/json")
		}
		s.Handler().ServeHTTP(httptest.NewRecorder(), req)
		s.Advance(5 * time.Second)
	}
	outputs := map[string]string{"the log": logs.String()}
	for _, path := range []string{"requests?limit=1000", "clients?final=true"} {
		w := httptest.NewRecorder()
		s.Handler().ServeHTTP(w, httptest.NewRequest(http.MethodGet, "http://127.0.0.1/_control/"+path, nil))
		outputs[path] = w.Body.String()
	}
	dir := t.TempDir()
	if _, _, err := j.WriteReport(dir, report.Meta{Target: "test", Started: time.Now(), Finished: time.Now()}); err != nil {
		t.Fatal(err)
	}
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(path)
			outputs[filepath.Base(path)] = string(b)
		}
		return nil
	})
	if !strings.Contains(outputs["clients?final=true"], "CLIENT-") || !strings.Contains(outputs["requests?limit=1000"], redact.Form(key)) {
		t.Fatalf("no finding or no journal: the search proves nothing\n%.500s", outputs["clients?final=true"])
	}
	for _, enc := range sent {
		for name, out := range outputs {
			for _, form := range []string{enc, url.QueryEscape(enc), unquote(jsonQuote(enc)), html.EscapeString(enc)} {
				if leak := redacttest.Leaks(out, form, key); leak != "" {
					t.Errorf("%s holds %.60q of the key encoded as %.80q", name, leak, enc)
				}
			}
		}
	}
}

func jsonQuote(s string) string { b, _ := json.Marshal(s); return string(b) }

func unquote(q string) string { return q[1 : len(q)-1] }
