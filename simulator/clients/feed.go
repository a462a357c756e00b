package clients

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/tcmkit/tcmkit/simulator"
)

// walk is a walk of the feed a client began by following a nextCursor,
// open until a page has nextCursor null.
type walk struct {
	seq   uint64 // when it began, in the judge's order
	first rawRef // the request that began it
	last  rawRef // the request whose page holds the cursor it waits on
	pages int
	top   int64 // createdAt of the newest event of the first page it began from
	mark  int64 // down to where the client had the events when it began (0: not known)
	// done: the walk ended (nextCursor null, down to what the client had,
	// or covered by a newer walk that did) and was counted; a client may
	// still follow its cursor on, which continues it. looped: a page's
	// nextCursor led back to a cursor the walk had followed (see
	// followedBefore); laps counts the client's follows back since.
	// cut: the server stopped it (stopsWalks).
	done, looped, cut bool
	laps              int
	// refused says how the server refused the last request that followed
	// the cursor the walk waits on (see refusal); "" when it did not.
	refused string
	// oldest is the createdAt of the last event of its last page, if
	// that page had events.
	oldest int64
	events bool
}

// feedOutcome is what one feed exchange did, for the scenarios.
type feedOutcome struct {
	page     bool   // a 200 with a FeedPage the judge could read
	cursor   uint64 // the cursor asked for (hash); 0 for the first page
	next     uint64 // the page's nextCursor (hash); 0 for null
	began    bool   // the exchange began a walk
	finished bool   // the exchange finished a walk
}

// checkFeed: CLIENT-CURSOR-ISSUED and CLIENT-WALK-END, and the open point
// CLIENT-FIRST-PAGE-AGAIN (noted only).
func (j *Judge) checkFeed(c *client, x *simulator.Exchange) feedOutcome {
	var fo feedOutcome
	c.fed, c.lastFeed = true, x.RateTime
	// The query as journaled (keys redacted): a cursor the server handed
	// out holds no key, so redaction changes only cursors that are not.
	q, problems := simulator.ParseFeedQuery(x.Query)
	issued, early := false, false
	switch {
	case q.Cursors > 1 || (q.Cursors == 1 && q.Cursor == ""):
		// cursor= is not an omitted cursor: "" was never handed out (the
		// contract: omit cursor for the first page); two cursors are
		// not the one nextCursor handed out.
		c.checked[ruleCursor]++
		j.find(c, ruleCursor, x, because{say: sayCursorParams, n: [3]uint64{uint64(q.Cursors)}}, nil)
	case q.Cursor != "":
		fo.cursor = j.hash(q.Cursor)
		c.checked[ruleCursor]++
		issued, early = j.checkCursor(c, x, fo.cursor, len(q.Cursor))
	}
	c.refused = refusal(x, issued && len(problems) == 0)
	if w := c.walks[fo.cursor]; w != nil && issued {
		w.refused = c.refused
	}
	if x.Status != http.StatusOK {
		return fo
	}
	// An injected fault may have cut the body (or only delayed it): what
	// does not read as a page is none.
	next, ok := cursorIn(x.ResponseBody)
	if !ok {
		return fo
	}
	fo.page = true
	if len(next) > 0 {
		fo.next = maphash.Bytes(j.seed, next) // = j.hash(string(next))
		if c.account != "" {
			j.handed.add(fo.next, c.account)
		}
		c.settle(fo.next, x.Time)
	}
	newest, oldest, events := pageSpan(x.ResponseBody)
	switch {
	case q.Cursor == "":
		c.firstPages++
		if events {
			if c.firstTop != 0 && newest > c.firstTop {
				c.prevTop = c.firstTop // the client was given that first page: a later walk may stop there
			}
			c.firstTop = newest
			// A first page that reaches down to what the client had, or
			// the whole feed on one page: it has everything again.
			if (c.complete != 0 && oldest <= c.complete) || len(next) == 0 {
				c.gave(newest, x.Time)
			}
		}
	case (early || issued && c.holds(fo.cursor)) && len(c.held) < maxUnsettled:
		// The page that handed out this cursor has not been walked yet
		// (observers may see a client's pages out of order): its step
		// waits for that page's, so that the walk goes on in order.
		c.held = append(c.held, held{x: keptExchange(x), cursor: fo.cursor, next: fo.next, oldest: oldest, events: events})
		return fo // the pages after it wait for it in turn
	case issued:
		j.stepWalk(c, x, &fo, oldest, events)
	}
	if fo.next != 0 {
		j.release(c, fo.next, x.Time)
	}
	return fo
}

// held is a page whose walk step waits for the step of the page that
// handed out its cursor (see checkFeed).
type held struct {
	x            *simulator.Exchange // its journal entry only (keptExchange)
	cursor, next uint64
	oldest       int64
	events       bool
}

// keptExchange is what a held page keeps of its exchange: the entry, as
// keptRef keeps it, without the bodies and headers.
func keptExchange(x *simulator.Exchange) *simulator.Exchange {
	r := keptRef(x)
	k := &simulator.Exchange{Entry: x.Entry}
	k.Path, k.Query = r.Path, r.Query
	return k
}

// holds reports whether a held page handed out cursor h.
func (c *client) holds(h uint64) bool {
	return slices.ContainsFunc(c.held, func(p held) bool { return p.next == h })
}

// release steps the held pages that the page of a request that arrived
// at t hands out (h), then those that they hand out, in order.
func (j *Judge) release(c *client, h uint64, t time.Time) {
	for {
		i := slices.IndexFunc(c.held, func(p held) bool { return p.cursor == h && !t.After(p.x.Time) })
		if i < 0 {
			return
		}
		p := c.held[i]
		c.held = slices.Delete(c.held, i, i+1)
		fo := feedOutcome{page: true, cursor: p.cursor, next: p.next}
		j.stepWalk(c, p.x, &fo, p.oldest, p.events)
		if p.next != 0 {
			j.release(c, p.next, p.x.Time)
		}
	}
}

// checkCursor judges a cursor (its hash h, its length n) and reports
// whether it was handed to the key's account, or was presented early,
// before the judge saw the page that hands it out (see unsettled).
func (j *Judge) checkCursor(c *client, x *simulator.Exchange, h uint64, n int) (issued, early bool) {
	owner, known := j.handed.owner[h]
	switch {
	case known && owner == c.account && c.account != "":
		return true, false
	case known:
		j.find(c, ruleCursor, x, because{say: sayOtherAccount, text: owner}, nil)
	case j.handed.forgot:
		// Too many cursors were handed out to remember them all: this
		// one may be one of the forgotten. No finding on a guess.
		c.checked[ruleCursor]--
	case len(c.unsettled) < maxUnsettled:
		// Observers see an exchange once its answer is written, so a
		// client that asks again at once (on a new connection) may be
		// judged before the page that handed it this cursor: the
		// verdict waits for that page (see settle).
		c.unsettled = append(c.unsettled, unsettled{h: h, n: n, at: x.Time, ref: keptRef(x)})
		return false, true
	default:
		j.find(c, ruleCursor, x, because{say: sayMadeUp, n: [3]uint64{uint64(n)}}, nil)
	}
	return false, false
}

// unsettled is a cursor a client presented that the judge has not seen
// handed out: made up, unless a page of a request that arrived before
// it hands it out.
type unsettled struct {
	h   uint64
	n   int
	at  time.Time // when the request that presented it arrived
	ref rawRef
}

// settle clears the unsettled cursors that the page of a request that
// arrived at t hands out (h): they were issued before they were used.
func (c *client) settle(h uint64, t time.Time) {
	c.unsettled = slices.DeleteFunc(c.unsettled, func(u unsettled) bool { return u.h == h && !t.After(u.at) })
}

// madeUp is the finding of the client's cursors that are still unsettled:
// no page has handed them out (a live verdict may show one that the page
// on its way to the judge then settles).
func (c *client) madeUp() (f Finding, n int) {
	for _, u := range c.unsettled {
		if n == 0 {
			f = Finding{Requirement: rules[ruleCursor].id, Rule: rules[ruleCursor].must, Request: u.ref.shown(),
				Evidence: sayMadeUp(because{n: [3]uint64{uint64(u.n)}})}
		} else {
			last := u.ref.shown()
			f.Last = &last
		}
		n++
	}
	f.Count = n
	return f, n
}

// sayCursorParams: n[0] is how many cursor parameters the query held.
func sayCursorParams(b because) string {
	if b.n[0] > 1 {
		return fmt.Sprintf("%d cursor parameters: a request passes the one nextCursor it was handed, once", b.n[0])
	}
	return `an empty cursor (cursor= with no value): the server never hands out "", and the first page is asked for by leaving cursor out`
}

// sayOtherAccount: text is the account the cursor was handed to.
func sayOtherAccount(b because) string {
	return fmt.Sprintf("a cursor the server handed to another account (%s), not to this key", b.text)
}

// sayMadeUp: n[0] is the cursor's length.
func sayMadeUp(b because) string {
	return fmt.Sprintf("a cursor of %d characters that the server never handed out: made up, edited or cut (it is not quoted)", b.n[0])
}

// stepWalk moves the walk the page belongs to, or begins one. oldest is
// the createdAt of the page's last event, if it has events.
//
// CLIENT-WALK-END and CLIENT-CURSOR-CYCLE judge the same steps, and never
// ask for opposite things: a walk is open (the client must go on) only
// while its last page leads to a cursor it has not followed; a page that
// leads back to one (a loop, which no conforming server makes) ends the
// walk as the server's doing (cut), and from then on only following the
// loop is judged (CLIENT-CURSOR-CYCLE), never leaving it.
func (j *Judge) stepWalk(c *client, x *simulator.Exchange, fo *feedOutcome, oldest int64, events bool) {
	w := c.walks[fo.cursor]
	switch {
	case w != nil:
		delete(c.walks, fo.cursor)
	case c.after[fo.cursor] != nil:
		// A walk that ended or looped, followed on: the same walk.
		w = c.after[fo.cursor]
		delete(c.after, fo.cursor)
	default:
		j.seq++
		// What the client had when it began: every event down from its
		// complete mark, and the first page it read before this walk's
		// (a walk that reaches down to it stops at events it was given,
		// whatever became of the walks begun from it).
		w = &walk{seq: j.seq, first: keptRef(x), top: c.firstTop, mark: max(c.complete, c.prevTop)}
		c.begun++
		fo.began = true
	}
	c.checked[ruleWalk] = c.begun
	back := c.followedBefore(w, fo.cursor)
	c.follow(w, fo.cursor)
	w.pages++
	w.last = w.first
	if w.pages > 1 {
		w.last = keptRef(x)
	}
	w.oldest, w.events = oldest, events
	if back && w.looped {
		// The client followed the loop back into pages it had read.
		w.laps++
		c.checked[ruleCycle]++
		if w.laps >= CycleLaps {
			j.find(c, ruleCycle, x, because{say: sayCycle, n: [3]uint64{uint64(w.laps)}}, nil)
		}
	}
	switch {
	case fo.next == 0 || w.caughtUp():
		// The end of the feed, or down to what the client already had (a
		// client that syncs reads the new events and stops at those it
		// has): this walk, and every walk begun before it, is done (a
		// newer start covers an older one).
		fo.finished = true
		if !w.done {
			c.finish(w)
		}
		c.keepAfter(fo.next, w)
		return
	case c.followedBefore(w, fo.next):
		// A loop: the walk cannot end by reading on, and the client is to
		// leave it (CLIENT-CURSOR-CYCLE): the server cut it.
		if !w.looped {
			w.looped = true
			c.checked[ruleCycle]++ // the client met a loop: what it does next is judged
			if !w.done && !w.cut {
				c.cut++
			}
		}
		c.keepAfter(fo.next, w)
		return
	case w.done || w.looped || w.cut:
		c.keepAfter(fo.next, w) // read on past its end: not open again
		return
	}
	if !x.Time.After(c.stopped) {
		// The page's request came before the one that stopped the key's
		// walks (observers may see it after): its walk is stopped too.
		c.cut++
		w.cut = true
		c.keepAfter(fo.next, w)
		return
	}
	if o := c.walks[fo.next]; o != nil {
		// Two walks met on the same cursor (a page read twice): one walk.
		o.seq = min(o.seq, w.seq)
		return
	}
	w.refused = "" // it waits on a new cursor
	c.walks[fo.next] = w
	if len(c.walks) > maxOpenWalks {
		var oldest uint64
		var o *walk
		for k, ow := range c.walks { // seqs differ: the oldest is one
			if o == nil || ow.seq < o.seq {
				oldest, o = k, ow
			}
		}
		delete(c.walks, oldest)
		j.find(c, ruleWalk, x, because{say: sayTooMany, n: [3]uint64{o.first.ID, uint64(o.pages)}}, &o.first)
	}
}

// maxTrail bounds the cursors a client's walks remember having followed
// (see followedBefore): a loop longer than that is not seen as one, by
// either rule.
const maxTrail = 128

// trailStep is a cursor (hash) a walk followed.
type trailStep struct {
	cursor uint64
	w      *walk
}

// follow remembers that walk w followed cursor h.
func (c *client) follow(w *walk, h uint64) {
	c.trail[c.trailNext] = trailStep{h, w}
	c.trailNext = (c.trailNext + 1) % len(c.trail)
}

// followedBefore reports whether walk w followed cursor h (among the
// client's last maxTrail follows).
func (c *client) followedBefore(w *walk, h uint64) bool {
	if h == 0 {
		return false
	}
	for _, st := range c.trail {
		if st.w == w && st.cursor == h {
			return true
		}
	}
	return false
}

// keepAfter keeps a walk that is no longer open (done or looped) under the
// cursor that continues it, so that following it on continues the same
// walk rather than beginning one; the oldest goes past maxOpenWalks.
func (c *client) keepAfter(h uint64, w *walk) {
	if h == 0 {
		return
	}
	if c.after == nil {
		c.after = map[uint64]*walk{}
	}
	c.after[h] = w
	if len(c.after) > maxOpenWalks {
		var oldest uint64
		var o *walk
		for k, ow := range c.after {
			if o == nil || ow.seq < o.seq {
				oldest, o = k, ow
			}
		}
		delete(c.after, oldest)
	}
}

// ordinal is 1st, 2nd, 3rd, 4th, ...
func ordinal(n int) string {
	switch {
	case n%100 >= 11 && n%100 <= 13:
		return strconv.Itoa(n) + "th"
	case n%10 == 1:
		return strconv.Itoa(n) + "st"
	case n%10 == 2:
		return strconv.Itoa(n) + "nd"
	case n%10 == 3:
		return strconv.Itoa(n) + "rd"
	}
	return strconv.Itoa(n) + "th"
}

// sayCycle: n[0] is how many times the client followed the loop back.
func sayCycle(b because) string {
	return fmt.Sprintf("cursor cycle followed: a page of this walk led back to a cursor the walk had followed, and the client followed the cycle back %d times (a finding from the %s): a walk must stop at a cursor it has already followed",
		b.n[0], ordinal(CycleLaps))
}

// caughtUp reports whether the walk's last page reaches down to what the
// client had when the walk began.
func (w *walk) caughtUp() bool { return w.events && w.mark != 0 && w.oldest <= w.mark }

// finish ends walk w (no longer among the open ones) and every walk begun
// before it (covered: done too, and counted so).
func (c *client) finish(w *walk) {
	w.done = true
	c.finished++
	for k, o := range c.walks {
		if o.seq < w.seq {
			delete(c.walks, k)
			o.done = true
			c.finished++
			c.keepAfter(k, o)
		}
	}
	c.gave(w.top, w.last.Time)
}

// gave records that the client was given every event down from top by
// the page of a request that arrived at t. Observers may see a client's
// pages out of order: a walk the judge saw begin before that page, but
// that began after it arrived, began with those events, and is done if
// its last page reached down to them.
func (c *client) gave(top int64, t time.Time) {
	if top == 0 {
		return
	}
	c.complete = max(c.complete, top)
	for k, w := range c.walks {
		if w.mark >= top || !w.first.Time.After(t) {
			continue
		}
		w.mark = top
		if w.caughtUp() {
			delete(c.walks, k)
			c.finish(w)
			c.keepAfter(k, w)
		}
	}
}

// sayTooMany: n is the request that began the walk left, and its pages.
func sayTooMany(b because) string {
	return fmt.Sprintf("more than %d walks open at once: the walk begun at request #%d was left after %d %s with a nextCursor pending", maxOpenWalks, b.n[0], b.n[1], plural(int(b.n[1]), "page", "pages"))
}

// abandoned lists the client's open walks that count as abandoned now:
// all of them when final, else those of a client idle for IdleAfter.
func (j *Judge) abandoned(c *client, final bool, now time.Time) (out []Finding, excused int) {
	idle := now.Sub(c.lastFeed)
	if len(c.walks) == 0 || (!final && idle < j.cfg.IdleAfter) {
		return nil, 0
	}
	ws := make([]*walk, 0, len(c.walks))
	for _, w := range c.walks {
		if w.refused != "" || c.refused != "" {
			// The server refused the walk's cursor, or the key, until the
			// client gave up: it could not go on.
			excused++
			continue
		}
		ws = append(ws, w)
	}
	slices.SortFunc(ws, func(a, b *walk) int { return cmp.Compare(a.seq, b.seq) })
	why := "the run ended"
	if !final {
		why = "the key sent no feed request for " + seconds(idle)
	}
	for _, w := range ws {
		first := w.first.shown()
		out = append(out, Finding{
			Requirement: rules[ruleWalk].id, Rule: rules[ruleWalk].must, Request: w.last.shown(), Related: &first, Count: 1,
			Evidence: fmt.Sprintf("began a walk at request #%d and left it after %d %s with a nextCursor pending: %s", w.first.ID, w.pages, plural(w.pages, "page", "pages"), why),
		})
	}
	return out, excused
}

// refusal says how the server refused a feed request so that its key could
// not go on with a walk, "" when it did not: a 400 to a cursor it handed
// out (ownCursor: issued to the account, the query otherwise valid), a
// 401 or a 403, a 5xx, or no answer (the connection closed).
func refusal(x *simulator.Exchange, ownCursor bool) string {
	switch {
	case x.Status == http.StatusBadRequest && ownCursor:
		return "the server answered 400 to the cursor it handed out"
	case x.Status == http.StatusUnauthorized || x.Status == http.StatusForbidden:
		return fmt.Sprintf("the server refused the key (%d)", x.Status)
	case x.Status >= 500:
		return fmt.Sprintf("the server failed (%d)", x.Status)
	case x.Status == 0:
		return "the server closed the connection without an answer"
	}
	return ""
}

// nextCursor reads a FeedPage's nextCursor without decoding the page: the
// member "nextCursor" found from the end (inside a JSON string its quotes
// would be escaped), then a string or null, then the object's end. ok is
// false for a body that is not such a page ("" with ok: null).
func nextCursor(body []byte) (string, bool) {
	next, ok := cursorIn(body)
	return string(next), ok
}

// cursorIn is nextCursor, as bytes of body when the cursor is a plain
// string (as servers write them): the judge hashes it, and copies nothing.
func cursorIn(body []byte) ([]byte, bool) {
	body = bytes.TrimRight(body, " \t\r\n")
	i := bytes.LastIndex(body, []byte(`"nextCursor"`))
	if i < 0 || len(body) == 0 || body[len(body)-1] != '}' || body[0] != '{' {
		return nil, false
	}
	rest := bytes.TrimLeft(body[i+len(`"nextCursor"`):], " \t\r\n")
	if len(rest) == 0 || rest[0] != ':' {
		return nil, false
	}
	value := bytes.TrimSpace(rest[1 : len(rest)-1])
	if string(value) == "null" {
		return nil, true
	}
	// A plain string, as servers write cursors, without decoding.
	if n := len(value); n >= 2 && value[0] == '"' && value[n-1] == '"' && bytes.IndexAny(value[1:n-1], "\\\"") < 0 {
		return value[1 : n-1], true
	}
	var s string
	if json.Unmarshal(value, &s) != nil {
		return nil, false
	}
	return []byte(s), true
}

// pageSpan reads the createdAt of a FeedPage's first (newest) and last
// (oldest) event without decoding the page: an event holds no other
// createdAt, and inside a JSON string the member's quotes would be
// escaped. events is false for a page without events.
func pageSpan(body []byte) (newest, oldest int64, events bool) {
	i, k := indexMember(body, 0), lastMember(body)
	if i < 0 {
		return 0, 0, false
	}
	newest, ok1 := leadingInt(body[i+len(createdAt):])
	oldest, ok2 := leadingInt(body[k+len(createdAt):])
	return newest, oldest, ok1 && ok2
}

const createdAt = `"createdAt":`

// indexMember is the index of the first createdAt member at or after
// from, -1 if none. It looks for the member's rare capital A by
// bytes.IndexByte (vector instructions) rather than for its opening
// quote, which a JSON body is full of (bytes.Index goes byte by byte
// then).
func indexMember(body []byte, from int) int {
	const a = len(`"created`)
	for i := from + a; i < len(body); {
		k := bytes.IndexByte(body[i:], 'A')
		if k < 0 {
			return -1
		}
		i += k
		if start := i - a; start >= from && bytes.HasPrefix(body[start:], []byte(createdAt)) {
			return start
		}
		i++
	}
	return -1
}

// lastMember is the index of the last createdAt member, -1 if none:
// forward searches in a tail of the body that doubles until it holds one
// (the last event is near the end; a backward search goes byte by byte).
func lastMember(body []byte) int {
	for tail := 1024; ; tail *= 2 {
		from, last := max(len(body)-tail, 0), -1
		for i := indexMember(body, from); i >= 0; i = indexMember(body, i+1) {
			last = i
		}
		if last >= 0 || from == 0 {
			return last
		}
	}
}

func leadingInt(b []byte) (int64, bool) {
	b = bytes.TrimLeft(b, " \t\r\n")
	n := 0
	for n < len(b) && n < 19 && b[n] >= '0' && b[n] <= '9' {
		n++
	}
	v, err := strconv.ParseInt(string(b[:n]), 10, 64)
	return v, err == nil
}

// eventIDs decodes the ids of a FeedPage's events, for the scenarios that
// need them.
func eventIDs(body []byte) []string {
	var page struct {
		Events []struct {
			ID string `json:"id"`
		} `json:"events"`
	}
	if json.Unmarshal(body, &page) != nil {
		return nil
	}
	ids := make([]string, len(page.Events))
	for i, e := range page.Events {
		ids[i] = e.ID
	}
	return ids
}
