package report

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2/types"
)

// unverifiedRun is a run of the test catalogue's five must requirements
// where one passed and the others were not verified, each another way:
// a missing key, the profile's budget, a failed precondition, the label
// filter (RATE-PER-KEY has both a skipped spec and one not selected).
func unverifiedRun() types.Report {
	return types.Report{SuiteSucceeded: true, SpecReports: types.SpecReports{
		it("Health operation", "says ok", []string{"HEALTH-OK"}, types.SpecStatePassed, ""),
		it("Auth of the feed", "rejects a revoked key", []string{"AUTH-REVOKED"}, types.SpecStateSkipped,
			"needs --revoked-key (or TCM_REVOKED_KEY)", entry{EntryNeeds, "--revoked-key"}),
		it("Probes", "FEED-LIMIT-CAP with the Pro key", []string{"FEED-LIMIT-CAP"}, types.SpecStateSkipped,
			"untried under --profile quick (its budget: 20 requests of each valid key; 120 without one); --profile thorough runs all 2830: 1709 requests",
			entry{EntryNeeds, "--profile thorough"}),
		it("Pagination of the feed", "is newest first", []string{"FEED-ORDER"}, types.SpecStateSkipped,
			"blocked: the walk did not reach its end", entry{EntryBlocked, "the walk did not reach its end"}),
		it("Rate-limit of the feed", "counts per key", []string{"RATE-PER-KEY"}, types.SpecStateSkipped, ""),
		it("Rate-limit of the feed", "does not throttle another key", []string{"RATE-PER-KEY"}, types.SpecStateSkipped,
			"needs --free-key (or TCM_FREE_KEY): a second key to send while the first is throttled", entry{EntryNeeds, "--free-key"}),
	}}
}

// TestUnverifiedComeFirst: every must requirement no spec passed or failed
// is named, with why and what would verify it, before anything else in the
// Markdown and HTML forms, and in the JSON.
func TestUnverifiedComeFirst(t *testing.T) {
	r := FromGinkgo(unverifiedRun(), testCatalogue(t), meta())
	if r.Outcome != Passed {
		t.Fatalf("outcome %s: a requirement not verified does not fail a run without --require-all", r.Outcome)
	}
	got := map[string]Unverified{}
	for _, u := range r.Unverified {
		got[u.ID] = u
	}
	want := map[string]struct{ why, reason, needs string }{
		"AUTH-REVOKED":   {"skipped", "needs --revoked-key (or TCM_REVOKED_KEY)", "--revoked-key"},
		"FEED-LIMIT-CAP": {"untried", "under --profile quick (its budget: 20 requests of each valid key; 120 without one)", "--profile thorough"},
		"FEED-ORDER":     {"blocked", "the walk did not reach its end", ""},
		"RATE-PER-KEY":   {"skipped", "needs --free-key (or TCM_FREE_KEY): a second key to send while the first is throttled", "--free-key"},
	}
	if len(got) != len(want) {
		t.Errorf("unverified %+v, want %d of them", r.Unverified, len(want))
	}
	for id, w := range want {
		u := got[id]
		if u.Why != w.why || u.Reason != w.reason || strings.Join(u.Needs, ",") != w.needs {
			t.Errorf("%s: %+v, want %+v", id, u, w)
		}
	}
	if _, ok := got["HEALTH-OK"]; ok {
		t.Errorf("HEALTH-OK passed, and is said unverified")
	}
	if l := got["FEED-LIMIT-CAP"].Line(); l != "untried: under --profile quick (its budget: 20 requests of each valid key; 120 without one) (to verify it: --profile thorough)" {
		t.Errorf("line %q", l)
	}
	if q := req(t, r, "AUTH-REVOKED"); !slices.Equal(q.Needs, []string{"--revoked-key"}) {
		t.Errorf("AUTH-REVOKED needs %v", q.Needs)
	}

	_, files := writeAll(t, unverifiedRun(), meta())
	for name, first := range map[string]string{MarkdownFile: "**Not verified: 4 of the 5 must requirements", HTMLFile: "<p>Not verified: 4 of the 5 must requirements"} {
		content := files[name]
		at := strings.Index(content, first)
		if at < 0 {
			t.Errorf("%s does not say %q", name, first)
			continue
		}
		for _, later := range []string{"Requirements</h2>", "## Requirements", "<dt>Target</dt>", "| Target |"} {
			if i := strings.Index(content, later); i >= 0 && i < at {
				t.Errorf("%s: %q comes before what was not verified", name, later)
			}
		}
		for _, line := range []string{"AUTH-REVOKED", "skipped: needs --revoked-key (or TCM_REVOKED_KEY)", "blocked: the walk did not reach its end", "(to verify it: --profile thorough)"} {
			if !strings.Contains(content[at:], line) {
				t.Errorf("%s does not say %q", name, line)
			}
		}
	}
	var doc struct {
		Unverified []Unverified
	}
	if err := json.Unmarshal([]byte(files[JSONFile]), &doc); err != nil || len(doc.Unverified) != 4 {
		t.Errorf("JSON: %v, %+v", err, doc.Unverified)
	}

	if all := FromGinkgo(passedRun(), testCatalogue(t), meta()); len(all.Unverified) != 0 || !strings.HasPrefix(all.UnverifiedHead(), "Judged: all 5 must requirements") {
		t.Errorf("a run that verified every must: %+v, %q", all.Unverified, all.UnverifiedHead())
	}
	client := meta()
	client.Kind = KindClient
	if c := FromGinkgo(unverifiedRun(), testCatalogue(t), client); len(c.Unverified) != 0 || c.UnverifiedHead() != "" {
		t.Errorf("a client report lists server requirements as unverified: %+v", c.Unverified)
	}
}

// TestRequireAll: with RequireAll a run that left a must requirement
// unverified fails, saying so; one that verified every must passes.
func TestRequireAll(t *testing.T) {
	m := meta()
	m.RequireAll = true
	r := FromGinkgo(unverifiedRun(), testCatalogue(t), m)
	if r.Outcome != Failed || !r.RequireAll {
		t.Fatalf("outcome %s, requireAll %v; want failed", r.Outcome, r.RequireAll)
	}
	if h := r.Headline(); !strings.Contains(h, "4 must requirements were not verified") || !strings.Contains(h, "--require-all") {
		t.Errorf("headline %q", h)
	}
	if q := req(t, r, "FEED-ORDER"); q.Result != ResultBlocked {
		t.Errorf("FEED-ORDER is %s: --require-all fails the run, not the requirement", q.Result)
	}
	if r := FromGinkgo(passedRun(), testCatalogue(t), m); r.Outcome != Passed {
		t.Errorf("every must verified, --require-all: %s", r.Outcome)
	}
}

// TestAnIncompleteRunNamesItsFailures: a run that did not finish is
// incomplete, never passed, and names the failures it found before its end
// (a spec that got no answer before the end fails: no verdict on a run cut
// short).
func TestAnIncompleteRunNamesItsFailures(t *testing.T) {
	run := failedRun()
	run.SpecialSuiteFailureReasons = []string{"Suite Timeout Elapsed"}
	r := FromGinkgo(run, testCatalogue(t), meta())
	if r.Outcome != Incomplete || r.Headline() != "The run is incomplete, the target was not fully judged: Ginkgo: Suite Timeout Elapsed. Before it ended 1 spec failed; 1 requirement not met." {
		t.Errorf("outcome %s, headline %q", r.Outcome, r.Headline())
	}
	cut := passedRun()
	cut.SpecialSuiteFailureReasons = []string{"Suite Timeout Elapsed"}
	if r := FromGinkgo(cut, testCatalogue(t), meta()); r.Outcome != Incomplete || strings.Contains(r.Headline(), "passed") {
		t.Errorf("a run cut short without a failure: %s, %q", r.Outcome, r.Headline())
	}
}
