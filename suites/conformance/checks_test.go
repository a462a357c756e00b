package conformance

import (
	"strings"
	"testing"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/suites/client"
)

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
