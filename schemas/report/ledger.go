package report

import (
	"fmt"
	"strings"

	"github.com/tcmkit/tcmkit/schemas/catalogue"
)

// LedgerLine says which statements of the ledger that the oracle's rules
// judge the run reached: those whose every must requirement a spec judged
// (the transformations' statements are the equivalence spec's to say).
// "" for a client report or a ledger that does not load.
func (r Report) LedgerLine() string {
	if r.Kind == KindClient {
		return ""
	}
	l, err := catalogue.LoadLedger()
	if err != nil {
		return ""
	}
	unverified := map[string]bool{}
	for _, u := range r.Unverified {
		unverified[u.ID] = true
	}
	c, _ := catalogue.Load()
	all, reached := 0, 0
	var left []string
	for _, s := range l.Statements {
		if s.Judged != catalogue.ByRule {
			continue
		}
		all++
		var missing []string
		for _, id := range s.Requirements {
			if q, ok := c.Lookup(id); ok && q.Kind == catalogue.Must && unverified[string(id)] {
				missing = append(missing, string(id))
			}
		}
		if len(missing) == 0 {
			reached++
		} else {
			left = append(left, s.ID)
		}
	}
	line := fmt.Sprintf("Ledger: %d of the %d statements the oracle's rules judge were reached (every must requirement each names was judged by a spec)", reached, all)
	if len(left) > 0 {
		const most = 12
		shown := left[:min(len(left), most)]
		more := ""
		if len(left) > most {
			more = fmt.Sprintf(", and %d more", len(left)-most)
		}
		line += fmt.Sprintf("; left %d: %s%s (schemas/catalogue/CONTRACT.md#the-ledger)", len(left), strings.Join(shown, ", "), more)
	}
	return line + "."
}
