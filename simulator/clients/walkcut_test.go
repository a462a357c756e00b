package clients

import (
	"net/http"
	"strconv"
	"testing"

	"github.com/tcmkit/tcmkit/schemas/catalogue"
	"github.com/tcmkit/tcmkit/simulator"
)

// A walk the server would not let go on is cut, not abandoned: a 400 to
// the cursor it handed out, a 401, a 403 or a 5xx to the walk's key, or
// no answer, until the client gave up. A client that gives up after a 429
// it could wait out, or after a page, still abandoned its walk.
func TestWalkRefusedByTheServerIsNotAbandoned(t *testing.T) {
	for _, tc := range []struct {
		name    string
		fault   simulator.FaultSpec
		abandon bool
	}{
		{"400 to its own cursor", simulator.FaultSpec{Status: http.StatusBadRequest}, false},
		{"403", simulator.FaultSpec{Status: http.StatusForbidden}, false},
		{"401", simulator.FaultSpec{Status: http.StatusUnauthorized}, false},
		{"503", simulator.FaultSpec{Status: http.StatusServiceUnavailable}, false},
		{"500", simulator.FaultSpec{Status: http.StatusInternalServerError}, false},
		{"429 of a second", simulator.FaultSpec{Status: http.StatusTooManyRequests, RetryAfter: new(1)}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, Config{})
			pro := h.keys.Pro
			next := h.feed(pro, "limit=5").next()
			next = h.feed(pro, "limit=5&cursor="+next).next() // a walk begun, waiting on next
			tc.fault.Operation, tc.fault.Count = "feed", 2
			if _, err := h.s.AddFault(tc.fault); err != nil {
				t.Fatal(err)
			}
			h.advance(5e9)
			h.feed(pro, "limit=5&cursor="+next) // refused
			h.advance(5e9)
			h.feed(pro, "limit=5&cursor="+next) // refused again: the client gives up
			c := h.client(true, pro)
			if tc.abandon {
				expectFailed(t, c, catalogue.ClientWalkEnd)
				return
			}
			expectFailed(t, c)
			if c.Walks.Cut != 1 || c.Walks.Open != 0 {
				t.Errorf("walks %+v, want the one cut", c.Walks)
			}
		})
	}
}

// The key refused on its last feed request, whatever it asked for, cuts
// its walks: the server answered 503 to the first page the client asked
// for again.
func TestWalkOfAKeyRefusedToTheEnd(t *testing.T) {
	h := newHarness(t, Config{})
	pro := h.keys.Pro
	next := h.feed(pro, "limit=5").next()
	h.feed(pro, "limit=5&cursor="+next)
	if _, err := h.s.AddFault(simulator.FaultSpec{Operation: "feed", Status: http.StatusServiceUnavailable, Count: 3}); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		h.advance(5e9)
		if a := h.feed(pro, "limit="+strconv.Itoa(5+i)); a.status != http.StatusServiceUnavailable {
			t.Fatalf("the first page again: %d", a.status)
		}
	}
	expectFailed(t, h.client(true, pro))
}
