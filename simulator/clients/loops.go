package clients

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/simulator"
)

// Bounds of CLIENT-BACKOFF and CLIENT-CURSOR-CYCLE.
const (
	// TightLoop is how many requests in a row, each within a second of
	// the rate clock after an error answer to the one before, make a tight
	// loop.
	TightLoop = 5
	// CycleLaps is how often a client may follow a cursor loop back into
	// pages its walk read: the CycleLaps-th time, and each after, is a
	// finding.
	CycleLaps = 3
)

// streak is a key's run of quick requests to one operation after error
// answers.
type streak struct {
	at   time.Time // on the rate clock, when the last request arrived
	err  string    // its answer was an error: "" when it was not, else what it was
	from rawRef    // the request whose error began the run
	what string    // and what that error was
	n    int       // requests in the run so far
}

// errorOf says what error answer x got: "" for none (a status below 500);
// a 5xx, or an answer cut short or dropped (no status: the connection
// closed before the answer was whole; or a feed page whose body is cut
// short, a 200 that is not a page).
func errorOf(x *simulator.Exchange) string {
	switch {
	case x.Status == 0:
		return "dropped or cut answer"
	case x.Status >= http.StatusInternalServerError:
		return strconv.Itoa(x.Status)
	case x.Operation == simulator.OpFeed && x.Status == http.StatusOK && len(x.ResponseBody) < maxObservedBody:
		if _, ok := cursorIn(x.ResponseBody); !ok {
			return "200 whose body was cut short (not a page)"
		}
	}
	return ""
}

// maxObservedBody is the most of an answer's body an Exchange carries
// (simulator's bound): a body that long may be cut by the bound.
const maxObservedBody = 4 << 20

// checkBackoff: CLIENT-BACKOFF. A request that comes within a second of
// the rate clock after an error answer to the key's request before, on the
// same operation, extends a run; TightLoop of them is a finding.
func (j *Judge) checkBackoff(c *client, x *simulator.Exchange, slot int) {
	if c.id == "" {
		return // requests without a key are not one client's
	}
	st := &c.streaks[slot]
	if st.err != "" {
		c.checked[ruleBackoff]++
		if x.RateTime.Sub(st.at) < time.Second {
			st.n++
			if st.n >= TightLoop {
				// Each request of the run from the TightLoop-th on breaks
				// it; each says how long the run is so far.
				j.find(c, ruleBackoff, x, because{say: sayTightLoop, text: st.what, n: [3]uint64{st.from.ID, uint64(slot), uint64(st.n)}}, &st.from)
			}
		} else {
			st.n = 0
		}
	} else {
		st.n = 0
	}
	st.at, st.err = x.RateTime, errorOf(x)
	if st.err != "" && st.n == 0 {
		st.from, st.what = keptRef(x), st.err
	}
}

// sayTightLoop: text is the error that began the run, n[0] its request,
// n[1] its slot, n[2] the requests of the run so far.
func sayTightLoop(b because) string {
	op := "the feed"
	if b.n[1] == slotVideos {
		op = "tracked videos"
	}
	return fmt.Sprintf("tight loop: after the %s of request #%d the client asked %s again %d times, each within a second of the clock after an error answer (%d in a row is a tight loop): back off between attempts", b.text, b.n[0], op, b.n[2], TightLoop)
}

// stopsWalks reports whether x stopped the key's walks, so that a client
// may leave them (CLIENT-WALK-END): the key is revoked or unknown, the
// answer broke the contract on purpose (Exchange.Breaks: a correct client
// may give up on a server that breaks it), or a 429 refuses the key for
// longer than the rate window (a client may give up rather than wait).
func stopsWalks(x *simulator.Exchange) bool {
	switch {
	case x.Status == http.StatusUnauthorized && (x.Error == simulator.CodeRevokedKey || x.Error == simulator.CodeUnknownKey):
		return true
	case x.Breaks != "":
		return true
	case x.Status == http.StatusTooManyRequests:
		wait, ok := retryAfter(x)
		return ok && wait > schemas.RateWindow
	}
	return false
}

// stopWalks: the key cannot (or need not) go on with its open walks:
// they are cut, not abandoned, and so is a walk of a page whose request
// came before x's (observers may see it after).
func (c *client) stopWalks(x *simulator.Exchange) {
	if x.Time.After(c.stopped) {
		c.stopped = x.Time
	}
	c.cut += len(c.walks)
	for k, w := range c.walks {
		w.cut = true
		c.keepAfter(k, w) // followed on later, it is the same walk
	}
	clear(c.walks)
	c.held = nil
}
