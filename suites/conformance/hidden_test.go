package conformance

import (
	"testing"
	"time"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/suites/client"
)

// mostAdmitted allows what any 20-a-minute limiter admits: two fixed
// windows' worth at once, and a bucket's refill over time.
func TestMostAdmitted(t *testing.T) {
	if got := mostAdmitted(0); got != 2*schemas.FeedRequestsPerMinute {
		t.Errorf("mostAdmitted(0) = %d, want %d", got, 2*schemas.FeedRequestsPerMinute)
	}
	if got := mostAdmitted(30 * time.Second); got != 2*schemas.FeedRequestsPerMinute+schemas.FeedRequestsPerMinute/2 {
		t.Errorf("mostAdmitted(30 s) = %d", got)
	}
}

// The burst follows the cursor of the page before at that page's size.
func TestBurstFollowsCursors(t *testing.T) {
	first := &client.Response{Request: limitRequest("1", "k"), Status: 200, Body: []byte(`{"events":[{"id":"e"}],"nextCursor":"c1"}`)}
	req := burstRequest([]*client.Response{first}, "k", nil)
	if req.Query != "cursor=c1&limit=1" {
		t.Errorf("second request of a burst: %q, want the first page's cursor at its size", req.Query)
	}
	last := &client.Response{Request: limitRequest("1", "k"), Status: 200, Body: []byte(`{"events":[],"nextCursor":null}`)}
	if req := burstRequest([]*client.Response{last}, "k", nil); req.Query != "limit=2" {
		t.Errorf("after a last page: %q, want a first page", req.Query)
	}
	lastPage := pageRequest("7", "cz", "k")
	sent := []*client.Response{first, first, first}
	if req := burstRequest(sent, "k", &lastPage); req.Query != lastPage.Query {
		t.Errorf("fourth request with a last page known: %q, want the last page %q", req.Query, lastPage.Query)
	}
}
