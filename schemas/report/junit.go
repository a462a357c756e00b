package report

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"strings"
)

// JUnit renders the report as JUnit XML, for CI systems that show test
// results: a testsuite per feature (a spec's first feature label), a
// testcase per spec, named with the requirements it checks, and a
// testcase "the run" that errors when the run did not finish. The suite's own
// JUnit is Ginkgo's (--junit-report); this one is for reports that Ginkgo
// did not run, such as the simulator's on its clients.
func (r Report) JUnit() ([]byte, error) {
	type message struct {
		Message string `xml:"message,attr"`
		Type    string `xml:"type,attr,omitempty"`
		Body    string `xml:",chardata"`
	}
	type testcase struct {
		Name      string   `xml:"name,attr"`
		Classname string   `xml:"classname,attr"`
		Time      string   `xml:"time,attr"`
		Failure   *message `xml:"failure,omitempty"`
		Error     *message `xml:"error,omitempty"`
		Skipped   *message `xml:"skipped,omitempty"`
	}
	type testsuite struct {
		Name     string     `xml:"name,attr"`
		Tests    int        `xml:"tests,attr"`
		Failures int        `xml:"failures,attr"`
		Errors   int        `xml:"errors,attr"`
		Skipped  int        `xml:"skipped,attr"`
		Time     string     `xml:"time,attr"`
		Cases    []testcase `xml:"testcase"`
	}
	type testsuites struct {
		XMLName   xml.Name     `xml:"testsuites"`
		Name      string       `xml:"name,attr"`
		Tests     int          `xml:"tests,attr"`
		Failures  int          `xml:"failures,attr"`
		Errors    int          `xml:"errors,attr"`
		Time      string       `xml:"time,attr"`
		Timestamp string       `xml:"timestamp,attr"`
		Suites    []*testsuite `xml:"testsuite"`
	}
	secs := func(f float64) string { return fmt.Sprintf("%.3f", f) }
	out := testsuites{Name: r.Title() + ": " + r.Target, Time: secs(r.DurationSeconds), Timestamp: r.Started.Format("2006-01-02T15:04:05Z")}
	byName := map[string]*testsuite{}
	suite := func(name string) *testsuite {
		if byName[name] == nil {
			byName[name] = &testsuite{Name: name}
			out.Suites = append(out.Suites, byName[name])
		}
		return byName[name]
	}
	if len(r.Errors) > 0 {
		s := suite("run")
		s.Tests, s.Errors = 1, 1
		out.Tests++
		out.Errors++
		s.Cases = append(s.Cases, testcase{Name: "the run", Classname: "run", Time: secs(0),
			Error: &message{Message: firstLine(r.Errors[0]), Type: "incomplete", Body: strings.Join(r.Errors, "\n\n")}})
	}
	for _, sp := range r.Specs {
		feature := "specs"
		if len(sp.Features) > 0 {
			feature = sp.Features[0]
		}
		s := suite(feature)
		name := sp.Name
		if len(sp.Requirements) > 0 {
			name += " [" + strings.Join(sp.Requirements, ", ") + "]"
		}
		c := testcase{Name: name, Classname: feature, Time: secs(sp.DurationSeconds)}
		s.Tests++
		out.Tests++
		switch sp.State {
		case ResultFailed:
			s.Failures++
			out.Failures++
			body := sp.Failure.Message
			if sp.Failure.Transcript != "" {
				body += "\n\n" + sp.Failure.Transcript
			}
			c.Failure = &message{Message: firstLine(sp.Failure.Message), Type: "failed", Body: body}
		case ResultErrored:
			s.Errors++
			out.Errors++
			c.Error = &message{Message: firstLine(sp.Failure.Message), Type: "errored", Body: sp.Failure.Message}
		case ResultSkipped:
			s.Skipped++
			c.Skipped = &message{Message: sp.SkipReason}
		}
		s.Cases = append(s.Cases, c)
	}
	for _, s := range out.Suites {
		var t float64
		for _, sp := range r.Specs {
			if len(sp.Features) > 0 && sp.Features[0] == s.Name || len(sp.Features) == 0 && s.Name == "specs" {
				t += sp.DurationSeconds
			}
		}
		s.Time = secs(t)
	}
	var b bytes.Buffer
	b.WriteString(xml.Header)
	enc := xml.NewEncoder(&b)
	enc.Indent("", "  ")
	if err := enc.Encode(out); err != nil {
		return nil, err
	}
	b.WriteByte('\n')
	return b.Bytes(), nil
}
