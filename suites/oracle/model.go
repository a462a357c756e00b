package oracle

import (
	"fmt"
	"maps"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"golang.org/x/text/unicode/norm"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/schemas/catalogue"
	"github.com/tcmkit/tcmkit/schemas/jsondoc"
	"github.com/tcmkit/tcmkit/schemas/redact"
	"github.com/tcmkit/tcmkit/suites/client"
)

// The model of state: what the run has seen, so that an answer that
// contradicts an earlier one fails, with both as evidence. It rules out
// only what the contract rules out: new events arrive at the head of a
// feed and none goes away; an event id names one event; the current state
// inside an event may move on, and so may a video's title unless the
// target's clock stood still.

// Bounds of what the model keeps, whatever a target sends.
const (
	maxKnownEvents = 200_000
	maxWalksKept   = 3
)

type model struct {
	// badAnswered: when feed requests of a bad credential were served or
	// throttled (a limiter may count them as some valid key's), the
	// latest maxBadAnswered
	badAnswered []time.Time
	// issued: a cursor → the key it was handed to → the page that did.
	issued map[string]*issue
	byKey  map[string]map[string]*issue
	// served and refused: a valid key's feed answered 200, or 401.
	served, refused map[string]bool
	// planAnswer: a free key's tracked videos, asked in the form the
	// contract shows (Bearer <key>), answered this status: whether a 401
	// to another form of it refuses the form or the plan.
	planAnswer map[string]int
	// refusedAlone: a parameter=value the target refused with 400 when it
	// was the only open one.
	refusedAlone map[string]bool
	events       map[string]seenEvent
	published    map[string]published
	videosSeen   map[string]bool
	keys         map[string]*keyState
	forms        map[string]map[Op]formChoice
	// refusedLongest: a valid body of fewer than 20 ids with an id of 32
	// characters was refused; refusedOne: one short id was. Which bound a
	// 400 at two bounds at once refused. servedOne: a valid body of one
	// id was served, so a body of one id refused is not the count's.
	refusedLongest, refusedOne, servedOne bool
	// sharedAt: when a run's key was last throttled that only all keys'
	// traffic together explains
	sharedAt time.Time
	// shared: a run's key that sent nothing in a minute was throttled
	// while other keys filled it: a limiter shared across keys, which
	// explains 429s to bad keys too
	shared bool
	// moment counts the oracle's sendings and judgings, in order
	moment int
}

type seenEvent struct {
	print map[string]string
	resp  *client.Response
}

type issue struct {
	// shared: the same cursor was handed to another key too.
	shared bool
	token  string
	resp   *client.Response
	lastAt int64
	hasAt  bool
	lastID string // the page's last event, where its cursor must resume
	chain  *node
	events int
}

// node is one page of a cursor chain, linked to the page before it.
type node struct {
	parent *node
	resp   *client.Response
	ids    map[string]int64 // id → createdAt
	prints map[string]map[string]string
	root   *node
	head   int64 // the root page's first event's createdAt
	hasHd  bool
	at     time.Time // when the page came, by the target's clock
	// times and chans: its events' createdAt in order, and channels
	times []int64
	chans []string
	// troubled: the walk's cursors repeated or skipped back so far;
	// short is this page, when it held fewer events than asked.
	troubled bool
	short    *shortPage
	// size and sizeRule: the events the page's query asked for (0: not
	// known) and the rule that says so
	size     int
	sizeRule catalogue.ID
	// members: the oldest members_only_changed of each video on the page
	members map[string]members
	// reportedShort: a later whole walk showed that this short last page
	// was none (endedShort), once
	reportedShort bool
}

// membersAbove is the oldest members_only_changed of a video on this page
// or the nearest page before it that shows one.
func (n *node) membersAbove(video string) (members, bool) {
	for x := n; x != nil; x = x.parent {
		if m, ok := x.members[video]; ok {
			return m, true
		}
	}
	return members{}, false
}

// sameEvents reports whether a page shows exactly this page's events.
func (n *node) sameEvents(evs []event) bool {
	if len(evs) != len(n.ids) {
		return false
	}
	for _, e := range evs {
		if _, ok := n.ids[e.id]; !ok {
			return false
		}
	}
	return true
}

func (n *node) has(id string) *node {
	for x := n; x != nil; x = x.parent {
		if _, ok := x.ids[id]; ok {
			return x
		}
	}
	return nil
}

// walk is a whole walk of a key's feed: a chain of pages from a first page
// to a null nextCursor.
type walk struct {
	start, end int // the requests' numbers of its first and last page
	// unordered: a page of it, or a boundary, not newest first
	unordered bool
	head      int64
	hasHead   bool
	oldest    int64
	events    map[string]evAt
	pages     []*node
}

type evAt struct {
	at   int64
	page *node
}

type keyState struct {
	ids map[string]bool
	// firstSeen: the request that first showed an event id to the key
	firstSeen map[string]int
	channels  map[string]bool
	walks     []*walk
	walkChans map[string]bool // channels of its whole walks
	videos    map[string]*videoFact
	// servedTo: the video ids the key was served as VideoEntries, each
	// with the answer that served it first
	servedTo map[string]*client.Response
	sends    []send
	promise  map[Op]*promise
	admitted []time.Time // feed requests admitted
	exceeded bool
	// throttledAt: the key's last feed answer, when it was a 429;
	// throttledFull: the key's window may have been full then (the run's
	// count of it was 20 or more, or unknown)
	throttledAt   *client.Response
	throttledTime time.Time
	throttledFull bool
	// sent: the key's requests as they were sent, their numbers and when
	sent []sending
	// throttles: the key's feed 429s of the last windows, each with the
	// feed requests admitted since (sent once it came back); the last of
	// a run of 429s with nothing admitted between stands for the run
	throttles []*throttle
	// firstAt: when the run first sent on the key
	firstAt time.Time
	// own: what the sequence that owns the key now said of its window
	// (Oracle.Own), nil when none does
	own *ownership
	// ignoresLimit: a page of a limit of 1 to 200 held the default 50
	// events, more than asked
	ignoresLimit bool
	// shortBy: a cursor → the short pages that handed it out, not yet
	// judged; continued: a cursor → the events of the first page read with
	// it that showed events, its walk in no trouble. A cursor is a
	// position: two pages (of two limits) may hand out the same one, and
	// the chain follows the first; a short page whose cursor led on to
	// events its own walk had not shown was not the last, whichever chain
	// the page read with it joined.
	shortBy   map[string][]pendingShort
	continued map[string][]string
	// turns: the spans in which the key was admitted more feed requests
	// than a limiter admits unless a fixed window turned over (turnover)
	turns []turnSpan
}

// pendingShort is a short page that handed out a cursor, and its page in
// its walk's chain.
type pendingShort struct {
	short *shortPage
	page  *node
}

// leadsOn reports whether events ids (shown by a page read with the short
// page's cursor) continue its walk: some, none of them shown by its
// chain (a cursor that leads back to them is the walk's trouble, not the
// page's size).
func (ps pendingShort) leadsOn(ids []string) bool {
	if ps.page.troubled || len(ids) == 0 {
		return false
	}
	for _, id := range ids {
		if ps.page.has(id) != nil {
			return false
		}
	}
	return true
}

type send struct {
	at     time.Time
	op     Op
	status int
	seq    int
}

// ownership is a sequence's word on a key's window (Oracle.Own): from the
// oracle's event on, the run is the key's only client, and the window had
// room for room more requests then.
type ownership struct {
	event, room int
	at          time.Time // when the owner took the key, by Now
}

type promise struct {
	after time.Time
	wait  time.Duration // what its Retry-After said
	index int           // the 429's place in sends
	resp  *client.Response
	// exclusive: the key's window was the run's alone when the 429 came
	exclusive bool
}

type videoFact struct {
	publishedAt string
	channel     string
	// title is the title the latest change the feed showed settled on
	// (title_changed, a concluded A/B test); settled false while a test
	// rotates it.
	title    string
	titleAt  int64
	settled  bool
	hasTitle bool
	// superseded are titles a change the feed showed replaced
	superseded map[string]bool
	learned    time.Time
	resp       *client.Response
}

type formChoice struct {
	accepted bool
	resp     *client.Response
}

func (m *model) init() {
	m.issued = map[string]*issue{}
	m.byKey = map[string]map[string]*issue{}
	m.served, m.refused, m.refusedAlone = map[string]bool{}, map[string]bool{}, map[string]bool{}
	m.planAnswer = map[string]int{}
	m.events, m.videosSeen, m.published = map[string]seenEvent{}, map[string]bool{}, map[string]published{}
	m.keys, m.forms = map[string]*keyState{}, map[string]map[Op]formChoice{}
}

func (m *model) key(token string) *keyState {
	k := m.keys[token]
	if k == nil {
		k = &keyState{ids: map[string]bool{}, firstSeen: map[string]int{}, channels: map[string]bool{}, walkChans: map[string]bool{}, videos: map[string]*videoFact{}, servedTo: map[string]*client.Response{}, promise: map[Op]*promise{},
			shortBy: map[string][]pendingShort{}, continued: map[string][]string{}}
		m.keys[token] = k
	}
	return k
}

// requestSeen keeps what a request of a key tells: its window, the
// Retry-After it was promised, the form of credential the target accepts,
// and the parameters it refuses.
func (m *model) requestSeen(j *judging, statusOK bool) {
	st := j.resp.Status
	if j.op == Feed && j.plan != "" {
		switch st {
		case http.StatusOK:
			m.served[j.token] = true
		case http.StatusUnauthorized:
			m.refused[j.token] = true
		}
	}
	if statusOK && j.op == Feed && st == http.StatusBadRequest && len(j.q.open) == 1 && strings.Contains(j.detailsText(), j.q.open[0]) {
		m.refusedAlone[paramValue(j.req.Query, j.q.open[0])] = true
	}
	if j.op == Videos && j.plan == PlanFree && !j.otherForm() && (st == http.StatusForbidden || st == http.StatusUnauthorized) {
		m.planAnswer[j.token] = st
	}
	if j.op == Videos && j.plan == PlanPro && st == http.StatusBadRequest && j.vb.verdict == valid {
		m.refusedLongest = m.refusedLongest || j.vb.atLen && !j.vb.atCount
		m.refusedOne = m.refusedOne || len(j.vb.ids) == schemas.MinVideoIDs && !j.vb.atLen
	}
	if j.op == Videos && j.plan == PlanPro && st == http.StatusOK && j.vb.verdict == valid && len(j.vb.ids) == schemas.MinVideoIDs {
		m.servedOne = true
	}
	if statusOK && j.cred == CredEither && (j.op == Feed || j.op == Videos) {
		m.form(j)
	}
	if j.cred.bad() && j.op == Feed && (st == http.StatusOK || st == http.StatusTooManyRequests) {
		m.badAnswered = append(m.badAnswered, j.at)
		if len(m.badAnswered) > maxBadAnswered {
			m.badAnswered = m.badAnswered[1:]
		}
	}
	if j.plan == "" || j.cred.bad() || j.op == Other || j.op == FeedHead || !statusOK {
		return // only a valid key has a window
	}
	m.window(j)
}

// form: a form of a valid key the contract leaves open is accepted on both
// operations or refused on both.
func (m *model) form(j *judging) {
	sig := strings.ReplaceAll(strings.Join(j.req.Values("Authorization"), "\n"), j.token, "<"+string(j.plan)+" key>")
	accepted := j.resp.Status != http.StatusUnauthorized
	if j.resp.Status == http.StatusTooManyRequests {
		return // says nothing of the key
	}
	choices := m.forms[sig]
	if choices == nil {
		choices = map[Op]formChoice{}
		m.forms[sig] = choices
	}
	for op, c := range choices {
		if op != j.op && c.accepted != accepted {
			verb := map[bool]string{true: "accepted", false: "refused with 401"}
			j.fail(catalogue.AuthValid, "", fmt.Sprintf("one answer to one credential: the target %s the same Authorization (%s) on %s", verb[c.accepted], j.redactedForm(sig), op),
				fmt.Sprintf("%s here", verb[accepted]), c.resp)
			return
		}
	}
	if _, ok := choices[j.op]; !ok {
		choices[j.op] = formChoice{accepted: accepted, resp: j.resp}
	}
}

func (j *judging) redactedForm(sig string) string {
	return strings.ReplaceAll(sig, "\n", " and ")
}

// window keeps a valid key's requests, and judges its 429s and what it
// admitted against the limit.
func (m *model) window(j *judging) {
	k := m.key(j.token)
	at := j.at
	st := j.resp.Status
	defer func() { k.sends = append(k.sends, send{at: at, op: j.op, status: st, seq: j.resp.Seq}) }()
	if k.firstAt.IsZero() {
		k.firstAt = at
	}
	// kept: the first request of the key since its 429, sent (not only
	// answered: the clock moves while a request is out) after waiting what
	// Retry-After said, on a window that was the run's meanwhile
	p := k.promise[j.op]
	kept := p != nil && p.index == len(k.sends)-1 && !k.sentAt(j.resp.Seq, at).Before(p.after) && p.exclusive && j.exclusive(k) && !k.sentBetween(p.resp.Seq, j.resp.Seq)
	delete(k.promise, j.op)
	throttled := k.throttledAt
	if j.op == Feed {
		k.throttledAt = nil
		if st == http.StatusTooManyRequests {
			k.throttledAt, k.throttledTime = j.resp, at
			n, known := k.inWindow(j.resp.Seq, k.sentAt(j.resp.Seq, at).Add(-schemas.RateWindow-slack))
			k.throttledFull = !known || n >= schemas.FeedRequestsPerMinute
		}
	}
	if st == http.StatusTooManyRequests {
		if d, err := client.ParseRetryAfter(j.resp.Header.Get("Retry-After"), client.ServerTime(j.resp.Header, at)); err == nil {
			k.promise[j.op] = &promise{after: at.Add(d), wait: d, index: len(k.sends), resp: j.resp, exclusive: j.exclusive(k)}
		}
		if j.op == Feed && (j.o.opt.Exclusive || k.ownedFor(j.resp.Seq)) {
			m.allows20(j, k)
		}
		if kept && !j.o.drifted() && !m.limiterAcrossKeys(j) {
			// (after allows20: a limiter across keys it found may hold the
			// key for others' traffic, RATE-PER-KEY's)
			j.fail(catalogue.RateRetryAfter, "", fmt.Sprintf("not 429: the key waited %s, what the 429 before said, and sent nothing meanwhile", p.wait.Round(time.Millisecond)),
				"status 429 again", p.resp)
		}
		if j.op == Feed {
			k.throttled(j, at)
		}
		return
	}
	if j.op == Feed && st == http.StatusOK {
		if j.o.opt.Exclusive && throttled != nil && k.sentAt(throttled.Seq, k.throttledTime).Equal(at) && !slices.Equal(throttled.Request.Values("Authorization"), j.req.Values("Authorization")) && !k.exceeded && !j.o.drifted() {
			// no time passed since the key's feed 429, and the key came
			// in another form of its Authorization: a limiter that serves
			// it now counts the forms apart
			k.exceeded = true
			j.fail(catalogue.RateLimit429, "", "429: the key's feed was throttled at this very moment, and no time passed",
				fmt.Sprintf("status %d with Authorization %q", st, redactKey(strings.Join(j.req.Values("Authorization"), ", "), j.token)), throttled)
		}
		// counted when it was sent, the nearest the run knows to when the
		// target counted it (an answer may come long after), in order:
		// every page, first, cursor or last, is a request the limit counts
		sent := k.sentAt(j.resp.Seq, at)
		i, _ := slices.BinarySearchFunc(k.admitted, sent, func(a, b time.Time) int { return a.Compare(b) })
		k.admitted = slices.Insert(k.admitted, i, sent)
		m.admittedBound(j, k)
		m.afterThrottle(j, k)
		m.turnover(j, k)
	}
}

// limiterAcrossKeys reports whether a 429 to a request of no valid key may
// be a limiter's that counts across keys: one was seen, or a run's key
// was throttled in the minute before for what only all keys' traffic
// explains. A request that carries a valid key elsewhere (the query, a
// cookie) is no such request: a 429 there says the key was read.
func (m *model) limiterAcrossKeys(j *judging) bool {
	if j.keyElsewhere() {
		return false
	}
	return m.shared || !m.sharedAt.IsZero() && j.at.Sub(m.sharedAt) <= schemas.RateWindow+slack
}

// redactKey names an Authorization value without its key.
func redactKey(auth, token string) string {
	if token == "" {
		return auth
	}
	return strings.ReplaceAll(auth, token, "<key>")
}

// sentBetween reports a request of the key sent after request a and
// before request b (answered or not yet).
func (k *keyState) sentBetween(a, b int) bool {
	for _, x := range k.sent {
		if x.seq > a && x.seq < b {
			return true
		}
	}
	return false
}

// sending is a request of a key as it was sent: its number in the run,
// the target's time then, and its place among the oracle's events (what
// was sent after an answer came back).
type sending struct {
	seq   int
	at    time.Time
	event int
}

// sentEvent is the oracle's event at which the key's request number seq
// was sent, 0 when its sending was not seen.
func (k *keyState) sentEvent(seq int) int {
	for i := len(k.sent) - 1; i >= 0; i-- {
		if k.sent[i].seq == seq {
			return k.sent[i].event
		}
	}
	return 0
}

// sentAt is when the key's request number seq was sent; answered when
// its sending was not seen.
func (k *keyState) sentAt(seq int, answered time.Time) time.Time {
	for i := len(k.sent) - 1; i >= 0; i-- {
		if k.sent[i].seq == seq {
			return k.sent[i].at
		}
	}
	return answered
}

// slack is the clock's uncertainty around a window's edge.
const slack = time.Second

// allows20: a feed 429 on a run's own key while the key sent fewer than 20
// requests in the last minute (any operation: whether they share the limit
// is open) breaks RATE-ALLOWS-20, or RATE-PER-KEY when other keys' traffic
// filled a minute. A key a sequence owns (Oracle.Own) has the window the
// sequence said: throttled while another owned key is, after filling its
// window, it is throttled for that key's traffic (RATE-PER-KEY), otherwise
// for its own count (RATE-ALLOWS-20), whatever the other keys sent.
func (m *model) allows20(j *judging, k *keyState) {
	// the minute before the 429's sending: the target decided it then or
	// later, and the clock may move before the run reads the answer
	from := k.sentAt(j.resp.Seq, j.at).Add(-schemas.RateWindow - slack)
	n, known := k.inWindow(j.resp.Seq, from)
	owned := k.ownedFor(j.resp.Seq)
	if n >= schemas.FeedRequestsPerMinute || m.badAnsweredSince(from) {
		// (a bad credential served or throttled in that minute, another
		// case of the key, a quoted key, may have been counted as this
		// key: its AUTH rule's finding, and the run's count of the key's
		// window says nothing)
		return
	}
	others := 0
	for t, ok := range m.keys {
		if t != j.token {
			others += countSince(ok.sends, from)
		}
	}
	if j.o.drifted() {
		return // the target's clock moved by itself: its windows are not the run's
	}
	if n+others >= schemas.FeedRequestsPerMinute {
		// all keys' traffic fills a window: a 429 to a request of no key in
		// the minute after may be the same limiter's (so even when the
		// key's own window may hold what was sent before the run)
		m.sharedAt = j.at
	}
	if !known {
		return // the key's window may still hold what was sent before the run (a run just before)
	}
	if other := m.throttledNow(j); owned && other != nil {
		// a key with room refused while another is throttled: a limiter
		// across keys, which explains 429s to other keys too
		m.shared = true
		j.fail(catalogue.RatePerKey, "", fmt.Sprintf("the request served: the limit counts per key, and the key sent %d request(s) in the minute before it, fewer than %d, while another key the run holds was throttled for its own traffic", n, schemas.FeedRequestsPerMinute),
			fmt.Sprintf("status 429 while key %s was throttled", redact.Form(other.token)), other.resp)
		return
	}
	switch {
	case n == 0 && others >= schemas.FeedRequestsPerMinute:
		// a key that sent nothing in a minute throttled while others
		// filled it: only a limiter across keys does that
		m.shared = true
		j.fail(catalogue.RatePerKey, "", "the request served: the limit counts per key, and the key sent nothing in the minute before it",
			fmt.Sprintf("status 429; the run's other keys sent %d request(s) in that minute", others))
		return
	case owned:
		j.fail(catalogue.RateAllows20, "", fmt.Sprintf("the request served: the key sent %d request(s) in the minute before it, fewer than %d, and no other key of the run was throttled", n, schemas.FeedRequestsPerMinute),
			"status 429")
		return
	case n+others >= schemas.FeedRequestsPerMinute:
		// the key's own traffic does not fill a window, all keys' does: a
		// limiter shared across keys, or one that counts too much; the
		// rate-limit specs tell which
		return
	}
	j.fail(catalogue.RateAllows20, "", fmt.Sprintf("the request served: the key sent %d request(s) in the minute before it, fewer than %d, and no key of the run filled a minute", n, schemas.FeedRequestsPerMinute),
		"status 429")
}

// inWindow is how many requests of the key the target may count in the
// window from from to request seq: what the run sent (a request counted
// from when it was answered, all operations), and, while a sequence owns
// the key, no more than it said. known: the count holds the whole window
// (the run sent on the key a minute before it, or its owner said what the
// window held).
func (k *keyState) inWindow(seq int, from time.Time) (n int, known bool) {
	n, known = countSince(k.sends, from), !k.firstAt.After(from)
	switch owned := k.ownedFor(seq); {
	case owned && known:
		n = min(n, k.ownedCount(from))
	case owned:
		n, known = k.ownedCount(from), true
	}
	return n, known
}

// ownedFor reports whether a sequence owns the key and request seq was
// sent since it took it.
func (k *keyState) ownedFor(seq int) bool {
	return k.own != nil && k.sentEvent(seq) > k.own.event
}

// ownedCount is the most requests of the key in the window from from that
// the target may count, by what the sequence that owns it said: those the
// window held when it took the key, and those sent since (a request whose
// sending was not seen counted).
func (k *keyState) ownedCount(from time.Time) int {
	n := schemas.FeedRequestsPerMinute - k.own.room
	for i := len(k.sends) - 1; i >= 0 && k.sends[i].at.After(from); i-- {
		if e := k.sentEvent(k.sends[i].seq); e == 0 || e > k.own.event {
			n++
		}
	}
	return n
}

// throttledKey is a key of the run and the feed 429 that throttles it.
type throttledKey struct {
	token string
	resp  *client.Response
}

// throttledNow is another key, which a sequence owns, whose feed is
// throttled at this answer for its own traffic: its last feed answer was
// a 429, which came when its window may have been full, and whose
// Retry-After has not passed (a window, when it said none). Only a key
// whose window the run knows tells a limiter across keys from one that
// counts too much: a key throttled with room in its window is the latter,
// which explains others' 429s no better than their own counts do.
func (m *model) throttledNow(j *judging) *throttledKey {
	for _, t := range slices.Sorted(maps.Keys(m.keys)) {
		k := m.keys[t]
		if t == j.token || k.own == nil || k.throttledAt == nil || !k.throttledFull {
			continue
		}
		until := k.throttledTime.Add(schemas.RateWindow)
		if p := k.promise[Feed]; p != nil && p.resp == k.throttledAt {
			until = p.after
		}
		if j.at.Before(until) {
			return &throttledKey{token: t, resp: k.throttledAt}
		}
	}
	return nil
}

// maxBadAnswered bounds the times kept of bad credentials answered.
const maxBadAnswered = 64

// badAnsweredSince reports whether a feed request of a bad credential was
// served or throttled after from.
func (m *model) badAnsweredSince(from time.Time) bool {
	for _, at := range m.badAnswered {
		if at.After(from) {
			return true
		}
	}
	return false
}

func countSince(ss []send, from time.Time) int {
	n := 0
	for i := len(ss) - 1; i >= 0 && ss[i].at.After(from); i-- {
		n++
	}
	return n
}

// admittedBound: no limiter of 20 a minute admits more feed requests in a
// span than 20 for each fixed window the span can touch.
func (m *model) admittedBound(j *judging, k *keyState) {
	if k.exceeded {
		return
	}
	ad := k.admitted
	last := ad[len(ad)-1]
	for i := len(ad) - 1; i >= 0; i-- {
		span := last.Sub(ad[i])
		if span > 3*schemas.RateWindow {
			break
		}
		windows := int(math.Ceil(float64(span+slack)/float64(schemas.RateWindow))) + 1
		if n := len(ad) - i; n > schemas.FeedRequestsPerMinute*windows && !j.o.drifted() {
			k.exceeded = true
			j.fail(catalogue.RateLimit429, "", fmt.Sprintf("429 past the limit: no limiter of %d a minute admits more than %d feed requests in %s", schemas.FeedRequestsPerMinute, schemas.FeedRequestsPerMinute*windows, span.Round(time.Millisecond)),
				fmt.Sprintf("%d admitted", n))
			return
		}
	}
}

// turnSpan is a span in which a key was admitted more feed requests than
// any limiter of 20 a minute admits unless a fixed window turned over in
// it: from the sending of its first admission to the answer of its last,
// widened by the clocks' slack.
type turnSpan struct {
	from, to time.Time
	resp     *client.Response
}

// maxTurnsKept bounds the spans a key keeps for turnover.
const maxTurnsKept = 16

// turnover: in less than a minute no limiter of 20 a minute admits more
// than 20 feed requests of a key and what a bucket of 20 refills meanwhile
// (a sliding log does not, nor a window that starts at the key's first
// request after a quiet minute), unless a fixed window of a minute turned
// over in that span. A window aligned to a clock turns over a whole
// number of minutes apart: two such spans of a key in which no two
// boundaries a whole number of minutes apart can fall tell no fixed
// window either. Each span is kept; one on a key its owner took with an
// empty window (room 20) less than a minute before (no window of its own
// turns over then) fails when an earlier span of the key shares no grid
// with it. A limiter that counts a burst short (per query, per address,
// without its cursor pages) admits more than 20 in both bursts that a
// sequence sends a minute apart, where a fixed window turns over in one.
func (m *model) turnover(j *judging, k *keyState) {
	if k.exceeded || j.o.drifted() {
		return
	}
	ad, limit := k.admitted, schemas.FeedRequestsPerMinute
	last := ad[len(ad)-1]
	first := -1
	for i := len(ad) - 1 - limit; i >= 0; i-- {
		d := last.Sub(ad[i])
		if d >= schemas.RateWindow-slack {
			break
		}
		if refill := int(float64(limit) * (d + slack).Seconds() / schemas.RateWindow.Seconds()); len(ad)-i > limit+refill {
			first = i
			break
		}
	}
	if first < 0 {
		return
	}
	sp := turnSpan{from: ad[first].Add(-slack), to: j.at.Add(slack), resp: j.resp}
	own := k.own
	if own != nil && own.room == limit && k.ownedFor(j.resp.Seq) && !ad[first].Before(own.at) && j.at.Sub(own.at) < schemas.RateWindow-slack {
		for _, e := range k.turns {
			if !oneGrid(e, sp) {
				k.exceeded = true
				j.fail(catalogue.RateLimit429, "", fmt.Sprintf("429 past the limit: the key's window was empty when its owner took it %s before, and no limiter of %d a minute admits %d feed requests in %s unless a fixed window of a minute turned over then, which a window that turned over in the earlier span that admitted more than %d (%s to %s) does not",
					j.at.Sub(own.at).Round(time.Millisecond), limit, len(ad)-first, j.at.Sub(ad[first]).Round(time.Millisecond), limit, e.from.Format("15:04:05.000"), e.to.Format("15:04:05.000")),
					fmt.Sprintf("%d admitted", len(ad)-first), e.resp)
				return
			}
		}
	}
	if n := len(k.turns); n > 0 && oneGridAt(k.turns[n-1], sp, 0) {
		return // the same stretch of admissions
	}
	k.turns = append(k.turns, sp)
	if len(k.turns) > maxTurnsKept {
		k.turns = k.turns[1:]
	}
}

// oneGrid reports whether a boundary in span a and one in span b can be a
// whole number of minutes apart (the same fixed window's turns).
func oneGrid(a, b turnSpan) bool {
	// the least k for which a, k minutes on, ends after b begins
	lo, w := b.from.Sub(a.to), schemas.RateWindow
	k := lo / w
	if lo < 0 && lo%w != 0 {
		k--
	}
	return oneGridAt(a, b, int(k+1))
}

// oneGridAt reports whether span a moved by k minutes meets span b.
func oneGridAt(a, b turnSpan, k int) bool {
	d := time.Duration(k) * schemas.RateWindow
	return a.from.Add(d).Before(b.to) && b.from.Before(a.to.Add(d))
}

// throttle is a feed 429 of a key: when it was sent and answered, the
// oracle's event when it was judged, and the feed requests of the key
// admitted since (sent after it came back).
type throttle struct {
	resp     *client.Response
	sent, at time.Time
	event    int
	admitted int
}

// maxThrottlesKept bounds the 429s a key keeps for afterThrottle.
const maxThrottlesKept = 64

// throttled keeps a feed 429 of the key.
func (k *keyState) throttled(j *judging, at time.Time) {
	t := &throttle{resp: j.resp, sent: k.sentAt(j.resp.Seq, at), at: at, event: j.o.m.moment}
	// Past three windows a 429 bounds nothing admittedBound does not.
	k.throttles = slices.DeleteFunc(k.throttles, func(x *throttle) bool { return at.Sub(x.at) > 3*schemas.RateWindow })
	if n := len(k.throttles); n > 0 && k.throttles[n-1].admitted == 0 {
		// nothing admitted since the one before: this one bounds more
		// tightly (the same requests after it, a shorter span)
		k.throttles[n-1] = t
		return
	}
	k.throttles = append(k.throttles, t)
	if len(k.throttles) > maxThrottlesKept {
		k.throttles = k.throttles[1:]
	}
}

// afterThrottle: a feed 429 says the key's window had no room then, under
// every limiter of 20 a minute (a sliding log, a fixed window, a bucket),
// whatever else it counts (the other operations, health, refused requests:
// those only leave less room). From then on it admits at most 20 feed
// requests for each minute the span can free (a log's grants leave it 20 a
// minute at most, a fixed window turns over once a minute, a bucket
// refills 20 a minute), and none while no time passed. A limiter whose
// state is lost (a housekeeping sweep every N requests, a cleanup that
// drops live entries, a restart) admits a window's worth at once.
// Only requests sent after the 429 came back count: one sent before may
// have been decided before it.
func (m *model) afterThrottle(j *judging, k *keyState) {
	sentEv := k.sentEvent(j.resp.Seq)
	if sentEv == 0 {
		return // its sending was not seen: when it went is not known
	}
	for _, t := range k.throttles {
		if sentEv <= t.event {
			continue
		}
		t.admitted++
		if k.exceeded || j.o.drifted() {
			continue
		}
		// From the 429's sending, not its judging: the clock may move
		// between the target's answer and the run's reading of it.
		most, span := 0, j.at.Sub(t.sent)
		if !j.o.frozen(t.sent, j.at) {
			most = schemas.FeedRequestsPerMinute * int(math.Ceil(float64(span+slack)/float64(schemas.RateWindow)))
		}
		if t.admitted > most {
			k.exceeded = true
			expected := fmt.Sprintf("429: no time passed since the key's feed was throttled, and no limiter of %d a minute admits a feed request before time passes", schemas.FeedRequestsPerMinute)
			if most > 0 {
				expected = fmt.Sprintf("429 past the limit: no limiter of %d a minute admits more than %d feed requests in the %s after a 429 of the key's feed (its window had no room then)", schemas.FeedRequestsPerMinute, most, span.Round(time.Millisecond))
			}
			j.fail(catalogue.RateLimit429, "", expected, fmt.Sprintf("%d admitted since the 429 (first pages, cursor pages and last pages alike)", t.admitted), t.resp)
		}
	}
}

// page keeps what a feed page shows and judges it against what came
// before: its cursor's chain, the other keys' feeds, earlier whole walks.
// short is a page that held fewer events than asked and handed out a
// cursor, judged when its walk ends.
func (m *model) page(j *judging, evs []event, next string, hasNext bool, short *shortPage) {
	k := m.key(j.token)
	q := j.q
	troubled := false
	var above func(string) (members, bool)
	if is := q.issued; is != nil {
		troubled = m.chained(j, is, evs, hasNext)
		if !troubled && !is.chain.troubled && is.token == j.token {
			above = is.chain.membersAbove // nothing hidden between the pages
		}
	}
	oldest := j.pageSwitches(evs, above)
	if q.foreign != nil {
		m.tenant(j, k, evs)
	}
	m.shows(j, k, evs)
	// the chain this page continues, or begins when it asked no cursor
	var parent *node
	switch {
	case q.issued != nil:
		parent = q.issued.chain
	case q.cursor != "" || slices.Contains(q.open, "cursor") || q.broken:
		if short != nil {
			j.failShort(short) // no walk of the key's own to explain it
		}
		return
	}
	nd := newNode(j, parent, evs, oldest, troubled)
	m.place(j, k, nd, evs, short)
	m.continues(j, k, q.cursor, evs, nd.troubled)
	if short != nil && hasNext && next != "" {
		ps := pendingShort{short: short, page: nd}
		if ids, ok := k.continued[next]; ok {
			if ps.leadsOn(ids) {
				j.failShort(short)
			}
		} else {
			k.shortBy[next] = append(k.shortBy[next], ps)
		}
	}
	switch {
	case hasNext && next != "":
		m.hands(j, nd, evs, next)
	case !hasNext:
		m.walked(j, k, nd)
	}
}

// shows keeps what the page's events show of the key's feed: each event
// judged, its id, channel and video facts.
func (m *model) shows(j *judging, k *keyState, evs []event) {
	for i, e := range evs {
		m.event(j, e)
		m.publishedOnce(j, fmt.Sprintf("/events/%d", i), e)
		if e.id != "" {
			if !k.ids[e.id] {
				k.ids[e.id], k.firstSeen[e.id] = true, j.resp.Seq
			}
		}
		if e.channel != "" {
			k.channels[e.channel] = true
		}
		if e.video != "" {
			m.videoFact(j, k, e)
		}
	}
}

// newNode is the page as a node of its cursor's chain.
func newNode(j *judging, parent *node, evs []event, oldest map[string]members, troubled bool) *node {
	q := j.q
	nd := &node{parent: parent, resp: j.resp, ids: map[string]int64{}, prints: map[string]map[string]string{}, troubled: troubled, at: j.at, size: q.size, sizeRule: q.sizeRule, members: oldest}
	for _, e := range evs {
		if e.id != "" && e.hasTime {
			nd.ids[e.id] = e.createdAt
			nd.prints[e.id] = e.print
		}
		if e.hasTime {
			nd.times = append(nd.times, e.createdAt)
		}
		if e.channel != "" {
			nd.chans = append(nd.chans, e.channel)
		}
	}
	return nd
}

// place makes nd the root of its chain or its parent's child, and judges
// a short page by where the walk went: a first page shorter than a
// whole walk before it held, or a page whose cursor led on to more events.
func (m *model) place(j *judging, k *keyState, nd *node, evs []event, short *shortPage) {
	q, parent := j.q, nd.parent
	if parent == nil {
		nd.root = nd
		if len(evs) > 0 && evs[0].hasTime {
			nd.head, nd.hasHd = evs[0].createdAt, true
		}
		switch {
		case short == nil:
		case k.heldAtLeast(q.size, j.resp.Seq):
			// a first page: its limit and what the feed holds decide its
			// size, and a whole walk before it held more
			j.failShort(short)
		default:
			// a feed of fewer events than asked, or one not walked yet:
			// the cursor says which rule it broke. Events behind it: the
			// page was short (its limit's); an empty end: it was the last,
			// and its cursor is FEED-CURSOR-END's (chained).
			nd.short = short
		}
	} else {
		nd.root, nd.troubled = parent.root, parent.troubled || nd.troubled
		if parent.short != nil && !nd.troubled && len(evs) > 0 {
			// its cursor led on to more events, and kept its place: the
			// short page was not the last (a walk cut before its end
			// would never say so)
			j.failShort(parent.short)
			parent.short = nil
		}
		if short != nil {
			nd.short = short
		}
	}
}

// hands keeps the cursor the page handed out (next), with the chain it
// continues, and marks a cursor handed to two keys as shared.
func (m *model) hands(j *judging, nd *node, evs []event, next string) {
	q := j.q
	is := &issue{token: j.token, resp: j.resp, chain: nd, events: len(evs)}
	if n := len(evs); n > 0 && evs[n-1].hasTime {
		is.lastAt, is.hasAt, is.lastID = evs[n-1].createdAt, true, evs[n-1].id
	} else if q.issued != nil {
		is.lastAt, is.hasAt, is.lastID = q.issued.lastAt, q.issued.hasAt, q.issued.lastID
	}
	if m.byKey[next] == nil {
		m.byKey[next] = map[string]*issue{}
	}
	for tok, other := range m.byKey[next] {
		if tok == j.token {
			continue // the key's own again: a cursor by position comes from walks of any page size
		}
		// the same cursor handed to two keys: a page one of them got
		// may be the other's, and its cursor refused for that
		is.shared, other.shared = true, true
	}
	if _, ok := m.byKey[next][j.token]; !ok {
		m.byKey[next][j.token] = is
	}
	if _, ok := m.issued[next]; !ok {
		m.issued[next] = is
	}
}

// heldAtLeast reports whether a whole walk of the key that ended before
// request seq held n events or more: events arrive and none goes, so a
// first page asked for n holds n.
func (k *keyState) heldAtLeast(n, seq int) bool {
	for _, w := range k.walks {
		if w.end < seq && len(w.events) >= n {
			return true
		}
	}
	return false
}

// continues notes the events of the page read with cursor (none: a first
// page), its walk in no trouble: a short page that handed out that cursor
// was not the last if they continue its walk.
func (m *model) continues(j *judging, k *keyState, cursor string, evs []event, troubled bool) {
	if cursor == "" || len(evs) == 0 || troubled {
		return
	}
	if _, ok := k.continued[cursor]; ok {
		return // the first page read with it speaks for the position
	}
	var ids []string
	for _, e := range evs {
		if e.id != "" {
			ids = append(ids, e.id)
		}
	}
	k.continued[cursor] = ids
	for _, ps := range k.shortBy[cursor] {
		if ps.leadsOn(ids) {
			j.failShort(ps.short)
		}
	}
	delete(k.shortBy, cursor)
}

// shortPage is a page that held fewer events than its limit asked for and
// handed out a cursor: FEED-LIMIT's unless its walk's cursors are in
// trouble (they skip or repeat events), which explains it.
type shortPage struct {
	resp     *client.Response
	rule     catalogue.ID
	expected string
	actual   string
	judged   bool // its problem is found (by its chain or its cursor)
}

func (j *judging) failShort(sp *shortPage) {
	if sp.judged {
		return
	}
	sp.judged = true
	j.problems = append(j.problems, Problem{Requirement: sp.rule, Request: sp.resp.Request.String(), Pointer: "/events",
		Expected: sp.expected, Actual: sp.actual, Evidence: []*client.Response{sp.resp, j.resp}})
}

// chained judges a page reached through a cursor the key was handed: no
// event the walk showed already, none newer than the page before, and no
// empty end after a page that promised more. It reports whether the walk
// is in trouble (its cursors repeat, skip back or loop), which explains
// its pages' sizes too.
func (m *model) chained(j *judging, is *issue, evs []event, hasNext bool) bool {
	root := is.chain.root
	order, rep, fresh := 0, 0, 0
	var repeats []string
	var first *node
	for i, e := range evs {
		if e.id != "" {
			if at := is.chain.has(e.id); at != nil {
				if was, ok := at.prints[e.id]; ok && differs(was, e.print) != "" {
					continue // another event under the id the walk showed: EVENT-ID-UNIQUE's
				}
				repeats = append(repeats, fmt.Sprintf("/events/%d/id", i))
				if first == nil {
					first = at
				}
				continue
			}
		}
		fresh++
		if !is.hasAt || !e.hasTime || e.createdAt <= is.lastAt || order >= maxPerRule {
			continue
		}
		order++
		ptr := fmt.Sprintf("/events/%d/createdAt", i)
		if root.hasHd && e.createdAt > root.head && !j.o.frozen(root.at, j.at) && ordered(evs) && !m.seenBefore(j.token, e.id, root.resp.Seq) && !before(e.createdAt, root.resp) {
			// new at the head since the walk began, and behind its cursor:
			// the cursor is a position, not a place in the feed
			j.fail(catalogue.FeedCursorWalk, ptr, fmt.Sprintf("a cursor walk visits each event once: events that arrived at the head since the walk began (its first page's newest: createdAt %d) are not behind its cursors", root.head),
				fmt.Sprintf("createdAt %d", e.createdAt), is.resp)
			continue
		}
		j.fail(catalogue.FeedOrder, ptr, fmt.Sprintf("events no newer than the last of the page whose nextCursor this is (createdAt %d)", is.lastAt),
			fmt.Sprintf("createdAt %d", e.createdAt), is.resp)
	}
	switch {
	case len(repeats) > 0 && fresh == 0 && first.sameEvents(evs):
		// the very page of an earlier step again: a loop, not a slip
		j.fail(catalogue.FeedCursorEnd, "/events", "a walk that ends: nextCursor leads to older events, or is null",
			fmt.Sprintf("the cursor leads back to a page the walk showed (%d events)", len(repeats)), first.resp)
	case order > 0:
		// the page is newer than the one before: a feed out of order
		// (FEED-ORDER's, above) repeats what it showed as it goes
	default:
		for _, ptr := range repeats {
			if rep++; rep > maxPerRule {
				break
			}
			j.fail(catalogue.FeedCursorWalk, ptr, "a cursor walk visits each event once", "an event an earlier page of this walk showed", first.resp)
		}
	}
	skipped := false
	if !troubled(repeats, order) {
		skipped = m.resumes(j, is, evs)
	}
	// An empty page that hands out its own cursor again ends the walk
	// too (it loops on nothing): the page before was the last, whatever
	// its size, and its cursor is FEED-CURSOR-END's, not a short page's.
	next, _ := j.nextCursor()
	loopsOnNothing := hasNext && next != "" && next == j.q.cursor
	emptyEnd := len(evs) == 0 && (!hasNext || loopsOnNothing) && is.events > 0
	switch {
	case emptyEnd && loopsOnNothing:
		j.fail(catalogue.FeedCursorEnd, "/nextCursor", "null nextCursor on the last page: the page before handed out a cursor to a page with no events",
			"a page with no events whose nextCursor is the cursor that asked for it", is.resp)
	case emptyEnd:
		j.fail(catalogue.FeedCursorEnd, "/nextCursor", "null nextCursor on the last page: the page before handed out a cursor to a page with no events",
			"an empty last page", is.resp)
	}
	// a skip explains a short page; an empty end means the page before was the end
	return troubled(repeats, order) || skipped || emptyEnd
}

// before reports whether an event was created before the page came, by
// the target's own Date (a second's grain, and a second more): such an
// event did not arrive while the walk went on, so showing it newer than
// a page before is an order, not a cursor that lost its place.
func before(createdAt int64, page *client.Response) bool {
	t, err := http.ParseTime(page.Header.Get("Date"))
	return err == nil && createdAt < t.Add(-2*time.Second).UnixMilli()
}

// seenBefore reports whether the key was shown an event before request
// number seq: an event it knew when a walk began cannot arrive during it.
func (m *model) seenBefore(token, id string, seq int) bool {
	at, ok := m.key(token).firstSeen[id]
	return ok && at < seq
}

func troubled(repeats []string, order int) bool { return len(repeats) > 0 || order > 0 }

// ordered reports whether a page's events are newest first.
func ordered(evs []event) bool {
	for i := 1; i < len(evs); i++ {
		if evs[i].hasTime && evs[i-1].hasTime && evs[i].createdAt > evs[i-1].createdAt {
			return false
		}
	}
	return true
}

// resumes: a cursor's page resumes where the page that handed it out
// ended. An event a whole walk of the key showed strictly between that
// page's last event and this page's first was skipped: events arrive at
// the head and none goes.
func (m *model) resumes(j *judging, is *issue, evs []event) (skipped bool) {
	if is.lastID == "" || !is.hasAt || len(evs) == 0 || !evs[0].hasTime {
		return false
	}
	first := evs[0]
	on := map[string]bool{}
	for _, e := range evs {
		on[e.id] = true
	}
	if !ordered(evs) {
		return false // places by createdAt mean nothing in a page out of order (FEED-ORDER's)
	}
	for _, w := range m.key(j.token).walks {
		if _, ok := w.events[is.lastID]; !ok || w.unordered {
			continue
		}
		if _, ok := w.events[first.id]; !ok {
			continue
		}
		n := 0
		for _, id := range slices.Sorted(maps.Keys(w.events)) {
			e := w.events[id]
			// an event that shares the last one's createdAt belongs on this
			// page too once the page moved past that instant (a cursor by
			// time loses ties)
			if e.at <= first.createdAt || e.at > is.lastAt || e.at == is.lastAt && first.createdAt >= is.lastAt || on[id] || is.chain.has(id) != nil {
				continue
			}
			if n++; n > maxPerRule {
				return true
			}
			j.fail(catalogue.FeedCursorWalk, "/events/0", fmt.Sprintf("the page a cursor leads to resumes where the page that handed it out ended (createdAt %d): a whole walk of the key showed an event between", is.lastAt),
				fmt.Sprintf("event %s (createdAt %d) skipped: this page begins at createdAt %d", jsondoc.Quote(id, 60), e.at, first.createdAt), is.resp, e.page.resp)
		}
		return n > 0
	}
	return false
}

// KnownFeed is what an account's feed is known to hold, from its whole walks:
// the ids it showed, the channels its whole walks show, and the createdAt
// of its last whole walk's newest event (HasHead false: none).
type KnownFeed struct {
	IDs, Channels map[string]bool
	Head          int64
	HasHead       bool
}

// ShownForeign is FEED-TENANT's rule for one event served to the account
// whose feed is mine: it is shown to be the other account's when theirs
// has its id and mine never showed it, its channel is one theirs shows and
// mine never does, and it is older than mine's last whole walk. (An id
// alone proves nothing: ids two events share, or a page cut elsewhere, put
// one account's own event under an id of the other's walk; and on a live
// feed a channel may show its first events after the walk.) The oracle
// judges pages asked with another key's cursor by it; the specs and probes
// that ask one key's pages with another key, by it too.
func ShownForeign(id, channel string, createdAt int64, hasTime bool, mine, theirs KnownFeed) bool {
	return id != "" && theirs.IDs[id] && !mine.IDs[id] &&
		channel != "" && theirs.Channels[channel] && !mine.Channels[channel] &&
		mine.HasHead && hasTime && createdAt < mine.Head
}

// feed is what the key's feed is known to hold (see KnownFeed).
func (k *keyState) feed() KnownFeed {
	f := KnownFeed{IDs: k.ids, Channels: k.walkChans}
	if len(k.walks) > 0 {
		head := k.walks[len(k.walks)-1]
		f.Head, f.HasHead = head.head, head.hasHead
	}
	return f
}

// tenant judges a page asked with another key's cursor: it shows no event
// of another key's feed, older than the asking key's last whole walk, of a
// channel that walk never shows (both feeds known whole; ShownForeign).
func (m *model) tenant(j *judging, k *keyState, evs []event) {
	if len(k.walks) == 0 {
		return // the key's own feed is not known whole
	}
	mine := k.feed()
	n := 0
	for i, e := range evs {
		owner := m.eventOwner(e, j.token, mine)
		if owner == nil {
			continue
		}
		if n++; n > maxPerRule {
			return
		}
		var ev []*client.Response
		if j.q.foreign != nil {
			ev = append(ev, j.q.foreign.resp)
		}
		j.fail(catalogue.FeedTenant, fmt.Sprintf("/events/%d", i), "only the asking account's events: a cursor of another key refused, or a page of the key's own",
			fmt.Sprintf("event %s of channel %s, of another key's feed, a channel the asking key's whole feed never shows", jsondoc.Quote(e.id, 60), jsondoc.Quote(e.channel, 60)), ev...)
	}
}

// eventOwner is another key whose whole feed shows the event's channel and
// whose pages showed the event, where mine's do not (ShownForeign); nil
// when none.
func (m *model) eventOwner(e event, not string, mine KnownFeed) *keyState {
	for t, o := range m.keys {
		if t != not && len(o.walks) > 0 && ShownForeign(e.id, e.channel, e.createdAt, e.hasTime, mine, o.feed()) {
			return o
		}
	}
	return nil
}

// event: an id names one event across the run.
func (m *model) event(j *judging, e event) {
	if e.id == "" {
		return
	}
	if was, ok := m.events[e.id]; ok {
		if d := differs(was.print, e.print); d != "" {
			j.fail(catalogue.EventIDUnique, "", fmt.Sprintf("an event id names one event (its type, time, channel and the change it records): %s", jsondoc.Quote(e.id, 60)),
				d, was.resp)
		}
		return
	}
	if len(m.events) < maxKnownEvents {
		m.events[e.id] = seenEvent{print: e.print, resp: j.resp}
	}
}

// videoFact keeps what a feed event tells of its video.
func (m *model) videoFact(j *judging, k *keyState, e event) {
	m.videosSeen[e.video] = true
	f := k.videos[e.video]
	if f == nil {
		if len(k.videos) >= maxKnownEvents {
			return
		}
		f = &videoFact{resp: j.resp}
		k.videos[e.video] = f
	}
	if pub, ok := jsondoc.Get(e.raw, "/video/publishedAt"); ok && f.publishedAt == "" && plausible(pub) {
		f.publishedAt = string(jsondoc.Encode(pub))
	}
	if f.channel == "" {
		f.channel = e.channel
	}
	var title string
	settled := true
	switch e.typ {
	case schemas.TypeTitleChanged:
		title, _ = e.raw["newTitle"].(string)
		if old, ok := e.raw["oldTitle"].(string); ok && old != title {
			if f.superseded == nil {
				f.superseded = map[string]bool{}
			}
			f.superseded[old] = true
		}
	case schemas.TypeTitleABTestConcluded:
		title, _ = e.raw["finalTitle"].(string)
	case schemas.TypeTitleABTest:
		settled = false
	default:
		return
	}
	if !f.hasTitle || e.createdAt >= f.titleAt {
		f.title, f.titleAt, f.settled, f.hasTitle, f.learned, f.resp = title, e.createdAt, settled, true, j.at, j.resp
	}
}

// walked ends a chain that reached a null nextCursor: a whole walk of the
// key's feed, which must hold every event an earlier whole walk held below
// its head.
func (m *model) walked(j *judging, k *keyState, last *node) {
	w := &walk{end: j.resp.Seq, events: map[string]evAt{}, oldest: math.MaxInt64}
	var pages []*node
	for x := last; x != nil; x = x.parent {
		pages = append(pages, x)
	}
	prev := int64(math.MaxInt64)
	for i := len(pages) - 1; i >= 0; i-- {
		p := pages[i]
		w.pages = append(w.pages, p)
		for _, at := range p.times {
			w.unordered = w.unordered || at > prev
			prev = at
		}
		for id, at := range p.ids {
			w.events[id] = evAt{at: at, page: p}
			w.oldest = min(w.oldest, at)
		}
	}
	root := pages[len(pages)-1]
	w.start, w.head, w.hasHead = root.resp.Seq, root.head, root.hasHd
	found := len(j.problems)
	for _, before := range k.walks {
		// a walk done before this one began, or one from the same first
		// page: both show every event below its head (events arrive at
		// the head only)
		if before.end < w.start || before.pages[0] == w.pages[0] {
			m.compareWalks(j, before, w)
			m.endedShort(j, before, w)
		}
	}
	for t, o := range m.keys {
		if t == j.token {
			continue
		}
		for _, before := range o.walks {
			if before.end < w.start && !before.unordered && !w.unordered {
				m.sharedChannels(j, before, w)
			}
		}
	}
	if !last.troubled && len(j.problems) == found {
		// the walk's cursors kept their place: a page that held fewer
		// events than asked and handed out a cursor broke its limit
		for _, p := range w.pages {
			if p.short != nil {
				j.failShort(p.short)
			}
		}
	}
	for _, p := range w.pages {
		for _, c := range p.chans {
			k.walkChans[c] = true
		}
	}
	k.walks = append(k.walks, w)
	if len(k.walks) > maxWalksKept {
		k.walks = k.walks[1:]
	}
}

// compareWalks: a later whole walk holds every event of an earlier one
// older than its head (new events arrive only at the head; none goes).
// Each rule's problems are bounded apart: a walk that ended above
// hundreds of events (FEED-CURSOR-END's) still shows the gap it left in
// the events that share its last createdAt (FEED-CURSOR-WALK's).
func (m *model) compareWalks(j *judging, before, after *walk) {
	n := map[catalogue.ID]int{}
	for _, id := range slices.Sorted(maps.Keys(before.events)) {
		e := before.events[id]
		if after.hasHead && e.at >= after.head {
			continue
		}
		if _, ok := after.events[id]; ok {
			continue
		}
		id2, exp := catalogue.FeedCursorWalk, "a later whole walk shows every event an earlier one showed below its head: no gap"
		var near *client.Response
		if e.at < after.oldest {
			last := after.pages[len(after.pages)-1]
			near = last.resp
			id2, exp = catalogue.FeedCursorEnd, "nextCursor null only at the end: the walk ended above events the feed showed before"
			if n := len(last.times); last.size > 0 && n < last.size && last.sizeRule != "" {
				// a short last page: it held fewer events than asked while
				// older ones remain, which its size rule forbids first
				id2, exp = last.sizeRule, fmt.Sprintf("%d events on a page older events follow (the walk's last page held %d)", last.size, n)
			}
		} else {
			near = pageAround(after, e.at)
		}
		if n[id2]++; n[id2] > maxPerRule {
			continue
		}
		j.fail(id2, "", exp, fmt.Sprintf("event %s (createdAt %d) is missing from the walk that ended here", jsondoc.Quote(id, 60), e.at), e.page.resp, near)
	}
}

// endedShort: an earlier whole walk whose last page held fewer events
// than it asked for said the feed ends there; a later whole walk that
// shows events older than all of it, which it left out, shows that page
// was no last page: its size rule (fewer events only on the last page).
// Events arrive at the head, so the later walk's older events were there
// before (compareWalks judges the other way: a later walk that lost some).
func (m *model) endedShort(j *judging, before, after *walk) {
	last := before.pages[len(before.pages)-1]
	if last.size == 0 || len(last.times) >= last.size || last.sizeRule == "" || before.unordered || after.unordered || last.reportedShort {
		return
	}
	if len(before.events) == 0 {
		return // an empty feed: every event since is newer than it, none older
	}
	n, example := 0, ""
	for _, id := range slices.Sorted(maps.Keys(after.events)) {
		if e := after.events[id]; e.at < before.oldest {
			if _, ok := before.events[id]; !ok {
				if n++; n == 1 {
					example = fmt.Sprintf("event %s (createdAt %d)", jsondoc.Quote(id, 60), e.at)
				}
			}
		}
	}
	if n == 0 {
		return
	}
	last.reportedShort = true
	j.fail(last.sizeRule, "", fmt.Sprintf("%d events on a page older events follow (its nextCursor null: the feed's end)", last.size),
		fmt.Sprintf("the page held %d; this later whole walk shows %d event(s) older than all of that walk, %s among them", len(last.times), n, example), last.resp)
}

// sharedChannels: a whole walk shows every event of a channel it shares
// with another key's earlier whole walk, from its own oldest event of that
// channel up to its head: events belong to channels, not to accounts (an
// account may see a channel's history from the time it tracks it, so older
// events are not asked for). Events are matched by what they record, not
// by id: a server may give each account its own ids.
func (m *model) sharedChannels(j *judging, other, w *walk) {
	mine := map[string]bool{}
	oldest := map[string]int64{}
	for _, p := range w.pages {
		for id, pr := range p.prints {
			mine[printKey(pr)] = true
			ch := pr["channel"]
			if at, ok := p.ids[id]; ok {
				if o, seen := oldest[ch]; !seen || at < o {
					oldest[ch] = at
				}
			}
		}
	}
	n := 0
	for _, p := range other.pages {
		for _, id := range slices.Sorted(maps.Keys(p.prints)) {
			pr := p.prints[id]
			o, shared := oldest[pr["channel"]]
			at := p.ids[id]
			if !shared || at <= o || !w.hasHead || at >= w.head || mine[printKey(pr)] {
				continue
			}
			if n++; n > maxPerRule {
				return
			}
			j.fail(catalogue.FeedCursorWalk, "", "a whole walk shows every event of a channel the account tracks, from its oldest event of it to its head: another key's walk showed this one",
				fmt.Sprintf("event %s of channel %s (createdAt %d) is missing from the walk that ended here", jsondoc.Quote(id, 60), jsondoc.Quote(pr["channel"], 60), at), p.resp, pageAround(w, at))
		}
	}
}

// plausible reports a timestamp TIMESTAMP-EPOCH-MS has nothing to say of:
// an implausible one is that rule's finding, not a contradiction.
func plausible(v any) bool { return Implausible(v, time.Now().AddDate(10, 0, 0)) == "" }

// printKey is an event's print as one string, its fields in order.
func printKey(pr map[string]string) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(pr)) {
		b.WriteString(k + "=" + pr[k] + "\x00")
	}
	return b.String()
}

// pageAround is the page of a walk whose events surround a time.
func pageAround(w *walk, at int64) *client.Response {
	for _, p := range w.pages {
		for _, t := range p.ids {
			if t <= at {
				return p.resp
			}
		}
	}
	return w.pages[len(w.pages)-1].resp
}

// videos judges a tracked-videos 200 against the key's feed (evs are each
// entry's events, read).
func (m *model) videos(j *judging, entries []any, evs [][]event, served, missing []string) {
	k := m.key(j.token)
	for _, id := range missing {
		f := k.videos[id]
		if f == nil || slices.Contains(served, id) {
			continue
		}
		// a video of a channel another key showed may have come to the
		// key's feed from the other's (FEED-TENANT's), unless the target
		// served it to the key already: then the channel is the key's
		switch before := k.servedTo[id]; {
		case before != nil:
			j.fail(catalogue.VideosServed, "/missingVideoIds", "a video the key's feed showed, which the target served the key as a VideoEntry before, comes back as a VideoEntry",
				fmt.Sprintf("%s listed missing", jsondoc.Quote(id, 60)), f.resp, before)
		case !m.otherShows(f.channel, j.token):
			j.fail(catalogue.VideosServed, "/missingVideoIds", "a video the key's feed showed comes back as a VideoEntry",
				fmt.Sprintf("%s listed missing", jsondoc.Quote(id, 60)), f.resp)
		}
	}
	for _, id := range served {
		if _, ok := k.servedTo[id]; !ok && id != "" && !j.o.keys.Invented(id) {
			k.servedTo[id] = j.resp
		}
	}
	for i, e := range entries {
		id := served[i]
		ptr := fmt.Sprintf("/videos/%d", i)
		ch, _ := jsondoc.String(e, "/video/channel/id")
		f := k.videos[id]
		switch {
		case j.o.keys.Invented(id):
			j.fail(catalogue.VideosMissing, ptr, "an id no video can have, listed missing", fmt.Sprintf("a VideoEntry for %s", jsondoc.Quote(id, 60)))
		case f != nil:
			m.consistent(j, ptr, e, f)
		case k.foldOf(id, e) != "":
			// ids are case-sensitive strings compared as they are: another
			// id that a collation or a normalization folds to a video of the
			// feed is no id of that video
			known := jsondoc.Quote(k.foldOf(id, e), 60)
			j.fail(catalogue.VideosMissing, ptr, fmt.Sprintf("an id of no video listed missing: %s is not the id %s the feed showed", jsondoc.Quote(id, 60), known),
				fmt.Sprintf("a VideoEntry for %s that is the video %s (its channel and publishedAt)", jsondoc.Quote(id, 60), known))
		case len(k.walks) > 0 && ch != "" && !k.walkChans[ch]:
			if owner := m.channelOwner(ch, j.token); owner != "" {
				j.fail(catalogue.VideosTenant, ptr, "no VideoEntry of a channel another account's feed shows and this account's whole feed never does",
					fmt.Sprintf("a VideoEntry for %s of channel %s", jsondoc.Quote(id, 60), jsondoc.Quote(ch, 60)))
			} else if !m.videosSeen[id] {
				j.fail(catalogue.VideosMissing, ptr, "a video of no channel the account tracks listed missing, not invented",
					fmt.Sprintf("a VideoEntry for %s of channel %s, which the account's whole feed never shows", jsondoc.Quote(id, 60), jsondoc.Quote(ch, 60)))
			}
		}
		for k, ev := range evs[i] {
			m.event(j, ev)
			m.publishedOnce(j, fmt.Sprintf("%s/events/%d", ptr, k), ev)
		}
	}
}

// foldOf is the id of a video the key's feed showed that id folds to
// (letter case, Unicode compatibility forms, surrounding space) while it
// differs from it, when the entry is that video (its channel and its
// publishedAt): "" if none.
func (k *keyState) foldOf(id string, entry any) string {
	fold := func(s string) string { return strings.ToLower(norm.NFKC.String(strings.TrimSpace(s))) }
	ch, _ := jsondoc.String(entry, "/video/channel/id")
	pub, _ := jsondoc.Get(entry, "/video/publishedAt")
	folded, published := fold(id), string(jsondoc.Encode(pub))
	for known, f := range k.videos {
		if known != id && f.channel == ch && f.publishedAt == published && fold(known) == folded {
			return known
		}
	}
	return ""
}

// otherShows reports whether another key's pages showed the channel: a
// video of it the key's feed showed may have come from the other's (a
// leak FEED-TENANT judges), so VIDEOS-SERVED leaves it.
func (m *model) otherShows(ch, not string) bool {
	for t, k := range m.keys {
		if t != not && k.channels[ch] {
			return true
		}
	}
	return false
}

// channelOwner is another key whose whole feed shows the channel.
func (m *model) channelOwner(ch, not string) string {
	for t, k := range m.keys {
		if t != not && k.walkChans[ch] {
			return t
		}
	}
	return ""
}

// consistent: a VideoEntry says of its video what the feed said: the
// publishedAt and channel, and while the target's world stood still the
// title its latest change settled on.
func (m *model) consistent(j *judging, ptr string, e any, f *videoFact) {
	if pub, ok := jsondoc.Get(e, "/video/publishedAt"); ok && f.publishedAt != "" && plausible(pub) && string(jsondoc.Encode(pub)) != f.publishedAt {
		j.fail(catalogue.VideosServed, ptr+"/video/publishedAt", "the publishedAt the feed showed for the video, "+f.publishedAt, "publishedAt "+string(jsondoc.Encode(pub)), f.resp)
	}
	if ch, ok := jsondoc.String(e, "/video/channel/id"); ok && f.channel != "" && ch != f.channel {
		j.fail(catalogue.VideosServed, ptr+"/video/channel/id", "the channel the feed showed for the video, "+jsondoc.Quote(f.channel, 60), "channel "+jsondoc.Quote(ch, 60), f.resp)
	}
	if t, ok := jsondoc.String(e, "/video/currentTitle"); ok && f.hasTitle && f.settled && t != f.title && f.superseded[t] && j.o.frozen(f.learned, j.at) {
		j.fail(catalogue.VideosServed, ptr+"/video/currentTitle", fmt.Sprintf("the title the feed's latest change settled on, %s: the target's clock has not moved since", jsondoc.Quote(f.title, 80)),
			"currentTitle "+jsondoc.Quote(t, 80), f.resp)
	}
}

// accountString names a string that is the account's data: a known event
// id, or a known video id the request did not name ("" when neither).
func (m *model) accountString(s, named string) string {
	if len(s) < 4 || strings.Contains(named, s) {
		return ""
	}
	if _, ok := m.events[s]; ok {
		return "the event id " + jsondoc.Quote(s, 60)
	}
	if m.videosSeen[s] {
		return "the video id " + jsondoc.Quote(s, 60)
	}
	return ""
}

// paramValue is "name=value" of a query's parameter, for what the target
// refused alone.
func paramValue(query, name string) string {
	v, _ := url.ParseQuery(query)
	return name + "=" + strings.Join(v[name], "&")
}
