package clients

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tcmkit/tcmkit/schemas/catalogue"
	"github.com/tcmkit/tcmkit/schemas/report"
)

// However many clients, the client report keeps to the caps of the
// suite's reports: ReportClients in detail, failed ones first, the rest
// counted; the outcome stays the run's.
func TestClientReportBounded(t *testing.T) {
	cat, err := catalogue.Load()
	if err != nil {
		t.Fatal(err)
	}
	v := Verdicts{Outcome: Failed}
	long := strings.Repeat("x=1&", 50)
	for i := range 1000 {
		c := Client{Key: fmt.Sprintf("tcm_…%04d", i), KeyID: fmt.Sprintf("%016x", i), Account: fmt.Sprintf("acc_%d", i), Requests: 50, Passed: i%2 == 0}
		res := Passed
		if !c.Passed {
			res = Failed
			c.Findings = []Finding{{Requirement: catalogue.ClientKeyNotInURL, Rule: "keeps its key out of URLs and bodies", Count: 50,
				Evidence: "the key tcm_…0000 in the query string: a key is a password, and URLs end up in logs and proxies",
				Request:  Ref{ID: 1, Method: "GET", Path: "/api/public-feed", Query: long, Status: 401},
				Last:     &Ref{ID: 50, Method: "GET", Path: "/api/public-feed", Query: long, Status: 401}}}
		}
		c.Requirements = []Verdict{{ID: catalogue.ClientKeyNotInURL, Must: "keeps its key out of URLs and bodies", Result: res, Checked: 50, Findings: len(c.Findings), Count: 50}}
		v.Clients = append(v.Clients, c)
		v.Requests += 50
	}
	r := Report(v, cat, report.Meta{Kind: report.KindClient, Target: "t", Started: time.Now(), Finished: time.Now(), Config: map[string]string{}})
	dir := t.TempDir()
	if err := r.WriteFiles(dir, func(s string) string { return s }); err != nil {
		t.Fatal(err)
	}
	total := int64(0)
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		fi, _ := os.Stat(filepath.Join(dir, e.Name()))
		total += fi.Size()
	}
	t.Logf("the client report of 1,000 keys: %d bytes", total)
	if total > 4<<20 || r.Outcome != report.Failed {
		t.Errorf("the client report takes %d bytes, outcome %s", total, r.Outcome)
	}
	raw, _ := os.ReadFile(filepath.Join(dir, report.ClientHTMLFile))
	if !strings.Contains(string(raw), "900 more clients") {
		t.Errorf("the report does not say what it left out")
	}
	if n := len(r.Specs); n != ReportClients {
		t.Errorf("%d specs, want %d (the failed clients)", n, ReportClients)
	}
}
