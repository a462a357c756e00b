package probe

import (
	"strings"
	"testing"

	"github.com/tcmkit/tcmkit/schemas/catalogue"
)

func generate(t *testing.T) []Probe {
	t.Helper()
	cat, err := catalogue.Load()
	if err != nil {
		t.Fatal(err)
	}
	ps, err := Generate(cat)
	if err != nil {
		t.Fatal(err)
	}
	return ps
}

// Every must requirement has probes, each probe one requirement, one
// oracle and a unique name; the survivors' cells are among them.
func TestGenerateCoversEveryMust(t *testing.T) {
	cat, _ := catalogue.Load()
	ps := generate(t)
	names := map[string]bool{}
	cells := map[string]bool{}
	for _, p := range ps {
		if names[p.Name()] {
			t.Errorf("two probes named %s", p.Name())
		}
		names[p.Name()] = true
		cells[p.Cell()] = true
		if p.Oracle == "" || OracleOf(p.Requirement) != p.Oracle {
			t.Errorf("%s: oracle %q", p.Name(), p.Oracle)
		}
	}
	for _, r := range cat.OfKind(catalogue.Must) {
		found := false
		for c := range cells {
			found = found || strings.HasPrefix(c, string(r.ID)+" × ")
		}
		if !found {
			t.Errorf("%s has no probe", r.ID)
		}
	}
	// The classes that slipped past the suite (issue 24), each a cell.
	for _, c := range []string{
		"AUTH-REVOKED × revoked × after-burst × default",       // a limiter before authentication, keyed by the raw token
		"AUTH-REVOKED × revoked × read-by-other-key × default", // an edge cache
		"RATE-LIMIT-429 × pro × both-operations × default",     // tracked videos resets the feed's window
		"RATE-LIMIT-429 × free × after-burst × default",        // a window of half a minute
		"FEED-CURSOR-WALK × pro × long-walk × n",               // a cursor store that fills
		"FEED-LIMIT × free × first-page × n",                   // the free key's limit capped at 100
		"FEED-PAGE-DEFAULT × free × first-page × default",      // free pages under 50 with a null cursor
		"FEED-CURSOR-WALK × pro × live-head × default",         // offset cursors on a growing feed
		// and those that slipped past the probes (issue 24, the second measure)
		"VIDEOS-BAD-BODY × pro × first-page × trailing",    // a reader of the body's first JSON value
		"VIDEOS-MISSING × pro × first-page × shaped",       // stubs for unknown ids shaped like real ones
		"HEALTH-OK × revoked × first-page × default",       // health answered otherwise with a key
		"VIDEOS-PARTITION × pro × first-page × whitespace", // ids trimmed before the lookup
	} {
		if !cells[c] {
			t.Errorf("no probe in the cell %s", c)
		}
	}
	t.Logf("%d probes in %d cells, %d distinct requests", len(ps), len(cells), len(distinct(ps)))
}

func distinct(ps []Probe) map[string]bool {
	out := map[string]bool{}
	for _, p := range ps {
		out[p.Request()] = true
	}
	return out
}

// A rule, not a list, excludes cells: no bad key walks, no feed shape
// carries a tracked-videos body, a cursor input meets no cursor shape.
func TestRulesExclude(t *testing.T) {
	for _, p := range generate(t) {
		switch {
		case p.Role.Bad() && (p.Shape == LongWalk || p.Shape == LiveHead):
			t.Errorf("%s: a bad key walks", p.Name())
		case p.Input.Op != Feed && (p.Shape == CursorPage || p.Shape == DeepPage || p.Shape == LongWalk || p.Shape == LiveHead):
			t.Errorf("%s: a feed shape with another operation's input", p.Name())
		case p.Input.ReplaceCursor && p.Shape != FirstPage:
			t.Errorf("%s: a cursor input on a page reached by cursor", p.Name())
		case p.Oracle == OracleInput && p.Input.Owner != p.Requirement:
			t.Errorf("%s: an input judged by a requirement that does not own it", p.Name())
		}
	}
}

// Quick keeps to its budget and never pays twice for one request; thorough
// selects everything; both say what they cost.
func TestPlanBudget(t *testing.T) {
	ps := generate(t)
	quick := MakePlan(ps, Quick)
	b := BudgetOf(Quick)
	for role, n := range quick.Spent.Keyed {
		if n > b.PerKey {
			t.Errorf("quick spends %d requests on the %s key, budget %d", n, role, b.PerKey)
		}
	}
	if quick.Spent.Unkeyed > b.Unkeyed {
		t.Errorf("quick spends %d requests without a valid key, budget %d", quick.Spent.Unkeyed, b.Unkeyed)
	}
	if len(quick.Untried) == 0 || len(quick.Selected) == 0 {
		t.Errorf("quick selects %d and leaves %d untried", len(quick.Selected), len(quick.Untried))
	}
	// a probe over a request quick sends anyway is never left untried
	sent := map[string]bool{}
	for _, p := range ps {
		if quick.Selected[p.Name()] {
			sent[p.Request()] = true
		}
	}
	for _, p := range quick.Untried {
		if sent[p.Request()] {
			t.Errorf("%s is left untried, but its request is sent for another probe", p.Name())
		}
	}
	// The cheap probes of the classes that slipped past (issue 24) run in
	// quick: one request each.
	for _, name := range []string{
		"VIDEOS-BAD-BODY × pro × first-page × videos: a valid body followed by other bytes",
		"VIDEOS-MISSING × pro × first-page × videos: 1 id shaped like the feed's",
		"VIDEOS-PARTITION × pro × first-page × videos: an id padded with spaces",
		"AUTH-MALFORMED × malformed (no-prefix) × first-page × videos: 1 id",
		"AUTH-MALFORMED × malformed (no-prefix) × first-page × feed: no limit",
		"HEALTH-OK × malformed × first-page × health: {}",
		"HEALTH-OK × pro × first-page × health: {}",
	} {
		if !quick.Selected[name] {
			t.Errorf("quick leaves %s untried", name)
		}
	}
	thorough := MakePlan(ps, Thorough)
	if len(thorough.Untried) != 0 || len(thorough.Selected) != len(ps) {
		t.Errorf("thorough leaves %d untried", len(thorough.Untried))
	}
	if thorough.All.Windows() > 20 {
		t.Errorf("thorough takes %d windows, more than 20 minutes of a 20-a-minute server", thorough.All.Windows())
	}
	for _, want := range []string{"left untried", "--profile thorough runs all"} {
		if !strings.Contains(quick.Summary(), want) {
			t.Errorf("the quick summary does not say %q:\n%s", want, quick.Summary())
		}
	}
	t.Logf("%s\n%s", quick.Summary(), thorough.Summary())
}

// In real time quick keeps within what each key's window has room for.
func TestPlanRoom(t *testing.T) {
	b := BudgetOf(Quick)
	b.Room = map[Role]int{Pro: 0, Free: 3}
	pl := MakePlanWithin(generate(t), b, Quick)
	if pl.Spent.Keyed[Pro] != 0 || pl.Spent.Keyed[Free] > 3 || pl.Spent.Keyed[Free] == 0 {
		t.Errorf("room Pro 0, free 3: spent Pro %d, free %d", pl.Spent.Keyed[Pro], pl.Spent.Keyed[Free])
	}
	// a request the suite sent already is free, whatever the room
	free := func(p Probe) bool { return p.Role == Free && p.Shape == FirstPage && p.Input.Limit == "199" }
	if got := MakePlanWithin(generate(t), b, Quick, free); !got.Selected["FEED-LIMIT × free × first-page × feed: limit=199"] {
		t.Error("a probe whose request was answered already is not selected")
	}
	if !strings.Contains(pl.Summary(), "room for (Pro 0, free 3)") {
		t.Errorf("the summary does not say the room:\n%s", pl.Summary())
	}
}

func TestParseProfile(t *testing.T) {
	for in, want := range map[string]Profile{"": Quick, "quick": Quick, " Thorough ": Thorough} {
		if got, err := ParseProfile(in); err != nil || got != want {
			t.Errorf("ParseProfile(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := ParseProfile("fast"); err == nil || err.Error() != `--profile "fast": want quick (the default) or thorough` {
		t.Errorf("ParseProfile(fast): %v", err)
	}
	// a name near one is told which, in the flag's words
	for in, want := range map[string]string{"thoro": "thorough", "thorogh": "thorough", "quik": "quick"} {
		if _, err := ParseProfile(in); err == nil || !strings.HasSuffix(err.Error(), "(did you mean "+want+"?)") || !strings.HasPrefix(err.Error(), "--profile ") {
			t.Errorf("ParseProfile(%q): %v, want a suggestion of %s", in, err, want)
		}
	}
}

// Each derived key belongs to the role its requirement names, is no key
// it comes from, and is sent on every shape and operation its role's
// usage shown is.
func TestKeyForms(t *testing.T) {
	const key = "tcm_AbCdEfGhIjKlMnOpQrStUvWxYz012345"
	for _, f := range KeyForms {
		k, ok := f.Derive(key)
		switch {
		case !ok || k == key:
			t.Errorf("%s: %q, %v", f, k, ok)
		case f.Role() == Malformed && strings.HasPrefix(k, "tcm_"):
			t.Errorf("%s starts with the prefix and its underscore: a well-formed key is unknown, not malformed", f)
		case f.Role() == Unknown && !strings.HasPrefix(k, "tcm_"):
			t.Errorf("%s does not start with the prefix and its underscore: malformed, not unknown", f)
		}
		if f.Says() == "" || f.Shell("TCM_PRO_KEY", key) == "" {
			t.Errorf("%s: not said or not spelled", f)
		}
	}
	if _, ok := NoPrefix.Derive("nounderscore"); ok {
		t.Error("a key without <prefix>_ gives a key without its prefix")
	}
	cells := map[string]bool{}
	for _, p := range generate(t) {
		if p.Key == NoPrefix && p.Oracle == OracleAuth {
			cells[string(p.Shape)+" "+string(p.Input.Op)] = true
		}
	}
	for _, want := range []string{"first-page feed", "first-page videos", "cursor-page feed", "read-by-other-key videos", "after-burst videos", "both-operations feed", "deep-page feed"} {
		if !cells[want] {
			t.Errorf("the Pro key without its prefix is not sent on %s (sent on %v)", want, cells)
		}
	}
}

// Quick covers before it optimizes: one probe of every must requirement,
// of every key role on every operation, and of every bound of every field
// the grid probes, before the likeliest breaks.
func TestQuickCoversFirst(t *testing.T) {
	ps := generate(t)
	quick := MakePlan(ps, Quick)
	want, got := map[string]bool{}, map[string]bool{}
	b := BudgetOf(Quick)
	for _, p := range ps {
		if fits := (&Plan{Budget: b, Spent: newCost()}).fits(p); !fits {
			continue // a probe the whole budget cannot pay (the rate probes' lockouts: the rate-limit specs ask those)
		}
		for _, k := range p.covers() {
			want[k] = true
			if quick.Selected[p.Name()] {
				got[k] = true
			}
		}
	}
	for k := range want {
		if !got[k] {
			t.Errorf("quick probes no %s", k)
		}
	}
	t.Logf("quick covers %d of %d: requirements, roles on operations, bounds", len(got), len(want))
}

// A key the run was not given has no probe in the plan: the plan's lines
// do not count it (no "free 0", no "free 20" of a budget it cannot spend).
func TestPlanWithoutAKey(t *testing.T) {
	var ps []Probe
	for _, p := range generate(t) {
		if p.Role != Free {
			ps = append(ps, p)
		}
	}
	b := BudgetOf(Quick)
	b.Room = map[Role]int{Pro: 20}
	pl := MakePlanWithin(ps, b, Quick)
	for _, line := range []string{pl.Summary(), pl.ThoroughCost()} {
		if strings.Contains(line, "free") || !strings.Contains(line, "Pro ") {
			t.Errorf("a plan without the free key names it, or not the Pro key:\n%s", line)
		}
	}
}
