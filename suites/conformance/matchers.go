package conformance

import (
	"fmt"
	"strings"

	"github.com/onsi/gomega/types"

	"github.com/tcmkit/tcmkit/suites/client"
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
