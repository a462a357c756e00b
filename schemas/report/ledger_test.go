package report

import (
	"strings"
	"testing"
)

// A must requirement no spec judged leaves the ledger's statements it
// judges; with none left, the line says all were reached.
func TestLedgerLineNamesWhatWasLeft(t *testing.T) {
	all := Report{}.LedgerLine()
	if !strings.HasPrefix(all, "Ledger: ") || strings.Contains(all, "left") {
		t.Errorf("nothing unverified: %q", all)
	}
	some := Report{Unverified: []Unverified{{ID: "FEED-ORDER", Why: "skipped"}}}.LedgerLine()
	if !strings.Contains(some, "left ") || !strings.Contains(some, "C-FEEDPAGE-1") {
		t.Errorf("FEED-ORDER unverified: %q, want the FeedPage row (events newest first) left", some)
	}
	if (Report{Kind: KindClient}).LedgerLine() != "" {
		t.Error("a client report has no ledger line")
	}
}
