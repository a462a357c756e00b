package selftest

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	conformance "github.com/tcmkit/tcmkit/schemas/report"
	"github.com/tcmkit/tcmkit/simulator"
	"github.com/tcmkit/tcmkit/suites/bundled"
)

// Servers that read a request otherwise than the standards make it mean
// are caught, each by the one requirement whose answer it changes, and
// the run names the transformation that showed it: the scheme compared
// case-sensitively (RFC 9110 §11.1), a query read without decoding its
// percent-encoded names (RFC 3986 §6.2.2.2). A whole run each: "that one
// requirement alone" is a verdict on every spec, and any spec's request
// may carry the transformation.
func TestEquivalencesCatchAServerThatReadsOtherwise(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		wrap func(http.Handler, *bundled.Keys) http.Handler
		want string
		tr   string
	}{
		{"case-sensitive scheme", caseSensitiveScheme, "AUTH-VALID", "auth-scheme-lower-case"},
		{"percent-encoded names unread", rawQueryNames, "FEED-LIMIT", "query-name-percent-encoded"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := runSuite(t, startTarget(t, simulator.Config{}, c.wrap))
			failed := failedRequirements(t, r)
			if !slices.Equal(failed, []string{c.want}) {
				t.Errorf("requirements failed: %v, want %s alone\n%s", failed, c.want, failures(r))
			}
			if blamed := regexp.MustCompile(regexp.QuoteMeta(c.tr) + ` \(RFC [^)]*\): answered otherwise`); !blamed.MatchString(r.output) {
				t.Errorf("the run's output blames no %s:\n%s", c.tr, tail(r.output, 3000))
			}
		})
	}
}

func failedRequirements(t *testing.T, r result) []string {
	t.Helper()
	return failedIn(readReport(t, r))
}

// readReport reads the run's conformance-report.json.
func readReport(t *testing.T, r result) conformance.Report {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(r.dir, "reports", "conformance-report.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep conformance.Report
	if err := json.Unmarshal(raw, &rep); err != nil {
		t.Fatal(err)
	}
	return rep
}

// failedIn are the requirements a report says failed, in its order.
func failedIn(rep conformance.Report) []string {
	var failed []string
	for _, req := range rep.Requirements {
		if req.Result == conformance.ResultFailed {
			failed = append(failed, req.ID)
		}
	}
	return failed
}

// caseSensitiveScheme refuses a key under any scheme but "Bearer" as
// written, as a server that compares the scheme byte for byte does.
func caseSensitiveScheme(h http.Handler, _ *bundled.Keys) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v := r.Header.Get("Authorization")
		if !strings.HasPrefix(r.URL.Path, "/_control/") && strings.HasPrefix(strings.ToLower(v), "bearer ") && !strings.HasPrefix(v, "Bearer ") {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			w.Write([]byte(`{"error":"unauthorized","message":"use Authorization: Bearer <key>"}`))
			return
		}
		h.ServeHTTP(w, r)
	})
}

// rawQueryNames drops the feed's parameters whose names are
// percent-encoded, as a server that matches names before decoding does.
func rawQueryNames(h http.Handler, _ *bundled.Keys) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/public-feed" && strings.Contains(r.URL.RawQuery, "%") {
			var kept []string
			for _, seg := range strings.Split(r.URL.RawQuery, "&") {
				if name, _, _ := strings.Cut(seg, "="); !strings.Contains(name, "%") {
					kept = append(kept, seg)
				}
			}
			r2 := r.Clone(r.Context())
			r2.URL.RawQuery = strings.Join(kept, "&")
			r = r2
		}
		h.ServeHTTP(w, r)
	})
}
