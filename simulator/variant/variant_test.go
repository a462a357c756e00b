package variant

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/schemas/jsondoc"
	"github.com/tcmkit/tcmkit/simulator"
)

func TestDrawIsDeterministicAndDescribed(t *testing.T) {
	for n := range uint64(50) {
		a, b := New(n), New(n)
		if a.String() != b.String() {
			t.Fatalf("draw %d differs between two derivations", n)
		}
		for _, dim := range []string{"world", "live growth", "error codes", "messages", "details", "key order", "layout", "escaping", "extra fields", "ids", "cursors", "unknown cursor", "bad limit", "precedence", "rate scope", "health", "Retry-After", "framing", "entry order", "entry window", "titles", "heavy"} {
			if !strings.Contains(a.String(), "  "+dim+":") {
				t.Errorf("draw %d: String does not say %q:\n%s", n, dim, a)
			}
		}
	}
	// The draws reach every value of every list.
	seen := map[string]map[string]bool{}
	note := func(dim, v string) {
		if seen[dim] == nil {
			seen[dim] = map[string]bool{}
		}
		seen[dim][v] = true
	}
	for n := range uint64(400) {
		d := New(n)
		note("vocabulary", d.Vocabulary)
		note("message", d.Message)
		note("details", d.Details)
		note("cursor", d.Cursor)
		note("retry", d.RetryAfter)
		note("framing", d.Framing)
		note("health", d.HealthKey)
		note("order", d.KeyOrder)
		note("escape", d.Escape)
		note("limit", d.BadLimit)
		note("titles", d.Titles)
	}
	for dim, list := range map[string][]string{"vocabulary": vocabularies, "message": messages, "details": detailStyles, "cursor": cursorFormats,
		"retry": retryForms, "framing": framings, "health": healthKeys, "order": keyOrders, "escape": escapes, "limit": badLimits, "titles": titleStyles} {
		for _, v := range list {
			if !seen[dim][v] {
				t.Errorf("no draw of 400 has %s %q", dim, v)
			}
		}
	}
}

func TestCursorsRoundTrip(t *testing.T) {
	for _, f := range cursorFormats {
		c := &cursors{format: f, secret: "s"}
		for _, s := range []string{"AAECAwQFBgcICQ", "x", "a-b_c"} {
			enc := c.encode(s)
			if got, ok := c.decode(enc); !ok || got != s {
				t.Errorf("%s: decode(encode(%q)) = %q, %v", f, s, got, ok)
			}
			if f != "server" && enc == s {
				t.Errorf("%s: the cursor %q is sent as the server's", f, s)
			}
		}
		for _, bad := range []string{"", "tcmkit-no-such-cursor", "!"} {
			if _, ok := c.decode(bad); ok && f != "server" {
				t.Errorf("%s: %q decodes", f, bad)
			}
		}
	}
}

// TestDrawsConform serves each draw a run of requests that touch every
// open point and checks every answer: a JSON media type, a body that
// validates as the resource of its status (FeedPage, VideosResponse,
// HealthBody, ErrorBody), and the musts of the contract.
func TestDrawsConform(t *testing.T) {
	n := uint64(16)
	if testing.Short() {
		n = 10
	}
	for i := range n {
		d := New(i)
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			t.Parallel()
			checkDraw(t, d)
		})
	}
}

// FuzzDrawConforms explores draws beyond TestDrawsConform's:
//
//	go test ./simulator/variant -run '^$' -fuzz FuzzDrawConforms -fuzztime 2m
//
// A draw that fails stays in testdata/fuzz as a regression case.
func FuzzDrawConforms(f *testing.F) {
	for _, n := range []uint64{1 << 20, 1 << 40, 1<<64 - 1} {
		f.Add(n)
	}
	f.Fuzz(func(t *testing.T, n uint64) { checkDraw(t, New(n)) })
}

type harness struct {
	t   *testing.T
	d   Draw
	sim *simulator.Server
	h   http.Handler
}

type reply struct {
	status int
	header http.Header
	doc    any
	raw    []byte
}

func (h *harness) do(method, target, auth, contentType, body string) reply {
	h.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	r := httptest.NewRequest(method, target, rd)
	if auth != "" {
		r.Header.Set("Authorization", auth)
	}
	if contentType != "" {
		r.Header.Set("Content-Type", contentType)
	}
	r.Header.Set("Accept-Encoding", "gzip")
	w := httptest.NewRecorder()
	h.h.ServeHTTP(w, r)
	raw := w.Body.Bytes()
	if w.Header().Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err != nil {
			h.t.Fatalf("%s %s: gzip: %v", method, target, err)
		}
		raw, _ = io.ReadAll(zr)
	}
	if cl := w.Header().Get("Content-Length"); cl != "" && cl != strconv.Itoa(w.Body.Len()) {
		h.t.Errorf("%s %s: Content-Length %s, body %d bytes", method, target, cl, w.Body.Len())
	}
	mt, _, err := mime.ParseMediaType(w.Header().Get("Content-Type"))
	if err != nil || mt != "application/json" && !strings.HasSuffix(mt, "+json") {
		h.t.Errorf("%s %s: Content-Type %q is no JSON media type", method, target, w.Header().Get("Content-Type"))
	}
	doc, err := jsondoc.Decode(raw)
	if err != nil {
		h.t.Fatalf("%s %s: status %d, body not JSON: %v\n%s", method, target, w.Code, err, raw)
	}
	res := schemas.ErrorBody
	if w.Code == http.StatusOK {
		res = map[string]schemas.Resource{schemas.PathFeed: schemas.FeedPage, schemas.PathVideos: schemas.VideosResponse, schemas.PathHealth: schemas.HealthBody}[r.URL.Path]
	}
	if err := schemas.Validate(res, doc); err != nil {
		h.t.Errorf("%s %s: status %d, the body does not validate as %s: %v\n%s", method, target, w.Code, res, err, excerpt(raw))
	}
	return reply{status: w.Code, header: w.Header(), doc: doc, raw: raw}
}

func excerpt(b []byte) string { return jsondoc.Excerpt(string(b), 600) }

func (h *harness) want(r reply, what string, statuses ...int) {
	h.t.Helper()
	for _, s := range statuses {
		if r.status == s {
			return
		}
	}
	h.t.Errorf("%s: status %d, want %v\n%s\n%s", what, r.status, statuses, excerpt(r.raw), h.d)
}

// checkDraw checks what every draw's simulator must do, in this order:
// the health check, the credentials, the whole feed, the tracked videos,
// bad parameters and the rate limit.
func checkDraw(t *testing.T, d Draw) {
	sim, err := d.Server(simulator.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
	h := &harness{t: t, d: d, sim: sim, h: sim.Handler()}
	keys := sim.Seeded()
	pro, free := "Bearer "+keys.Pro, "Bearer "+keys.Free
	h.checkHealth(keys, pro)
	h.checkCredentials(keys, free)
	ids := h.walkFeed(pro)
	h.checkVideos(pro, ids)
	h.checkBadParams(free)
	h.checkRateLimit(keys, free)
}

// checkHealth checks the health check as the draw wants it: with a key or
// without, with a body that is no object or not.
func (h *harness) checkHealth(keys simulator.Keys, pro string) {
	d := h.d
	// Health: {} without a key is 200, or 401 when the draw wants a key;
	// with the Pro key it is 200.
	r := h.do("POST", schemas.PathHealth, "", "application/json", "{}")
	if d.HealthKey == "required" {
		h.want(r, "health without a key", 401)
	} else {
		h.want(r, "health without a key", 200)
	}
	h.want(h.do("POST", schemas.PathHealth, pro, "application/json", "{}"), "health with the Pro key", 200)
	revoked := h.do("POST", schemas.PathHealth, "Bearer "+keys.Revoked, "application/json", "{}")
	if d.HealthKey == "none" {
		h.want(revoked, "health with the revoked key (ignored)", 200)
	} else {
		h.want(revoked, "health with the revoked key", 401)
	}
	if d.HealthBody {
		h.want(h.do("POST", schemas.PathHealth, pro, "application/json", "[]"), "health with a body that is no object", 400)
	} else {
		h.want(h.do("POST", schemas.PathHealth, pro, "application/json", "[]"), "health with a body that is no object", 200)
	}
}

// checkCredentials checks that a bad credential is a 401 on both
// operations, and what a free key may do.
func (h *harness) checkCredentials(keys simulator.Keys, free string) {
	feed := schemas.PathFeed
	body := `{"videoIds":["` + strings.Repeat("z", 11) + `"]}`

	// 401 for every bad credential, on both operations, with a valid request.
	for _, auth := range []string{"", "Bearer ", "Token " + keys.Pro, "Bearer " + keys.Revoked, "Bearer " + keys.Pro + "A", "Bearer nope_x"} {
		h.want(h.do("GET", feed, auth, "", ""), "feed with a bad key", 401)
		h.want(h.do("POST", schemas.PathVideos, auth, "application/json", body), "videos with a bad key", 401)
	}
	h.want(h.do("POST", schemas.PathVideos, free, "application/json", body), "videos for a free key", 403)
	h.want(h.do("GET", feed, free, "", ""), "feed for a free key", 200)
}

// walkFeed walks the whole feed with the Pro key, waiting out any 429 on
// the virtual clock, and returns up to 19 video ids it names.
func (h *harness) walkFeed(pro string) []string {
	t, sim := h.t, h.sim
	feed := schemas.PathFeed
	// The whole feed, walked at 200 a page: full pages, each event once,
	// newest first; the default page holds 50.
	first := h.do("GET", feed, pro, "", "")
	if n := len(jsondoc.Items(first.doc, "/events")); n != schemas.DefaultPageSize && first.doc.(map[string]any)["nextCursor"] != nil {
		t.Errorf("the default page holds %d events", n)
	}
	seen := map[string]bool{}
	var ids []string
	var last int64 = 1 << 62
	cursor := ""
	for pages := 0; ; pages++ {
		q := url.Values{"limit": {"500"}}
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		r := h.do("GET", feed+"?"+q.Encode(), pro, "", "")
		if r.status == 429 {
			wait, err := retryAfter(r.header)
			if err != nil {
				t.Fatal(err)
			}
			sim.Advance(wait)
			pages--
			continue
		}
		h.want(r, "a page of the walk", 200)
		evs := jsondoc.Items(r.doc, "/events")
		next, _ := r.doc.(map[string]any)["nextCursor"].(string)
		if len(evs) > schemas.MaxPageSize || next != "" && len(evs) != schemas.MaxPageSize {
			t.Fatalf("page %d holds %d events (next %q)", pages, len(evs), next)
		}
		for _, e := range evs {
			id, _ := jsondoc.String(e, "/id")
			at, _ := jsondoc.Int(e, "/createdAt")
			if seen[id] || at > last {
				t.Fatalf("event %s again or out of order at page %d", id, pages)
			}
			seen[id], last = true, at
			if v, ok := jsondoc.String(e, "/video/platformVideoId"); ok && len(ids) < 19 && len(v) <= 32 && !slices.Contains(ids, v) {
				ids = append(ids, v)
			}
		}
		if next == "" {
			break
		}
		cursor = next
	}
	return ids
}

// checkVideos checks the tracked videos: each id once, and bad bodies.
func (h *harness) checkVideos(pro string, ids []string) {
	t := h.t
	// Tracked videos: each id once, in videos or missing; bad bodies 400.
	raw, _ := json.Marshal(map[string]any{"videoIds": append(ids, "~nope~")})
	r := h.do("POST", schemas.PathVideos, pro, "application/json", string(raw))
	h.want(r, "videos for ids of the feed", 200)
	if got := len(jsondoc.Items(r.doc, "/videos")) + len(jsondoc.Items(r.doc, "/missingVideoIds")); got != len(ids)+1 {
		t.Errorf("videos: %d ids answered, want %d", got, len(ids)+1)
	}
	for _, bad := range []string{`{}`, `{"videoIds":[]}`, `[1]`, `{"videoIds":[`, `{"videoIds":["` + strings.Repeat("x", 33) + `"]}`} {
		h.want(h.do("POST", schemas.PathVideos, pro, "application/json", bad), "videos with a bad body "+bad, 400)
	}
}

// checkBadParams checks the feed's answer to bad parameters.
func (h *harness) checkBadParams(free string) {
	t := h.t
	feed := schemas.PathFeed
	// Bad parameters: a page, or a 400 whose details name them.
	for _, q := range []string{"limit=0", "limit=abc", "limit=1.5", "cursor=garbage", "limit=-1"} {
		r := h.do("GET", feed+"?"+q, free, "", "")
		h.want(r, "feed ?"+q, 200, 400)
		param, _, _ := strings.Cut(q, "=")
		if r.status == 400 && !strings.Contains(string(jsondoc.Encode(r.doc.(map[string]any)["details"])), param) {
			t.Errorf("feed ?%s: 400 whose details do not name %s: %s", q, param, r.raw)
		}
	}
}

// checkRateLimit checks the rate limit on a fresh key, and that it holds
// that key alone.
func (h *harness) checkRateLimit(keys simulator.Keys, free string) {
	t, sim := h.t, h.sim
	feed := schemas.PathFeed
	// The rate limit: 20 feed requests a minute on a fresh key pass, the
	// 21st is a 429 whose Retry-After, waited, lets the next through.
	acct := newAccount(t, sim)
	for i := range 20 {
		h.want(h.do("GET", feed+"?limit=1", acct, "", ""), fmt.Sprintf("feed request %d of a fresh key", i+1), 200)
	}
	r := h.do("GET", feed+"?limit=1", acct, "", "")
	h.want(r, "the 21st feed request", 429)
	wait, err := retryAfter(r.header)
	if err != nil {
		t.Fatalf("429: %v", err)
	}
	h.want(h.do("GET", feed, free, "", ""), "another key while one is throttled", 200)
	h.want(h.do("GET", feed+"?limit=1", "Bearer "+keys.Revoked, "", ""), "the revoked key while one is throttled", 401)
	sim.Advance(wait)
	h.want(h.do("GET", feed+"?limit=1", acct, "", ""), "after waiting Retry-After", 200)
}

func TestGrowthOnlyOnAManualClock(t *testing.T) {
	d := New(0)
	d.Growth = 2 * time.Second
	for _, speed := range []float64{0, 1} {
		cfg := simulator.Config{Speed: speed}
		if b := d.apply(&cfg); b.grow != (speed == 0) {
			t.Errorf("speed %g: grow = %v", speed, b.grow)
		}
	}
}

// retryAfter reads delta-seconds or an HTTP-date (after the Date header).
func retryAfter(h http.Header) (time.Duration, error) {
	v := h.Get("Retry-After")
	if n, err := strconv.Atoi(v); err == nil {
		return time.Duration(n) * time.Second, nil
	}
	at, err := http.ParseTime(v)
	if err != nil {
		return 0, fmt.Errorf("Retry-After %q", v)
	}
	date, err := http.ParseTime(h.Get("Date"))
	if err != nil {
		return 0, fmt.Errorf("an HTTP-date Retry-After without a Date: %v", err)
	}
	return at.Sub(date), nil
}

// newAccount is a fresh Pro account's Authorization header.
func newAccount(t *testing.T, sim *simulator.Server) string {
	t.Helper()
	srv := httptest.NewServer(sim.Handler())
	defer srv.Close()
	a, err := (&simulator.Control{URL: srv.URL}).CreateAccount(t.Context(), "pro")
	if err != nil {
		t.Fatal(err)
	}
	return "Bearer " + a.Key
}
