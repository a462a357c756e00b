package clients

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tcmkit/tcmkit/schemas/catalogue"
	"github.com/tcmkit/tcmkit/schemas/redact"
	"github.com/tcmkit/tcmkit/simulator"
)

// harness is a simulator with a judge, in-process, on a manual clock.
type harness struct {
	t    *testing.T
	s    *simulator.Server
	j    *Judge
	keys simulator.Keys
}

func newHarness(t *testing.T, cfg Config) *harness {
	t.Helper()
	s, err := simulator.New(simulator.Config{Seed: 1, Clients: Judging(cfg)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return &harness{t: t, s: s, j: Of(s), keys: s.Seeded()}
}

// answer is a response, read.
type answer struct {
	status int
	header http.Header
	body   []byte
}

// page decodes a feed page's nextCursor ("" for null).
func (a answer) next() string {
	var p struct {
		NextCursor *string `json:"nextCursor"`
	}
	_ = json.Unmarshal(a.body, &p)
	if p.NextCursor == nil {
		return ""
	}
	return *p.NextCursor
}

// do sends one request; header values "" are left out.
func (h *harness) do(method, target, body string, header ...string) answer {
	h.t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, target, r)
	for i := 0; i+1 < len(header); i += 2 {
		if header[i+1] != "" {
			req.Header.Add(header[i], header[i+1])
		}
	}
	w := httptest.NewRecorder()
	h.s.Handler().ServeHTTP(w, req)
	return answer{w.Code, w.Header(), w.Body.Bytes()}
}

func bearer(key string) []string { return []string{"Authorization", "Bearer " + key} }

func (h *harness) feed(key, query string) answer {
	h.t.Helper()
	target := "/api/public-feed"
	if query != "" {
		target += "?" + query
	}
	return h.do(http.MethodGet, target, "", bearer(key)...)
}

func (h *harness) videos(key, contentType, body string) answer {
	h.t.Helper()
	return h.do(http.MethodPost, "/api/public/videos", body, append(bearer(key), "Content-Type", contentType)...)
}

func (h *harness) health(contentType, body string, header ...string) answer {
	h.t.Helper()
	return h.do(http.MethodPost, "/api/public/health", body, append(header, "Content-Type", contentType)...)
}

func (h *harness) advance(d time.Duration) { h.s.Advance(d) }

// walk reads the feed from the first page to its end with a limit.
func (h *harness) walk(key string, limit int) int {
	h.t.Helper()
	q := "limit=" + strconv.Itoa(limit)
	pages := 0
	for cursor := ""; ; pages++ {
		query := q
		if cursor != "" {
			query += "&cursor=" + cursor
		}
		a := h.feed(key, query)
		if a.status == http.StatusTooManyRequests {
			h.advance(time.Minute)
			continue
		}
		if a.status != http.StatusOK {
			h.t.Fatalf("feed: %d %s", a.status, a.body)
		}
		if cursor = a.next(); cursor == "" {
			return pages + 1
		}
	}
}

// client returns the verdicts of a key ("" for requests without one).
func (h *harness) client(final bool, key string) Client {
	h.t.Helper()
	hint := ""
	if key != "" {
		hint = redact.Form(key)
	}
	v := h.j.Snapshot(final)
	h.noKeys(v)
	for _, c := range v.Clients {
		if c.Key == hint {
			return c
		}
	}
	h.t.Fatalf("no verdict for %q among %d clients", hint, len(v.Clients))
	return Client{}
}

// results maps each requirement of a client to its result.
func results(c Client) map[catalogue.ID]string {
	out := map[catalogue.ID]string{}
	for _, r := range c.Requirements {
		out[r.ID] = r.Result
	}
	return out
}

// failed lists the requirements a client failed.
func failed(c Client) []catalogue.ID {
	var out []catalogue.ID
	for _, r := range c.Requirements {
		if r.Result == Failed {
			out = append(out, r.ID)
		}
	}
	return out
}

// noKeys fails if the verdicts hold any part of a seeded key's secret of
// 8 characters or more.
func (h *harness) noKeys(v Verdicts) {
	h.t.Helper()
	raw, _ := json.Marshal(v)
	for _, k := range []string{h.keys.Pro, h.keys.Free, h.keys.Revoked} {
		secret := k[strings.IndexByte(k, '_')+1:]
		for i := 0; i+8 <= len(secret); i++ {
			if strings.Contains(string(raw), secret[i:i+8]) {
				h.t.Fatalf("the verdicts hold a fragment of a key: %.300s", raw)
			}
		}
	}
}

// expect checks the failed requirements of a client, exactly.
func expectFailed(t *testing.T, c Client, want ...catalogue.ID) {
	t.Helper()
	got := failed(c)
	if strings.Join(idStrings(got), ",") != strings.Join(idStrings(want), ",") {
		t.Errorf("failed %v, want %v; findings:\n%s", got, want, findingsText(c))
	}
}

func idStrings(ids []catalogue.ID) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = string(id)
	}
	return out
}

func findingsText(c Client) string {
	var b strings.Builder
	for _, f := range c.Findings {
		b.WriteString(f.String() + "\n")
	}
	return b.String()
}

// finding is a client's one finding of a requirement (the zero Finding
// if it has none).
func finding(c Client, id catalogue.ID) Finding {
	for _, f := range c.Findings {
		if f.Requirement == id {
			return f
		}
	}
	return Finding{}
}

// latest is what the last request that broke the finding's requirement
// did.
func latest(f Finding) string {
	if f.LastEvidence != "" {
		return f.LastEvidence
	}
	return f.Evidence
}
