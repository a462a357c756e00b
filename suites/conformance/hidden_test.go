package conformance

import (
	"strings"
	"testing"
	"time"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/suites/client"
)

func videosAnswer(body string, ids ...string) *client.Response {
	return &client.Response{Request: videosRequest(ids, "k"), Status: 200, Body: []byte(body)}
}

// An id asked twice may be answered once or once per ask, in one list;
// the contract says no more.
func TestPartitionOfARepeatedID(t *testing.T) {
	entry := `{"video":{"platformVideoId":"a"}}`
	for _, tc := range []struct {
		name, body string
		ok         bool
		says       string
	}{
		{"once", `{"videos":[` + entry + `],"missingVideoIds":["~x"]}`, true, ""},
		{"once per ask", `{"videos":[` + entry + `,` + entry + `],"missingVideoIds":["~x"]}`, true, ""},
		{"in both lists", `{"videos":[` + entry + `],"missingVideoIds":["~x","a"]}`, false, "in both videos and missingVideoIds"},
		{"more than asked", `{"videos":[` + entry + `,` + entry + `,` + entry + `],"missingVideoIds":["~x"]}`, false, "answered 3 times"},
		{"missing not as sent", `{"videos":[` + entry + `],"missingVideoIds":["~X"]}`, false, `"~x" is in neither`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := partition(videosAnswer(tc.body, "a", "~x", "a"), []string{"a", "~x", "a"})
			if (len(got) == 0) != tc.ok || !tc.ok && !strings.Contains(strings.Join(got, "\n"), tc.says) {
				t.Errorf("partition = %q, want ok=%v saying %q", got, tc.ok, tc.says)
			}
		})
	}
}

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
	req := burstRequest([]*client.Response{first}, "k")
	if req.Query != "cursor=c1&limit=1" {
		t.Errorf("second request of a burst: %q, want the first page's cursor at its size", req.Query)
	}
	last := &client.Response{Request: limitRequest("1", "k"), Status: 200, Body: []byte(`{"events":[],"nextCursor":null}`)}
	if req := burstRequest([]*client.Response{last}, "k"); req.Query != "limit=2" {
		t.Errorf("after a last page: %q, want a first page", req.Query)
	}
}
