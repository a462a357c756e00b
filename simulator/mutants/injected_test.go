package mutants

import (
	"net/http"
	"testing"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/simulator"
)

// A named fault edits what an injected fault answers as it edits the
// server's own answers: under retry-after-missing no 429 carries
// Retry-After, an injected one included (a 429 without it can be staged
// through the control API too). An injected 503 keeps its Retry-After:
// the fault takes 429s only.
func TestRetryAfterMissingTakesInjected429s(t *testing.T) {
	e := newFaultEnv(t, true, "retry-after-missing")
	if _, err := e.s.AddFault(simulator.FaultSpec{Operation: "feed", Status: http.StatusTooManyRequests, RetryAfter: new(5), Count: 1}); err != nil {
		t.Fatal(err)
	}
	a := e.feed(e.keys.Pro, "")
	if a.status != http.StatusTooManyRequests {
		t.Fatalf("the injected 429: %s", a)
	}
	if ra, ok := a.header["Retry-After"]; ok {
		t.Errorf("an injected 429 under retry-after-missing carries Retry-After %q", ra)
	}
	if _, err := e.s.AddFault(simulator.FaultSpec{Operation: "feed", Status: http.StatusServiceUnavailable, RetryAfter: new(5), Count: 1}); err != nil {
		t.Fatal(err)
	}
	if a := e.feed(e.keys.Pro, ""); a.status != http.StatusServiceUnavailable || a.header.Get("Retry-After") != "5" {
		t.Errorf("an injected 503 under retry-after-missing: %s, Retry-After %q, want 503 with 5", a, a.header.Get("Retry-After"))
	}
	// Without a fault injected, the limiter's 429 still loses it.
	var last faultAnswer
	for range schemas.FeedRequestsPerMinute + 1 {
		last = e.feed(e.keys.Pro, "limit=1")
	}
	if last.status != http.StatusTooManyRequests || last.header["Retry-After"] != nil {
		t.Errorf("the limiter's 429 under retry-after-missing: %s, Retry-After %q", last, last.header["Retry-After"])
	}
}
