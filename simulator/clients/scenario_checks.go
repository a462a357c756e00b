package clients

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/tcmkit/tcmkit/simulator"
)

// What each scenario watches (see) and how it judges a client (judge).

func seeRevoked(j *Judge, r *run, c *client, x *simulator.Exchange, o outcome) {
	s := &c.sc
	if s.revoked == nil {
		if x.Status == http.StatusUnauthorized && x.Error == simulator.CodeRevokedKey {
			ref := refOf(x)
			s.revoked, s.met = &ref, true
		}
		return
	}
	if !x.Time.After(s.revoked.Time) {
		return // sent before the 401, observed after it
	}
	s.afterRevoked++
	s.note(x)
}

func judgeRevoked(r *run, c *client) (bool, string) {
	s := &c.sc
	b := fmt.Sprintf("got 401 revoked_api_key at #%d, then sent %d more %s with the revoked key", s.revoked.ID, s.afterRevoked, plural(s.afterRevoked, "request", "requests"))
	if s.afterRevoked > 0 {
		b += " (" + refList(s.refs) + ")"
	}
	return s.afterRevoked <= maxAfterRevoked, b
}

func seeStorm(j *Judge, r *run, c *client, x *simulator.Exchange, o outcome) {
	s := &c.sc
	if o.early.set && o.early.fault != 0 && r.oursID(o.early.fault) {
		s.early++
		s.note(x)
	}
	switch {
	case r.ours(x):
		s.met = true
		s.hits++
	case s.met && s.okThen == nil && x.Operation == simulator.OpFeed && x.Status == http.StatusOK:
		ref := refOf(x)
		s.okThen = &ref
	}
}

func judgeStorm(r *run, c *client) (bool, string) {
	s := &c.sc
	b := fmt.Sprintf("met %d injected %s (Retry-After: %d); ", s.hits, plural(s.hits, "429", "429s"), stormRetryAfter)
	if s.early == 0 {
		b += "waited each out"
	} else {
		b += fmt.Sprintf("asked again too soon %d %s (%s)", s.early, plural(s.early, "time", "times"), refList(s.refs))
	}
	if s.okThen != nil {
		b += fmt.Sprintf("; got its page at #%d", s.okThen.ID)
	} else {
		b += "; has not got a page since"
	}
	return s.early == 0 && s.okThen != nil, b
}

func seeBurst(j *Judge, r *run, c *client, x *simulator.Exchange, o outcome) {
	s := &c.sc
	if x.Operation != simulator.OpVideos {
		return
	}
	if s.failing {
		gap := x.RateTime.Sub(s.failAt)
		if gap <= 0 {
			s.zero++
		}
		if gap < s.pause {
			s.less++
		}
		s.pause = gap
		if len(s.gaps) < 16 {
			s.gaps = append(s.gaps, gap)
		}
	}
	switch {
	case r.ours(x) || (s.met && x.Status >= 500):
		s.met, s.failing, s.failAt = true, true, x.RateTime
		s.hits++
	default:
		s.failing, s.pause = false, 0
		if s.met && s.okThen == nil && x.Status == http.StatusOK {
			ref := refOf(x)
			s.okThen = &ref
		}
	}
}

func judgeBurst(r *run, c *client) (bool, string) {
	s := &c.sc
	b := fmt.Sprintf("met %d %s", s.hits, plural(s.hits, "500", "500s"))
	if len(s.gaps) > 0 || s.zero+s.less > 0 {
		var gs []string
		for _, g := range s.gaps {
			gs = append(gs, seconds(g))
		}
		b += "; retried after " + strings.Join(gs, ", ")
	}
	switch {
	case s.zero > 0:
		b += fmt.Sprintf(" (%d at once: no pause)", s.zero)
	case s.less > 0:
		b += " (a pause shrank: no backoff)"
	}
	if s.okThen != nil {
		b += fmt.Sprintf("; got its videos at #%d", s.okThen.ID)
	} else {
		b += "; then stopped asking (gave up)"
	}
	return s.zero == 0 && s.less == 0, b
}

func seeSlow(j *Judge, r *run, c *client, x *simulator.Exchange, o outcome) {
	s := &c.sc
	// Pending from its arrival until its answer began to go out: the
	// end of the request (Micros) may come after the client had the
	// answer and sent its next request.
	to := x.Answered
	if to.IsZero() {
		to = x.Time.Add(time.Duration(x.Micros) * time.Microsecond)
	}
	sp := span{from: x.Time, to: to, slow: r.ours(x)}
	if len(s.spans) < 64 || sp.slow {
		sp.ref = refOf(x) // shown only when kept
	}
	if len(s.spans) < 64 {
		s.spans = append(s.spans, sp)
	}
	if sp.slow {
		s.met = true
		s.hits++
		if x.ClientGone {
			s.gaveUp = append(s.gaveUp, sp.ref)
		}
	}
}

func judgeSlow(r *run, c *client) (bool, string) {
	s := &c.sc
	var piled []Ref
	for _, slow := range s.spans {
		if !slow.slow {
			continue
		}
		for _, o := range s.spans {
			if o.ref.ID != slow.ref.ID && o.from.After(slow.from) && o.from.Before(slow.to) {
				piled = append(piled, o.ref)
			}
		}
	}
	b := fmt.Sprintf("met %d %s slowed by %s", s.hits, plural(s.hits, "answer", "answers"), slowDelay)
	if len(s.gaveUp) == 0 {
		b += "; waited for each"
	} else {
		b += "; gave up waiting on " + refList(s.gaveUp)
	}
	if len(piled) > 0 {
		b += fmt.Sprintf("; sent %d other %s while one was pending (%s)", len(piled), plural(len(piled), "request", "requests"), refList(piled))
	} else {
		b += "; sent nothing else meanwhile"
	}
	return len(s.gaveUp) == 0 && len(piled) == 0, b
}

// keepBefore keeps the events the target has when the new ones come, and
// lets go of every other client's.
func (j *Judge) keepBefore(target *client) {
	for _, c := range j.clients {
		if c != target {
			j.tracked -= len(c.sc.seen)
			c.sc.seen = nil
		}
	}
	target.sc.met = true
}

// track remembers the events of a feed page as delivered to c, in a phase
// (1: before the new events came, 2: after).
func (j *Judge) track(c *client, x *simulator.Exchange, phase uint8) []uint64 {
	ids := eventIDs(x.ResponseBody)
	hs := make([]uint64, len(ids))
	if c.sc.seen == nil {
		c.sc.seen = map[uint64]uint8{}
	}
	for i, id := range ids {
		hs[i] = j.hash(id)
		if _, ok := c.sc.seen[hs[i]]; !ok && j.tracked < maxTrackedEvents {
			c.sc.seen[hs[i]] = phase
			j.tracked++
		}
	}
	c.sc.delivered += len(ids)
	return hs
}

func seeEvents(j *Judge, r *run, c *client, x *simulator.Exchange, o outcome) {
	s := &c.sc
	if !o.feed.page {
		return
	}
	var had bool
	for _, h := range j.track(c, x, 2) {
		had = had || s.seen[h] == 1
	}
	if o.feed.cursor == 0 {
		s.reading = true
	} else if !s.reading || o.feed.cursor != s.chain {
		return
	}
	if s.covered == nil && (had || o.feed.next == 0) {
		ref := refOf(x)
		s.covered = &ref
	}
	s.chain = o.feed.next
}

func judgeEvents(r *run, c *client) (bool, string) {
	s := &c.sc
	finished := true
	for _, w := range c.walks {
		if w.seq <= s.walkSeq {
			finished = false
		}
	}
	var b []string
	if finished {
		b = append(b, "finished the walk that was open when the new events came")
	} else {
		b = append(b, "left the walk that was open when the new events came")
	}
	if s.covered != nil {
		b = append(b, fmt.Sprintf("read the first page again down to events it had (#%d)", s.covered.ID))
	} else {
		b = append(b, "never read the first page again down to events it had: it missed the new events")
	}
	b = append(b, fmt.Sprintf("%d events delivered, %d distinct (a first page read again repeats some: a client keeps each once, by id)", s.delivered, len(s.seen)))
	return finished && s.covered != nil, strings.Join(b, "; ")
}

func seeMalformed(j *Judge, r *run, c *client, x *simulator.Exchange, o outcome) {
	s := &c.sc
	if x.Operation != simulator.OpFeed {
		return
	}
	if r.ours(x) {
		ref := refOf(x)
		s.met, s.cut, s.cutAt = true, &ref, o.feed.cursor
		return
	}
	// The next request by arrival: one sent before the cut may be
	// observed after it (observers see an exchange once it is answered).
	if s.cut != nil && s.cutNext == nil && x.Time.After(s.cut.Time) {
		ref := refOf(x)
		s.cutNext, s.again = &ref, o.feed.cursor == s.cutAt
	}
}

func judgeMalformed(r *run, c *client) (bool, string) {
	s := &c.sc
	switch {
	case s.cutNext == nil:
		return false, fmt.Sprintf("never asked again after the body cut at #%d", s.cut.ID)
	case s.again:
		return true, fmt.Sprintf("asked for the same page again at #%d after the body cut at #%d", s.cutNext.ID, s.cut.ID)
	}
	return false, fmt.Sprintf("asked for another page at #%d: the page cut at #%d was never read", s.cutNext.ID, s.cut.ID)
}

func (r *run) oursID(id int) bool {
	for _, f := range r.faults {
		if f == id {
			return true
		}
	}
	return false
}

func refList(refs []Ref) string {
	var ids []string
	for _, r := range refs {
		ids = append(ids, fmt.Sprintf("#%d", r.ID))
	}
	return strings.Join(ids, ", ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
