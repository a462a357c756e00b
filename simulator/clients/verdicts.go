package clients

import (
	"cmp"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tcmkit/tcmkit/schemas/catalogue"
	"github.com/tcmkit/tcmkit/simulator"
)

// Verdicts is what GET /_control/clients answers: every client's verdicts.
type Verdicts struct {
	// Final is true when the verdicts judge the run as ended: a walk
	// still open is abandoned.
	Final bool `json:"final"`
	// Requests counts the requests judged; Untracked those of keys past
	// Config.MaxClients, counted only; NotJudged those keys (at least:
	// past 65,536 of them they are not all told apart).
	Requests  int `json:"requests"`
	Untracked int `json:"untracked"`
	NotJudged int `json:"notJudged,omitempty"`
	// ClientsLeftOut counts the clients a report does not show (ForReport).
	ClientsLeftOut int `json:"clientsLeftOut,omitempty"`
	// Outcome is the verdict on the run, as the client report gives it:
	// errored when some key that made a request was not judged, or no
	// client made one (there was nothing to judge); else failed when a
	// client failed a requirement or a scenario; else passed.
	Outcome string `json:"outcome"`
	// Errored says why the outcome is errored.
	Errored string `json:"errored,omitempty"`
	// Passed is true when the outcome is passed: every key was judged and
	// no client failed a requirement or a scenario. Never on an empty run.
	Passed  bool     `json:"passed"`
	Clients []Client `json:"clients"`
	// Scenario is the armed scenario, if any.
	Scenario *RunState `json:"scenario,omitempty"`
	// Requirements lists the client requirements and open points of the
	// catalogue, as the verdicts refer to them.
	Requirements []Requirement `json:"requirements"`
}

// Requirement is a client requirement, or an open point, of the catalogue.
type Requirement struct {
	ID     catalogue.ID   `json:"id"`
	Kind   catalogue.Kind `json:"kind"`
	Must   string         `json:"must,omitempty"` // what a client must do, in a few words
	Text   string         `json:"text"`
	Choice string         `json:"simulatorChoice,omitempty"`
}

// Client is one key's verdicts.
type Client struct {
	// Key is the key's hint (tcm_…#3f9a), "" for the requests that carried
	// no key at all; KeyID tells keys apart without revealing them.
	Key        string         `json:"key"`
	KeyID      string         `json:"keyId,omitempty"`
	Account    string         `json:"account,omitempty"`
	Requests   int            `json:"requests"`
	Operations map[string]int `json:"operations"`
	Statuses   map[string]int `json:"statuses"`
	FirstSeen  time.Time      `json:"firstSeen"`
	LastSeen   time.Time      `json:"lastSeen"`
	// Passed is true when no requirement failed, nor the scenario.
	Passed       bool      `json:"passed"`
	Requirements []Verdict `json:"requirements"`
	// Findings are one per requirement broken, in the order first broken
	// (an abandoned walk when it is judged), each with the requests that
	// broke it counted.
	Findings []Finding       `json:"findings"`
	Walks    Walks           `json:"walks"`
	Notes    []string        `json:"notes,omitempty"` // open points met: never findings
	Scenario *ScenarioResult `json:"scenario,omitempty"`
	// Keyless names, on every key's verdicts, the requests that carried no
	// key (the client "requests without a key") and what they broke.
	Keyless string `json:"keyless,omitempty"`
	// SentWithoutKey are the findings of the requests without a key that
	// this key's client sent, as far as its connection or the run tells
	// (Finding.SentBy says which). They fail the requests without a key
	// and the run, not this key's requirements.
	SentWithoutKey []Finding `json:"sentWithoutKey,omitempty"`
}

// Name is how reports name the client: its key's hint and account.
func (c Client) Name() string {
	if c.Key == "" {
		return "requests without a key"
	}
	if c.Account != "" {
		return c.Key + " (" + c.Account + ")"
	}
	return c.Key
}

// The results of a Verdict.
const (
	Passed       = "passed"
	Failed       = "failed"
	NotExercised = "not exercised"
)

// Verdict is the result of one client requirement for one key.
type Verdict struct {
	ID       catalogue.ID `json:"id"`
	Must     string       `json:"must"`
	Result   string       `json:"result"`          // passed, failed or not exercised
	Checked  int          `json:"checked"`         // requests (walks, for CLIENT-WALK-END) it was checked on
	Findings int          `json:"findings"`        // 1 when it failed: one finding per requirement
	Count    int          `json:"count,omitempty"` // requests (walks) that broke it: the finding's count
	Note     string       `json:"note,omitempty"`
}

// Finding is a client requirement a key broke: one per requirement and
// key, however many requests broke it. It shows the first of them whole,
// counts them all and names the last.
type Finding struct {
	Requirement catalogue.ID `json:"requirement"`
	Rule        string       `json:"rule"`     // what a client must do
	Evidence    string       `json:"evidence"` // what the first request did
	Request     Ref          `json:"request"`  // the first request that broke it
	// Related is the earlier request the first one refers to: the 429 not
	// waited out, the page a walk began with.
	Related *Ref `json:"related,omitempty"`
	// Count is how many requests (walks, for CLIENT-WALK-END) broke it.
	Count int `json:"count"`
	// Last is the last of them, when there were more than one, and
	// LastEvidence what it did when that says something else.
	Last         *Ref   `json:"last,omitempty"`
	LastEvidence string `json:"lastEvidence,omitempty"`
	// SentBy is set when the request carried no key but its sender is
	// known: on the requests without a key, the key whose client sent
	// it and how that is known; on that key's verdicts, how it is known.
	SentBy string `json:"sentBy,omitempty"`
}

// Ref names a request: its journal id, method, path and query with keys
// redacted, and its answer.
type Ref struct {
	ID          uint64    `json:"id"`
	Method      string    `json:"method"`
	Path        string    `json:"path"`
	Query       string    `json:"query,omitempty"`
	Status      int       `json:"status"`
	Error       string    `json:"error,omitempty"`
	VirtualTime int64     `json:"virtualTime"`
	Time        time.Time `json:"time"`
}

// String is the request on one line: #12 GET /api/public-feed?limit=5 → 429 rate_limited.
func (r Ref) String() string {
	s := "#" + strconv.FormatUint(r.ID, 10) + " " + r.Method + " " + r.Path
	if r.Query != "" {
		s += "?" + r.Query
	}
	s += " → " + strconv.Itoa(r.Status)
	if r.Status == 0 {
		s = strings.TrimSuffix(s, "0") + "no answer (connection dropped)"
	}
	if r.Error != "" {
		s += " " + r.Error
	}
	return s
}

// String is the finding as a test failure prints it.
func (f Finding) String() string {
	s := fmt.Sprintf("%s: %s\n    %s\n    must: %s", f.Requirement, f.Request, f.Evidence, f.Rule)
	if f.Related != nil {
		s += "\n    see " + f.Related.String()
	}
	if f.SentBy != "" {
		s += "\n    sent without a key: " + f.SentBy
	}
	if f.Last != nil {
		s += fmt.Sprintf("\n    %d requests broke it; the last: %s", f.Count, f.Last)
		if f.LastEvidence != "" {
			s += "\n    " + f.LastEvidence
		}
	}
	return s
}

// Walks counts a client's walks of the feed.
type Walks struct {
	Begun    int `json:"begun"`
	Finished int `json:"finished"`
	Open     int `json:"open"`
	Cut      int `json:"cut,omitempty"` // stopped by the server: a loop, a revoked or unknown key, a refusal the client gave up at
}

// Verdicts judges every client now; final judges as if the run ended.
func (j *Judge) Verdicts(final bool) simulator.Answer {
	return simulator.JSONAnswer(http.StatusOK, j.Snapshot(final))
}

// Snapshot is Verdicts, typed.
func (j *Judge) Snapshot(final bool) Verdicts {
	if final {
		j.srv.Settle(2 * time.Second) // before the lock: observers take it
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	now := j.srv.RateNow() // the clock takes no lock of the judge's
	v := Verdicts{Final: final, Requests: j.judged, Untracked: j.untracked, NotJudged: len(j.notJudged), Clients: []Client{}, Requirements: requirements()}
	cs := make([]*client, 0, len(j.clients))
	for _, c := range j.clients {
		cs = append(cs, c)
	}
	slices.SortFunc(cs, func(a, b *client) int { return cmp.Compare(a.seq, b.seq) })
	failed := false
	for _, c := range cs {
		cv := j.verdict(c, final, now)
		failed = failed || !cv.Passed
		v.Clients = append(v.Clients, cv)
	}
	j.attributeKeyless(cs, v.Clients)
	if j.run != nil {
		st := j.run.stateOf()
		v.Scenario = &st
	}
	switch {
	case v.NotJudged > 0:
		more := ""
		if j.moreKeys {
			more = "at least "
		}
		v.Outcome, v.Errored = Errored, fmt.Sprintf("%s%d %s not judged: past the judge's bound of %d keys of a kind (of accounts, of none, outside the Authorization header); their %d %s counted, not judged",
			more, v.NotJudged, plural(v.NotJudged, "key", "keys"), j.cfg.MaxClients, v.Untracked, plural(v.Untracked, "request is", "requests are"))
	case len(v.Clients) == 0:
		v.Outcome, v.Errored = Errored, NothingJudged
	case failed:
		v.Outcome = Failed
	default:
		v.Outcome, v.Passed = Passed, true
	}
	return v
}

// attributeKeyless shows each finding on a request without a key with the
// key whose client sent it, when the connection (it carried that key
// alone) or the run (it has that key alone) makes that unambiguous, and
// names the requests without a key on every key's verdicts. out are the
// verdicts of cs, in order. The finding fails the requests without a key
// (and the run), not the key: a connection pool or a simulator shared by
// several clients (tests attached to one simulator) may make a request
// of another look like this key's client's.
func (j *Judge) attributeKeyless(cs []*client, out []Client) {
	ki := slices.IndexFunc(cs, func(c *client) bool { return c.id == "" })
	if ki < 0 {
		return
	}
	keyless := &out[ki]
	var keyed []int
	for i, c := range cs {
		if c.id != "" {
			keyed = append(keyed, i)
		}
	}
	var broke []string
	for i := range keyless.Findings {
		f := &keyless.Findings[i]
		broke = append(broke, string(f.Requirement))
		if i >= len(cs[ki].findings) {
			continue
		}
		o, why := j.keylessOwner(cs[ki].findings[i].conn, cs, keyed)
		if o < 0 {
			continue
		}
		f.SentBy = out[o].Name() + ": " + why
		g := *f
		g.SentBy = why
		out[o].SentWithoutKey = append(out[o].SentWithoutKey, g)
	}
	summary := fmt.Sprintf("%d %s carried no key; they are judged apart (%q)", keyless.Requests, plural(keyless.Requests, "request", "requests"), keyless.Name())
	if len(broke) > 0 {
		summary += " and broke " + strings.Join(broke, ", ")
	} else if keyless.Passed {
		summary += " and broke nothing"
	}
	for _, i := range keyed {
		out[i].Keyless = summary
	}
}

// keylessOwner is the index in cs of the client that sent a request
// without a key on conn, and why that is known; -1 when it is not.
func (j *Judge) keylessOwner(conn string, cs []*client, keyed []int) (int, string) {
	if k, ok := j.conns[conn]; ok && conn != "" && !k.many {
		if i := slices.IndexFunc(cs, func(c *client) bool { return c.id == k.id }); i >= 0 {
			return i, "it came on a connection that carried this key alone"
		}
	}
	if len(keyed) == 1 {
		return keyed[0], "this key is the only key of the run"
	}
	return -1, ""
}

// NothingJudged is why the verdicts on a run no client came to are
// errored.
const NothingJudged = "no client sent a request: there was nothing to judge"

// Errored is the outcome of verdicts that could not judge every client.
const Errored = "errored"

func (j *Judge) verdict(c *client, final bool, now time.Time) Client {
	out := Client{
		Key: c.hint, KeyID: c.id, Account: c.account, Requests: c.requests, Operations: map[string]int{}, Statuses: map[string]int{},
		FirstSeen: c.first, LastSeen: c.last, Passed: true,
		Walks: Walks{Begun: c.begun, Finished: c.finished, Open: len(c.walks), Cut: c.cut},
	}
	if len(c.findings) > 0 {
		redact := j.srv.RedactKeys // as Exchange.Redact does
		out.Findings = make([]Finding, len(c.findings))
		for i := range c.findings {
			out.Findings[i] = c.findings[i].shown(redact)
		}
	}
	for op, n := range c.ops {
		out.Operations[op] = n
	}
	for st, n := range c.statuses {
		out.Statuses[strconv.Itoa(st)] = n
	}
	failed := c.failed
	if f, n := c.madeUp(); n > 0 {
		failed[ruleCursor] += n
		out.Findings = merge(out.Findings, f)
	}
	left, excused := j.abandoned(c, final, now)
	for _, f := range left {
		failed[ruleWalk]++
		out.Findings = merge(out.Findings, f)
	}
	// Left open because the server refused it: cut, not abandoned.
	out.Walks.Open -= excused
	out.Walks.Cut += excused
	for r := range nRules {
		vd := Verdict{ID: rules[r].id, Must: rules[r].must, Checked: c.checked[r], Count: failed[r]}
		switch {
		case failed[r] > 0:
			vd.Result, vd.Findings = Failed, 1
			out.Passed = false
		case c.checked[r] > 0:
			vd.Result = Passed
		default:
			vd.Result, vd.Note = NotExercised, rules[r].unexercise
		}
		if r == ruleWalk && vd.Result == Passed && len(c.walks) > 0 {
			vd.Note = fmt.Sprintf("%d walk(s) in progress", len(c.walks))
		}
		out.Requirements = append(out.Requirements, vd)
	}
	if c.firstPages > 1 {
		out.Notes = append(out.Notes, fmt.Sprintf("%s: read the first page %d times (allowed: it is how a client sees new events)", catalogue.ClientFirstPageAgain, c.firstPages))
	}
	if c.healthWithKey > 0 {
		out.Notes = append(out.Notes, fmt.Sprintf("%s: sent its key to the health check %d times (allowed: the key is ignored there)", catalogue.ClientHealthKey, c.healthWithKey))
	}
	if j.run != nil {
		if res := j.run.result(j, c, final); res != nil {
			out.Scenario = res
			if res.Result == Failed {
				out.Passed = false
			}
		}
	}
	return out
}

// requirements lists the client requirements and open points, from the
// catalogue, in its order.
func requirements() []Requirement { return slices.Clone(clientRequirements()) }

var clientRequirements = sync.OnceValue(func() []Requirement {
	cat, err := catalogue.Load()
	if err != nil {
		return []Requirement{}
	}
	var out []Requirement
	for _, q := range cat.List() {
		if q.Feature != "client" {
			continue
		}
		r := Requirement{ID: q.ID, Kind: q.Kind, Text: q.Text, Choice: q.SimulatorChoice}
		for _, ru := range rules {
			if ru.id == q.ID {
				r.Must = ru.must
			}
		}
		out = append(out, r)
	}
	return out
})
