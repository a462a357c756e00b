package conformance

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"

	"github.com/tcmkit/tcmkit/schemas/catalogue"
	"github.com/tcmkit/tcmkit/schemas/jsondoc"
	"github.com/tcmkit/tcmkit/suites/client"
	"github.com/tcmkit/tcmkit/suites/explore"
	"github.com/tcmkit/tcmkit/suites/probe"
)

// The requests explored from HTTP's grammar (package suites/explore): one
// spec a family, each judging the variants the seed (--explore-seed) and
// the profile pick. They state nothing: the contract oracle judges every
// answer by its request's class, so a spec fails with whatever rule an
// answer breaks. The variants are sent in lanes, one for each key's window
// and one for the requests without a valid key, as the probes' are.

// exploreLabel is the feature label of the explored requests.
const exploreLabel = "explore"

// Quick spends a fixed share of its budget on exploration: a round trip
// for every request without a valid key, and on a manual clock 20 on the
// Pro key and 16 on the free key (in real time at most half of what each
// key's window has room for), the variants the contract decides first.
var quickExplore = explore.Budget{Pro: 20, Free: 16, None: -1}

// Thorough sends every variant without a valid key, and on the Pro key
// three windows' worth (its bodies and the corpus's texts are many), on
// the free key one and a half (the feed's and tracked videos' windows side
// by side), after the probes: a few windows more.
var thoroughExplore = explore.Budget{Pro: 60, Free: 30, None: -1}

type explorer struct {
	s          *suite
	decideOnce sync.Once
	picked     []explore.Variant
	once       sync.Once
	mu         sync.Mutex
	pick       map[explore.Family][]explore.Variant
	left       map[explore.Family]int
	done       map[explore.Family]chan struct{}
	said       map[explore.Family][]string // what each family's requests met
	outcomes   []explore.Outcome           // what each transformation met
}

func (s *suite) exploreSpecs() {
	ex := &explorer{s: s}
	s.ex = ex
	for _, f := range explore.Families {
		It("answers "+string(f)+" variants by the contract's rules", Label(exploreLabel), func(ctx SpecContext) {
			ex.judge(ctx, f)
		})
	}
}

func exploreScope(f explore.Family) string { return "explored requests: " + string(f) }

// decide picks the variants before they are sent, once: in real time
// quick spends at most half of what each key's window has room for now
// (the probes the rest: quick waits for no window), else its fixed share.
// It returns what the pick spends of each key.
func (ex *explorer) decide(roomPro, roomFree int, realTime bool) map[explore.Spend]int {
	ex.decideOnce.Do(func() {
		b := quickExplore
		switch {
		case ex.s.profile() == probe.Thorough:
			b = thoroughExplore
		case realTime:
			b.Pro, b.Free = min(b.Pro, max(roomPro, 0)/2), min(b.Free, max(roomFree, 0)/2)
		}
		ex.picked = explore.Sample(ex.s.cfg.ExploreSeed, b)
	})
	spent := map[explore.Spend]int{}
	for _, v := range ex.picked {
		spent[v.Spend] += v.Cost()
	}
	return spent
}

// start sends the picked variants in lanes, once.
func (ex *explorer) start() {
	ex.once.Do(func() {
		s := ex.s
		ex.decide(0, 0, false)
		ex.pick, ex.left, ex.done, ex.said = map[explore.Family][]explore.Variant{}, map[explore.Family]int{}, map[explore.Family]chan struct{}{}, map[explore.Family][]string{}
		for _, f := range explore.Families {
			ex.done[f] = make(chan struct{})
		}
		bySpend := map[explore.Spend][]explore.Variant{}
		for _, v := range ex.picked {
			ex.pick[v.Family] = append(ex.pick[v.Family], v)
			ex.left[v.Family]++
			bySpend[v.Spend] = append(bySpend[v.Spend], v)
		}
		for _, f := range explore.Families {
			if ex.left[f] == 0 {
				close(ex.done[f])
			}
		}
		keys := explore.Keys{Pro: s.tg.Pro, Free: s.tg.Free, Revoked: s.tg.Revoked}
		if ids := s.knownVideoIDs(s.runCtx, 1); len(ids) > 0 {
			keys.Video = ids[0]
		}
		if w := s.fullWalk(s.runCtx); len(w.Pages) > 0 {
			keys.Cursor = w.Pages[0].Next
		}
		for _, spend := range []explore.Spend{explore.SpendPro, explore.SpendFree, explore.SpendNone} {
			vs := bySpend[spend]
			if len(vs) == 0 {
				continue
			}
			key := map[explore.Spend]string{explore.SpendPro: s.tg.Pro, explore.SpendFree: s.tg.Free}[spend]
			s.pace.Lane(s.runCtx, "explored requests on "+string(spend), func(ctx context.Context) {
				for len(vs) > 0 {
					// the variant whose operation's window has room first:
					// the feed's and tracked videos' windows are spent
					// side by side, not one after the other
					i := ex.soonest(key, keys, vs)
					v := vs[i]
					vs = slices.Delete(vs, i, i+1)
					ex.send(client.WithScope(ctx, exploreScope(v.Family)), key, keys, v)
					ex.mu.Lock()
					if ex.left[v.Family]--; ex.left[v.Family] == 0 {
						close(ex.done[v.Family])
					}
					ex.mu.Unlock()
				}
			})
		}
	})
}

// soonest is the variant that can be sent first by its key's window.
func (ex *explorer) soonest(key string, keys explore.Keys, vs []explore.Variant) int {
	if key == "" {
		return 0
	}
	best, wait := 0, time.Duration(-1)
	for i, v := range vs {
		req, ok := v.Request(keys)
		if !ok {
			return i // sent at once: it is not sent
		}
		if d := ex.s.roomIn(key, req.Path, v.Cost()); wait < 0 || d < wait {
			best, wait = i, d
		}
	}
	return best
}

// send sends one variant (a walk: its pages), holding its key's window.
func (ex *explorer) send(ctx context.Context, key string, keys explore.Keys, v explore.Variant) {
	s := ex.s
	note := func(format string, args ...any) {
		ex.mu.Lock()
		ex.said[v.Family] = append(ex.said[v.Family], fmt.Sprintf(format, args...))
		ex.mu.Unlock()
	}
	req, ok := v.Request(keys)
	if !ok {
		note("%s: not sent (a key or a video it needs is not known)", v.Name)
		if v.Base != "" {
			ex.leftAll(v.Base, "a key it needs is not known")
		}
		return
	}
	if key != "" {
		release, err := s.pace.Hold(ctx, key)
		if err != nil {
			note("%s: not sent: %v", v.Name, err)
			return
		}
		defer release()
	}
	if v.Base != "" {
		ex.equivalences(ctx, key, keys, v, note)
		return
	}
	for page := 0; page < max(v.Pages, 1); page++ {
		resp, why := ex.sendOne(ctx, key, req)
		if resp == nil {
			note("%s: %s", v.Name, why)
			return
		}
		doc, _ := resp.JSON()
		next, ok := jsondoc.String(doc, "/nextCursor")
		if v.Pages == 0 || resp.Status != 200 || !ok || next == "" {
			return
		}
		q, _ := url.ParseQuery(req.Query)
		q.Set("cursor", next)
		req.Query = q.Encode()
	}
}

// sendOne sends one request of a variant once its key's window has room
// (quick in real time waits for none); without an answer it says why.
func (ex *explorer) sendOne(ctx context.Context, key string, req client.Request) (*client.Response, string) {
	s := ex.s
	if key != "" {
		if d := s.roomIn(key, req.Path, 1); d > 0 {
			if s.profile() == probe.Quick && !s.virtualClock() {
				return nil, "not sent (the key's window had no room, and quick waits for none)"
			}
			if err := s.wait(ctx, d, "so that the key has room in its window"); err != nil {
				return nil, "not sent: " + err.Error()
			}
		}
	}
	send := s.c.Do
	if key == "" {
		// no valid key: a 429 is an answer to judge, not to wait out
		send = s.c.Send
	}
	resp, err := send(ctx, req)
	if err != nil {
		// no answer to judge (a target that closes the connection on
		// a request HTTP allows): nothing the contract rules
		return nil, fmt.Sprintf("no answer: %v", err)
	}
	return resp, ""
}

// equivalences sends a plain request, then its transformations packed,
// each pack split where its answer differs from the plain one's
// (explore.Isolate); the oracle judges every answer by its class, and
// what differs beyond time by oracle.Equivalent.
func (ex *explorer) equivalences(ctx context.Context, key string, keys explore.Keys, v explore.Variant, note func(string, ...any)) {
	left := func(why string) { ex.leftAll(v.Base, why) }
	req, _ := explore.Plain(v.Base, keys)
	plain, why := ex.sendOne(ctx, key, req)
	switch {
	case plain == nil:
		left("the plain request: " + why)
		return
	case plain.Status != 200:
		left(fmt.Sprintf("the plain request was answered %d: no answer to compare with", plain.Status))
		return
	}
	for _, pack := range explore.Packs(v.Base) {
		for _, o := range explore.Isolate(v.Base, pack, func(set []explore.Transformation) (string, string) {
			req, _ := explore.Transformed(v.Base, keys, set)
			got, why := ex.sendOne(ctx, key, req)
			if got == nil {
				return "", why
			}
			return ex.s.differs(plain, got, set), ""
		}) {
			ex.outcome(o)
			if o.Differs != "" {
				note("%s, %s (%s): answered otherwise than the plain request: %s", v.Base, o.Transformation.Name, o.Transformation.Statement, o.Differs)
			}
		}
	}
}

func (ex *explorer) leftAll(b explore.Base, why string) {
	for _, t := range explore.TransformationsOf(b) {
		ex.outcome(explore.Outcome{Base: b, Transformation: t, Left: why})
	}
}

func (ex *explorer) outcome(o explore.Outcome) {
	ex.mu.Lock()
	defer ex.mu.Unlock()
	ex.outcomes = append(ex.outcomes, o)
}

// differs says how an answer to a transformed request differs from the
// plain one's: the oracle's problems with it, or another answer
// (oracle.Equivalent, whose problems join the oracle's of the exchange).
func (s *suite) differs(plain, got *client.Response, set []explore.Transformation) string {
	var statements []string
	for _, t := range set {
		if !slices.Contains(statements, t.Statement) {
			statements = append(statements, t.Statement)
		}
	}
	why, ps := s.or.Equivalent(plain, got, strings.Join(statements, ", "))
	if len(s.ledger.of(got)) == 0 {
		// a difference the class's rules did not already blame
		s.keep(got, ps)
	}
	if why != "" {
		return why
	}
	// a rule the transformed answer breaks and the plain one did not
	var had []catalogue.ID
	for _, p := range s.ledger.of(plain) {
		had = append(had, p.Requirement)
	}
	for _, p := range s.ledger.of(got) {
		if !slices.Contains(had, p.Requirement) {
			return fmt.Sprintf("%s: %s", p.Requirement, p.Actual)
		}
	}
	return ""
}

// reportEquivalences says which transformations the run reached, on
// which plain request, and which it left and why: in the spec's output,
// the report and the run's log.
func (ex *explorer) reportEquivalences() {
	ex.mu.Lock()
	// an answer that differed comes first, then the explorer's own
	// request, then a spec's that carried it
	rank := func(o explore.Outcome) int {
		switch {
		case o.Differs != "":
			return 3
		case o.Reached && !o.Carried:
			return 2
		case o.Reached:
			return 1
		}
		return 0
	}
	best := map[string]explore.Outcome{}
	var order []string
	for _, o := range append(slices.Clone(ex.outcomes), ex.s.carry.Outcomes()...) {
		name := fmt.Sprintf("%s on %s", o.Transformation.Name, o.Base)
		if prev, ok := best[name]; !ok {
			order = append(order, name)
		} else if rank(prev) >= rank(o) {
			continue
		}
		best[name] = o
	}
	seen := map[string]bool{}
	var reached, differed, left []string
	carried := 0
	for _, name := range order {
		o := best[name]
		seen[name] = true
		if o.Carried {
			carried++
		}
		switch {
		case o.Left != "":
			left = append(left, fmt.Sprintf("%s (%s)", name, o.Left))
		case o.Differs != "":
			differed = append(differed, name)
			reached = append(reached, name)
		default:
			reached = append(reached, name)
		}
	}
	ex.mu.Unlock()
	all := 0
	for _, b := range explore.Bases {
		for _, t := range explore.TransformationsOf(b) {
			all++
			if name := fmt.Sprintf("%s on %s", t.Name, b); !seen[name] {
				left = append(left, fmt.Sprintf("%s (not picked under --profile %s: no room for it in its key's share of the window; --profile thorough, or a simulator's clock, sends it)", name, ex.s.profile()))
			}
		}
	}
	line := fmt.Sprintf("equivalences: %d of %d transformations reached (%d carried on the specs' own requests), %d answered otherwise than their plain request", len(reached), all, carried, len(differed))
	line += "; " + ledgerReach(reached)
	if len(left) > 0 {
		line += fmt.Sprintf("; left %d: %s", len(left), strings.Join(left, "; "))
	}
	fmt.Fprintln(GinkgoWriter, line)
	fmt.Fprintln(GinkgoWriter, "reached: "+strings.Join(reached, ", "))
	AddReportEntry("equivalences", line+"\nreached: "+strings.Join(reached, ", "), ReportEntryVisibilityNever)
	fmt.Fprintln(ex.s.logWriter(), line)
	ex.s.logWriter().Flush()
}

// judge waits for a family's variants and takes their exchanges: the
// oracle's problems in them fail the spec at its end.
func (ex *explorer) judge(ctx context.Context, f explore.Family) {
	ex.start()
	select {
	case <-ex.done[f]:
	case <-ctx.Done():
		ex.s.Block("the run ended before the explored requests were sent")
	}
	ex.s.c.Claim(exploreScope(f))
	ex.mu.Lock()
	said := ex.said[f]
	n := len(ex.pick[f])
	ex.mu.Unlock()
	for _, line := range said {
		fmt.Fprintln(GinkgoWriter, ex.s.Redactor().String(line))
	}
	if f == explore.Equivalence {
		ex.reportEquivalences()
	}
	AddReportEntry("explored", fmt.Sprintf("--explore-seed %d: %d %s variant(s) under --profile %s", ex.s.cfg.ExploreSeed, n, f, ex.s.profile()), ReportEntryVisibilityNever)
	if n == 0 {
		skipFor("--profile thorough", fmt.Sprintf("no %s variant picked under --profile %s (--profile thorough sends every one)", f, ex.s.profile()))
	}
}

// profile is the run's profile, by name.
func (s *suite) profile() probe.Profile {
	p, _ := probe.ParseProfile(s.cfg.Profile)
	return p
}

// explores reports whether the run surely judges the explored requests:
// no label filter, focus or skip narrows it (else their lanes start with
// their own specs, not beside the probes').
func (s *suite) explores() bool {
	sc, _ := GinkgoConfiguration()
	return withoutStrict(sc.LabelFilter) == withoutStrict("") && len(sc.FocusStrings) == 0 && len(sc.SkipStrings) == 0 && len(sc.FocusFiles) == 0
}

// ledgerReach says which of the ledger's statements judged by a
// transformation the run reached: one of its transformations was sent.
func ledgerReach(reached []string) string {
	l, err := catalogue.LoadLedger()
	if err != nil {
		return "the ledger: " + err.Error()
	}
	sent := map[string]bool{}
	for _, r := range reached {
		name, _, _ := strings.Cut(r, " on ")
		sent[name] = true
	}
	var in, out []string
	for _, st := range l.Statements {
		if st.Judged != catalogue.ByTransformation {
			continue
		}
		if slices.ContainsFunc(st.Transformations, func(t string) bool { return sent[t] }) {
			in = append(in, st.ID)
		} else {
			out = append(out, st.ID)
		}
	}
	says := fmt.Sprintf("ledger statements reached %d of %d", len(in), len(in)+len(out))
	if len(out) > 0 {
		says += " (left: " + strings.Join(out, ", ") + ")"
	}
	return says
}
