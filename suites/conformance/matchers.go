package conformance

import (
	"errors"
	"fmt"
	"strings"

	"github.com/onsi/gomega/types"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/schemas/catalogue"
	"github.com/tcmkit/tcmkit/suites/client"
	"github.com/tcmkit/tcmkit/suites/oracle"
)

// The matchers below take a *client.Response and fail with a message that
// names the request (method, path, query), the status, the JSON pointer,
// the value seen and the rule.

func asResponse(actual any) (*client.Response, error) {
	r, ok := actual.(*client.Response)
	if !ok || r == nil {
		return nil, fmt.Errorf("want a *client.Response, got %T", actual)
	}
	return r, nil
}

// HaveStatus succeeds when the response has one of the given statuses.
func HaveStatus(codes ...int) types.GomegaMatcher { return &statusMatcher{codes: codes} }

type statusMatcher struct{ codes []int }

func (m *statusMatcher) Match(actual any) (bool, error) {
	r, err := asResponse(actual)
	if err != nil {
		return false, err
	}
	for _, c := range m.codes {
		if r.Status == c {
			return true, nil
		}
	}
	return false, nil
}

func (m *statusMatcher) want() string {
	s := make([]string, len(m.codes))
	for i, c := range m.codes {
		s[i] = fmt.Sprint(c)
	}
	return strings.Join(s, " or ")
}

func (m *statusMatcher) FailureMessage(actual any) string {
	r, _ := asResponse(actual)
	note := ""
	if r.Note != "" {
		note = " (" + r.Note + ")"
	}
	// the status is the rule of the spec's own requirement
	hand(r, Problem{Request: r.Request.String(), Expected: "status " + m.want(), Actual: fmt.Sprintf("status %d%s", r.Status, note)})
	return fmt.Sprintf("%s: status %d%s, want %s\nresponse body: %s", r.Request, r.Status, note, m.want(), r.Excerpt())
}

func (m *statusMatcher) NegatedFailureMessage(actual any) string {
	r, _ := asResponse(actual)
	return fmt.Sprintf("%s: status %d, want anything but %s", r.Request, r.Status, m.want())
}

// ConformTo succeeds when the body validates against the resource's schema.
// Its failure lists every violation: JSON pointer, rule, keyword and value;
// each violation blames the one requirement that speaks of it (a count,
// a URI, an event's fields...: violationRequirement).
func ConformTo(res schemas.Resource) types.GomegaMatcher { return &schemaMatcher{res: res} }

type schemaMatcher struct {
	res schemas.Resource
	err error
}

func (m *schemaMatcher) Match(actual any) (bool, error) {
	r, err := asResponse(actual)
	if err != nil {
		return false, err
	}
	if _, err := r.JSON(); err != nil {
		m.err = fmt.Errorf("the body is not JSON: %w", err)
		return false, nil
	}
	m.err = r.Validate(m.res)
	var se *schemas.Error
	if m.err != nil && !errors.As(m.err, &se) {
		return false, m.err // the schemas themselves are broken
	}
	return m.err == nil, nil
}

func (m *schemaMatcher) FailureMessage(actual any) string {
	r, _ := asResponse(actual)
	var se *schemas.Error
	if !errors.As(m.err, &se) {
		// not JSON (or not UTF-8): the answer is not the resource
		hand(r, Problem{Requirement: string(oracle.ResourceRequirement(m.res)), Request: r.Request.String(), Expected: "a JSON body: " + strings.TrimSuffix(string(m.res), ".json"), Actual: m.err.Error()})
		return fmt.Sprintf("%s (status %d): the body %s\nresponse body: %s", r.Request, r.Status, strings.TrimPrefix(m.err.Error(), "the body "), r.Excerpt())
	}
	// every violation of one rule would make a message no one reads
	var b strings.Builder
	fmt.Fprintf(&b, "%s (status %d): the body does not validate as %s: %d violation(s):", r.Request, r.Status, strings.TrimSuffix(string(se.Resource), ".json"), len(se.Violations))
	fs := make([]finding, len(se.Violations))
	for i, v := range se.Violations {
		fs[i] = schemaFinding("", m.res, v)
	}
	ps := findingProblems("the body validates as "+strings.TrimSuffix(string(se.Resource), ".json"), fs)
	for i := range ps {
		ps[i].Request = r.Request.String()
	}
	hand(r, ps...)
	writeFindings(&b, fs, "  ")
	fmt.Fprintf(&b, "\nresponse body: %s", r.Excerpt())
	return b.String()
}

func (m *schemaMatcher) NegatedFailureMessage(actual any) string {
	r, _ := asResponse(actual)
	return fmt.Sprintf("%s: the body conforms to %s, want it not to", r.Request, m.res)
}

// BeErrorBody succeeds when the body is an ErrorBody: error and message
// strings, details optional. Any string: the contract shows no allowed
// values of error and says nothing of message beyond its type, so "" is
// a conforming value of both.
func BeErrorBody() types.GomegaMatcher { return &errorBodyMatcher{} }

type errorBodyMatcher struct{ why []string }

func (m *errorBodyMatcher) Match(actual any) (bool, error) {
	r, err := asResponse(actual)
	if err != nil {
		return false, err
	}
	m.why = nil
	if _, err := r.JSON(); err != nil {
		m.why = append(m.why, "/: the body is not JSON: "+err.Error())
		return false, nil
	}
	if err := r.Validate(schemas.ErrorBody); err != nil {
		var se *schemas.Error
		if !errors.As(err, &se) {
			return false, err
		}
		for _, v := range se.Violations {
			m.why = append(m.why, v.String())
		}
		return false, nil
	}
	return len(m.why) == 0, nil
}

func (m *errorBodyMatcher) FailureMessage(actual any) string {
	r, _ := asResponse(actual)
	ps := make([]Problem, 0, len(m.why))
	for _, why := range m.why[:min(len(m.why), maxProblems)] {
		ptr, _, _ := strings.Cut(why, ":")
		ps = append(ps, Problem{Requirement: string(catalogue.ErrorBody), Request: r.Request.String(), Pointer: ptr, Expected: "an ErrorBody: error and message strings", Actual: why})
	}
	hand(r, ps...)
	return fmt.Sprintf("%s (status %d): the body is not an ErrorBody (error and message strings):\n%s\nresponse body: %s",
		r.Request, r.Status, listProblems(m.why, "  "), r.Excerpt())
}

func (m *errorBodyMatcher) NegatedFailureMessage(actual any) string {
	r, _ := asResponse(actual)
	return fmt.Sprintf("%s: the body is an ErrorBody, want it not to be", r.Request)
}
