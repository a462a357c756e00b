// Package hostile holds small HTTP servers that misbehave the way a broken
// or hostile target of the conformance suite might: they redirect the
// suite elsewhere, send bodies of gigabytes or of invalid JSON, drip bytes,
// ask for absurd waits, never end their cursors, echo the key or cut the
// connection. The suite's self-test runs the suite against each of them;
// cmd/hostile serves one on 127.0.0.1 to measure a run by hand.
//
// Each answers what the suite's preflight asks (health, and the first feed
// page for the Pro key) like a conforming server with an empty feed, unless
// its misbehaviour starts there, so that the run goes on to the specs.
package hostile

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/tcmkit/tcmkit/schemas"
)

// Keys look like keys of the API; no account has them. Every target
// expects them.
var Keys = struct{ Pro, Free, Revoked string }{
	Pro:     "tcm_HstPro7fK2mQ9vX4bN8cR1tY6wZ3pL5s",
	Free:    "tcm_HstFree3aB8dE1gJ6kM9nQ2rT5uW7xZ0",
	Revoked: "tcm_HstRevk4cF7hK0lP3sV6yA9bD2eG5iJ8",
}

// Target is one hostile server.
type Target struct {
	Name    string // short and stable: what cmd/hostile --name takes
	About   string // what it does, one sentence
	Handler http.Handler
	// Count is what the target counts of its own misbehaviour: the pages
	// the endless feed served; nil for the others.
	Count *atomic.Int32
}

// Targets returns a fresh set of the hostile servers; elsewhere is the URL
// of another listener, where the redirecting ones send the suite, and size
// the length of invalid-json's bodies (DefaultSize when 0, within
// MinSize..MaxSize).
func Targets(elsewhere string, size int) []Target {
	if size <= 0 {
		size = DefaultSize
	}
	size = min(max(size, MinSize), MaxSize)
	redirect := func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere+r.URL.RequestURI(), http.StatusTemporaryRedirect)
	}
	retryAfter := func(v string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", v)
			w.WriteHeader(http.StatusTooManyRequests)
		}
	}
	pages := &atomic.Int32{}
	return []Target{
		{Name: "redirect", About: "answers every request with 307 to another listener", Handler: http.HandlerFunc(redirect)},
		{Name: "redirect-after-preflight", About: "answers every request after the preflight with 307 to another listener", Handler: afterPreflight(redirect)},
		{Name: "huge-body", About: "answers every request after the preflight with a body of 2 GiB", Handler: afterPreflight(huge)},
		{Name: "invalid-json", About: fmt.Sprintf("answers every request after the preflight with %d KiB of valid JSON that breaks the schema everywhere (and 429 to limit=1)", size>>10),
			Handler: afterPreflight(invalidJSON(size))},
		{Name: "drip", About: "answers every request after the preflight with a byte every 100 ms, for ever", Handler: afterPreflight(drip)},
		{Name: "retry-after-year", About: "answers every request after the preflight with 429 and Retry-After: 31536000 (a year)", Handler: afterPreflight(retryAfter("31536000"))},
		{Name: "retry-after-negative", About: "answers every request after the preflight with 429 and Retry-After: -5", Handler: afterPreflight(retryAfter("-5"))},
		{Name: "endless-cursors", About: "serves the same 200 events on every feed page, with a new nextCursor each time", Handler: endlessFeed(pages), Count: pages},
		{Name: "echo", About: "echoes the Authorization header after the preflight into every body and a header, padded so that any cut falls inside the key", Handler: afterPreflight(echo)},
		{Name: "cut-mid-body", About: "answers every request after the preflight with a Content-Length of 5000, 100 bytes, and a closed connection", Handler: afterPreflight(cutMidBody)},
	}
}

// afterPreflight answers what the preflight asks like a conforming server
// with an empty feed, and everything else with bad.
func afterPreflight(bad http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == schemas.PathHealth && r.Method == http.MethodPost && r.Header.Get("Authorization") == "":
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"status":"ok"}`))
		case r.URL.Path == schemas.PathFeed && r.URL.RawQuery == "" && r.Header.Get("Authorization") == "Bearer "+Keys.Pro:
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"events":[],"nextCursor":null}`))
		default:
			bad(w, r)
		}
	}
}

// huge writes the start of a feed page, 2 GiB of it, until the client leaves.
func huge(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	chunk := bytes.Repeat([]byte(`{"events":[`), 6000)
	for sent := 0; sent < 2<<30; sent += len(chunk) {
		if _, err := w.Write(chunk); err != nil {
			return
		}
	}
}

// DefaultSize is the length of invalid-json's bodies by default; MinSize
// and MaxSize bound it (the body is made once, in memory).
const (
	DefaultSize = 240 << 10
	MinSize     = 128
	MaxSize     = 256 << 20
)

// invalidJSON answers size bytes of valid JSON in which every value is
// wrong, with a new cursor each time; a rate limit on limit=1 ends the
// suite's burst at once.
func invalidJSON(size int) http.HandlerFunc {
	ones := strings.Repeat("1,", (size-100)/2)
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.RawQuery == "limit=1" {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
		}
		fmt.Fprintf(w, `{"events":[%s1],"videos":[],"missingVideoIds":[],"nextCursor":"c%d"}`, ones, time.Now().UnixNano())
	}
}

// drip sends the headers, then a byte every 100 ms until the client leaves.
func drip(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	for {
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
			return
		case <-time.After(100 * time.Millisecond):
			w.Write([]byte(" "))
		}
	}
}

// echo repeats the Authorization header in a header and in the body, after
// paddings of every length up to 700, so that wherever an excerpt or a
// quoted value is cut, some copy of the key stands across the cut.
func echo(w http.ResponseWriter, r *http.Request) {
	auth := r.Header.Get("Authorization")
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("WWW-Authenticate", `Bearer realm="echo", got="`+strings.Repeat("x", len(r.URL.RawQuery)%50)+auth+`"`)
	w.WriteHeader(http.StatusUnauthorized)
	var events []map[string]any
	for pad := 0; pad < 700; pad += 7 {
		events = append(events, map[string]any{"id": strings.Repeat("i", pad) + auth, "title": strings.Repeat("t", pad%130) + auth})
	}
	json.NewEncoder(w).Encode(map[string]any{
		"error":   strings.Repeat("e", 590) + auth, // the excerpt's cut at 600 falls inside the key
		"message": "unknown key " + auth,
		"events":  events,
		// First in the body (members are sorted): the key spelt with \u
		// escapes, every character and every other one. JSON that decodes
		// to the key is the key.
		"details": []json.RawMessage{uEscaped(auth, 1), uEscaped(auth, 2)},
	})
}

// uEscaped is s as a JSON string whose every n-th character is a \u
// escape.
func uEscaped(s string, n int) json.RawMessage {
	var b strings.Builder
	b.WriteByte('"')
	for i := range len(s) {
		if c := s[i]; i%n == 0 || c == '"' || c == '\\' || c < ' ' {
			fmt.Fprintf(&b, `\u%04x`, c)
		} else {
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return json.RawMessage(b.String())
}

// cutMidBody announces 5000 bytes, sends 100 and closes the connection.
func cutMidBody(w http.ResponseWriter, _ *http.Request) {
	conn, buf, err := w.(http.Hijacker).Hijack()
	if err != nil {
		return
	}
	defer conn.Close()
	fmt.Fprintf(buf, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 5000\r\n\r\n%s", strings.Repeat(" ", 100))
	buf.Flush()
}

// endlessFeed pages through the same 200 events for ever: nextCursor is
// never null. Other requests get a 401 ErrorBody.
func endlessFeed(pages *atomic.Int32) http.HandlerFunc {
	var page bytes.Buffer
	b := bufio.NewWriter(&page)
	for i := range schemas.MaxPageSize {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(b, `{"id":"e%d","createdAt":%d,"type":"channel_renamed","oldChannelTitle":"a","newChannelTitle":"b","channel":{"id":"c","platformChannelId":"p","title":"t","thumbnailUrl":null}}`,
			i, 1_767_225_600_000-int64(i)*1000)
	}
	b.Flush()
	events := page.String()
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path != schemas.PathFeed || r.Header.Get("Authorization") != "Bearer "+Keys.Pro {
			w.WriteHeader(http.StatusUnauthorized)
			w.Write([]byte(`{"error":"unauthorized","message":"no"}`))
			return
		}
		fmt.Fprintf(w, `{"events":[%s],"nextCursor":"c%d"}`, events, pages.Add(1))
	}
}
