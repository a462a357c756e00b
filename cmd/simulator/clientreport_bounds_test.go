package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tcmkit/tcmkit/schemas/catalogue"
	"github.com/tcmkit/tcmkit/schemas/report"
	"github.com/tcmkit/tcmkit/simulator/clients"
)

// However many clients and findings, the client report keeps to the caps
// of the suite's reports: a bounded number of clients in detail, of
// findings per spec, of transcript per spec; the rest is counted.
func TestClientReportBounded(t *testing.T) {
	cat, err := catalogue.Load()
	if err != nil {
		t.Fatal(err)
	}
	var v clients.Verdicts
	long := "/api/public-feed?" + strings.Repeat("x=1&", 50)
	for i := range 1000 {
		c := clients.Client{Key: fmt.Sprintf("tcm_…%04d", i), KeyID: fmt.Sprintf("%016x", i), Account: fmt.Sprintf("acc_%d", i), Requests: 60}
		c.Requirements = []clients.Verdict{{ID: catalogue.ClientKeyNotInURL, Must: "keeps its key out of URLs and bodies", Result: clients.Failed, Checked: 60, Findings: 60}}
		for j := range 50 {
			c.Findings = append(c.Findings, clients.Finding{Requirement: catalogue.ClientKeyNotInURL, Rule: "keeps its key out of URLs and bodies",
				Evidence: "the key tcm_…0000 in the query string: a key is a password, and URLs end up in logs and proxies",
				Request:  clients.Ref{ID: uint64(j), Method: "GET", Path: long, Status: 401}})
		}
		c.FindingsLeftOut = 10
		v.Clients = append(v.Clients, c)
		v.Requests += 60
	}
	r := clientReport(v, cat, report.Meta{Kind: report.KindClient, Target: "t", Started: time.Now(), Finished: time.Now(), Config: map[string]string{}})
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
	t.Logf("the client report of 1,000 keys × 50 findings: %d bytes", total)
	if total > 8<<20 {
		t.Errorf("the client report takes %d bytes", total)
	}
	raw, _ := os.ReadFile(filepath.Join(dir, report.ClientHTMLFile))
	if !strings.Contains(string(raw), "more clients") || !strings.Contains(string(raw), "more (") {
		t.Errorf("the report does not say what it left out")
	}
}
