package clients

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/schemas/catalogue"
	"github.com/tcmkit/tcmkit/schemas/jsondoc"
	"github.com/tcmkit/tcmkit/simulator"
)

// rule is one client requirement the judge checks.
type rule int

const (
	ruleBearer rule = iota
	ruleKeyInURL
	ruleRetryAfter
	ruleRate
	ruleCursor
	ruleWalk
	ruleVideoIDs
	ruleJSONBody
	ruleBackoff
	ruleCycle
	nRules
)

// rules says, per rule, the requirement, what a client must do in a few
// words (a finding's rule, a report's line) and why a client that never
// met it was not judged on it.
var rules = [nRules]struct {
	id         catalogue.ID
	must       string
	unexercise string
}{
	ruleBearer:     {catalogue.ClientBearer, "sends its key as one Authorization: Bearer <key> header", "no feed or tracked-videos request"},
	ruleKeyInURL:   {catalogue.ClientKeyNotInURL, "keeps its key out of URLs (every part) and bodies", "no request"},
	ruleRetryAfter: {catalogue.ClientRetryAfter, "waits as long as Retry-After says before it asks again", "no 429 was followed by another request of this key to its operation"},
	ruleRate:       {catalogue.ClientRate, "sends at most 20 feed requests a minute, whatever the answers", "no feed request with the key in its Authorization header"},
	ruleCursor:     {catalogue.ClientCursorIssued, "passes only cursors the server handed to it", "no request passed a cursor"},
	ruleWalk:       {catalogue.ClientWalkEnd, "walks on until nextCursor is null", "no walk begun (no nextCursor followed)"},
	ruleVideoIDs:   {catalogue.ClientVideoIDs, "sends 1 to 20 video ids of 1 to 32 characters", "no tracked-videos body that the server read"},
	ruleJSONBody:   {catalogue.ClientJSONBody, "sends a JSON object as application/json", "no tracked-videos or health request"},
	ruleBackoff:    {catalogue.ClientBackoff, "waits after an error answer before it asks again", "no error answer (5xx, cut or dropped) was followed by another request of this key to its operation"},
	ruleCycle:      {catalogue.ClientCursorCycle, "stops following a cursor that leads back to a page its walk read", "no page's nextCursor led back to a cursor its walk had followed"},
}

// checkLeaks: CLIENT-KEY-NOT-IN-URL, on every request.
func (j *Judge) checkLeaks(c *client, x *simulator.Exchange) {
	c.checked[ruleKeyInURL]++
	for _, k := range x.KeysSeen {
		if inURL(k) {
			j.find(c, ruleKeyInURL, x, because{say: sayLeaks, keys: x.KeysSeen}, nil)
			return
		}
	}
}

// inURL: where CLIENT-KEY-NOT-IN-URL forbids a key: any part of a URL
// (the request target's path, query and fragment, its userinfo, its host;
// the Referer header, which is one) and the body.
func inURL(k simulator.KeySeen) bool {
	switch k.Where {
	case "path", "query", "userinfo", "host", "body", "referer":
		return true
	}
	return false
}

// inOtherHeader: where CLIENT-BEARER forbids a key, beside a correct
// Authorization header: any other header, a cookie.
func inOtherHeader(k simulator.KeySeen) bool { return k.Where == "header" || k.Where == "cookie" }

func sayLeaks(b because) string {
	var where []string
	for _, k := range b.keys {
		if inURL(k) {
			where = append(where, fmt.Sprintf("the key %s in the %s", k.KeyHint, placeName(k.Where)))
		}
	}
	return strings.Join(where, "; ") + ": a key is a password, and URLs end up in logs and proxies"
}

func placeName(where string) string {
	switch where {
	case "query":
		return "query string"
	case "referer":
		return "Referer header (a URL)"
	case "userinfo":
		return "userinfo of the URL (user:password@host)"
	case "host":
		return "host of the URL (the Host header)"
	}
	return where
}

// checkBearer: CLIENT-BEARER, on the feed and tracked videos.
func (j *Judge) checkBearer(c *client, x *simulator.Exchange) {
	c.checked[ruleBearer]++
	why := because{say: sayBearer}
	for _, k := range x.KeysSeen {
		if inOtherHeader(k) {
			why.text = k.KeyHint
			if k.Where == "cookie" {
				why.n[1] = 1
			}
			break
		}
	}
	if x.AuthProblem == "" && why.text == "" {
		return
	}
	switch x.AuthProblem {
	case "":
		why.n[0] = 2 // a correct header, and the key elsewhere too
	case simulator.CodeMissingKey:
		why.n[0] = 1
	}
	j.find(c, ruleBearer, x, why, nil)
}

// sayBearer: n[0] is 1 for a missing key, 2 for a correct Authorization
// header; text the hint of a key that came in another header, n[1] 1 when
// that header was a cookie.
func sayBearer(b because) string {
	evidence := "the Authorization header is not one Bearer <key> with the key whole (another scheme, two headers, or a key cut or padded)"
	switch b.n[0] {
	case 1:
		evidence = "no Authorization header (or an empty one)"
	case 2:
		evidence = "the Authorization header is right"
	}
	if b.text != "" {
		where := "another header"
		if b.n[1] == 1 {
			where = "a cookie"
		}
		evidence += "; the key " + b.text + " came in " + where + " too: it goes in Authorization: Bearer and nowhere else"
	}
	return evidence
}

// The operations a 429 can come from, as indexes of client.after429.
const (
	slotFeed = iota
	slotVideos
)

// pending429 is a 429 whose Retry-After the key's next request to the
// operation must honour. Requests already in flight when it was answered
// (see inFlight) are no retries of it; their 429s join it, and the wait
// that ends last is the one a retry must honour.
type pending429 struct {
	set      bool
	at       time.Time     // on the rate clock, when the 429's request arrived
	answered time.Time     // real time the first 429 was answered: a request sent before did not know of it
	conns    []string      // the connections its 429s were answered on (up to maxWaveConns)
	wait     time.Duration // Retry-After
	ref      rawRef
	fault    int // the injected fault that answered it, if any
}

// inFlightMargin is how long after a 429 was answered a request on
// another connection may still arrive that was sent before the client
// read it: a client that writes its requests on many connections at once
// has them arrive one after another as the server takes them, a little
// after the first answers (0.05 ms in a thread pool of 25; more on a busy
// machine). The judge sees arrivals only: it stays on the client's side.
// On the 429's own connection a request that arrived after the answer
// was sent after it (HTTP/1.1 answers a connection's requests in turn).
const inFlightMargin = 50 * time.Millisecond

// inFlight reports whether x may have been sent before the client read
// the 429 p: it arrived before p was answered, or on another connection
// within inFlightMargin after.
func (p *pending429) inFlight(x *simulator.Exchange) bool {
	if x.Time.Before(p.answered) {
		return true
	}
	return !slices.Contains(p.conns, x.Conn) && x.Time.Before(p.answered.Add(inFlightMargin))
}

// maxWaveConns bounds the connections a pending429 keeps.
const maxWaveConns = 64

// checkRetryAfter: CLIENT-RETRY-AFTER. It returns the 429 that x did not
// wait out (set), the zero value if x did or followed none.
func (j *Judge) checkRetryAfter(c *client, x *simulator.Exchange, slot int) (early pending429) {
	if c.id == "" {
		return early // requests without a key are not one client's
	}
	p := &c.after429[slot]
	inFlight := p.set && p.inFlight(x)
	if p.set && !inFlight {
		c.checked[ruleRetryAfter]++
		if waited := x.RateTime.Sub(p.at); waited < p.wait {
			early = *p
			j.find(c, ruleRetryAfter, x, because{say: sayEarly, n: [3]uint64{p.ref.ID}, d: [2]time.Duration{waited, p.wait}}, &early.ref)
		}
		p.set = false
	}
	if x.Status != http.StatusTooManyRequests {
		return early
	}
	wait, ok := retryAfter(x)
	switch {
	case !ok:
	case inFlight:
		// A 429 of a request in flight: the client reads both; the wait
		// that ends last binds it, counted from the first's answer. A
		// request on its connection after it is a retry too.
		if x.RateTime.Add(wait).After(p.at.Add(p.wait)) {
			p.at, p.wait, p.ref, p.fault = x.RateTime, wait, keptRef(x), x.Fault
		}
		if len(p.conns) < maxWaveConns && !slices.Contains(p.conns, x.Conn) {
			p.conns = append(p.conns, x.Conn)
		}
	default:
		*p = pending429{set: true, at: x.RateTime, answered: x.Time.Add(time.Duration(x.Micros) * time.Microsecond), conns: []string{x.Conn}, wait: wait, ref: keptRef(x), fault: x.Fault}
	}
	return early
}

// sayEarly: d is the wait and the Retry-After, n[0] the 429's request.
func sayEarly(b because) string {
	waited, asked := secondsApart(b.d[0], b.d[1])
	return fmt.Sprintf("sent %s after the 429 of request #%d, whose Retry-After asked for %s", waited, b.n[0], asked)
}

// retryAfter reads the answer's Retry-After: delta-seconds, or an
// HTTP-date read against the answer's Date (RFC 9110: both are the
// server's clock, the simulator's virtual one), else against the time the
// request arrived.
func retryAfter(x *simulator.Exchange) (time.Duration, bool) {
	v := strings.TrimSpace(x.RetryAfter)
	if v == "" {
		return 0, false
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil && n >= 0 {
		return time.Duration(min(n, 1<<32)) * time.Second, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	base := x.Time
	if d, err := http.ParseTime(x.ResponseHeader.Get("Date")); err == nil {
		base = d
	}
	return max(t.Sub(base), 0), true
}

// recentFeed is a ring of a key's last feed requests (those with the key
// in its Authorization header): when each arrived on the rate clock, and
// its journal id.
type recentFeed struct {
	at   [schemas.FeedRequestsPerMinute]int64 // RateTime, ns
	ids  [schemas.FeedRequestsPerMinute]uint64
	n    int
	next int // the slot the next request takes
}

// rateSlack is what the judge allows for transit in real time: it sees
// requests as they arrive, and a client that sends one every 3 s by its own
// clock may have two arrive a little closer. On the manual clock a request
// arrives at the virtual time it was sent: no slack.
const rateSlack = time.Second

// checkRate: CLIENT-RATE, on the feed. A request that makes more than
// FeedRequestsPerMinute feed requests of the key within one RateWindow
// (a sliding minute, on the clock the server counts on, less rateSlack)
// breaks it, whatever the answers were: 200s, the limiter's 429s, a
// scenario's, or none at all. One burst of 21 is a finding, even when the
// client then waits out the Retry-After: the contract's limit binds the
// client, and a 429 is how the server tells it that it broke it (the
// catalogue says so).
func (j *Judge) checkRate(c *client, x *simulator.Exchange) {
	if c.id == "" || x.KeyID != c.id {
		return // not the key's own request: the server counted it on no key
	}
	c.checked[ruleRate]++
	r := &c.recent
	t := x.RateTime.UnixNano()
	if r.n == len(r.at) {
		// The span of this request and the ring's (in arrival order at the
		// judge, which concurrent requests may shuffle: hence min and max).
		first, last, firstID := t, t, x.ID
		for i, at := range r.at {
			if at < first || (at == first && r.ids[i] < firstID) {
				first, firstID = at, r.ids[i]
			}
			last = max(last, at)
		}
		slack := rateSlack
		if j.srv.ManualClock() {
			slack = 0 // virtual time has no transit: the minute is exact
		}
		if span := time.Duration(last - first); span < schemas.RateWindow-slack {
			j.find(c, ruleRate, x, because{say: sayRate, n: [3]uint64{uint64(len(r.at)), firstID}, d: [2]time.Duration{span}}, nil)
		}
	} else {
		r.n++
	}
	r.at[r.next], r.ids[r.next] = t, x.ID
	r.next = (r.next + 1) % len(r.at)
}

// sayRate: n is the requests before this one and the first of them, d[0]
// the span.
func sayRate(b because) string {
	span, _ := secondsApart(b.d[0], schemas.RateWindow)
	return fmt.Sprintf("%d feed requests of the key within %s (this one and the %d before it, from request #%d): the limit is %d a minute per key, whatever the server answers",
		b.n[0]+1, span, b.n[0], b.n[1], schemas.FeedRequestsPerMinute)
}

// jsonHeader is the header the tracked-videos body is judged with once
// the Content-Type was judged on its own.
var jsonHeader = http.Header{"Content-Type": {"application/json"}}

// checkVideos: CLIENT-JSON-BODY and CLIENT-VIDEO-IDS, on the body as sent
// (the simulator reads it for the judge also when it answers before
// reading it: a 401, a 403, a 429).
func (j *Judge) checkVideos(c *client, x *simulator.Exchange) {
	c.checked[ruleJSONBody]++
	if bad := simulator.CheckContentType(x.RequestHeader); bad != nil {
		j.find(c, ruleJSONBody, x, words(contentTypeEvidence(x)), nil)
	}
	_, bad := simulator.ParseVideosRequest(jsonHeader, x.RequestBody)
	if bad == nil {
		c.checked[ruleVideoIDs]++
		return
	}
	var body, ids []string
	for _, v := range violations(bad) {
		what := v.Rule
		if v.Pointer != "" {
			what = v.Pointer + ": " + v.Rule
		}
		switch {
		case v.Keyword == "json" || v.Keyword == "utf8" || v.Keyword == "maxBytes" || v.Keyword == "body",
			v.Pointer == "" && v.Keyword == "type":
			body = append(body, what)
		default:
			ids = append(ids, what)
		}
	}
	if len(body) > 0 {
		j.find(c, ruleJSONBody, x, words("the body is not a JSON object: "+summary(body)), nil)
		return
	}
	c.checked[ruleVideoIDs]++
	if len(ids) > 0 {
		j.find(c, ruleVideoIDs, x, words("the body's videoIds breaks the rule: "+summary(ids)), nil)
	}
}

func violations(bad *simulator.BadRequest) []schemas.Violation {
	d, _ := bad.Details.(map[string]any)
	vs, _ := d["violations"].([]schemas.Violation)
	return vs
}

func summary(parts []string) string {
	if len(parts) > 5 {
		parts = append(parts[:5:5], fmt.Sprintf("and %d more", len(parts)-5))
	}
	return jsondoc.Excerpt(strings.Join(parts, "; "), 400)
}

func contentTypeEvidence(x *simulator.Exchange) string {
	ct := x.RequestHeader.Values("Content-Type")
	if len(ct) == 0 {
		return "no Content-Type header; the body must be sent as application/json"
	}
	return "Content-Type " + strconv.Quote(quote(strings.Join(ct, ", "), 80)) + "; the body must be sent as application/json"
}

// checkHealth: CLIENT-JSON-BODY for the health check (the spec: a JSON
// object, as application/json; {} is the usage shown), and the open point
// CLIENT-HEALTH-KEY, noted only.
func (j *Judge) checkHealth(c *client, x *simulator.Exchange) {
	if x.KeyID != "" {
		c.healthWithKey++
	}
	c.checked[ruleJSONBody]++
	if bad := simulator.CheckContentType(x.RequestHeader); bad != nil {
		j.find(c, ruleJSONBody, x, words(contentTypeEvidence(x)), nil)
		return
	}
	doc, err := jsondoc.Decode(x.RequestBody)
	if _, object := doc.(map[string]any); err != nil || !object {
		j.find(c, ruleJSONBody, x, words("the health check's body is not a JSON object ({} is the usage shown)"), nil)
	}
}

// seconds says a duration in seconds to the millisecond, cut, never
// rounded up (4.9996 s is 4.999 s: evidence never makes an early request
// look on time), without trailing zeros.
func seconds(d time.Duration) string { return secondsTo(d, 3) }

// secondsApart says a and b in seconds to the millisecond, or finer
// where the millisecond does not tell them apart: a retry 0.4 ms early is
// "4.9996 s" against "5 s", not "5 s" against "5 s".
func secondsApart(a, b time.Duration) (string, string) {
	for digits := 3; digits < 9; digits++ {
		if sa, sb := secondsTo(a, digits), secondsTo(b, digits); sa != sb || a == b {
			return sa, sb
		}
	}
	return secondsTo(a, 9), secondsTo(b, 9)
}

// secondsTo says d in seconds with at most digits decimals, cut.
func secondsTo(d time.Duration, digits int) string {
	sign := ""
	if d < 0 {
		sign, d = "-", -d
	}
	unit := time.Second
	for range digits {
		unit /= 10
	}
	frac := fmt.Sprintf("%0*d", digits, (d%time.Second)/unit)
	frac = strings.TrimRight(frac, "0")
	out := sign + strconv.FormatInt(int64(d/time.Second), 10)
	if frac != "" {
		out += "." + frac
	}
	return out + " s"
}
