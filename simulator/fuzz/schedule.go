package fuzz

import (
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tcmkit/tcmkit/simulator"
)

// Bounds of what a Schedule keeps and judges.
const (
	// maxLaps ends a cursor cycle: a client that follows it that often
	// gets the real nextCursor (the client judge found the cycle followed
	// long before: CLIENT-CURSOR-CYCLE).
	maxLaps = 100
	// outage bounds: a 5xx lasts outageRequests requests and outageFor of
	// the clock, and ends after outageMax requests whatever the clock.
	outageRequests = 3
	outageFor      = 4 * time.Second
	outageMax      = 50
	maxRemembered  = 4096
	maxServedLines = 500
)

// Schedule serves a Plan: a layer around the API's operations that
// counts the requests and serves each step on its request.
type Schedule struct {
	plan Plan
	srv  *simulator.Server

	mu        sync.Mutex
	requests  int
	pending   []Step
	served    []string
	ids       []string
	idSet     map[string]bool
	mayFail   bool
	throttled map[string]time.Time // key+op: refused until, on the rate clock
	outage    *outage
	pages     map[string]pageInfo // a cursor handed out: the page it reaches
	walks     int
	cycle     *cycle
	ends      map[string]int  // invented cursors of last pages: the request that served them
	answered  map[string]bool // key+op: the last answer was a success
}

type outage struct {
	op       simulator.Operation
	status   int
	from     int // request
	since    time.Time
	answered int
}

type pageInfo struct {
	walk, page, offset int
	last               any // the last event of the page before
}

type cycle struct {
	cursor string
	from   int
	laps   int
}

// New makes the schedule of a plan. Plan.Configure is the usual way.
func New(p Plan) *Schedule {
	return &Schedule{plan: p, pending: slices.Clone(p.Steps), idSet: map[string]bool{}, throttled: map[string]time.Time{},
		pages: map[string]pageInfo{}, ends: map[string]int{}, answered: map[string]bool{}}
}

// Plan is the schedule's plan.
func (s *Schedule) Plan() Plan { return s.plan }

// Layer is the schedule as the outermost layer of one server
// (simulator.Config.Layers): it serves each step on its request and tells
// what it served on GET /_control/fuzz.
func (s *Schedule) Layer() simulator.Layer {
	name := fmt.Sprintf("fuzz input %x", s.plan.Input)
	if s.plan.Seed != 0 {
		name = fmt.Sprintf("fuzz seed %d", s.plan.Seed)
	}
	return simulator.Layer{Name: name, Wrap: s.wrap, Served: func() simulator.Answer {
		return simulator.JSONAnswer(http.StatusOK, s.Snapshot())
	}}
}

// Report is what GET /_control/fuzz serves.
type Report struct {
	Seed     int64    `json:"seed,omitempty"`
	Input    string   `json:"input"`
	Plan     string   `json:"plan"`
	Served   []string `json:"served"`
	Pending  []string `json:"pending"`
	EventIDs []string `json:"eventIds"`
	MayFail  bool     `json:"mayFail"`
	Requests int      `json:"requests"`
}

// Snapshot is Report, typed.
func (s *Schedule) Snapshot() Report {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := Report{Seed: s.plan.Seed, Input: hex.EncodeToString(s.plan.Input), Plan: s.plan.String(), Served: slices.Clone(s.served),
		EventIDs: slices.Clone(s.ids), MayFail: s.mayFail, Requests: s.requests}
	for _, st := range s.pending {
		r.Pending = append(r.Pending, fmt.Sprintf("from request %d: %s", st.At, st))
	}
	for _, l := range []*[]string{&r.Served, &r.Pending, &r.EventIDs} {
		if *l == nil {
			*l = []string{}
		}
	}
	return r
}

// String tells the whole story: the plan and what was served.
func (r Report) String() string {
	var b strings.Builder
	b.WriteString(r.Plan)
	fmt.Fprintf(&b, "\nserved (%d requests):", r.Requests)
	if len(r.Served) == 0 {
		b.WriteString(" the world, nothing else")
	}
	for _, l := range r.Served {
		b.WriteString("\n  " + l)
	}
	for _, l := range r.Pending {
		b.WriteString("\n  not served (no request for it): " + l)
	}
	return b.String()
}

// MayFail reports whether a correct client may have ended in an error:
// its key was revoked, an answer broke the contract, or a Retry-After
// asked for more than a minute.
func (s *Schedule) MayFail() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mayFail
}

// EventIDs are the ids of the feed events served whole in 200 answers,
// each once, in the order served: what a client that walked the feed
// holds.
func (s *Schedule) EventIDs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.ids)
}

// exchange is one request passing through.
type exchange struct {
	op     simulator.Operation
	r      *http.Request
	n      int
	key    string // Authorization
	q      simulator.FeedQuery
	feedOK bool
	info   pageInfo // of a feed request whose cursor was handed out
	known  bool     // info is known
	now    time.Time
	step   *Step
	// what to serve
	limit int // a feed request served with this limit instead (0: as asked)
	cut   int // percent of the body sent before the connection closes (-1: whole)
	drop  bool
}

// answer is an answer, a value: the server's, changed by a step, or the
// schedule's own.
type answer = simulator.Answer

// wrap is the schedule around one operation of server srv.
func (s *Schedule) wrap(srv *simulator.Server, op simulator.Operation, next simulator.Answerer) simulator.Answerer {
	s.mu.Lock()
	s.srv = srv
	s.mu.Unlock()
	return func(r *http.Request) simulator.Answer { return s.serve(op, next, r) }
}

func (s *Schedule) serve(op simulator.Operation, next simulator.Answerer, r *http.Request) simulator.Answer {
	x := &exchange{op: op, r: r, key: r.Header.Get("Authorization"), cut: -1}
	if op == simulator.OpFeed {
		q, problems := simulator.ParseFeedQuery(r.URL.RawQuery)
		x.q, x.feedOK = q, len(problems) == 0
	}
	s.mu.Lock()
	a := s.before(x)
	s.mu.Unlock()
	if a == nil {
		s.act(x)
		a = x.serveBy(next)
		s.mu.Lock()
		s.after(x, a)
		s.mu.Unlock()
	}
	s.mu.Lock()
	s.noteAnswer(x, a)
	s.mu.Unlock()
	switch {
	case x.drop:
		return answer{Drop: true} // the connection closes, nothing sent
	case x.cut >= 0:
		a.Cut, a.CutAt = true, len(a.Body)*x.cut/100
	}
	return *a
}

func (s *Schedule) rateNow() time.Time {
	if s.srv == nil {
		return time.Now()
	}
	return s.srv.RateNow()
}

// before numbers the request, answers it when the schedule alone does
// (the key still throttled, an outage, an invented cursor) and picks the
// step to serve on it.
func (s *Schedule) before(x *exchange) *answer {
	s.requests++
	x.n, x.now = s.requests, s.rateNow()
	if x.feedOK && x.q.Cursor != "" {
		x.info, x.known = s.pages[x.q.Cursor]
	}
	if until, ok := s.throttled[x.key+"\x00"+string(x.op)]; ok && x.now.Before(until) {
		ra := int64((until.Sub(x.now) + time.Second - 1) / time.Second)
		s.say(x, fmt.Sprintf("429 with Retry-After: %d (the key is still refused)", ra))
		return throttled(ra)
	}
	if o := s.outage; o != nil && o.op == x.op {
		if o.answered < outageRequests || x.now.Sub(o.since) < outageFor {
			if o.answered < outageMax {
				o.answered++
				s.say(x, fmt.Sprintf("%d again (the outage of request %d goes on)", o.status, o.from))
				return errorAnswer(o.status)
			}
		}
		s.outage = nil
	}
	if from, ok := s.ends[x.q.Cursor]; ok && x.feedOK {
		s.say(x, fmt.Sprintf("an empty last page, reached through the nextCursor that the last page of request %d should not have had", from))
		a := jsonAnswer(map[string]any{"events": []any{}, "nextCursor": nil})
		a.Breaks = string(Breaks[CursorAtEnd])
		return a
	}
	for i := range s.pending {
		if st := s.pending[i]; st.At <= x.n && s.applies(st, x) {
			x.step = &st
			s.pending = slices.Delete(s.pending, i, i+1)
			break
		}
	}
	if x.step == nil {
		return nil
	}
	switch st := *x.step; st.Kind {
	case Throttle:
		s.throttled[x.key+"\x00"+string(x.op)] = x.now.Add(time.Duration(st.Param) * time.Second)
		if st.Param > 60 {
			s.mayFail = true
		}
		s.say(x, fmt.Sprintf("429 with Retry-After: %d", st.Param))
		return throttled(int64(st.Param))
	case ServerErr:
		s.outage = &outage{op: x.op, status: st.Param, from: x.n, since: x.now, answered: 1}
		s.say(x, fmt.Sprintf("%d, the start of an outage of the %s (at least %d requests and %s of the clock)", st.Param, x.op, outageRequests, outageFor))
		return errorAnswer(st.Param)
	case Drop:
		x.drop = true
		s.say(x, "the connection was closed without an answer")
		return &answer{}
	case Regenerate:
		s.mayFail = true
	}
	return nil
}

// applies reports whether a step can be served on the request, as far as
// the request alone tells.
func (s *Schedule) applies(st Step, x *exchange) bool {
	walking := x.feedOK && x.q.Cursor != "" && x.known
	switch st.Kind {
	case Throttle, ServerErr, Cut, Drop:
		// Trouble comes to a key that was last answered well, so that a
		// client retrying with backoff meets a bounded run of errors.
		well, seen := s.answered[x.key+"\x00"+string(x.op)]
		return st.Op == x.op && (!seen || well)
	case Slow:
		return st.Op == x.op
	case Regenerate:
		return walking && x.key != "" && s.account(x) != ""
	case HeadEvents, Cycle:
		return walking
	case Repeated:
		return walking && x.info.last != nil && x.q.Limit >= 2
	case LongPage:
		return x.feedOK && x.q.Limit < 200
	}
	return x.feedOK // the other breaking steps act on a feed page
}

// account is the account of the request's key ("" when none).
func (s *Schedule) account(x *exchange) string {
	if s.srv == nil {
		return ""
	}
	return s.srv.AccountOf(x.r)
}

// act does what a step does before the request is served: it moves the
// clock, regenerates the key, changes the limit asked.
func (s *Schedule) act(x *exchange) {
	if x.step == nil {
		return
	}
	switch st := *x.step; st.Kind {
	case Slow:
		d := time.Duration(st.Param) * time.Millisecond
		if s.plan.Opts.Realtime {
			time.Sleep(d)
		} else if s.srv != nil {
			s.srv.Advance(d)
		}
		s.sayLocked(x, fmt.Sprintf("answered after %s on the clock", d))
	case HeadEvents:
		d := time.Duration(st.Param) * time.Minute
		n := 0
		if s.srv != nil {
			n = s.srv.Advance(d)
		}
		s.sayLocked(x, fmt.Sprintf("before it the clock moved %s: %d new events in the world, at the head of the feed, during the walk", d, n))
	case Regenerate:
		s.mu.Lock()
		acc := s.account(x)
		s.mu.Unlock()
		if s.srv != nil {
			if _, err := s.srv.RegenerateKey(acc); err == nil {
				s.sayLocked(x, fmt.Sprintf("before it the key of %s was regenerated: the client's key is revoked (401)", acc))
			}
		}
	case LongPage:
		x.limit = x.q.Limit + 1
	case Repeated:
		x.limit = x.q.Limit - 1
	case Cut:
		x.cut = st.Param
	}
}

// serveBy serves the request (with another limit if asked).
func (x *exchange) serveBy(next simulator.Answerer) *answer {
	r := x.r
	if x.limit > 0 {
		q, _ := url.ParseQuery(r.URL.RawQuery)
		q.Set("limit", strconv.Itoa(x.limit))
		r = r.Clone(r.Context())
		u := *x.r.URL
		u.RawQuery = q.Encode()
		r.URL, r.RequestURI = &u, u.RequestURI()
	}
	a := next(r)
	return &a
}

// say records what request x was served.
func (s *Schedule) say(x *exchange, what string) {
	if len(s.served) >= maxServedLines {
		return
	}
	s.served = append(s.served, fmt.Sprintf("request %d (%s): %s", x.n, s.describe(x), what))
}

func (s *Schedule) sayLocked(x *exchange, what string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.say(x, what)
}

// describe names a request: method, path, limit, page of its walk; never
// a key (a key a client put in the query is redacted).
func (s *Schedule) describe(x *exchange) string {
	d := x.r.Method + " " + x.r.URL.Path
	switch {
	case x.op != simulator.OpFeed:
	case !x.feedOK:
		q := x.r.URL.RawQuery
		if s.srv != nil {
			q = s.srv.RedactKeys(q)
		}
		d += "?" + excerpt(q)
	default:
		d += "?limit=" + strconv.Itoa(x.q.Limit)
		switch {
		case x.q.Cursor == "":
			d += ", page 1"
		case x.known:
			d += fmt.Sprintf(", page %d of walk %d", x.info.page, x.info.walk)
		default:
			d += ", a cursor not handed out"
		}
	}
	return d
}

func excerpt(s string) string {
	if len(s) > 60 {
		return s[:60] + "…"
	}
	return s
}

// throttled is the schedule's 429: a refusal of the rate limit (its
// Cause), in words of its own.
func throttled(retryAfter int64) *answer {
	a := simulator.ErrorAnswer(http.StatusTooManyRequests, "throttled", fmt.Sprintf("too many requests: retry after %d s", retryAfter), nil)
	a.Cause = simulator.CodeRateLimited
	a.Header = http.Header{"Retry-After": {strconv.FormatInt(retryAfter, 10)}}
	return &a
}

func errorAnswer(status int) *answer {
	code := simulator.CodeInternal
	if status != http.StatusInternalServerError {
		code = simulator.CodeUnavailable
	}
	a := simulator.ErrorAnswer(status, code, http.StatusText(status), nil)
	return &a
}

// noteAnswer keeps whether the key's answer on the operation was a
// success: trouble comes only after one.
func (s *Schedule) noteAnswer(x *exchange, a *answer) {
	if len(s.answered) >= maxRemembered {
		s.answered = map[string]bool{}
	}
	s.answered[x.key+"\x00"+string(x.op)] = !x.drop && x.cut < 0 && a.Status < http.StatusBadRequest
}
