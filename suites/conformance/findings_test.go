package conformance

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/tcmkit/tcmkit/schemas"
)

// A rule broken thousands of times gives a message of a few kilobytes: at
// most maxFindings of each kind, pointers in numeric order, the rest counted.
func TestFindingsAreCappedAndOrdered(t *testing.T) {
	var fs []finding
	for p := range 20 {
		page := fmt.Sprintf("GET /api/public-feed?cursor=c%d&limit=200", p)
		for i := 199; i >= 0; i-- { // out of order on purpose
			for _, v := range []schemas.Violation{
				{Pointer: fmt.Sprintf("/events/%d/createdAt", i), Keyword: "type", Rule: "got string, want integer", Value: `"x"`},
				{Pointer: fmt.Sprintf("/events/%d", i), Keyword: "required", Rule: "missing property 'id'", Value: "{}"},
			} {
				fs = append(fs, schemaFinding(page, schemas.FeedPage, v))
			}
		}
	}
	msg := describeFindings("rule: events have the fields of the Event table", fs)
	if len(msg) > 8000 {
		t.Errorf("%d findings gave a message of %d bytes", len(fs), len(msg))
	}
	for _, want := range []string{
		fmt.Sprintf("%d finding(s):", len(fs)),
		"[type] got string, want integer: " + fmt.Sprint(len(fs)/2) + " finding(s)",
		"[required] missing property 'id': ",
		fmt.Sprintf("… and %d more of this kind", len(fs)/2-maxFindings),
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("the message lacks %q:\n%s", want, msg)
		}
	}
	var shown []int
	for _, line := range strings.Split(msg, "\n") {
		var n int
		if _, err := fmt.Sscanf(strings.TrimSpace(line), "/events/%d/createdAt", &n); err == nil {
			shown = append(shown, n)
		}
	}
	if len(shown) != maxFindings || !slices.IsSorted(shown) {
		t.Errorf("pointers shown: %v, want %d in numeric order", shown, maxFindings)
	}
	if got := listProblems(make([]string, 100), ""); !strings.HasSuffix(got, "… and 80 more") {
		t.Errorf("listProblems: %q", got)
	}
}

func TestNaturalOrder(t *testing.T) {
	in := []string{"/videos/10/x", "/videos/2/x", "/videos/1/x", "b", "a10", "a9", "/videos/02/y"}
	slices.SortFunc(in, natural)
	want := []string{"/videos/1/x", "/videos/2/x", "/videos/02/y", "/videos/10/x", "a9", "a10", "b"}
	if !slices.Equal(in, want) {
		t.Errorf("natural order: %q, want %q", in, want)
	}
}
