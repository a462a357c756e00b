package selftest

import (
	"bytes"
	"encoding/json"
	"html"
	"io/fs"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/schemas/redact"
	"github.com/tcmkit/tcmkit/schemas/redact/redacttest"
	"github.com/tcmkit/tcmkit/simulator"
	"github.com/tcmkit/tcmkit/suites/bundled"
)

// echo is a target that repeats the Authorization header everywhere it can:
// in a header the transcripts show, and in every body.
func echo(h http.Handler, _ *bundled.Keys) http.Handler {
	return rewrite(h, func(r *http.Request, rec *httptest.ResponseRecorder) {
		auth := r.Header.Get("Authorization")
		rec.Header().Set("WWW-Authenticate", `Bearer realm="echo", got="`+auth+`"`)
		// and in a header's name, which the client puts in its canonical
		// case: the key up to case
		rec.Header()["X-Echo-"+strings.TrimPrefix(auth, "Bearer ")] = []string{"1"}
		if rec.Code >= 300 {
			// not an ErrorBody (no message), so the failure quotes it
			raw, _ := json.Marshal(map[string]string{"error": "bad key " + auth})
			rec.Body = bytes.NewBuffer(raw)
			return
		}
		if r.URL.Path == schemas.PathFeed {
			editJSON(rec, func(doc any) any {
				evs := events(doc)
				for i, e := range evs {
					title := "echo " + auth
					if i%2 == 1 { // and in a random stack of the encodings the redactor promises to read
						title = "echo Bearer " + echoed.encode(strings.TrimPrefix(auth, "Bearer "))
					}
					e.(map[string]any)["channel"].(map[string]any)["title"] = title
				}
				for i, j := 0, len(evs)-1; i < j; i, j = i+1, j-1 { // and out of order
					evs[i], evs[j] = evs[j], evs[i]
				}
				return doc
			})
		}
	})
}

// echoedEncodings are the encoded keys the echoing target sent, each in a
// random stack of the promised encodings (package redacttest), to search
// every output for.
type echoedEncodings struct {
	mu   sync.Mutex
	rng  *rand.Rand
	sent map[string]string // the encoded Authorization value → the key
}

var echoed = &echoedEncodings{rng: rand.New(rand.NewPCG(25, 4)), sent: map[string]string{}}

func (e *echoedEncodings) encode(key string) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	enc := redacttest.Encode(e.rng, redacttest.Stack(e.rng), key)
	if len(e.sent) < 60 {
		e.sent[enc] = key
	}
	return enc
}

// noEncodedKey searches every output of the run for the encoded keys the
// target echoed, as written and as a JSON or HTML text would quote them.
func noEncodedKey(t *testing.T, r result) {
	t.Helper()
	outputs := map[string]string{"console output": r.output}
	filepath.WalkDir(r.dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(path)
			outputs[filepath.Base(path)] = string(b)
		}
		return nil
	})
	echoed.mu.Lock()
	defer echoed.mu.Unlock()
	if len(echoed.sent) == 0 {
		t.Fatal("the target echoed no encoded key: the search proves nothing")
	}
	var cases []redacttest.Case
	for enc, key := range echoed.sent {
		if !strings.Contains(key, "_") {
			continue
		}
		quoted, _ := json.Marshal(enc)
		for _, form := range []string{enc, string(quoted[1 : len(quoted)-1]), html.EscapeString(enc)} {
			cases = append(cases, redacttest.Case{Encoded: form, Key: key})
		}
	}
	for name, out := range outputs {
		if i, leak := redacttest.FirstLeak(out, cases); i >= 0 {
			t.Errorf("%s holds %.60q of the key %s encoded as %.80q", name, leak, redact.Form(cases[i].Key), cases[i].Encoded)
		}
	}
}

// refuseEverything answers health, and 401 echoing the key to everything else.
func refuseEverything() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == schemas.PathHealth {
			w.Write([]byte(`{"status":"ok"}`))
			return
		}
		auth := r.Header.Get("Authorization")
		w.Header().Set("WWW-Authenticate", `Bearer got="`+auth+`"`)
		w.WriteHeader(http.StatusUnauthorized)
		json.NewEncoder(w).Encode(map[string]string{"error": "unauthorized", "message": "unknown key " + auth})
	})
}

// TestNoKeyInAnyOutput runs the suite against targets that echo the keys
// and searches everything the run wrote for any fragment of a key. A whole
// run, -v and JUnit: every spec and every writer of output may leak one.
func TestNoKeyInAnyOutput(t *testing.T) {
	t.Parallel()
	refusing := httptest.NewServer(refuseEverything())
	t.Cleanup(refusing.Close)
	known := bundled.Keys{
		Pro:     "tcm_KnownProKeyKnownProKeyKnownPro01",
		Free:    "tcm_KnownFreeKeyKnownFreeKeyKnownF02",
		Revoked: "tcm_KnownRevokedKeyKnownRevokedKe03",
	}
	for _, tc := range []struct {
		name    string
		target  target
		errored bool
	}{
		{"a target that refuses the key (the run is incomplete)", target{url: refusing.URL, keys: known}, true},
		{"a simulator that echoes the key and fails specs", startTarget(t, simulator.Config{}, echo), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := runSearched(t, tc.target, "--ginkgo.v")
			if r.exitCode == 0 {
				t.Fatalf("the suite passed a target that echoes keys")
			}
			rep, err := os.ReadFile(filepath.Join(r.dir, "reports", "conformance-report.json"))
			if err != nil {
				t.Fatal(err)
			}
			var verdict struct{ Outcome string }
			json.Unmarshal(rep, &verdict)
			want := map[bool]string{true: "incomplete", false: "failed"}[tc.errored]
			if verdict.Outcome != want {
				t.Errorf("report outcome %q, want %q", verdict.Outcome, want)
			}
			if tc.errored && !strings.Contains(r.output, "the run is incomplete") {
				t.Errorf("no clear preflight message in the output:\n%s", tail(r.output, 2000))
			}
			if !tc.errored && len(r.failed()) < 5 {
				t.Errorf("the echoing target made only %d specs fail; the search proves little", len(r.failed()))
			}
			noKeyFragment(t, r, tc.target.keys)
			if !tc.errored {
				noEncodedKey(t, r)
			}
			shown := false
			filepath.WalkDir(r.dir, func(path string, d fs.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					b, _ := os.ReadFile(path)
					shown = shown || bytes.Contains(b, []byte("tcm_…"))
				}
				return nil
			})
			if !shown {
				t.Errorf("no redacted key (tcm_…) anywhere: the echo never reached the output, so the search proves nothing")
			}
		})
	}
}
