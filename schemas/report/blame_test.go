package report

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2/types"
)

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A failure blames the requirements of its problems, not every label of
// its spec; a blocked spec fails nothing; failures come first.
func TestBlameOneRequirement(t *testing.T) {
	problems := []Problem{{Requirement: "AUTH-REVOKED", Request: "GET /api/public-feed", Expected: "status 401", Actual: "status 200"}}
	evidence := []Exchange{{Request: "GET /api/public-feed", Curl: "curl -sS 'https://x/api/public-feed' -H \"Authorization: Bearer $TCM_REVOKED_KEY\"", Transcript: "=== GET /api/public-feed\n< 200 OK"}}
	run := types.Report{SpecReports: types.SpecReports{
		it("Auth of the feed", "answers the revoked key with 401 and an ErrorBody", []string{"AUTH-REVOKED", "FEED-ORDER"}, types.SpecStateFailed,
			"GET /api/public-feed: status 200, want 401",
			entry{EntryProblems, jsonOf(t, problems)}, entry{EntryEvidence, jsonOf(t, evidence)}, entry{EntryRerun, "tcmkit conform --focus 'x'"}),
		it("Rate-limit of the feed", "counts per key", []string{"RATE-PER-KEY"}, types.SpecStateSkipped, "blocked: the burst could not be sent",
			entry{EntryBlocked, "the burst could not be sent"}),
		it("Health operation", "says ok", []string{"HEALTH-OK"}, types.SpecStatePassed, ""),
	}}
	r := FromGinkgo(run, testCatalogue(t), meta())
	if got := req(t, r, "AUTH-REVOKED").Result; got != ResultFailed {
		t.Errorf("AUTH-REVOKED: %s, want failed", got)
	}
	if got := req(t, r, "FEED-ORDER"); got.Result == ResultFailed || !strings.Contains(got.Reason, "failed first on AUTH-REVOKED") {
		t.Errorf("FEED-ORDER: %s (%s), want not failed: its spec failed on AUTH-REVOKED", got.Result, got.Reason)
	}
	if got := req(t, r, "RATE-PER-KEY"); got.Result != ResultBlocked || got.Reason != "the burst could not be sent" {
		t.Errorf("RATE-PER-KEY: %s (%s), want blocked with its cause", got.Result, got.Reason)
	}
	if r.Totals.Blocked != 1 || r.Totals.Failed != 1 || r.Outcome != Failed {
		t.Errorf("totals %+v, outcome %s", r.Totals, r.Outcome)
	}
	f := r.Failures()[0].Failure
	if len(f.Problems) != 1 || len(f.Evidence) != 1 || f.Rerun == "" {
		t.Errorf("failure: %+v", f)
	}
	md, _ := r.Markdown()
	html, _ := r.HTML()
	for name, doc := range map[string]string{"Markdown": string(md), "HTML": string(html)} {
		fail, reqs := strings.Index(doc, "Failures"), strings.Index(doc, "Requirements</h2>")
		if name == "Markdown" {
			reqs = strings.Index(doc, "## Requirements")
		}
		if fail < 0 || reqs < 0 || fail > reqs {
			t.Errorf("%s: failures at %d, requirements at %d: failures must come first", name, fail, reqs)
		}
		for _, want := range []string{"$TCM_REVOKED_KEY", "tcmkit conform --focus", "blocked"} {
			if !strings.Contains(doc, want) {
				t.Errorf("%s lacks %q", name, want)
			}
		}
	}
}
