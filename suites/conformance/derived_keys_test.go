package conformance

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/onsi/ginkgo/v2/types"
	"golang.org/x/text/unicode/norm"

	"github.com/tcmkit/tcmkit/schemas/catalogue"
	"github.com/tcmkit/tcmkit/schemas/redact"
	"github.com/tcmkit/tcmkit/schemas/redact/redacttest"
	"github.com/tcmkit/tcmkit/schemas/report"
	"github.com/tcmkit/tcmkit/suites/client"
	"github.com/tcmkit/tcmkit/suites/explore"
)

// TestNoDerivedKeyInAnyOutput: every request the explorer builds from a
// random Pro key (its own derivations: fullwidth, case, percent-encoding,
// Basic, the query, a cookie, another header), sent through the suite's
// client to a target that echoes it back, goes through every writer of a
// run (the redactor's String and Writer, the client's transcript, Ginkgo's
// console, the three reports, Ginkgo's JSON, JUnit, Go JSON and TeamCity
// reports), and
// no output holds any form of the key: none, after NFKC, case folding,
// percent- and base64-decoding.
func TestNoDerivedKeyInAnyOutput(t *testing.T) {
	cat, err := catalogue.Load()
	if err != nil {
		t.Fatal(err)
	}
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Header().Set("Location", "/p?"+r.URL.RawQuery)
		fmt.Fprintf(w, "%s %s\n", r.Method, r.URL.RequestURI())
		r.Header.Write(w)
		io.Copy(w, r.Body)
	}))
	defer echo.Close()
	for seed := range uint64(2) {
		rng := rand.New(rand.NewPCG(seed, 39))
		pro := redacttest.Key(rng)
		keys := explore.Keys{Pro: "tcm_" + pro[strings.IndexByte(pro, '_')+1:], Free: redacttest.Key(rng), Revoked: redacttest.Key(rng), Video: "dQw4w9WgXcQ"}
		red := redact.New(keys.Pro, keys.Free, keys.Revoked)
		c := &client.Client{BaseURL: echo.URL, Redact: red.String, MaxRetries: -1, Timeout: 5 * time.Second}
		var texts []string
		for _, v := range explore.All() {
			req, ok := v.Request(keys)
			if !ok {
				continue
			}
			c.Do(context.Background(), req) // the answer echoes the request
			_, transcript := c.Take()
			texts = append(texts, transcript, rendered(req))
		}
		outputs := writeEverywhere(t, red, cat, texts)
		for name, out := range outputs {
			if form := anyForm(out, keys.Pro, keys.Free, keys.Revoked); form != "" {
				t.Errorf("seed %d, %s holds %q of a key", seed, name, form)
			}
		}
	}
}

// rendered is a request as a message that forgot to redact would show it.
func rendered(r client.Request) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\nAuthorization: %s\n", r, r.Auth)
	for _, f := range r.Header {
		fmt.Fprintf(&b, "%s: %s\n", f.Name, f.Value)
	}
	b.Write(r.Body)
	return b.String()
}

// writeEverywhere passes the texts through every writer of a run and
// returns what each wrote.
func writeEverywhere(t *testing.T, red *redact.Redactor, cat catalogue.Catalogue, texts []string) map[string]string {
	out := map[string]string{}
	all := strings.Join(texts, "\n")
	out["String"] = red.String(all)
	var w bytes.Buffer
	rw := red.Writer(&w)
	for _, s := range texts {
		for rest := s; rest != ""; rest = rest[min(len(rest), 37):] {
			rw.Write([]byte(rest[:min(len(rest), 37)]))
		}
	}
	rw.Flush()
	out["Writer"] = w.String()
	var console bytes.Buffer
	for _, s := range texts {
		fmt.Fprint(consoleWriter{w: &console, redact: red.String}, s)
	}
	out["Ginkgo's console"] = console.String()

	// A Ginkgo report whose every field a spec could fill holds the texts
	// unredacted: the writers must redact it.
	now := time.Now()
	spec := types.SpecReport{
		ContainerHierarchyTexts: []string{"requests explored from HTTP's grammar"}, LeafNodeText: "answers variants",
		LeafNodeLabels: []string{"explore"}, State: types.SpecStateFailed, StartTime: now, EndTime: now,
		Failure:                    types.Failure{Message: all, Location: types.NewCodeLocation(0)},
		CapturedGinkgoWriterOutput: all, CapturedStdOutErr: all,
	}
	spec.ReportEntries = append(spec.ReportEntries, types.ReportEntry{Name: "transcript", Value: types.WrapEntryValue(all)})
	rep := types.Report{SuiteDescription: "conformance", SuiteSucceeded: false, StartTime: now, EndTime: now, SpecReports: types.SpecReports{spec}}
	dir := t.TempDir()
	g := ginkgoReports{json: filepath.Join(dir, "g.json"), junit: filepath.Join(dir, "j.xml"), gojson: filepath.Join(dir, "go.json"), teamcity: filepath.Join(dir, "tc.txt")}
	if err := g.write(rep, red.String); err != nil {
		t.Fatal(err)
	}
	m := report.Meta{Target: "http://127.0.0.1:1", SuiteVersion: SuiteVersion, Started: now, Finished: now, Config: map[string]string{}}
	if err := report.FromGinkgo(rep, cat, m).WriteFiles(dir, red.String); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		raw, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = string(raw)
	}
	if len(entries) < 7 {
		t.Fatalf("%d files written, want 7", len(entries))
	}
	return out
}

// anyForm returns a piece of a key's secret part (MinSecret letters and
// digits) that out holds in any form: as it stands, after NFKC, folded to
// lower case, percent-decoded, base64-decoded; "" when none.
func anyForm(out string, keys ...string) string {
	s := norm.NFKC.String(out)
	views := []string{s}
	for range 2 {
		if u, err := url.QueryUnescape(strings.ReplaceAll(s, "%%", "%25%")); err == nil {
			s = u
		} else {
			s = percentDecode(s)
		}
		views = append(views, s)
	}
	var decoded strings.Builder // every base64 run, at each alignment
	for _, v := range views {
		for _, run := range base64Runs(v) {
			for off := 0; off < 4 && off < len(run); off++ {
				r := strings.TrimRight(run[off:], "=")
				d, _ := base64.RawStdEncoding.DecodeString(r[:len(r)/4*4])
				decoded.Write(d)
				decoded.WriteByte(0)
			}
		}
	}
	views = append(views, norm.NFKC.String(decoded.String()))
	// Every piece of a key's secret part, lower-cased, and where it comes
	// first (which key, where in it): a view's pieces are looked up in one
	// pass, and the one reported is the one a search for each piece in
	// turn would find first.
	type place struct{ key, at int }
	pieces := map[string]place{}
	for k, key := range keys {
		secret := strings.ToLower(key[strings.IndexByte(key, '_')+1:])
		for i := 0; i+redact.MinSecret <= len(secret); i++ {
			if _, ok := pieces[secret[i:i+redact.MinSecret]]; !ok {
				pieces[secret[i:i+redact.MinSecret]] = place{k, i}
			}
		}
	}
	for _, v := range views {
		// Lower-cased as strings.ToLower does (a rune at a time), then
		// only ASCII letters and digits kept.
		alnum := strings.Map(func(r rune) rune {
			if r = unicode.ToLower(r); r < 0x80 && (r >= 'a' && r <= 'z' || r >= '0' && r <= '9') {
				return r
			}
			return -1
		}, v)
		first, found := "", place{}
		for i := 0; i+redact.MinSecret <= len(alnum); i++ {
			w := alnum[i : i+redact.MinSecret]
			if p, ok := pieces[w]; ok && (first == "" || p.key < found.key || p.key == found.key && p.at < found.at) {
				first, found = w, p
			}
		}
		if first != "" {
			return first
		}
	}
	return ""
}

// percentDecode decodes every %HH it can and leaves the rest.
func percentDecode(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			var c byte
			if _, err := fmt.Sscanf(s[i+1:i+3], "%02x", &c); err == nil {
				b.WriteByte(c)
				i += 2
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// urlToStdBase64 is built once: a Replacer builds its tables on first use,
// and a text has thousands of runs.
var urlToStdBase64 = strings.NewReplacer("-", "+", "_", "/")

// base64Runs are the runs of 11 base64 characters or more (standard or
// URL alphabet, made standard).
func base64Runs(s string) []string {
	var out []string
	start := -1
	for i := 0; i <= len(s); i++ {
		c := byte(0)
		if i < len(s) {
			c = s[i]
		}
		if c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || strings.IndexByte("+/-_", c) >= 0 {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 && i-start >= 11 {
			out = append(out, urlToStdBase64.Replace(s[start:i]))
		}
		start = -1
	}
	return out
}
