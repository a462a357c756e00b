package clients

import (
	"errors"
	"fmt"
	"hash/maphash"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tcmkit/tcmkit/schemas/jsondoc"
	"github.com/tcmkit/tcmkit/simulator"
)

// Defaults of Config.
const (
	// DefaultMaxClients bounds the keys judged, of each kind: keys of the
	// simulator's accounts in the Authorization header, other keys there,
	// and keys seen only elsewhere (a query, a body, another scheme): a
	// client that sprays made-up keys cannot crowd out a real one. The
	// requests of a key past it are counted, not judged, and the verdicts
	// are errored ("N keys not judged"), never passed.
	DefaultMaxClients = 1000
	// DefaultIdleAfter is how long a client may leave a walk open without
	// a feed request before the walk counts as abandoned (on the rate
	// clock); final verdicts do not wait.
	DefaultIdleAfter = 5 * time.Minute
)

// Bounds of what a judge keeps, whatever clients send.
const (
	maxHanded        = 1 << 17 // cursors remembered, all accounts together
	maxOpenWalks     = 8       // walks open at once per client
	maxUnsettled     = 32      // cursors per client not yet seen handed out (see unsettled)
	maxTrackedEvents = 200_000 // event ids a scenario keeps, all clients together
	excerptLen       = 200     // of a path or query quoted in a finding
	maxRawRef        = 1024    // bytes of path and query kept unquoted for a later finding
	maxNotJudged     = 1 << 16 // ids of the keys not judged kept, to count them
	maxConns         = 1 << 14 // connections whose keys are kept, to name the sender of a request without a key
)

// Config configures a Judge; the zero value takes the defaults.
type Config struct {
	MaxClients int           // 0: DefaultMaxClients
	IdleAfter  time.Duration // 0: DefaultIdleAfter
	Scenario   string        // the scenario armed from the start ("": none)
}

// Judge judges every client of one simulator (see the package doc). It is
// safe for concurrent use; the simulator makes it through Config.Clients
// (Judging), and Of returns it.
type Judge struct {
	cfg  Config
	seed maphash.Seed
	srv  *simulator.Server // the server judged, from New on

	mu        sync.Mutex
	clients   map[string]*client // by key id; "" holds requests with no key
	seq       uint64             // orders clients and walks
	handed    handedIndex
	judged    int
	untracked int                 // requests of keys not judged
	notJudged map[string]struct{} // the ids of the keys not judged, up to maxNotJudged
	moreKeys  bool                // more keys were not judged than notJudged holds
	pools     [3]int              // keys judged, by kind (see DefaultMaxClients)
	run       *run                // the armed scenario; nil: none
	tracked   int                 // event ids the scenario keeps, all clients together
	conns     map[string]connKeys // the keys each connection carried (Exchange.Conn), up to maxConns
}

// connKeys is the key a connection carried, or that it carried more than
// one: a request without a key on it is that key's client's only when it
// carried one.
type connKeys struct {
	id   string
	many bool
}

var _ simulator.ClientJudge = (*Judge)(nil)

// Judging is the simulator.Config.Clients of a judge with cfg:
//
//	sim, err := simulator.New(simulator.Config{Clients: clients.Judging(clients.Config{})})
//	judge := clients.Of(sim)
func Judging(cfg Config) func(*simulator.Server) (simulator.ClientJudge, error) {
	return func(s *simulator.Server) (simulator.ClientJudge, error) { return New(s, cfg) }
}

// Of is the judge of s that Judging made, nil if s has none.
func Of(s *simulator.Server) *Judge {
	j, _ := s.Clients().(*Judge)
	return j
}

// Check says whether cfg is one New accepts: an unknown Scenario is an
// error (simulator.ErrNoScenario, with the nearest name).
func (cfg Config) Check() error {
	if _, ok := Lookup(cfg.Scenario); cfg.Scenario != "" && !ok {
		return fmt.Errorf("clients: %w", noScenario(cfg.Scenario))
	}
	return nil
}

// New makes the judge of the clients of s; simulator.New calls it through
// Judging, and a test that replays exchanges of its own may call it on
// any server. A scenario armed from the start acts now if its moment is
// "at once".
func New(s *simulator.Server, cfg Config) (*Judge, error) {
	if s == nil {
		return nil, errors.New("clients: a judge needs its server")
	}
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	if cfg.MaxClients <= 0 {
		cfg.MaxClients = DefaultMaxClients
	}
	if cfg.IdleAfter <= 0 {
		cfg.IdleAfter = DefaultIdleAfter
	}
	j := &Judge{cfg: cfg, seed: maphash.MakeSeed(), srv: s}
	j.clear()
	if sc, ok := Lookup(cfg.Scenario); ok {
		j.run = newRun(sc)
		j.armed(j.run)
	}
	return j, nil
}

func (j *Judge) clear() {
	j.clients = map[string]*client{}
	j.handed = newHandedIndex(maxHanded)
	j.judged, j.untracked, j.tracked, j.seq = 0, 0, 0, 0
	j.notJudged, j.moreKeys, j.pools = map[string]struct{}{}, false, [3]int{}
	j.conns = map[string]connKeys{}
}

// noteConn notes that the client of key id sent a request on conn.
func (j *Judge) noteConn(conn, id string) {
	if conn == "" || id == "" {
		return
	}
	k, ok := j.conns[conn]
	switch {
	case !ok && len(j.conns) < maxConns:
		j.conns[conn] = connKeys{id: id}
	case ok && k.id != id && !k.many:
		j.conns[conn] = connKeys{id: k.id, many: true}
	}
}

// Reset forgets every client; an armed scenario starts again.
func (j *Judge) Reset() {
	j.mu.Lock()
	j.clear()
	var r *run
	if j.run != nil {
		r = newRun(j.run.sc)
		j.run = r
	}
	j.mu.Unlock()
	if r != nil {
		j.armed(r)
	}
}

// Observe judges one exchange. A scenario's act, when this exchange is its
// moment, runs after the judge's lock is let go.
func (j *Judge) Observe(x *simulator.Exchange) {
	if act := j.observe(x); act != nil {
		act()
	}
}

func (j *Judge) observe(x *simulator.Exchange) func() {
	if x.Method == http.MethodOptions {
		return nil // a browser's CORS preflight, not the client's request
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	j.judged++
	c := j.client(x)
	if c == nil {
		j.untracked++
		return nil
	}
	c.count(x)
	j.noteConn(x.Conn, c.id)
	j.checkLeaks(c, x)
	var out outcome
	switch x.Operation {
	case simulator.OpFeed:
		j.checkBearer(c, x)
		out.early = j.checkRetryAfter(c, x, slotFeed)
		j.checkBackoff(c, x, slotFeed)
		j.checkRate(c, x)
		out.feed = j.checkFeed(c, x)
	case simulator.OpVideos:
		j.checkBearer(c, x)
		out.early = j.checkRetryAfter(c, x, slotVideos)
		j.checkBackoff(c, x, slotVideos)
		j.checkVideos(c, x)
	case simulator.OpHealth:
		j.checkHealth(c, x)
	}
	if stopsWalks(x) {
		c.stopWalks(x)
	}
	if j.run != nil {
		return j.run.observe(j, c, x, out)
	}
	return nil
}

// outcome is what the rules made of one exchange, for the scenarios.
type outcome struct {
	feed  feedOutcome
	early pending429 // the 429 whose Retry-After the exchange did not wait out (set), if any
}

// client finds or makes the client of an exchange: its Bearer key, else a
// key seen elsewhere in the request, else "" (no key). Nil for a key past
// MaxClients of its kind (see DefaultMaxClients), which is then counted
// among the keys not judged.
func (j *Judge) client(x *simulator.Exchange) *client {
	id, hint := x.KeyID, x.KeyHint
	if id == "" {
		if k, ok := carried(x.KeysSeen); ok {
			id, hint = k.KeyID, k.KeyHint
		}
	}
	c := j.clients[id]
	if c == nil {
		if id != "" {
			pool := 2 // seen outside the Authorization header only
			switch {
			case x.KeyID == id && x.Account != "":
				pool = 0
			case x.KeyID == id:
				pool = 1
			}
			if j.pools[pool] >= j.cfg.MaxClients {
				j.skip(id)
				return nil
			}
			j.pools[pool]++
		}
		j.seq++
		c = &client{id: id, hint: hint, seq: j.seq, walks: map[uint64]*walk{}, ops: map[string]int{}, statuses: map[int]int{}}
		j.clients[id] = c
	}
	if c.account == "" && x.Account != "" {
		c.account = x.Account
	}
	return c
}

// carried is the key a request without a Bearer key carries elsewhere
// (another scheme such as Basic, the URL, a header, the body): a key of
// an account of the server first, else the first whole key; a piece of
// a key names none.
func carried(seen []simulator.KeySeen) (simulator.KeySeen, bool) {
	for _, k := range seen {
		if k.Account != "" {
			return k, true
		}
	}
	for _, k := range seen {
		if k.KeyID != "" {
			return k, true
		}
	}
	return simulator.KeySeen{}, false
}

// skip counts a key not judged.
func (j *Judge) skip(id string) {
	if _, ok := j.notJudged[id]; ok {
		return
	}
	if len(j.notJudged) >= maxNotJudged {
		j.moreKeys = true
		return
	}
	j.notJudged[id] = struct{}{}
}

func (j *Judge) hash(s string) uint64 { return maphash.String(j.seed, s) }

// client is what the judge keeps of one key.
type client struct {
	id, hint, account string
	seq               uint64
	requests          int
	ops               map[string]int
	statuses          map[int]int
	first, last       time.Time // real time
	lastFeed          time.Time // rate clock
	fed               bool      // a feed request was seen

	checked, failed [nRules]int // failed: the requests (walks) that broke each rule
	findings        []found     // one per rule broken, in the order first broken

	after429 [2]pending429 // by slot
	streaks  [2]streak     // by slot, for CLIENT-BACKOFF
	recent   recentFeed    // the key's last feed requests, for CLIENT-RATE

	walks                     map[uint64]*walk // open walks, by the cursor they wait on
	after                     map[uint64]*walk // walks done or looped, by the cursor that continues them (keepAfter)
	trail                     [maxTrail]trailStep
	trailNext                 int
	unsettled                 []unsettled // cursors presented before the judge saw them handed out
	held                      []held      // pages whose walk step waits for an earlier page's (see checkFeed)
	begun, finished, cut      int
	stopped                   time.Time // the arrival of the last request that stopped the key's walks (stopsWalks)
	refused                   string    // how the server refused the key's last feed request (refusal), "" if it did not
	firstTop                  int64     // createdAt of the newest event of the last first page
	prevTop                   int64     // and of the first page before it that was older
	complete                  int64     // the client was given every event up to this createdAt (0: not known)
	firstPages, healthWithKey int

	sc scenarioState
}

func (c *client) count(x *simulator.Exchange) {
	c.requests++
	op := string(x.Operation)
	if op == "" {
		op = "other"
	}
	if len(c.ops) < 8 {
		c.ops[op]++
	}
	c.statuses[x.Status]++ // at most the statuses 0..599 there are
	if c.first.IsZero() {
		c.first = x.Time
	}
	c.last = x.Time
}

// find records that x broke rule r: the key's one finding of the rule,
// made or counted. The first request that broke it is shown at once
// (once per rule and key); of the later ones only the last is kept, raw
// (the request as keptRef has it, the evidence in pieces), and shown when
// the verdicts are read: a load test breaks CLIENT-RATE on every request,
// and each of them costs a count, not a quoted finding. related is shown
// only with the first.
func (j *Judge) find(c *client, r rule, x *simulator.Exchange, why because, related *rawRef) {
	c.failed[r]++
	for i := range c.findings {
		if f := &c.findings[i]; f.Requirement == rules[r].id {
			f.Count++
			f.last, f.lastWhy = keptRef(x), why
			return
		}
	}
	var rel *Ref
	if related != nil {
		shown := related.shown()
		rel = &shown
	}
	c.findings = append(c.findings, found{Finding: Finding{
		Requirement: rules[r].id, Rule: rules[r].must, Evidence: x.Redact(why.String()),
		Request: refOf(x), Related: rel, Count: 1,
	}, conn: x.Conn})
}

// found is a finding as a client keeps it (see find): the first request
// shown whole and every one counted, the last kept raw.
type found struct {
	Finding         // Last and LastEvidence unset
	last    rawRef  // the last request that broke the rule, when Count > 1
	lastWhy because // what it did
	conn    string  // the connection of the first request (Exchange.Conn)
}

// shown is the finding as the verdicts give it: the last request and its
// evidence (when that says something else) shown, redacted by redact as
// the first one's evidence was when it was found.
func (f *found) shown(redact func(string) string) Finding {
	out := f.Finding
	if f.Count > 1 {
		last := f.last.shown()
		out.Last = &last
		if ev := redact(f.lastWhy.String()); ev != out.Evidence {
			out.LastEvidence = ev
		}
	}
	return out
}

// because is a finding's evidence: its words, or the pieces say puts in
// words, only when the evidence is shown (for the last request that
// broke a rule, when the verdicts are read).
type because struct {
	say  func(because) string // nil: text is the evidence
	text string
	n    [3]uint64
	d    [2]time.Duration
	keys []simulator.KeySeen // of the exchange, which an observer may keep
}

func (b because) String() string {
	if b.say == nil {
		return b.text
	}
	return b.say(b)
}

// words is evidence already in words.
func words(s string) because { return because{text: s} }

// merge adds f to a client's findings: one per requirement, which keeps
// the first request that broke it whole, counts them all and names the
// last one (and what it did, when that says something else).
func merge(fs []Finding, f Finding) []Finding {
	i := slices.IndexFunc(fs, func(g Finding) bool { return g.Requirement == f.Requirement })
	if i < 0 {
		return append(fs, f)
	}
	g := &fs[i]
	g.Count += f.Count
	last := f.Request
	g.Last, g.LastEvidence = &last, f.Evidence
	if g.LastEvidence == g.Evidence {
		g.LastEvidence = ""
	}
	return fs
}

// refOf names a request as a finding shows it: the path and query as the
// journal has them (whole keys redacted), without any run of letters and
// digits long enough to be part of a key (see quote).
func refOf(x *simulator.Exchange) Ref { return keptRef(x).shown() }

// rawRef is a request as the judge keeps it until a finding shows it (a
// walk's first and last page): the path and query as journaled, quoted
// only when shown, since most are never shown. A long one is quoted at
// once, so that what is kept stays small.
type rawRef Ref

func keptRef(x *simulator.Exchange) rawRef {
	r := rawRef{ID: x.ID, Method: x.Method, Path: x.Path, Query: x.Query,
		Status: x.Status, Error: x.Error, VirtualTime: x.VirtualTime, Time: x.Time}
	if len(r.Path)+len(r.Query) > maxRawRef {
		r.Path, r.Query = quote(r.Path, excerptLen), quote(r.Query, excerptLen)
	}
	return r
}

// shown is the request as a finding names it (see quote; quoting twice
// changes nothing).
func (r rawRef) shown() Ref {
	r.Path, r.Query = quote(r.Path, excerptLen), quote(r.Query, excerptLen)
	return Ref(r)
}

// minSecret is the shortest run of letters and digits that quote hides: a
// client may have cut a key in two, and a fragment of its secret is as
// bad as the whole (the API's own paths have no run of more than 6).
const minSecret = 8

// quote makes what a client sent fit to show: every run of minSecret or
// more letters and digits (part of a key, a cursor, a long value) becomes
// "…", and the whole is cut to n bytes, in that order.
func quote(s string, n int) string {
	var b strings.Builder
	run := 0
	flush := func(end int) {
		if run >= minSecret {
			b.WriteString("…")
		} else {
			b.WriteString(s[end-run : end])
		}
		run = 0
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' {
			run++
			continue
		}
		flush(i)
		b.WriteByte(s[i])
	}
	flush(len(s))
	return jsondoc.Excerpt(b.String(), n)
}

// handedIndex remembers which account each cursor was handed to, the
// oldest forgotten first past its size.
type handedIndex struct {
	owner  map[uint64]string
	ring   []uint64
	next   int
	forgot bool // some cursors were forgotten: an unknown one may be one of them
}

func newHandedIndex(size int) handedIndex {
	return handedIndex{owner: map[uint64]string{}, ring: make([]uint64, 0, size)}
}

func (h *handedIndex) add(cursor uint64, account string) {
	if _, ok := h.owner[cursor]; ok {
		return
	}
	if len(h.ring) < cap(h.ring) {
		h.ring = append(h.ring, cursor)
	} else {
		delete(h.owner, h.ring[h.next])
		h.ring[h.next] = cursor
		h.next = (h.next + 1) % len(h.ring)
		h.forgot = true
	}
	h.owner[cursor] = account
}
