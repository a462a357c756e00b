// Package oracle is the suite's contract oracle: every exchange of a run
// (a request and its answer) goes through it, and it returns what breaks
// the contract, each problem blaming the one requirement whose rule it
// breaks. It judges an answer by every rule of the contract, not only the
// one the request was sent for, and keeps a model of what the run has seen
// (the cursors handed out, every event id with its content, the videos as
// the feed showed them, each key's requests and Retry-After promises), so
// that an answer that contradicts an earlier one fails too, with both as
// evidence.
//
// The rules read the request's class (the operation, the credential, the
// query's or the body's validity: class.go), then the answer: its status
// (status.go), its headers and body (answer.go), and the model (model.go).
// Where the contract is silent, every conforming answer passes: a rule
// fails only what the contract rules out, and its Expected says what was
// allowed. A body is judged by the rules of the status the contract
// wanted, never when the status was already wrong.
//
// The package knows no Ginkgo: the suite hands it each answer as it comes
// (client.Client.Observe) and fails the spec that saw it.
package oracle

import (
	"strings"
	"sync"
	"time"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/schemas/catalogue"
	"github.com/tcmkit/tcmkit/suites/client"
)

// Keys are the credentials the oracle knows, by role.
type Keys struct {
	// Pro and Free are valid keys by plan.
	Pro, Free []string
	Revoked   []string
	// Prefix is the key prefix (<KEY_PREFIX>_<random>): a token with it
	// that is no account's key is unknown, one without it malformed.
	Prefix string
	// Invented reports a video id the suite made so that no video has it.
	Invented func(id string) bool
}

// Options configure an Oracle.
type Options struct {
	Keys Keys
	// Exclusive: the run is the only client of its keys, on a clock it
	// moves (a simulator's manual clock): the model may count a key's
	// window from what the suite sent. On any clock, a sequence may say
	// so of one key while it holds it (Own).
	Exclusive bool
	// Now is the target's time when an answer came (on a manual clock, the
	// time the run moved it to); nil is the wall clock.
	Now func() time.Time
	// Drifted reports whether the target's clock moved by itself beyond
	// what Now says (a world whose clock moves with every request): the
	// rules that count a window then say nothing. nil: never. It is asked
	// only before such a rule fails.
	Drifted func() bool
	// Calendar is the target's date now, for what is plausible (a
	// timestamp a year past it is no epoch milliseconds); nil is the wall
	// clock. A simulator's manual clock may run years off the wall's.
	Calendar func() time.Time
	// Frozen reports whether the target's world could not change between
	// two times of Now (a manual clock that did not move); nil: never.
	Frozen func(a, b time.Time) bool
}

// Problem is one broken rule in one exchange.
type Problem struct {
	Requirement catalogue.ID
	// Request names the exchange judged (method, path, query).
	Request  string
	Pointer  string
	Expected string
	Actual   string
	// Evidence are the exchange and the earlier ones it contradicts.
	Evidence []*client.Response
}

// Oracle judges exchanges. It is safe for concurrent use; the exchanges
// are judged one at a time, in the order they come.
type Oracle struct {
	opt  Options
	keys Keys

	mu    sync.Mutex
	m     model
	valid map[bodyKey][]schemas.Violation
}

// New returns an oracle that knows the keys and nothing else yet.
func New(opt Options) *Oracle {
	o := &Oracle{opt: opt, keys: opt.Keys, valid: map[bodyKey][]schemas.Violation{}}
	if o.keys.Invented == nil {
		o.keys.Invented = func(string) bool { return false }
	}
	o.m.init()
	return o
}

func (o *Oracle) now() time.Time {
	if o.opt.Now != nil {
		return o.opt.Now()
	}
	return time.Now()
}

func (o *Oracle) calendar() time.Time {
	now := time.Now()
	if o.opt.Calendar != nil {
		if t := o.opt.Calendar(); t.After(now) {
			return t
		}
	}
	return now
}

func (o *Oracle) drifted() bool { return o.opt.Drifted != nil && o.opt.Drifted() }

func (o *Oracle) frozen(a, b time.Time) bool { return o.opt.Frozen != nil && o.opt.Frozen(a, b) }

// Sending tells the oracle of a request as it is sent (its number in the
// run): which requests of a key went between two of its answers, and
// when each went (the clock moves while a request is out).
func (o *Oracle) Sending(req client.Request, seq int) {
	c, token := o.keys.credential(req)
	if c.bad() || o.keys.plan(token) == "" {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	k := o.m.key(token)
	o.m.moment++
	k.sent = append(k.sent, sending{seq: seq, at: o.now(), event: o.m.moment})
	if len(k.sent) > maxSentKept {
		k.sent = k.sent[len(k.sent)-maxSentKept/2:]
	}
}

// maxSentKept bounds the request numbers kept of a key.
const maxSentKept = 4096

// Own tells the oracle what a sequence knows of a key's window while it
// holds the key: until release, the run is the key's only client, and the
// window has room for room more requests now (the sequence waited for it:
// 20 is a fresh window). What Options.Exclusive says of every key on a
// clock the run moves, Own says of one key on any clock. While the key is
// owned, the rules that count its window judge its answers:
// RATE-ALLOWS-20 and RATE-PER-KEY (counting no more than the sequence
// said the window held, and what was sent since; another owned key
// throttled after filling its window explains a 429), RATE-RETRY-AFTER (when
// it was owned at the 429 too). A token of no valid key is owned by no
// one.
func (o *Oracle) Own(token string, room int) (release func()) {
	if o.keys.plan(token) == "" {
		return func() {}
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	k := o.m.key(token)
	o.m.moment++ // what is sent from now on was sent while it was owned
	before, own := k.own, &ownership{event: o.m.moment, at: o.now(), room: min(max(room, 0), schemas.FeedRequestsPerMinute)}
	k.own = own
	return func() {
		o.mu.Lock()
		defer o.mu.Unlock()
		if k.own == own {
			k.own = before
		}
	}
}

// exclusive reports whether the key's window is the run's alone now: the
// run's only client on a clock it moves, or a sequence owns it.
func (j *judging) exclusive(k *keyState) bool { return j.o.opt.Exclusive || k.own != nil }

// Judge judges one exchange by every rule, and remembers it.
func (o *Oracle) Judge(resp *client.Response) []Problem {
	if resp == nil {
		return nil
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.m.moment++ // what is sent from now on was sent after this answer came
	j := o.judging(resp)
	j.judge()
	if resp.Rewritten != "" {
		// the request as asked is judged; the form it went in may be
		// what the target read otherwise: the failure names it
		for i := range j.problems {
			j.problems[i].Expected += "; the request was written " + resp.Rewritten
		}
	}
	return j.problems
}

// judging is one exchange being judged.
type judging struct {
	o     *Oracle
	resp  *client.Response
	req   client.Request
	at    time.Time
	op    Op
	cred  Cred
	token string
	plan  Plan
	q     feedQuery
	vb    videosBody
	// healthOK: the health body is the usage shown (a JSON object).
	healthOK bool
	// the body, decoded when a rule first reads it (document)
	decoded  bool
	docV     any
	docE     error
	problems []Problem
}

func (o *Oracle) judging(resp *client.Response) *judging {
	j := &judging{o: o, resp: resp, req: resp.Request, at: o.now()}
	j.op = opOf(j.req.Method, j.req.Path)
	j.cred, j.token = o.keys.credential(j.req)
	j.plan = o.keys.plan(j.token)
	switch j.op {
	case Feed:
		j.q = o.feedQuery(j.req, j.token)
	case Videos:
		j.vb = classVideos(j.req)
	case Health:
		j.healthOK = healthBodyValid(j.req)
	}
	return j
}

// document is the body decoded, once, when a rule first needs it: an
// answer whose status already broke a rule is not decoded at all.
func (j *judging) document() (any, error) {
	if !j.decoded {
		j.decoded = true
		j.docV, j.docE = j.resp.JSON()
	}
	return j.docV, j.docE
}

func (j *judging) doc() any { d, _ := j.document(); return d }

func (j *judging) docErr() error { _, err := j.document(); return err }

func (j *judging) judge() {
	statusOK := j.status()
	j.o.m.requestSeen(j, statusOK)
	if !statusOK {
		return // the body is judged by the rules of the status the contract wanted
	}
	j.headers()
	j.body()
}

// fail records a problem of this exchange.
func (j *judging) fail(id catalogue.ID, ptr, expected, actual string, earlier ...*client.Response) {
	ev := append([]*client.Response{j.resp}, earlier...)
	j.problems = append(j.problems, Problem{Requirement: id, Request: j.req.String(), Pointer: ptr, Expected: expected, Actual: actual, Evidence: ev})
}

// Rule is one rule of the oracle, for people and for the test that holds
// every must requirement to one.
type Rule struct {
	Requirement catalogue.ID
	What        string
}

// Rules lists the oracle's rules, by requirement.
var Rules = []Rule{
	{catalogue.HealthOK, "health with a JSON object and no key (or a valid one) is 200 with {\"status\":\"ok\"}; every 200 of health is a HealthBody"},
	{catalogue.AuthMissing, "a request of the feed or tracked videos without an Authorization header (a key in the query, a cookie or another header is none) is 401, and no answer to it carries the account's data"},
	{catalogue.AuthMalformed, "another scheme, an empty or split token, a token without the prefix: 401"},
	{catalogue.AuthUnknown, "a token with the prefix that is no account's key (case, look-alike and normalized variants of a key included): 401"},
	{catalogue.AuthRevoked, "the revoked key: 401"},
	{catalogue.AuthValid, "a valid key is never refused with 401, and a form of it accepted on one operation is accepted on the other"},
	{catalogue.ProGate, "tracked videos for a free plan's key: 403; the Pro key and the feed are never 403"},
	{catalogue.FeedPageSchema, "a valid feed request is answered 200 (or 429) with a FeedPage"},
	{catalogue.FeedOrder, "events newest first within a page, and a cursor's page older than the page that handed it out"},
	{catalogue.FeedPageDefault, "without limit, 50 events a page, fewer only with a null nextCursor"},
	{catalogue.FeedLimit, "limit=n (1 to 200) gives n events a page, fewer only with a null nextCursor; never 400"},
	{catalogue.FeedLimitCap, "a limit above 200 gives 200 events a page, never more and never 400; no page of any limit holds more than 200"},
	{catalogue.FeedCursorWalk, "a cursor the target handed to the key is served, its page repeats no event of the walk, and a later whole walk holds every event an earlier one held below its head"},
	{catalogue.FeedCursorEnd, "nextCursor is null or a cursor, never \"\"; a handed-out cursor does not lead to an empty last page; a whole walk does not end above events the feed showed before"},
	{catalogue.FeedTenant, "a page asked with another key's cursor shows no event of that key's feed the asking account's whole feed never shows"},
	{catalogue.FeedBadParam, "a feed 400 is an ErrorBody whose details name the parameter it refused (each parameter the target refused alone)"},
	{catalogue.EventSchema, "every event of every 200 has the fields of its type"},
	{catalogue.EventTypes, "every event's type is one of the 11"},
	{catalogue.EventChannelNoVideo, "channel-level events carry no video; the other eight carry one"},
	{catalogue.TimestampEpochMs, "every createdAt, publishedAt and firstSeenAt is an integer of epoch milliseconds between 2000 and a year from now"},
	{catalogue.CountNonnegOrNull, "every counter is an integer >= 0 or null, and present"},
	{catalogue.URIFormat, "every URI field holds a URI"},
	{catalogue.EventIDUnique, "no page holds an id twice, and an id never names two different events (type, time, channel, the change it records) across the run"},
	{catalogue.EventChangeDiffers, "a title_changed, thumbnail_changed, channel_renamed, channel_avatar_changed or subscriber_change event's old value differs from its new one (a null old subscriber count excepted)"},
	{catalogue.EventAbVariants, "an A/B test event names at least two different variants; a concluded one's winner is one of its variants"},
	{catalogue.EventMembersSwitched, "of two members_only_changed events of a video with none between them on a page or down a cursor walk, the newer holds the other state"},
	{catalogue.EventPublishedOnce, "no two video_published events of one video at two different times"},
	{catalogue.VideosIDsMin, "one id is served; an empty videoIds is 400"},
	{catalogue.VideosIDsMax, "20 ids are served; 21 are 400"},
	{catalogue.VideosIDLen, "an id of 32 characters is served; an empty one or one of 33 is 400"},
	{catalogue.VideosBadBody, "a body that is not one JSON object with a videoIds array of strings (member names are case-sensitive, no trailing data, form encoding is none) is 400"},
	{catalogue.VideosEntrySchema, "a 200 of tracked videos has videos and missingVideoIds, each VideoEntry with its fields"},
	{catalogue.VideosServed, "the Pro key's valid request is answered 200 (or 429); a video the key's feed showed comes back as a VideoEntry, with the publishedAt and channel the feed showed (and, while the target's world stood still, the title it settled on)"},
	{catalogue.VideosMissing, "an id the suite invented, or of a video no feed showed and of no channel of the account, or another id that folds (letter case, Unicode compatibility forms, space) to a video the feed showed, is listed missing"},
	{catalogue.VideosPartition, "every requested id is in exactly one of the two lists, and nothing else is"},
	{catalogue.VideosTenant, "no VideoEntry of a channel another account's feed shows and this account's whole feed never does"},
	{catalogue.RateLimit429, "no key is admitted more feed requests in a span than any limiter of 20 a minute admits, nor after a feed 429 more than 20 for each minute since (none while no time passed: a limiter that loses its state shows), nor, within a minute of a window its owner held empty, more than 20 and a bucket's refill unless a fixed window of a minute turned over then and in every earlier such span of the key, on one grid; a throttle is 429, not 503; a 429 carries none of the data it refuses"},
	{catalogue.RateRetryAfter, "every 429 carries a Retry-After of delta-seconds or an HTTP-date; on a key whose window is the run's (every key on a clock the run moves, a key a sequence owns on any clock: Own), the first request after waiting it, nothing sent meanwhile, is not 429"},
	{catalogue.RateAllows20, "on a key whose window is the run's, the feed is not 429 while the key sent fewer than 20 requests in the last minute (counted from what the run sent, or what the key's owner said its window held and what was sent since), and, unless a sequence owns the key, no key of the run filled that minute"},
	{catalogue.RatePerKey, "on a key whose window is the run's, a key is not throttled for the traffic of others: not 429 when it sent nothing in a minute the others filled, nor, when a sequence owns it, while it sent fewer than 20 and another owned key was throttled after filling its window"},
	{catalogue.ErrorBody, "every 4xx and 5xx of the three operations is an ErrorBody with string error and message, and carries none of the account's data"},
	{catalogue.ContentTypeJSON, "every answer of the three operations has a JSON media type, whatever Accept asked"},
}

// describe names an exchange's class for a problem's Expected.
func (j *judging) describe() string {
	var b strings.Builder
	b.WriteString(j.cred.says())
	if j.plan != "" {
		b.WriteString(" of a " + string(j.plan) + " plan")
	}
	switch j.op {
	case Feed:
		if len(j.q.open) > 0 {
			b.WriteString("; parameters the contract leaves open: " + strings.Join(j.q.open, ", "))
		}
	case Videos:
		if j.vb.verdict != valid {
			b.WriteString("; the body: " + j.vb.why)
		}
	}
	return b.String()
}
