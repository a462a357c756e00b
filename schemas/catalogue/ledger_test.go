package catalogue

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestLedgerLoads(t *testing.T) {
	if _, err := LoadLedger(); err != nil {
		t.Fatal(err)
	}
}

// Every sentence and table row of the contract has its statement in the
// ledger, and no statement quotes what the contract no longer says.
func TestLedgerCoversTheContract(t *testing.T) {
	l, err := LoadLedger()
	if err != nil {
		t.Fatal(err)
	}
	missing, stale := l.Uncovered(ContractUnits(Contract()))
	for _, u := range missing {
		t.Errorf("no statement of the ledger for the contract's %q: %q (add it to ledger.json, judged)", u.Section, u.Text)
	}
	for _, s := range stale {
		t.Errorf("%s quotes what the contract does not say (in %q): %q", s.ID, s.Section, s.Text)
	}
}

// The copy the ledger is held to is the API owner's document, where a
// clone has it beside (CI lays shared/ beside its clone).
func TestContractCopyIsTheContract(t *testing.T) {
	shared := filepath.Join("..", "..", SharedContract)
	want, err := os.ReadFile(shared)
	if os.IsNotExist(err) {
		t.Skipf("%s is not beside this clone: the copy %s is not compared", SharedContract, ContractPath)
	}
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(Contract(), want) {
		t.Fatalf("%s differs from %s: copy it (cp %s %s), then go test ./schemas/catalogue says which statements of the ledger to add or change",
			ContractPath, SharedContract, SharedContract, ContractPath)
	}
}

// A unit no statement quotes is found, and so is a statement that quotes
// nothing: the coverage test can fail.
func TestUncoveredFindsWhatTheLedgerLacks(t *testing.T) {
	l, err := LoadLedger()
	if err != nil {
		t.Fatal(err)
	}
	units := ContractUnits(Contract())
	cut := l
	cut.Statements = slices.DeleteFunc(slices.Clone(l.Statements), func(s Statement) bool { return s.ID == "C-AUTH-7" })
	missing, _ := cut.Uncovered(units)
	if len(missing) != 1 || !strings.Contains(missing[0].Text, "A missing, malformed or revoked key yields 401") {
		t.Errorf("a ledger without C-AUTH-7: missing %v, want that one unit", missing)
	}
	edited := append(slices.Clone(units[:len(units)-1]), Unit{units[len(units)-1].Section, "Compatibility policy: semantic versioning."})
	if _, stale := l.Uncovered(edited); len(stale) != 1 {
		t.Errorf("a contract whose last sentence changed: %d stale statements, want 1", len(stale))
	}
}

// Every must requirement judges some statement, and every row of the
// Event table names a requirement of its Meaning beyond the schema.
func TestLedgerNamesEveryMust(t *testing.T) {
	l, err := LoadLedger()
	if err != nil {
		t.Fatal(err)
	}
	c, _ := Load()
	named := map[ID]bool{}
	for _, s := range l.Statements {
		for _, id := range s.Requirements {
			named[id] = true
		}
	}
	for _, r := range c.OfKind(Must) {
		if !named[r.ID] {
			t.Errorf("%s judges no statement of the ledger", r.ID)
		}
	}
	for _, s := range l.Of("contract") {
		if s.Section != "Resources and their fields > Event" || strings.Count(s.Text, " | ") != 2 {
			continue
		}
		if !slices.ContainsFunc(s.Requirements, func(id ID) bool {
			return id != EventSchema && id != URIFormat && id != CountNonnegOrNull && id != EventChannelNoVideo && id != EventMilestone
		}) {
			t.Errorf("%s (%s): its Meaning column names no requirement", s.ID, strings.SplitN(s.Text, " | ", 2)[0])
		}
	}
}

func TestParseLedgerRefusesWhatItCannotJudge(t *testing.T) {
	c, _ := Load()
	for _, tc := range []struct{ name, stmt, want string }{
		{"unknown requirement", `{"id":"C-X-1","source":"contract","section":"s","text":"t","judged":"rule","requirements":["NO-SUCH"]}`, "not in the catalogue"},
		{"rule without a must", `{"id":"C-X-1","source":"contract","section":"s","text":"t","judged":"rule","requirements":["CLIENT-BEARER"]}`, "names no must"},
		{"open without readings", `{"id":"C-X-1","source":"contract","section":"s","text":"t","judged":"open","requirements":["EVENT-MILESTONE"]}`, "no reading"},
		{"out of scope without reason", `{"id":"C-X-1","source":"contract","section":"s","text":"t","judged":"out-of-scope"}`, "needs a reason"},
		{"transformation without one", `{"id":"C-X-1","source":"contract","section":"s","text":"t","judged":"transformation"}`, "names none"},
		{"unknown source", `{"id":"C-X-1","source":"rfc","section":"s","text":"t","judged":"out-of-scope","reason":"r"}`, "unknown source"},
		{"another way", `{"id":"C-X-1","source":"contract","section":"s","text":"t","judged":"maybe"}`, "judged \"maybe\""},
	} {
		raw := `{"version":1,"sources":[{"id":"contract","title":"c","where":"w"}],"statements":[` + tc.stmt + `]}`
		if _, err := ParseLedger([]byte(raw), c); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error saying %q", tc.name, err, tc.want)
		}
	}
}

func TestContractUnits(t *testing.T) {
	md := "# Title\n\nIntro one. It is two.\n\n## Sec\n\n- A list item, i.e. one.\n1. Numbered. `Quoted` next.\n\n### Sub\n\n| a | b |\n|---|---|\n| x | y |\n| z |  |\n"
	got := ContractUnits([]byte(md))
	want := []Unit{{"Preamble", "Intro one."}, {"Preamble", "It is two."}, {"Sec", "A list item, i.e. one."}, {"Sec", "Numbered."}, {"Sec", "`Quoted` next."},
		{"Sec > Sub", "x | y"}, {"Sec > Sub", "z |"}}
	if !slices.Equal(got, want) {
		t.Errorf("units\n got %q\nwant %q", got, want)
	}
}
