package report

import (
	"bytes"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/tcmkit/tcmkit/schemas/catalogue"
)

func clientCatalogue(t *testing.T) catalogue.Catalogue {
	t.Helper()
	c, err := catalogue.Parse([]byte(`{"version":1,"requirements":[
	 {"id":"HEALTH-OK","kind":"must","feature":"health","section":"Health","text":"health says ok"},
	 {"id":"CLIENT-BEARER","kind":"client","feature":"client","section":"Authentication","text":"Bearer"},
	 {"id":"CLIENT-RATE","kind":"client","feature":"client","section":"Limits","text":"20 a minute"},
	 {"id":"CLIENT-HEALTH-KEY","kind":"open","feature":"client","section":"Health","text":"key to health: not shown","simulatorChoice":"either"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// clientReport is a client report of two keys: one passed, one failed.
func clientReport(t *testing.T) Report {
	m := meta()
	m.Kind, m.Target, m.SuiteVersion = KindClient, "clients of http://127.0.0.1:8080", "tcmkit simulator"
	specs := []Spec{
		{Name: "tcm_…aaaa (acc_1) sends its key as Bearer", State: ResultPassed, Features: []string{"client"}, Requirements: []string{"CLIENT-BEARER"}, Requests: 3},
		{Name: "tcm_…aaaa (acc_1) slows down", State: ResultSkipped, Features: []string{"client"}, Requirements: []string{"CLIENT-RATE"}, SkipReason: "not exercised: no feed request"},
		{Name: "tcm_…bbbb (acc_2) sends its key as Bearer", State: ResultFailed, Features: []string{"client"}, Requirements: []string{"CLIENT-BEARER"}, Requests: 2,
			Failure: &Failure{Message: "CLIENT-BEARER: #2 GET /api/public-feed → 401\n    no Authorization header", Transcript: "#2 GET /api/public-feed → 401 <&>"}},
		{Name: "tcm_…bbbb (acc_2) scenario 429-storm", State: ResultPassed, Features: []string{"scenario"}},
	}
	return FromSpecs(specs, clientCatalogue(t), m)
}

func TestClientReport(t *testing.T) {
	r := clientReport(t)
	if r.Kind != KindClient || r.Outcome != Failed || r.Totals.Specs != 4 || r.Totals.Failed != 1 || len(r.Features) != 2 {
		t.Fatalf("report: kind %q, outcome %s, totals %+v, features %+v", r.Kind, r.Outcome, r.Totals, r.Features)
	}
	// Only the client requirements and open points: a server's are left out.
	var ids []string
	for _, q := range r.Requirements {
		ids = append(ids, q.ID+"="+string(q.Result))
	}
	if got := strings.Join(ids, " "); got != "CLIENT-BEARER=failed CLIENT-RATE=skipped CLIENT-HEALTH-KEY=not applicable" {
		t.Errorf("requirements: %s", got)
	}
	// A server's report leaves the client's rules out.
	s := FromSpecs(nil, clientCatalogue(t), meta())
	if len(s.Requirements) != 1 || s.Requirements[0].ID != "HEALTH-OK" {
		t.Errorf("a server's requirements: %+v", s.Requirements)
	}

	md, _ := r.Markdown()
	html, _ := r.HTML()
	for name, doc := range map[string]string{"Markdown": string(md), "HTML": string(html)} {
		for _, want := range []string{"Client conformance report", "Judged by", "conforming client must do"} {
			if name == "Markdown" && want == "conforming client must do" {
				continue
			}
			if !strings.Contains(doc, want) {
				t.Errorf("%s lacks %q", name, want)
			}
		}
		if strings.Contains(doc, "strict") {
			t.Errorf("%s speaks of the suite's strict label", name)
		}
	}

	// JUnit: a testsuite per feature, the failure with its message.
	raw, err := r.JUnit()
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Suites   []struct {
			Name  string `xml:"name,attr"`
			Cases []struct {
				Name    string `xml:"name,attr"`
				Failure *struct {
					Message string `xml:"message,attr"`
					Body    string `xml:",chardata"`
				} `xml:"failure"`
				Skipped *struct{} `xml:"skipped"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("JUnit: %v\n%s", err, raw)
	}
	if doc.Tests != 4 || doc.Failures != 1 || len(doc.Suites) != 2 || doc.Suites[0].Name != "client" || len(doc.Suites[0].Cases) != 3 {
		t.Fatalf("JUnit: %s", raw)
	}
	failed := doc.Suites[0].Cases[2]
	if failed.Name != "tcm_…bbbb (acc_2) sends its key as Bearer [CLIENT-BEARER]" || failed.Failure == nil ||
		failed.Failure.Message != "CLIENT-BEARER: #2 GET /api/public-feed → 401" || !strings.Contains(failed.Failure.Body, "<&>") {
		t.Errorf("the failed case: %+v", failed)
	}
	if doc.Suites[0].Cases[1].Skipped == nil {
		t.Errorf("the skipped case is not skipped")
	}
}

func TestClientReportFiles(t *testing.T) {
	dir := t.TempDir()
	r := clientReport(t)
	r.Specs[2].Failure.Message += " " + secret
	if err := r.WriteFiles(dir, redactSecret); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{ClientJSONFile, ClientMarkdownFile, ClientHTMLFile, ClientJUnitFile} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte(secret)) {
			t.Errorf("%s holds the secret", name)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, JSONFile)); err == nil {
		t.Errorf("a client report wrote %s", JSONFile)
	}
	// And it is a report of the published schema.
	c := jsonschema.NewCompiler()
	doc, _ := jsonschema.UnmarshalJSON(bytes.NewReader(Schema()))
	if err := c.AddResource("report.schema.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("report.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(filepath.Join(dir, ClientJSONFile))
	inst, _ := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err := sch.Validate(inst); err != nil {
		t.Errorf("client report: %v", err)
	}
}
