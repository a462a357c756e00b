package conformance

import (
	"strings"
	"testing"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/suites/client"
)

func TestPartition(t *testing.T) {
	resp := func(body string) *client.Response {
		return &client.Response{Request: client.PostJSON(schemas.PathVideos, `{}`, ""), Status: 200, Body: []byte(body)}
	}
	entry := func(id string) string { return `{"video":{"platformVideoId":"` + id + `"}}` }
	for _, tc := range []struct {
		body string
		want int
	}{
		{`{"videos":[` + entry("a") + `],"missingVideoIds":["b"]}`, 0},
		{`{"videos":[],"missingVideoIds":["a"]}`, 1},                         // b unanswered
		{`{"videos":[` + entry("a") + `],"missingVideoIds":["a","b"]}`, 1},   // a twice
		{`{"videos":[` + entry("a") + `],"missingVideoIds":["b","zzz"]}`, 1}, // zzz not requested
		{`{"videos":[{"video":{}}],"missingVideoIds":["a","b"]}`, 1},         // entry without id
	} {
		if got := partition(resp(tc.body), []string{"a", "b"}); len(got) != tc.want {
			t.Errorf("%s: %v, want %d problem(s)", tc.body, got, tc.want)
		}
	}
}

func TestInventedIDs(t *testing.T) {
	for _, n := range []int{24, schemas.MaxVideoIDLen, schemas.MaxVideoIDLen + 1} {
		id := inventedID(7, n)
		if len(id) != n || !strings.Contains(id, "~") {
			t.Errorf("inventedID(7, %d) = %q", n, id)
		}
	}
	if inventedID(1, 24) == inventedID(2, 24) {
		t.Error("invented ids collide")
	}
}

func TestDetailsMention(t *testing.T) {
	r := func(body string) *client.Response { return &client.Response{Body: []byte(body)} }
	for body, want := range map[string]bool{
		`{"error":"e","message":"m","details":{"limit":"must be >= 1"}}`: true,
		`{"error":"e","message":"m","details":[{"param":"limit"}]}`:      true,
		`{"error":"e","message":"m","details":"limit is invalid"}`:       true,
		`{"error":"e","message":"limit"}`:                                false,
		`{"error":"e","message":"m","details":{"cursor":"x"}}`:           false,
	} {
		if got := detailsMention(r(body), "limit"); got != want {
			t.Errorf("%s: %v, want %v", body, got, want)
		}
	}
}
