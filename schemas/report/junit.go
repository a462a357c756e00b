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
	out := junitSuites{Name: r.Title() + ": " + r.Target, Time: junitSecs(r.DurationSeconds), Timestamp: r.Started.Format("2006-01-02T15:04:05Z")}
	byName := map[string]*junitSuite{}
	suite := func(name string) *junitSuite {
		if byName[name] == nil {
			byName[name] = &junitSuite{Name: name}
			out.Suites = append(out.Suites, byName[name])
		}
		return byName[name]
	}
	if len(r.Errors) > 0 {
		out.addRunErrors(suite("run"), r.Errors)
	}
	for _, sp := range r.Specs {
		feature := junitFeature(sp)
		out.addSpec(suite(feature), feature, sp)
	}
	for _, s := range out.Suites {
		s.Time = junitSecs(r.suiteSeconds(s.Name))
	}
	return encodeJUnit(out)
}

// The JUnit document's elements; the field tags name them.
type (
	junitMessage struct {
		Message string `xml:"message,attr"`
		Type    string `xml:"type,attr,omitempty"`
		Body    string `xml:",chardata"`
	}
	junitCase struct {
		Name      string        `xml:"name,attr"`
		Classname string        `xml:"classname,attr"`
		Time      string        `xml:"time,attr"`
		Failure   *junitMessage `xml:"failure,omitempty"`
		Error     *junitMessage `xml:"error,omitempty"`
		Skipped   *junitMessage `xml:"skipped,omitempty"`
	}
	junitSuite struct {
		Name     string      `xml:"name,attr"`
		Tests    int         `xml:"tests,attr"`
		Failures int         `xml:"failures,attr"`
		Errors   int         `xml:"errors,attr"`
		Skipped  int         `xml:"skipped,attr"`
		Time     string      `xml:"time,attr"`
		Cases    []junitCase `xml:"testcase"`
	}
	junitSuites struct {
		XMLName   xml.Name      `xml:"testsuites"`
		Name      string        `xml:"name,attr"`
		Tests     int           `xml:"tests,attr"`
		Failures  int           `xml:"failures,attr"`
		Errors    int           `xml:"errors,attr"`
		Time      string        `xml:"time,attr"`
		Timestamp string        `xml:"timestamp,attr"`
		Suites    []*junitSuite `xml:"testsuite"`
	}
)

// junitSecs writes a duration in seconds as JUnit's time attributes hold it.
func junitSecs(f float64) string { return fmt.Sprintf("%.3f", f) }

// junitFeature is the suite a spec goes in: its first feature label, or
// "specs" when it has none.
func junitFeature(sp Spec) string {
	if len(sp.Features) > 0 {
		return sp.Features[0]
	}
	return "specs"
}

// addRunErrors adds the testcase "the run" to s, errored with the run's
// errors, so that a run that did not finish shows in CI as an error.
func (out *junitSuites) addRunErrors(s *junitSuite, errs []string) {
	s.Tests, s.Errors = 1, 1
	out.Tests++
	out.Errors++
	s.Cases = append(s.Cases, junitCase{Name: "the run", Classname: "run", Time: junitSecs(0),
		Error: &junitMessage{Message: firstLine(errs[0]), Type: "incomplete", Body: strings.Join(errs, "\n\n")}})
}

// addSpec adds a spec's testcase to s, named with the requirements it
// checks, and counts its outcome in s and in the whole.
func (out *junitSuites) addSpec(s *junitSuite, feature string, sp Spec) {
	name := sp.Name
	if len(sp.Requirements) > 0 {
		name += " [" + strings.Join(sp.Requirements, ", ") + "]"
	}
	c := junitCase{Name: name, Classname: feature, Time: junitSecs(sp.DurationSeconds)}
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
		c.Failure = &junitMessage{Message: firstLine(sp.Failure.Message), Type: "failed", Body: body}
	case ResultErrored:
		s.Errors++
		out.Errors++
		c.Error = &junitMessage{Message: firstLine(sp.Failure.Message), Type: "errored", Body: sp.Failure.Message}
	case ResultSkipped:
		s.Skipped++
		c.Skipped = &junitMessage{Message: sp.SkipReason}
	}
	s.Cases = append(s.Cases, c)
}

// suiteSeconds is how long the specs of a feature's suite took, in the
// order they ran.
func (r Report) suiteSeconds(feature string) float64 {
	var t float64
	for _, sp := range r.Specs {
		if junitFeature(sp) == feature {
			t += sp.DurationSeconds
		}
	}
	return t
}

// encodeJUnit writes the document, indented, after the XML header.
func encodeJUnit(out junitSuites) ([]byte, error) {
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
