package explore_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/text/unicode/norm"

	"github.com/tcmkit/tcmkit/simulator"
	"github.com/tcmkit/tcmkit/suites/bundled"
	"github.com/tcmkit/tcmkit/suites/client"
	"github.com/tcmkit/tcmkit/suites/explore"
	"github.com/tcmkit/tcmkit/suites/oracle"
)

// Every variant, sent once to a conforming simulator, gets an answer the
// contract oracle finds no fault in: no variant asks what the contract does
// not decide as the oracle reads it. The simulator's limits are off here,
// so the rate rules, which count what a limiter admits, are left out.
func TestEveryVariantPassesAConformingServer(t *testing.T) {
	if problems := sendAll(t, nil); len(problems) > 0 {
		t.Errorf("%d problems on a conforming server:\n%s", len(problems), strings.Join(problems, "\n"))
	}
}

// The same variants against a server whose parser takes JSON's common
// extensions (trailing commas, comments, single quotes): the corpus's
// texts find it, and blame the body's rule.
func TestVariantsFindALenientParser(t *testing.T) {
	problems := sendAll(t, []simulator.Layer{lenient})
	found := 0
	for _, p := range problems {
		if strings.Contains(p, "VIDEOS-BAD-BODY") && strings.Contains(p, "JSONTestSuite") {
			found++
		}
	}
	if found < 3 {
		t.Errorf("%d corpus texts found the lenient parser; problems:\n%s", found, strings.Join(problems, "\n"))
	}
}

// A server that echoes ids in Unicode's composed form (NFC) lists another
// id as missing than the one asked: the ids whose normal forms differ find
// it, and blame the partition of the ids.
func TestVariantsFindANormalizingEcho(t *testing.T) {
	nfc := simulator.Layer{Name: "NFC echo", Wrap: func(_ *simulator.Server, op simulator.Operation, next simulator.Answerer) simulator.Answerer {
		if op != simulator.OpVideos {
			return next
		}
		return func(r *http.Request) simulator.Answer {
			a := next(r)
			var doc any
			if json.Unmarshal(a.Body, &doc) == nil {
				b, _ := json.Marshal(doc) // the escapes decoded, as a server's encoder writes
				a.Body = norm.NFC.Bytes(b)
			}
			return a
		}
	}}
	found := false
	for _, p := range sendAll(t, []simulator.Layer{nfc}) {
		found = found || strings.Contains(p, "VIDEOS-PARTITION") && strings.Contains(p, "Unicode normal forms")
	}
	if !found {
		t.Error("no variant found the server that echoes ids composed")
	}
}

// A server that reads the cursor's value without decoding its percent-
// encoding finds no such cursor: the transformations of the feed's page
// find it.
func TestVariantsFindACursorReadUndecoded(t *testing.T) {
	raw := simulator.Layer{Name: "cursor read raw", Wrap: func(_ *simulator.Server, op simulator.Operation, next simulator.Answerer) simulator.Answerer {
		if op != simulator.OpFeed {
			return next
		}
		return func(r *http.Request) simulator.Answer {
			var parts []string
			for _, p := range strings.Split(r.URL.RawQuery, "&") {
				name, value, ok := strings.Cut(p, "=")
				if n, err := url.QueryUnescape(name); ok && err == nil && n == "cursor" {
					p = "cursor=" + url.QueryEscape(value) // the value as written, not as meant
				}
				parts = append(parts, p)
			}
			r = r.Clone(r.Context())
			r.URL.RawQuery = strings.Join(parts, "&")
			return next(r)
		}
	}}
	found := false
	for _, p := range sendAll(t, []simulator.Layer{raw}) {
		found = found || strings.Contains(p, "(equivalence)") && strings.Contains(p, "FEED-CURSOR-WALK")
	}
	if !found {
		t.Error("no variant found the server that reads a cursor undecoded")
	}
}

var (
	jsonComment   = regexp.MustCompile(`/\*.*?\*/|//[^\n]*`)
	trailingComma = regexp.MustCompile(`,\s*([\]}])`)
)

// lenient reads a tracked-videos body as a forgiving parser would: what is
// no JSON is mended (comments dropped, a comma before a bracket dropped,
// single quotes made double) and served if that makes it JSON.
var lenient = simulator.Layer{Name: "lenient JSON", Wrap: func(_ *simulator.Server, op simulator.Operation, next simulator.Answerer) simulator.Answerer {
	if op != simulator.OpVideos {
		return next
	}
	return func(r *http.Request) simulator.Answer {
		body, _ := io.ReadAll(r.Body)
		if !json.Valid(body) {
			mended := jsonComment.ReplaceAll(body, nil)
			mended = trailingComma.ReplaceAll(mended, []byte("$1"))
			mended = bytes.ReplaceAll(mended, []byte("'"), []byte(`"`))
			if json.Valid(mended) {
				body = mended
			}
		}
		r = r.Clone(r.Context())
		r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
		return next(r)
	}
}}

// sendAll sends every variant once to a simulator with the layers and
// returns the oracle's problems but the rate rules'.
func sendAll(t *testing.T, layers []simulator.Layer) []string {
	t.Helper()
	sim, err := simulator.New(simulator.Config{Seed: bundled.Seed, FeedLimit: -1, VideosLimit: -1, Layers: layers})
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
	srv := startServer(t, sim)
	ctx := context.Background()
	keys, err := bundled.Provision(ctx, nil, srv)
	if err != nil {
		t.Fatal(err)
	}
	c := &client.Client{BaseURL: srv}
	defer c.Close()
	or := oracle.New(oracle.Options{Keys: oracle.Keys{Pro: []string{keys.Pro}, Free: []string{keys.Free}, Revoked: []string{keys.Revoked},
		Prefix: strings.SplitN(keys.Pro, "_", 2)[0], Invented: func(id string) bool { return strings.HasPrefix(id, "~") }}})
	first, err := c.Do(ctx, client.Request{Method: "GET", Path: "/api/public-feed", Query: "limit=1", Auth: "Bearer " + keys.Pro})
	if err != nil {
		t.Fatal(err)
	}
	var page struct{ NextCursor string }
	json.Unmarshal(first.Body, &page)
	k := explore.Keys{Pro: keys.Pro, Free: keys.Free, Revoked: keys.Revoked, Video: firstVideo(first.Body), Cursor: page.NextCursor}
	if k.Cursor == "" {
		t.Fatal("the feed's first page handed out no cursor")
	}
	or.Sending(first.Request, 1)
	first.Seq = 1
	or.Judge(first) // its cursor is the key's: a page of it is judged as one
	sent := 0
	var problems []string
	judge := func(name string, fam explore.Family, resp *client.Response, extra []oracle.Problem) {
		for _, p := range append(or.Judge(resp), extra...) {
			if !strings.HasPrefix(string(p.Requirement), "RATE-") {
				problems = append(problems, fmt.Sprintf("%s (%s): %s %s: want %s; got %s", name, fam, p.Requirement, p.Pointer, p.Expected, p.Actual))
			}
		}
	}
	seq := 1
	for _, b := range explore.Bases {
		plainReq, ok := explore.Plain(b, k)
		if !ok {
			continue
		}
		seq++
		or.Sending(plainReq, seq)
		plain, err := c.Do(ctx, plainReq)
		if err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		plain.Seq = seq
		judge(string(b), explore.Equivalence, plain, nil)
		for _, pack := range explore.Packs(b) {
			req, _ := explore.Transformed(b, k, pack)
			seq++
			or.Sending(req, seq)
			resp, err := c.Do(ctx, req)
			if err != nil {
				t.Errorf("%s, %d transformations: %v", b, len(pack), err)
				continue
			}
			resp.Seq = seq
			_, extra := or.Equivalent(plain, resp, pack[0].Statement)
			judge(fmt.Sprintf("%s, transformed (%s…)", b, pack[0].Name), explore.Equivalence, resp, extra)
		}
	}
	for _, v := range explore.All() {
		seq++
		req, ok := v.Request(k)
		if !ok {
			continue
		}
		or.Sending(req, seq)
		resp, err := c.Do(ctx, req)
		if err != nil {
			t.Errorf("%s: %v", v.Name, err)
			continue
		}
		resp.Seq = seq
		sent++
		judge(v.Name, v.Family, resp, nil)
	}
	if sent < len(explore.All())/2 {
		t.Errorf("%d of %d variants sent", sent, len(explore.All()))
	}
	return problems
}

func firstVideo(body []byte) string {
	const key = `"platformVideoId":"`
	i := strings.Index(string(body), key)
	if i < 0 {
		return ""
	}
	rest := string(body)[i+len(key):]
	return rest[:strings.IndexByte(rest, '"')]
}

// A server that checks one value of a repeated videoIds and answers the
// other (two parsers reading one body: RFC 8259 §4 allows either reading,
// not both at once) is found, each way round, and blamed on the bound the
// reading it answered breaks.
func TestVariantsFindADuplicateReadTwoWays(t *testing.T) {
	for _, checkFirst := range []bool{true, false} {
		t.Run(fmt.Sprintf("the first checked: %v", checkFirst), func(t *testing.T) {
			found := false
			for _, p := range sendAll(t, []simulator.Layer{readTwoWays(checkFirst)}) {
				found = found || strings.Contains(p, "VIDEOS-IDS-MAX") && strings.Contains(p, "21 ids")
			}
			if !found {
				t.Error("no variant found the server that answers the reading it did not check")
			}
		})
	}
}

// readTwoWays checks one value of a repeated videoIds as the simulator
// does, and answers the other, whatever its size (by parts of 20).
func readTwoWays(checkFirst bool) simulator.Layer {
	return simulator.Layer{Name: "a repeated member read two ways", Wrap: func(_ *simulator.Server, op simulator.Operation, next simulator.Answerer) simulator.Answerer {
		if op != simulator.OpVideos {
			return next
		}
		return func(r *http.Request) simulator.Answer {
			body, _ := io.ReadAll(r.Body)
			values := memberValues(body, "videoIds")
			with := func(b []byte) simulator.Answer {
				c := r.Clone(r.Context())
				c.Body, c.ContentLength = io.NopCloser(bytes.NewReader(b)), int64(len(b))
				return next(c)
			}
			if len(values) < 2 {
				return with(body)
			}
			checked, answered := values[len(values)-1], values[0]
			if checkFirst {
				checked, answered = values[0], values[len(values)-1]
			}
			a := with([]byte(`{"videoIds":` + string(checked) + `}`))
			if a.Status != http.StatusOK {
				return a
			}
			var ids []string
			if json.Unmarshal(answered, &ids) != nil {
				return with(body)
			}
			var out struct {
				Videos          []json.RawMessage `json:"videos"`
				MissingVideoIDs []string          `json:"missingVideoIds"`
			}
			out.Videos, out.MissingVideoIDs = []json.RawMessage{}, []string{}
			for from := 0; from < len(ids); from += 20 {
				part, _ := json.Marshal(map[string][]string{"videoIds": ids[from:min(from+20, len(ids))]})
				a := with(part)
				var got struct {
					Videos          []json.RawMessage `json:"videos"`
					MissingVideoIDs []string          `json:"missingVideoIds"`
				}
				if a.Status != http.StatusOK || json.Unmarshal(a.Body, &got) != nil {
					return a
				}
				out.Videos, out.MissingVideoIDs = append(out.Videos, got.Videos...), append(out.MissingVideoIDs, got.MissingVideoIDs...)
			}
			a.Header = a.Header.Clone()
			a.Header.Del("Content-Length")
			a.Body, _ = json.Marshal(out)
			return a
		}
	}}
}

// memberValues are the raw values of a member of the top-level object, in
// order.
func memberValues(body []byte, name string) []json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(body))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	var out []json.RawMessage
	for dec.More() {
		k, err := dec.Token()
		var v json.RawMessage
		if err != nil || dec.Decode(&v) != nil {
			return nil
		}
		if k == name {
			out = append(out, v)
		}
	}
	return out
}

// A server whose parser takes a raw control character inside a string
// (RFC 8259 §7: it must be escaped; the body is no JSON, so a 400) is
// found, and blamed on the body's rule.
func TestVariantsFindRawControlCharacters(t *testing.T) {
	raw := simulator.Layer{Name: "raw control characters taken", Wrap: func(_ *simulator.Server, op simulator.Operation, next simulator.Answerer) simulator.Answerer {
		if op != simulator.OpVideos {
			return next
		}
		return func(r *http.Request) simulator.Answer {
			body, _ := io.ReadAll(r.Body)
			body = escapeControls(body)
			r = r.Clone(r.Context())
			r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
			return next(r)
		}
	}}
	lead, corpus := false, 0
	for _, p := range sendAll(t, []simulator.Layer{raw}) {
		if !strings.Contains(p, "VIDEOS-BAD-BODY") {
			continue
		}
		lead = lead || strings.Contains(p, "a raw tab inside an id")
		if strings.Contains(p, "n_string_unescaped") {
			corpus++
		}
	}
	if !lead || corpus < 2 {
		t.Errorf("the raw tab found it: %v; corpus texts that found it: %d", lead, corpus)
	}
}

// escapeControls escapes the raw control characters inside strings, as a
// parser that takes them reads them.
func escapeControls(b []byte) []byte {
	var out bytes.Buffer
	in, esc := false, false
	for _, c := range b {
		switch {
		case in && esc:
			esc = false
		case in && c == '\\':
			esc = true
		case c == '"':
			in = !in
		case in && c < 0x20:
			fmt.Fprintf(&out, `\u%04x`, c)
			continue
		}
		out.WriteByte(c)
	}
	return out.Bytes()
}
