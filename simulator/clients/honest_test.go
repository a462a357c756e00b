package clients

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/tcmkit/tcmkit/schemas/catalogue"
)

// The judge never passes what it did not judge: every key that made a
// request is judged, or the verdicts are errored.

// breakFour has the Pro key break four rules: the key under another
// scheme, in a query string, 21 video ids, a body as text/plain.
func breakFour(h *harness) {
	pro := h.keys.Pro
	h.do(http.MethodGet, "/api/public-feed?limit=1", "", "Authorization", "Token "+pro)
	h.feed(pro, "limit=1&api_key="+pro)
	ids := make([]string, 21)
	for i := range ids {
		ids[i] = fmt.Sprintf(`"v%d"`, i)
	}
	h.videos(pro, "application/json", `{"videoIds":[`+strings.Join(ids, ",")+`]}`)
	h.videos(pro, "text/plain", `{"videoIds":["a"]}`)
}

var fourBroken = []catalogue.ID{catalogue.ClientBearer, catalogue.ClientKeyNotInURL, catalogue.ClientVideoIDs, catalogue.ClientJSONBody}

// After 1,000 distinct well-formed keys the simulator never issued, the
// Pro key is still judged (keys of accounts have a bound of their own),
// and its four broken rules fail the verdicts.
func TestAKeyOfAnAccountIsJudgedAfterAThousandOthers(t *testing.T) {
	h := newHarness(t, Config{})
	for i := range DefaultMaxClients {
		h.feed(fmt.Sprintf("tcm_%032d", i), "limit=1") // well-formed, never issued: 401
	}
	breakFour(h)
	v := h.j.Snapshot(true)
	if v.Passed || v.Outcome != Failed || v.NotJudged != 0 || len(v.Clients) != DefaultMaxClients+1 {
		t.Fatalf("passed %v, outcome %s, %d not judged, %d clients", v.Passed, v.Outcome, v.NotJudged, len(v.Clients))
	}
	expectFailed(t, h.client(true, h.keys.Pro), fourBroken...)
}

// Past the bound, a key is counted, not judged, and the verdicts say so:
// errored, never passed, whatever the keys judged did.
func TestKeysNotJudgedMakeTheVerdictsErrored(t *testing.T) {
	h := newHarness(t, Config{MaxClients: 3})
	for i := range 5 {
		h.feed(fmt.Sprintf("tcm_%032d", i), "limit=1")
		h.feed(fmt.Sprintf("tcm_%032d", i), "limit=1")
	}
	h.feed(h.keys.Pro, "limit=1") // a key of an account: judged, and it passes
	v := h.j.Snapshot(true)
	if v.Passed || v.Outcome != Errored || v.NotJudged != 2 || v.Untracked != 4 || len(v.Clients) != 4 ||
		!strings.HasPrefix(v.Errored, "2 keys not judged") {
		t.Errorf("passed %v, outcome %s (%s), %d keys not judged, %d requests untracked, %d clients", v.Passed, v.Outcome, v.Errored, v.NotJudged, v.Untracked, len(v.Clients))
	}
	if c := h.client(true, h.keys.Pro); !c.Passed {
		t.Errorf("the Pro key: %v", failed(c))
	}
	if r := Report(v, mustCatalogue(t), reportMeta()); r.Outcome != "errored" || !slices.ContainsFunc(r.Errors, func(e string) bool { return strings.HasPrefix(e, "2 keys not judged") }) {
		t.Errorf("report: %s %q", r.Outcome, r.Errors)
	}
}

// A run no client came to is errored, live and in the report alike.
func TestAnEmptyRunIsErrored(t *testing.T) {
	h := newHarness(t, Config{})
	for _, final := range []bool{false, true} {
		v := h.j.Snapshot(final)
		if v.Passed || v.Outcome != Errored || v.Errored != NothingJudged {
			t.Errorf("final %v: passed %v, outcome %s (%s)", final, v.Passed, v.Outcome, v.Errored)
		}
		raw, _ := json.Marshal(v)
		if !strings.Contains(string(raw), `"passed":false`) {
			t.Errorf("JSON: %s", raw)
		}
		if r := Report(v, mustCatalogue(t), reportMeta()); string(r.Outcome) != v.Outcome {
			t.Errorf("report %s, verdicts %s", r.Outcome, v.Outcome)
		}
	}
}

// One key in a query string, 28 times: one finding, with the count and
// the first and last requests.
func TestOneFindingPerRulePerKey(t *testing.T) {
	h := newHarness(t, Config{})
	pro := h.keys.Pro
	for range 28 {
		h.do(http.MethodGet, "/api/public/health?key="+pro, "")
	}
	c := h.client(true, pro)
	expectFailed(t, c, catalogue.ClientKeyNotInURL, catalogue.ClientJSONBody)
	f := finding(c, catalogue.ClientKeyNotInURL)
	if len(c.Findings) != 2 || f.Count != 28 || f.Request.ID != 1 || f.Last == nil || f.Last.ID != 28 || f.LastEvidence != "" {
		t.Errorf("findings:\n%s", findingsText(c))
	}
	for _, r := range c.Requirements {
		if r.ID == catalogue.ClientKeyNotInURL && (r.Findings != 1 || r.Count != 28 || r.Checked != 28) {
			t.Errorf("verdict %+v", r)
		}
	}
	if s := f.String(); !strings.Contains(s, "28 requests broke it; the last: #28 GET /api/public/health?key=tcm_…") {
		t.Errorf("finding: %s", s)
	}
}

// A scenario's 429 is the rate limit's own: the same status, error code,
// body shape, message and Retry-After form as the limiter's, so that a
// client that branches on them meets what a real limit says.
func TestScenario429IsTheRateLimits(t *testing.T) {
	h := newHarness(t, Config{Scenario: "429-storm"})
	storm := h.feed(h.keys.Pro, "limit=1")
	for range 4 { // the rest of the storm, on another key's budget: none
		h.feed(h.keys.Pro, "limit=1")
	}
	var limit answer
	for range 21 {
		limit = h.feed(h.keys.Free, "limit=1")
	}
	shape := func(a answer) (code, message string, details []string) {
		var b struct {
			Error   string         `json:"error"`
			Message string         `json:"message"`
			Details map[string]any `json:"details"`
		}
		if err := json.Unmarshal(a.body, &b); err != nil {
			t.Fatalf("%s: %v", a.body, err)
		}
		for k := range b.Details {
			details = append(details, k)
		}
		slices.Sort(details)
		// The message up to its figures, which differ (the wait).
		return b.Error, strings.TrimRight(strings.SplitAfter(b.Message, "retry after ")[0], "0123456789"), details
	}
	sc, sm, sd := shape(storm)
	lc, lm, ld := shape(limit)
	if storm.status != http.StatusTooManyRequests || limit.status != http.StatusTooManyRequests || sc != lc || sm != lm || !slices.Equal(sd, ld) {
		t.Errorf("storm %d %s %q %v\nlimit %d %s %q %v", storm.status, sc, sm, sd, limit.status, lc, lm, ld)
	}
	if ra := storm.header.Get("Retry-After"); ra != fmt.Sprint(stormRetryAfter) || storm.header.Get("Content-Type") != limit.header.Get("Content-Type") {
		t.Errorf("storm Retry-After %q, Content-Type %q", ra, storm.header.Get("Content-Type"))
	}
}
