package report_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"

	"github.com/tcmkit/tcmkit/schemas/catalogue"
	"github.com/tcmkit/tcmkit/schemas/report"
)

// How a suite writes its conformance report: in ReportAfterSuite, which
// runs even when specs failed or a BeforeSuite did, with the keys redacted
// once more on the way to the disk.
func ExampleReport_WriteFiles() {
	var (
		started      = time.Now()
		preflightErr error                                // set by the BeforeSuite's preflight
		redactKeys   = func(s string) string { return s } // e.g. (*redact.Redactor).String
	)
	_ = ReportAfterSuite("conformance report", func(r types.Report) {
		cat, err := catalogue.Load()
		if err != nil {
			Fail(err.Error())
		}
		m := report.Meta{
			Target:       "http://127.0.0.1:8080",
			SuiteVersion: "v1.2.3",
			Started:      started,
			Finished:     time.Now(),
			Config:       map[string]string{"pro-key": "tcm_…9Qa"},
		}
		if preflightErr != nil {
			m.Errored = preflightErr.Error()
		}
		if err := report.FromGinkgo(r, cat, m).WriteFiles("reports", redactKeys); err != nil {
			Fail(err.Error())
		}
	})
}
