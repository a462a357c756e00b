package selftest

import (
	"bytes"
	"encoding/base64"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/tcmkit/tcmkit/schemas/jsondoc"
	"github.com/tcmkit/tcmkit/simulator"
	"github.com/tcmkit/tcmkit/suites/bundled"
)

// A conforming server may choose anything the contract leaves open; the
// suite must pass it. This target is the simulator with other choices on
// the open points the suite's checks come nearest to: every error body has
// "error" and "message" set to "" (ErrorBody says string, and "" is one:
// the false failure of issue 18), an extra member and another key order;
// error bodies are application/problem+json; feed 400s say which parameter
// in another shape of details; cursors are opaque strings of another form;
// every 200 body has an extra member; an id asked twice is answered twice;
// health wants a key. A whole run: any spec may meet any of these answers.
func TestOpenChoicesPass(t *testing.T) {
	t.Parallel()
	r := runSuite(t, startTarget(t, simulator.Config{}, openChoices))
	if r.exitCode != 0 || len(r.failed()) > 0 {
		t.Fatalf("a server that chose otherwise where the contract is open failed (exit %d):\n%s", r.exitCode, failures(r))
	}
	if r.passed() < 60 {
		t.Errorf("only %d specs passed", r.passed())
	}
}

// cursorPrefix marks the cursors openChoices hands out.
const cursorPrefix = "c."

// openChoices wraps the simulator: cursors in, errors and cursors out.
func openChoices(h http.Handler, _ *bundled.Keys) http.Handler {
	inner := rewrite(h, func(r *http.Request, rec *httptest.ResponseRecorder) {
		if r.URL.Path == "/api/public/health" && rec.Code == http.StatusOK {
			return // {"status":"ok"} exactly: HealthBody allows no choice the suite's strict specs would not see
		}
		editJSON(rec, func(doc any) any {
			obj, ok := doc.(map[string]any)
			if !ok {
				return doc
			}
			if rec.Code >= 400 {
				out := map[string]any{"message": "", "error": "", "requestId": "r-1"}
				if d, ok := obj["details"]; ok {
					out["details"] = map[string]any{"problems": d, "why": "see " + strings.Join(invalidParams(d), ", ")}
				}
				rec.Header().Set("Content-Type", "application/problem+json")
				return out
			}
			if next, ok := obj["nextCursor"].(string); ok {
				obj["nextCursor"] = cursorPrefix + base64.RawURLEncoding.EncodeToString([]byte(next))
			}
			obj["servedBy"] = "open-choices"
			return obj
		})
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/public/health" && r.Header.Get("Authorization") == "" {
			// Whether health needs a key is open: this server wants one.
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			w.Write([]byte(`{"error":"","message":""}`))
			return
		}
		if r.URL.Path == "/api/public-feed" {
			q := r.URL.Query()
			if c := q.Get("cursor"); c != "" {
				// A cursor this server did not hand out stays unknown to the simulator.
				raw, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(c, cursorPrefix))
				if err != nil || !strings.HasPrefix(c, cursorPrefix) {
					raw = []byte("not-" + c)
				}
				q.Set("cursor", string(raw))
				r2 := r.Clone(r.Context())
				u := *r.URL
				u.RawQuery = q.Encode()
				r2.URL, r2.RequestURI = &u, u.RequestURI()
				r = r2
			}
		}
		if r.URL.Path != "/api/public/videos" {
			inner.ServeHTTP(w, r)
			return
		}
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		rec := httptest.NewRecorder()
		inner.ServeHTTP(rec, r)
		if rec.Code == http.StatusOK {
			editJSON(rec, func(doc any) any { return oncePerAsk(body, doc) })
		}
		forward(w, rec)
	})
}

// oncePerAsk repeats the VideoEntry of an id asked more than once, once per ask.
func oncePerAsk(request []byte, doc any) any {
	req, _ := jsondoc.Decode(request)
	asked := map[string]int{}
	for _, id := range jsondoc.Items(req, "/videoIds") {
		if s, ok := id.(string); ok {
			asked[s]++
		}
	}
	obj, ok := doc.(map[string]any)
	if !ok {
		return doc
	}
	var videos []any
	for _, e := range jsondoc.Items(obj, "/videos") {
		id, _ := jsondoc.String(e, "/video/platformVideoId")
		for range max(asked[id], 1) {
			videos = append(videos, e)
		}
	}
	if videos != nil {
		obj["videos"] = videos
	}
	return obj
}

// invalidParams names the parameters a simulator details value lists.
func invalidParams(d any) []string {
	var out []string
	for _, p := range jsondoc.Items(d, "/invalid") {
		if s, ok := p.(string); ok {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		out = append(out, url.QueryEscape(string(jsondoc.Encode(d))))
	}
	return out
}
