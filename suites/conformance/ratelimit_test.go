package conformance

import (
	"net/http"
	"strings"
	"testing"

	"github.com/tcmkit/tcmkit/suites/client"
)

// A walk that waits out the burst's 429 goes on with its cursor: the
// throttled cursor page again, else the page after the last one served.
func TestAWalkResumesWithItsCursor(t *testing.T) {
	served := func(next string) *client.Response {
		return &client.Response{Request: pageRequest("1", "", "k"), Status: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}},
			Body: []byte(`{"events":[],"nextCursor":` + next + `}`)}
	}
	throttled := &client.Response{Request: pageRequest("1", "c7", "k"), Status: http.StatusTooManyRequests}
	b := &burst{key: "k", throttled: throttled, feed: []*client.Response{served(`"c6"`), throttled}}
	if got := b.resume(); !strings.Contains(got.Query, "cursor=c7") {
		t.Errorf("resumed with %s, want the throttled cursor page", got)
	}
	throttled.Request = limitRequest("1", "k")
	if got := b.resume(); !strings.Contains(got.Query, "cursor=c6") {
		t.Errorf("resumed with %s, want the page after the last one served", got)
	}
	b.feed = []*client.Response{served(`"c5"`), served("null"), throttled}
	if got := b.resume(); !strings.Contains(got.Query, "cursor=c5") {
		t.Errorf("resumed with %s, want the page after the latest one that handed out a cursor (a last page hands out none)", got)
	}
	b.feed = []*client.Response{served("null"), throttled}
	if got := b.resume(); strings.Contains(got.Query, "cursor") {
		t.Errorf("resumed with %s, want a first page (no cursor handed out)", got)
	}
}
