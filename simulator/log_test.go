package simulator

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tcmkit/tcmkit/schemas"
)

// The debug log has one line per request with its status, and a key that
// a careless client put in the path or the query is redacted there.
func TestDebugLogRedactsKeysInPathAndQuery(t *testing.T) {
	var logs bytes.Buffer
	s := newServer(t, Config{Seed: 1, Logger: newTestLogger(&logs)})
	key := s.Seeded().Pro
	s.serve(t, req{method: "GET", target: schemas.PathFeed + "?api_key=" + key + "&limit=1"})
	s.serve(t, req{method: "GET", target: "/api/" + key})
	out := logs.String()
	if strings.Contains(out, key) || strings.Contains(out, key[4:20]) {
		t.Fatalf("the log holds a key:\n%s", out)
	}
	if n := strings.Count(out, "msg=request"); n != 2 || !strings.Contains(out, "status=401") || !strings.Contains(out, "status=404") || !strings.Contains(out, hint(key)) {
		t.Errorf("want two request lines (401, 404) naming the redacted key:\n%s", out)
	}
}
