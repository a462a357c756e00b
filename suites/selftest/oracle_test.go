package selftest

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/tcmkit/tcmkit/schemas/jsondoc"
	"github.com/tcmkit/tcmkit/simulator"
	"github.com/tcmkit/tcmkit/suites/bundled"
)

// Every answer of a run is judged by every rule, not only by the rule the
// spec that asked for it was written for. The target breaks URI-FORMAT in
// one answer only, the feed's page of limit=1, which FEED-LIMIT's spec asks
// for and no spec of URI-FORMAT reads: the contract oracle still fails the
// run on URI-FORMAT alone, naming that request. FEED-LIMIT's specs and
// probes alone prove it (no whole run): none of them is URI-FORMAT's.
func TestOracleJudgesWhatNoSpecAsserts(t *testing.T) {
	t.Parallel()
	r := runSuite(t, startTarget(t, simulator.Config{}, brokenURIOnLimit1), "--ginkgo.label-filter=FEED-LIMIT || URI-FORMAT")
	rep := readReport(t, r)
	failed := failedIn(rep)
	if !slices.Equal(failed, []string{"URI-FORMAT"}) {
		t.Fatalf("requirements failed: %v, want URI-FORMAT alone\n%s", failed, failures(r))
	}
	named := false
	for _, s := range rep.Specs {
		if s.Failure == nil {
			continue
		}
		for _, p := range s.Failure.Problems {
			named = named || p.Requirement == "URI-FORMAT" && p.Request == "GET /api/public-feed?limit=1"
		}
	}
	if !named {
		t.Errorf("no URI-FORMAT problem names GET /api/public-feed?limit=1:\n%s", failures(r))
	}
}

// brokenURIOnLimit1 writes every currentThumbnailUrl of the feed's page of
// limit=1 as a relative reference.
func brokenURIOnLimit1(h http.Handler, _ *bundled.Keys) http.Handler {
	return rewrite(h, func(r *http.Request, rec *httptest.ResponseRecorder) {
		if r.URL.Path != "/api/public-feed" || r.URL.RawQuery != "limit=1" || rec.Code != http.StatusOK {
			return
		}
		editJSON(rec, func(doc any) any {
			jsondoc.Walk(doc, func(_ string, v any) {
				if o, ok := v.(map[string]any); ok {
					if _, has := o["currentThumbnailUrl"]; has {
						o["currentThumbnailUrl"] = "/thumbnails/relative.jpg"
					}
				}
			})
			return doc
		})
	})
}
