package simulator

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/tcmkit/tcmkit/simulator/world"
)

// Every store and every answer of the simulator is bounded in bytes, not
// only in entries: what a client sends (a 60 KB URL, a body of 32,000
// numbers, a query of 15,000 parameters, a 262 MB import) is cut before
// it is kept or echoed, and the cut is said.

const (
	// maxJournalText bounds the path and the query as the journal and the
	// log keep them, cut after redaction.
	maxJournalText = 1024
	// maxRedactText bounds what of a path, a query or a body is searched
	// for keys in their encodings: a longer text is cut to it first (and
	// then, for the journal, to maxJournalText, far from where it was
	// cut: a key cut in two there is gone with what follows), so that a
	// 60 KB URL costs no more than a 16 KB one.
	maxRedactText = 16 << 10
	// journalBudget bounds the bytes the journal holds, its texts and
	// what each entry costs besides (entryBytes): past it the oldest
	// entries go, as when the ring is full.
	journalBudget = 4 << 20
	entryBytes    = 512
	// maxErrorMessage bounds an ErrorBody's message.
	maxErrorMessage = 1024
	// maxListed bounds a list of problems in an error answer (the feed's
	// query problems, the videos body's violations); the rest are counted.
	maxListed = 20
)

// cutText cuts s to at most max bytes, on a character boundary, and says
// how many bytes were cut.
func cutText(s string, max int) string { return cutOf(s, max, len(s)) }

// cutOf cuts s, the first bytes of a text of whole bytes, to max.
func cutOf(s string, max, whole int) string {
	if whole <= max {
		return s
	}
	cut := min(max, len(s))
	for cut > 0 && cut < len(s) && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…[" + strconv.Itoa(whole-cut) + " bytes cut]"
}

// head is the start of s that is searched for keys (maxRedactText).
func head(s string) string { return s[:min(len(s), maxRedactText)] }

// capViolations keeps the first maxListed items of a list and says how
// many it left out.
func capViolations[T any](list []T) ([]T, int) {
	if len(list) <= maxListed {
		return list, 0
	}
	return list[:maxListed:maxListed], len(list) - maxListed
}

// journalURL is a request's path and query as the journal and the log
// keep them: keys and the control token redacted, then cut. clean: the
// query is known to hold no key nor piece of one (issuedFeedQuery), so it
// is not searched. found says whether a key was (the control token is not
// one: its place in a URL is no client rule).
func (s *Server) journalURL(path, rawQuery string, clean bool) (string, string, bool) {
	p, q, found := head(path), head(rawQuery), false
	if !clean {
		p, q, found = s.redactURL(p, q)
		if s.tokenRed != nil {
			p, q = s.tokenRed.String(p), s.tokenRed.String(q)
		}
	}
	return cutOf(p, maxJournalText, len(p)+len(path)-len(head(path))), cutOf(q, maxJournalText, len(q)+len(rawQuery)-len(head(rawQuery))), found
}

// cost is what an entry counts against journalBudget.
func (e *journaled) cost() int {
	return entryBytes + len(e.Path) + len(e.Query) + len(e.ContentType) + len(e.Error) + len(e.Account)
}

// keepBudget drops the oldest entries while the journal holds more than
// its budget, the newest always kept. The caller holds j.mu.
func (j *journal) keepBudget() {
	for j.bytes > journalBudget && j.count > 1 {
		old := &j.ring[(j.next-j.count+len(j.ring))%len(j.ring)]
		j.bytes -= old.cost()
		*old = journaled{}
		j.count--
		j.dropped++
	}
}

// The control API's stores are bounded too: injected faults, which every
// API request looks through, and the keyring, which keeps every revoked
// key's hash (an export carries them all).
const (
	// MaxFaults bounds the injected faults held at once.
	MaxFaults = 256
	// MaxKeys bounds the keys a keyring holds, revoked ones included.
	MaxKeys = 10_000
)

// Errors of the control API's bounds: a 409 each (writeLimit).
var (
	errTooManyFaults = fmt.Errorf("the simulator holds %d injected faults, its limit: DELETE %sfaults removes them", MaxFaults, ControlPrefix)
	errTooManyKeys   = fmt.Errorf("the simulator holds %d keys (revoked ones included), its limit: POST %sreset or PUT %sworld starts again", MaxKeys, ControlPrefix, ControlPrefix)
)

// limitAnswer is the answer to a bound of the control API reached, if err
// is one.
func limitAnswer(err error) (answer, bool) {
	if errors.Is(err, errTooManyFaults) || errors.Is(err, errTooManyKeys) {
		return errorAnswer(http.StatusConflict, CodeLimitReached, err.Error(), nil), true
	}
	return answer{}, false
}

// keyCount is how many keys the keyring holds.
func (k *keyring) keyCount() int {
	k.mu.RLock()
	defer k.mu.RUnlock()
	return len(k.byHash)
}

// importLimits checks what an import holds beyond the world: its time in
// the range of the clock's arithmetic, and nothing after the export but
// its closing brace.
func importLimits(now int64, rest io.Reader) error {
	if !world.TimeInRange(now) {
		return fmt.Errorf("now %d is out of range: times are epoch milliseconds from %d to %d (%s)", now, world.MinTime, world.MaxTime, world.MaxTimeText)
	}
	br := bufio.NewReader(rest)
	closed := false
	for {
		c, err := br.ReadByte()
		switch {
		case err == io.EOF && closed:
			return nil
		case err == io.EOF:
			return errors.New(`the export ends without its closing "}"`)
		case err != nil:
			return err
		case c == '}' && !closed:
			closed = true
		case c != ' ' && c != '\t' && c != '\n' && c != '\r':
			return errors.New(`data after the export: "world" must be its last member, and nothing may follow its closing "}"`)
		}
	}
}

// importClock refuses an import whose clock (the export's now) is before
// its world's time, or further after it than a clock advance may go
// (MaxAdvance): the polls in between would run on the next request.
func importClock(now, worldNow int64) error {
	if now < worldNow || now-worldNow > MaxAdvance.Milliseconds() {
		return fmt.Errorf("now %d is out of range: want the world's now (%d) to %d, at most %s after it (as far as POST %sclock/advance goes)",
			now, worldNow, worldNow+MaxAdvance.Milliseconds(), MaxAdvance, ControlPrefix)
	}
	return nil
}

// advanceLimit refuses an advance that would take the clock past
// world.MaxTime.
func (s *Server) advanceLimit(d time.Duration) error {
	if now := s.clock.Now().UnixMilli(); now > world.MaxTime-d.Milliseconds() {
		return fmt.Errorf("advancing %s would take the clock past %s (world.MaxTime), the latest time it keeps", d, world.MaxTimeText)
	}
	return nil
}

// clampAdvance keeps an advance of the Go API (Server.Advance) from taking
// the clock past world.MaxTime; the control API refuses one (advanceLimit).
func (s *Server) clampAdvance(d time.Duration) time.Duration {
	left := max(world.MaxTime-s.clock.Now().UnixMilli(), 0) // ms
	if left >= d.Milliseconds() {
		return d
	}
	return time.Duration(left) * time.Millisecond
}
