package clients

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/schemas/settings"
	"github.com/tcmkit/tcmkit/simulator"
)

// Scenario is a named test of a client's resilience: what the simulator
// does, when, and what a good client does about it.
type Scenario struct {
	Name   string `json:"name"`
	When   string `json:"when"`   // its moment: at once, or when a client begins a walk
	Does   string `json:"does"`   // what the simulator does then
	Expect string `json:"expect"` // what a good client does
	onWalk bool   // its moment is the first walk a client begins (else: at once)
	tracks bool   // it keeps the ids of the events delivered to clients
	// act does it, through the server; target is the client whose walk
	// was the moment (nil at once). An act at once only adds faults: it
	// may run inside the server's Reset.
	act func(j *Judge, r *run, target string) (string, error)
	// see updates a client's scenario state with one exchange, after the
	// act (and, for onWalk scenarios, only for the target).
	see func(j *Judge, r *run, c *client, x *simulator.Exchange, o outcome)
	// judge says how a client that met the scenario did.
	judge func(r *run, c *client) (ok bool, behaviour string)
}

// Scenarios lists the scenarios, in a fixed order.
func Scenarios() []Scenario { return slices.Clone(scenarios) }

// Lookup returns the scenario of a name.
func Lookup(name string) (Scenario, bool) {
	i := slices.IndexFunc(scenarios, func(s Scenario) bool { return s.Name == name })
	if i < 0 {
		return Scenario{}, false
	}
	return scenarios[i], true
}

func scenarioNames() string {
	return strings.Join(scenarioList(), ", ")
}

func scenarioList() []string {
	names := make([]string, len(scenarios))
	for i, s := range scenarios {
		names[i] = s.Name
	}
	return names
}

// noScenario is the error for a scenario name that is none: the nearest
// name first, then every name (there are few).
func noScenario(name string) error {
	hint := ""
	if s := settings.Suggest(name, scenarioList()); s != "" {
		hint = "did you mean " + s + "? "
	}
	return fmt.Errorf("%w: %q (%sknown: %s)", simulator.ErrNoScenario, name, hint, scenarioNames())
}

// The figures of the scenarios.
const (
	stormCount      = 5
	stormRetryAfter = 2 // seconds
	burstCount      = 3
	slowCount       = 2
	slowDelay       = time.Second
	maxAfterRevoked = 1 // requests with a revoked key after its first 401 that a good client may still send
)

const atOnce, onWalk = "at once", "when a client begins a walk (follows its first nextCursor)"

var scenarios = []Scenario{
	{
		Name: "key-regenerated-mid-walk", When: onWalk, onWalk: true,
		Does:   "regenerates the key of the walking client's account: its key is revoked, the new one is not handed to it",
		Expect: fmt.Sprintf("the next request gets 401 revoked_api_key; the client stops using the key (at most %d more request with it, no retry loop) and says so to its user", maxAfterRevoked),
		act:    actRegenerate, see: seeRevoked, judge: judgeRevoked,
	},
	{
		Name: "429-storm", When: atOnce,
		Does:   fmt.Sprintf("answers the next %d feed requests 429 with Retry-After: %d", stormCount, stormRetryAfter),
		Expect: "the client waits out every Retry-After before it asks again, and gets its page once the storm is over",
		act:    addFault(simulator.FaultSpec{Operation: string(simulator.OpFeed), Status: http.StatusTooManyRequests, RetryAfter: new(stormRetryAfter), Count: stormCount}),
		see:    seeStorm, judge: judgeStorm,
	},
	{
		Name: "videos-5xx", When: atOnce,
		Does:   fmt.Sprintf("answers the next %d tracked-videos requests 500", burstCount),
		Expect: "the client retries after a pause that never shrinks (a backoff), then gets its videos, or gives up and reports the error; it never retries at once",
		act:    addFault(simulator.FaultSpec{Operation: string(simulator.OpVideos), Status: http.StatusInternalServerError, Count: burstCount}),
		see:    seeBurst, judge: judgeBurst,
	},
	{
		Name: "slow-answers", When: atOnce,
		Does:   fmt.Sprintf("delays the next %d feed answers by %s (real time)", slowCount, slowDelay),
		Expect: "the client waits for a slow answer rather than giving up, and sends nothing else with the key while it waits",
		act:    addFault(simulator.FaultSpec{Operation: string(simulator.OpFeed), DelayMs: int(slowDelay / time.Millisecond), Count: slowCount}),
		see:    seeSlow, judge: judgeSlow,
	},
	{
		Name: "new-events-mid-walk", When: onWalk, onWalk: true, tracks: true,
		Does:   "moves the clock on, a poll interval at a time, until new events arrive at the top of the feed",
		Expect: "the client finishes its walk (the cursor keeps its place: nothing is missed or repeated), then reads the first page again down to an event it has: it sees every event, and keeps each once (by id)",
		act:    actNewEvents, see: seeEvents, judge: judgeEvents,
	},
	{
		Name: "malformed-body", When: onWalk, onWalk: true,
		Does:   "answers the next feed request 200 with its body cut in half (not JSON)",
		Expect: "the client treats the answer as a failed request (no crash, nothing of it kept) and asks for the same page again",
		act:    addFault(simulator.FaultSpec{Operation: string(simulator.OpFeed), Malformed: true, Count: 1}),
		see:    seeMalformed, judge: judgeMalformed,
	},
}

// run is a scenario armed on one judge.
type run struct {
	sc      Scenario
	state   string // armed, acting, acted, failed
	acted   string
	target  string // the key id of the client it acted on (onWalk)
	key     string // its hint
	request *Ref   // the request that was its moment
	faults  []int
	err     string
	seq     uint64 // the judge's order when it acted
	// held are the exchanges observed while the act runs (outside the
	// judge's lock): its effect (a revoked key, a fault, new events) is
	// visible to requests before the state says "acted", so they are
	// seen once it does, in arrival order.
	held []heldExchange
}

// heldExchange is an exchange observed while a scenario acted.
type heldExchange struct {
	c *client
	x *simulator.Exchange
	o outcome
}

// maxHeld bounds the exchanges held while a scenario acts (an act takes
// a moment: a few requests of a quick client).
const maxHeld = 64

func newRun(sc Scenario) *run { return &run{sc: sc, state: "armed"} }

// RunState is the armed scenario, as GET /_control/scenarios shows it.
type RunState struct {
	Scenario
	State   string `json:"state"` // armed, acting, acted, failed (its act did)
	Acted   string `json:"acted,omitempty"`
	Key     string `json:"key,omitempty"` // the key it acted on
	Request *Ref   `json:"request,omitempty"`
	Faults  []int  `json:"faults,omitempty"`
	Error   string `json:"error,omitempty"`
}

func (r *run) stateOf() RunState {
	return RunState{Scenario: r.sc, State: r.state, Acted: r.acted, Key: r.key, Request: r.request, Faults: slices.Clone(r.faults), Error: r.err}
}

// ScenarioResult is how one client did in the armed scenario.
type ScenarioResult struct {
	Name      string `json:"name"`
	Result    string `json:"result"` // passed, failed, not reached
	Behaviour string `json:"behaviour"`
}

// NotReached is the result of a client the scenario never met.
const NotReached = "not reached"

// ScenarioList is what GET /_control/scenarios answers.
type ScenarioList struct {
	Scenarios []Scenario `json:"scenarios"`
	Armed     *RunState  `json:"armed,omitempty"`
}

// Scenarios answers GET /_control/scenarios.
func (j *Judge) Scenarios() simulator.Answer {
	return simulator.JSONAnswer(http.StatusOK, j.scenarioList())
}

func (j *Judge) scenarioList() ScenarioList {
	j.mu.Lock()
	defer j.mu.Unlock()
	l := ScenarioList{Scenarios: Scenarios()}
	if j.run != nil {
		st := j.run.stateOf()
		l.Armed = &st
	}
	return l
}

// StartScenario arms a scenario in place of any other; the verdicts of
// the clients stay. Faults an earlier scenario added run their course.
func (j *Judge) StartScenario(name string) (simulator.Answer, error) {
	sc, ok := Lookup(name)
	if !ok {
		return simulator.Answer{}, noScenario(name)
	}
	r := newRun(sc)
	j.mu.Lock()
	j.run = r
	for _, c := range j.clients {
		c.sc = scenarioState{}
	}
	j.tracked = 0
	j.mu.Unlock()
	j.armed(r)
	j.mu.Lock()
	defer j.mu.Unlock()
	return simulator.JSONAnswer(http.StatusOK, r.stateOf()), nil
}

// StopScenario disarms the scenario.
func (j *Judge) StopScenario() {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.run = nil
	for _, c := range j.clients {
		c.sc = scenarioState{}
	}
	j.tracked = 0
}

// armed acts at once for a scenario whose moment is now.
func (j *Judge) armed(r *run) {
	j.mu.Lock()
	if r.sc.onWalk || r.state != "armed" {
		j.mu.Unlock()
		return
	}
	r.state = "acting"
	j.mu.Unlock()
	j.act(r, "")
}

// act runs a scenario's act outside the judge's lock and records it.
func (j *Judge) act(r *run, target string) {
	what, err := r.sc.act(j, r, target)
	j.mu.Lock()
	defer j.mu.Unlock()
	r.seq = j.seq
	held := r.held
	r.held = nil
	if err != nil {
		r.state, r.err = "failed", err.Error()
		return
	}
	r.state, r.acted = "acted", what
	slices.SortStableFunc(held, func(a, b heldExchange) int { return a.x.Time.Compare(b.x.Time) })
	for _, h := range held {
		if j.run == r {
			r.observe(j, h.c, h.x, h.o)
		}
	}
}

// observe feeds one exchange to the scenario; it returns the act when
// the exchange is the scenario's moment. Called under the judge's lock.
func (r *run) observe(j *Judge, c *client, x *simulator.Exchange, o outcome) func() {
	if r.state == "armed" {
		if r.sc.tracks && o.feed.page && c.id != "" {
			j.track(c, x, 1) // the events a client has before the new ones come
		}
		if !r.sc.onWalk || !o.feed.began || c.id == "" {
			return nil
		}
		r.state, r.target, r.key = "acting", c.id, c.hint
		ref := refOf(x)
		r.request = &ref
		c.sc.walkSeq = j.seq
		if r.sc.tracks {
			j.keepBefore(c)
		}
		target := c.account
		return func() { j.act(r, target) }
	}
	if r.sc.onWalk && c.id != r.target {
		return nil
	}
	if r.state == "acting" && len(r.held) < maxHeld {
		r.held = append(r.held, heldExchange{c, x, o})
	}
	if r.state != "acted" {
		return nil
	}
	r.sc.see(j, r, c, x, o)
	return nil
}

// result is how a client did, nil for the requests without a key.
func (r *run) result(j *Judge, c *client, final bool) *ScenarioResult {
	if c.id == "" {
		return nil
	}
	res := &ScenarioResult{Name: r.sc.Name, Result: NotReached}
	switch {
	case r.state != "acted":
		res.Behaviour = "the scenario has not acted yet (" + r.state + ")"
	case r.sc.onWalk && c.id != r.target:
		res.Behaviour = "the scenario acted on another client's walk (" + r.key + ")"
	case !c.sc.met:
		res.Behaviour = "the client never met what the scenario did"
	default:
		ok, b := r.sc.judge(r, c)
		res.Result, res.Behaviour = Failed, b
		if ok {
			res.Result = Passed
		}
	}
	return res
}

// addFault is the act of a scenario that is one injected fault.
func addFault(f simulator.FaultSpec) func(*Judge, *run, string) (string, error) {
	return func(j *Judge, r *run, _ string) (string, error) {
		spec, err := j.srv.AddFault(f)
		if err != nil {
			return "", err
		}
		j.mu.Lock()
		r.faults = append(r.faults, spec.ID)
		j.mu.Unlock()
		return fmt.Sprintf("injected fault %d", spec.ID), nil
	}
}

func (r *run) ours(x *simulator.Exchange) bool {
	return x.Fault != 0 && slices.Contains(r.faults, x.Fault)
}

func actRegenerate(j *Judge, r *run, account string) (string, error) {
	if account == "" {
		return "", fmt.Errorf("the walking key belongs to no account")
	}
	key, err := j.srv.RegenerateKey(account)
	if err != nil {
		return "", err
	}
	// The new key is only ever shown as its hint.
	return fmt.Sprintf("regenerated the key of %s: its old key is revoked, the new one (%s) was not handed to the client", account, j.srv.RedactKeys(key)), nil
}

func actNewEvents(j *Judge, r *run, _ string) (string, error) {
	var moved time.Duration
	for moved < 24*time.Hour {
		moved += schemas.PollInterval
		if n := j.srv.Advance(schemas.PollInterval); n > 0 {
			return fmt.Sprintf("moved the clock on by %s: %d new events in the world", moved, n), nil
		}
	}
	return "", fmt.Errorf("no new event in a day of polling")
}

// scenarioState is what a scenario keeps of one client.
type scenarioState struct {
	met  bool // the client met what the scenario did
	hits int  // answers of the scenario's faults it got
	refs []Ref

	// key-regenerated-mid-walk
	revoked      *Ref
	afterRevoked int
	// 429-storm
	early  int
	okThen *Ref
	// videos-5xx
	failAt     time.Time
	failing    bool
	gaps       []time.Duration // every pause before a retry, for the behaviour
	pause      time.Duration   // the last pause of the current run of failures
	zero, less int
	// slow-answers
	spans  []span
	gaveUp []Ref
	// new-events-mid-walk
	walkSeq   uint64           // walks up to this one were open when the events came
	seen      map[uint64]uint8 // event id → 1 delivered before the new events, 2 after
	chain     uint64           // the cursor the read from the new first page waits on
	reading   bool
	covered   *Ref
	delivered int
	// malformed-body
	cut     *Ref
	cutAt   uint64 // the cursor asked for (0: the first page)
	cutNext *Ref
	again   bool
}

// note keeps a request a scenario's behaviour quotes (a few at most).
func (s *scenarioState) note(x *simulator.Exchange) {
	if len(s.refs) < 8 {
		s.refs = append(s.refs, refOf(x))
	}
}

type span struct {
	from, to time.Time
	slow     bool
	ref      Ref
}
