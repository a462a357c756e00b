// Package probegrid is the probe grid's specs and lanes: the generated
// probes (package suites/probe), every must requirement × key role ×
// request shape × input class that applies, declared as one Ginkgo spec
// per requirement × role × shape, labelled with that one requirement; the
// plan the profile (--profile) makes of them; the lanes that send their
// request sequences; and what a sequence adds to judge beyond its answers.
// The profile decides which run: quick spends one window of each key by
// priority, thorough runs them all. A probe whose precondition failed (a
// key not given, a walk too short) is blocked, not failed. The answers'
// rules are the contract oracle's (package oracle); what the probes need of
// the suite that runs them is its Host.
package probegrid

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/schemas/catalogue"
	"github.com/tcmkit/tcmkit/suites/client"
	"github.com/tcmkit/tcmkit/suites/explore"
	"github.com/tcmkit/tcmkit/suites/probe"
)

// Label is the feature label of the generated probes.
const Label = "probe"

// probeGroup is one spec: the probes of one requirement, role and shape.
type probeGroup struct {
	id     catalogue.ID
	role   probe.Role
	shape  probe.Shape
	probes []probe.Probe
}

// prober runs the probes of a session: the plan, made once when the first
// probe runs (the profile and the label filter are known then), and each
// distinct request sequence, sent once and judged by every probe of it.
type prober struct {
	h        Host
	cat      catalogue.Catalogue
	all      []probe.Probe
	planOnce sync.Once
	plan     *probe.Plan
	mu       sync.Mutex
	runs     map[string]*probeRun
}

// keys are the run's keys, known once the run began.
func (pr *prober) keys() Keys { return pr.h.Keys() }

// client is the run's client, through which every request goes.
func (pr *prober) client() *client.Client { return pr.h.Client() }

// Specs declares the generated probes, run by h.
func Specs(h Host) {
	cat, err := catalogue.Load()
	var probes []probe.Probe
	if err == nil {
		probes, err = probe.Generate(cat)
	}
	if err != nil {
		ginkgo.It("generates the probes from the catalogue", ginkgo.Label(Label), func() { h.Failf("%v", err) })
		return
	}
	pr := &prober{h: h, cat: cat, all: probes, runs: map[string]*probeRun{}}
	for _, g := range groupProbes(probes) {
		args := []any{ginkgo.Label(string(g.id)), ginkgo.Label(Label)}
		if g.shape == probe.AfterBurst || g.shape == probe.BothOps {
			args = append(args, ginkgo.Serial) // they spend a key's window
		}
		args = append(args, func(ctx ginkgo.SpecContext) { pr.judge(ctx, g) })
		ginkgo.It(fmt.Sprintf("%s, %s %s", g.id, RoleSays[g.role], shapeSays[g.shape]), args...)
	}
}

// groupProbes groups the probes by requirement, role and shape, in the
// order they were generated.
func groupProbes(probes []probe.Probe) []*probeGroup {
	var out []*probeGroup
	index := map[string]*probeGroup{}
	for _, p := range probes {
		k := string(p.Requirement) + "|" + string(p.Role) + "|" + string(p.Shape)
		g, ok := index[k]
		if !ok {
			g = &probeGroup{id: p.Requirement, role: p.Role, shape: p.Shape}
			index[k] = g
			out = append(out, g)
		}
		g.probes = append(g.probes, p)
	}
	return out
}

// RoleSays names a key role in messages.
var RoleSays = map[probe.Role]string{
	probe.Pro:       "the Pro key",
	probe.Free:      "the free key",
	probe.Revoked:   "the revoked key",
	probe.Unknown:   "a well-formed key of no account (invented, or the Pro key changed)",
	probe.Malformed: "a malformed key (invented, or the Pro key without its prefix or with it changed)",
	probe.None:      "no key",
}

// keySays names the key a probe sends: its role's, or the form of the
// Pro key it derives.
func keySays(p probe.Probe) string {
	if p.Key != probe.Own {
		return p.Key.Says()
	}
	return RoleSays[p.Role]
}

var shapeSays = map[probe.Shape]string{
	probe.FirstPage:  "on first pages and plain requests, every input class",
	probe.CursorPage: "on a page reached through a cursor",
	probe.DeepPage:   "on the 4th page of a walk",
	probe.LiveHead:   "on the head and the next page after new events arrived",
	probe.BothOps:    "with the feed and tracked videos in turn",
	probe.AfterBurst: "past 20 requests in a minute",
	probe.ReadByKey:  "on URLs the Pro key read just before",
	probe.LongWalk:   fmt.Sprintf("on a walk of %d cursors", probe.LongWalkCursors),
}

// planned is the session's plan: the profile's choice among the probes the
// label filter lets run.
func (pr *prober) planned(ctx context.Context) *probe.Plan {
	pr.planOnce.Do(func() {
		profile, _ := probe.ParseProfile(pr.h.Profile()) // validated by the preflight
		match, err := types.ParseLabelFilter(ginkgo.GinkgoLabelFilter())
		var mine []probe.Probe
		for _, p := range pr.all {
			// a probe that cannot be sent (its key not given) costs
			// nothing and is in no budget: its spec says why it skipped
			if pr.cannot(p) == "" && (err != nil || match([]string{Label, string(p.Requirement)})) {
				mine = append(mine, p)
			}
		}
		budget := probe.BudgetOf(profile)
		if profile == probe.Quick && !pr.h.VirtualClock() {
			// In real time quick waits for no window: each key gets what its
			// window has room for now, by what the suite sent on it.
			budget.Room = map[probe.Role]int{}
			for _, role := range []probe.Role{probe.Pro, probe.Free} {
				if key := pr.keyOf(role); key != "" {
					budget.Room[role] = schemas.FeedRequestsPerMinute - len(pr.client().RecentUses(key, schemas.RateWindow))
				}
			}
			// the explored requests, sent beside the probes, take their
			// share of that room first
			spent := pr.h.Explore(budget.Room[probe.Pro], budget.Room[probe.Free])
			budget.Room[probe.Pro] -= spent[explore.SpendPro]
			budget.Room[probe.Free] -= spent[explore.SpendFree]
		}
		// A first page or plain request the suite sent already costs nothing.
		known := func(p probe.Probe) bool {
			auth, skip := pr.auth(p)
			return p.Shape == probe.FirstPage && skip == "" && !p.Input.FromFeed && pr.client().Known(request(p.Input, auth, ""))
		}
		pr.plan = probe.MakePlanWithin(mine, budget, profile, known)
		line := "probes: " + strings.ReplaceAll(pr.plan.Summary(), "\n", "\n  ") + "\n"
		pr.h.Log(line)
		pr.startLanes(ctx)
	})
	return pr.plan
}

// judge runs the group's planned probes and judges them with their oracle.
func (pr *prober) judge(ctx ginkgo.SpecContext, g *probeGroup) {
	ginkgo.GinkgoHelper()
	plan := pr.planned(ctx)
	var run []probe.Probe
	cannot := ""
	for _, p := range g.probes {
		if why := pr.cannot(p); why != "" {
			cannot = why
			continue
		}
		if plan.Selected[p.Name()] {
			run = append(run, p)
		}
	}
	if len(run) == 0 {
		if !slices.ContainsFunc(g.probes, func(p probe.Probe) bool { return pr.cannot(p) == "" }) {
			// every probe of the spec needs what the run was not given
			// (a key, --control-clock: skipped, naming it), or what the
			// target's keys cannot give (blocked)
			pr.h.Unable(cannot)
		}
		pr.h.SkipFor("--profile thorough", fmt.Sprintf("untried under --profile %s (its budget: %s); %s", plan.Profile, budgetSays(plan.Budget), plan.ThoroughCost()))
	}
	var problems, blocks []string
	judged := 0
	for _, p := range run {
		r := pr.run(ctx, p)
		// A run is shared by every probe of its sequence and sent once:
		// the spec is shown its answers, so that its failure shows them.
		pr.client().Saw(ctx, r.responses()...)
		if r.blocked != "" {
			blocks = append(blocks, r.blocked)
			continue
		}
		block := pr.refused(ctx, p, r)
		var ps []string
		if block == "" {
			ps, block = pr.check(ctx, p, r)
		}
		if block != "" {
			blocks = append(blocks, block)
			continue
		}
		judged++
		problems = append(problems, ps...)
	}
	ginkgo.AddReportEntry("probes", fmt.Sprintf("%d probe(s) judged, %d blocked, %d untried under --profile %s", judged, len(blocks), len(g.probes)-len(run), plan.Profile), ginkgo.ReportEntryVisibilityNever)
	if judged == 0 {
		pr.h.Block(blocks[0])
	}
	text := string(g.id)
	if r, ok := pr.cat.Lookup(g.id); ok {
		text = r.Text
	}
	pr.h.NoneOf(fmt.Sprintf("rule (%s): %s\nprobed with %s %s", g.id, text, RoleSays[g.role], shapeSays[g.shape]), slices.Compact(problems))
}

// refused is why the probe cannot judge its run: an answer it needs was
// refused for another requirement's reason (statusCause: a valid key
// answered 401, the plan gate where the key's plan does not close it, a 429
// the client gave up on). Its own requirement's probes judge that answer;
// the oracles of any answer's form (ErrorBody, Content-Type) judge it too.
func (pr *prober) refused(ctx context.Context, p probe.Probe, r *probeRun) string {
	if p.Oracle == probe.OracleErrorBody || p.Oracle == probe.OracleContentType {
		return ""
	}
	// An answer that breaks the probe's own requirement is its finding,
	// whatever else the sequence met (the free key's tracked videos
	// refused with 401, PRO-GATE's, then its feed refused, AUTH-VALID's):
	// the check judges the answers that are its own.
	foreign := ""
	for _, resp := range r.judged {
		id, block := pr.h.StatusCause(resp)
		switch {
		case block != "":
			return block
		case id == p.Requirement:
			return ""
		case id != "" && foreign == "":
			foreign = fmt.Sprintf("%s answered %d to %s, which breaks %s: no answer for this probe to judge", resp.Request, resp.Status, keySays(p), id)
		}
	}
	if foreign != "" {
		return foreign
	}
	if block := pr.notOwnCursor(ctx, p, r); block != "" {
		return block
	}
	return pr.h.ForeignPages(ctx, p, slices.Concat(r.context, r.judged))
}

// notOwnCursor is why a key's cursor pages cannot be judged when a cursor
// was refused: the page that handed the cursor out is another account's
// (a cache by URL: the FEED-TENANT probes judge it), so the cursor was
// never this key's to follow. The proof: another key of the run, asked the
// same request, got that very page or is handed that very cursor.
func (pr *prober) notOwnCursor(ctx context.Context, p probe.Probe, r *probeRun) string {
	t := pr.keys()
	key := map[probe.Role]string{probe.Pro: t.Pro, probe.Free: t.Free}[p.Role]
	if key == "" || p.Requirement == catalogue.FeedTenant {
		return ""
	}
	refused := ""
	for _, resp := range r.judged {
		q, _ := url.ParseQuery(resp.Request.Query)
		if resp.Status != http.StatusOK && resp.Status != http.StatusTooManyRequests && q.Get("cursor") != "" {
			refused = q.Get("cursor")
			break
		}
	}
	if refused == "" {
		return ""
	}
	for _, lead := range slices.Concat(r.context, r.judged) {
		if _, next := pr.h.PageShape(lead); lead.Status != http.StatusOK || next != refused || lead.Request.Auth != client.Bearer(key) {
			continue
		}
		if to := pr.client().HandedTo(refused); to != "" && to != client.Bearer(key) {
			// the page came first to another key: its cursor is that key's
			return fmt.Sprintf("%s answered %s with a page whose cursor had been handed to another key first (FEED-TENANT's): the cursor is not this key's to follow", lead.Request, RoleSays[p.Role])
		}
		for _, other := range slices.Compact([]string{t.Free, t.Pro, t.Burst, t.Other}) {
			if other == "" || other == key {
				continue
			}
			req := lead.Request
			req.Auth = client.Bearer(other)
			if pr.samePage(ctx, lead, req, refused) {
				return fmt.Sprintf("%s answered %s with another account's page, its cursor included (FEED-TENANT's): the cursor it handed out is not this key's to follow", lead.Request, RoleSays[p.Role])
			}
		}
		return ""
	}
	return ""
}

// samePage reports whether another key's answer to req (as the suite got
// it before, or as it comes now: the feed's head may have moved since) is
// the page lead, byte for byte, or hands out the cursor refused.
func (pr *prober) samePage(ctx context.Context, lead *client.Response, req client.Request, refused string) bool {
	a, err := lead.Bytes()
	if err != nil {
		return false
	}
	for _, send := range []func(context.Context, client.Request) (*client.Response, error){pr.client().Cached, pr.client().Do} {
		theirs, err := send(ctx, req)
		if err != nil || theirs.Status != http.StatusOK {
			continue
		}
		b, err := theirs.Bytes()
		if _, next := pr.h.PageShape(theirs); next == refused || err == nil && bytes.Equal(a, b) {
			return true
		}
	}
	return false
}

func budgetSays(b probe.Budget) string {
	if b.PerKey == 0 {
		return "none"
	}
	s := fmt.Sprintf("%d requests of each valid key, %d without one", b.PerKey, b.Unkeyed)
	if b.Room != nil {
		var room []string // the keys given only
		for _, r := range []probe.Role{probe.Pro, probe.Free} {
			if n, ok := b.Room[r]; ok {
				room = append(room, fmt.Sprintf("%s %d", map[probe.Role]string{probe.Pro: "Pro", probe.Free: "free"}[r], max(n, 0)))
			}
		}
		s += "; in real time what each key's window had room for: " + strings.Join(room, ", ")
	}
	return s
}

// probeRun is what one request sequence got.
type probeRun struct {
	once sync.Once
	// queued: a lane sends it (lanes.go), under scope; done is
	// closed once it was sent.
	queued   bool
	scope    string
	done     chan struct{}
	doneOnce sync.Once
	judged   []*client.Response // the role's answers, which the oracles judge
	context  []*client.Response // answers the shape needed first (a walk's pages, the Pro key's read)
	blocked  string
	rate     *admissions // the rate sequences'
	ids      []string    // the ids sent, when they were made as the probe ran (Input.FromFeed)
}

// responses are every answer of the run: those judged, those the shape
// needed first, and the rate sequence's.
func (r *probeRun) responses() []*client.Response {
	out := slices.Concat(r.context, r.judged)
	if a := r.rate; a != nil {
		for _, ad := range a.admitted {
			out = append(out, ad.resp)
		}
		out = append(slices.Concat(out, a.limited, a.after), a.other, a.stopped)
	}
	return slices.DeleteFunc(out, func(r *client.Response) bool { return r == nil })
}

// run sends the probe's request sequence, once for every probe of it, or
// waits for the lane that sends it; the spec that first gets it is
// charged with its requests.
func (pr *prober) run(ctx context.Context, p probe.Probe) *probeRun {
	pr.mu.Lock()
	r := pr.entryLocked(p)
	pr.mu.Unlock()
	if !r.queued {
		r.once.Do(func() { pr.send(ctx, p, r) })
		return r
	}
	select {
	case <-r.done:
	case <-ctx.Done():
		return &probeRun{blocked: "the spec ended before its probes' requests were sent"}
	}
	pr.client().Claim(r.scope)
	return r
}

// entryLocked is the run of the probe's sequence (pr.mu held).
func (pr *prober) entryLocked(p probe.Probe) *probeRun {
	r, ok := pr.runs[p.Request()]
	if !ok {
		r = &probeRun{scope: "the probes' requests " + p.Request(), done: make(chan struct{})}
		pr.runs[p.Request()] = r
	}
	return r
}

// finish lets the specs waiting for the run go on.
func (r *probeRun) finish() { r.doneOnce.Do(func() { close(r.done) }) }

// auth is the Authorization value of a probe's key, or why it cannot be
// sent.
func (pr *prober) auth(p probe.Probe) (string, string) {
	t := pr.keys()
	if p.Key != probe.Own {
		key, ok := p.Key.Derive(t.Pro)
		if !ok {
			return "", fmt.Sprintf("%s: the Pro key has no <prefix>_<random> parts for it to change", p.Key.Says())
		}
		return "Bearer " + key, ""
	}
	switch p.Role {
	case probe.Pro:
		return client.Bearer(t.Pro), ""
	case probe.Free:
		if t.Free == "" {
			return "", pr.h.Needs("free-key")
		}
		return client.Bearer(t.Free), ""
	case probe.Revoked:
		if t.Revoked == "" {
			return "", pr.h.Needs("revoked-key")
		}
		return client.Bearer(t.Revoked), ""
	case probe.Unknown:
		return "Bearer " + t.Unknown, ""
	case probe.Malformed:
		return "Bearer " + t.Malformed, ""
	}
	return "", ""
}

// cannot is why a probe cannot be sent in this run: a key not given
// (needs(flag)), a Pro key it cannot derive a key from, a clock the suite
// cannot move; "" when it can.
func (pr *prober) cannot(p probe.Probe) string {
	if _, why := pr.auth(p); why != "" {
		return why
	}
	if p.Shape == probe.LiveHead && !pr.h.VirtualClock() {
		return liveHeadNeeds
	}
	if p.Oracle == probe.OracleTenant && pr.keys().Free == "" {
		return pr.h.Needs("free-key") // the other account's whole feed is the oracle's
	}
	return ""
}

// liveHeadNeeds is why the live-head probes cannot run in real time.
const liveHeadNeeds = "needs --control-clock (a tcmkit simulator whose clock the suite moves) to make events arrive at the head; thorough's long walk judges a live feed as it grows"

// keyOf is the key of a valid role ("" for the others).
func (pr *prober) keyOf(role probe.Role) string {
	switch role {
	case probe.Pro:
		return pr.keys().Pro
	case probe.Free:
		return pr.keys().Free
	}
	return ""
}

// request is the input's request with an Authorization value, on the page
// a cursor leads to ("" for the first).
func request(in probe.Input, auth, cursor string) client.Request {
	switch in.Op {
	case probe.Videos:
		return client.PostJSON(schemas.PathVideos, in.Body, auth)
	case probe.Health:
		return client.PostJSON(schemas.PathHealth, in.Body, auth)
	}
	q := url.Values{}
	if !in.NoLimit {
		q.Set("limit", in.Limit)
	}
	switch {
	case in.ReplaceCursor:
		q.Set("cursor", in.Cursor)
	case cursor != "":
		q.Set("cursor", cursor)
	}
	return client.Get(schemas.PathFeed, q, auth)
}

// send makes the sequence of the probe's shape.
func (pr *prober) send(ctx context.Context, p probe.Probe, r *probeRun) {
	auth, skip := pr.auth(p)
	if skip != "" {
		r.blocked = skip
		return
	}
	in := p.Input
	if in.FromFeed {
		ids, block := pr.shapedIDs(ctx)
		if block != "" {
			r.blocked = block
			return
		}
		in.IDs, in.Body, r.ids = ids, string(pr.h.VideosRequest(ids, "").Body), ids
	}
	if p.Oracle == probe.OracleRate {
		r.rate = pr.rateSequence(ctx, p)
		if r.rate.blocked != "" {
			r.blocked = r.rate.blocked
		}
		return
	}
	q := &sequence{pr: pr, ctx: ctx, p: p, r: r, in: in, auth: auth, owner: auth}
	if p.Role.Bad() {
		// the key whose walk hands the cursors: the Pro key's for a key
		// that has no feed
		q.owner = client.Bearer(pr.keys().Pro)
	}
	switch p.Shape {
	case probe.FirstPage:
		if resp := q.cached(request(in, auth, "")); resp != nil {
			r.judged = []*client.Response{resp}
		}
	case probe.CursorPage:
		q.cursorPages(1)
	case probe.DeepPage:
		q.cursorPages(3)
	case probe.LiveHead:
		q.liveHead()
	case probe.LongWalk:
		q.longWalk()
	case probe.BothOps:
		q.bothOps()
	case probe.AfterBurst:
		q.afterBurst()
	case probe.ReadByKey:
		q.readByKey()
	}
}

// sequence is one probe's requests as send makes them: its input (the ids
// made for it, if any), its Authorization value, and the one of the key
// whose walk hands out its cursors.
type sequence struct {
	pr          *prober
	ctx         context.Context
	p           probe.Probe
	r           *probeRun
	in          probe.Input
	auth, owner string
}

// fail blocks the run on a request the target gave no answer to.
func (q *sequence) fail(err error) {
	q.r.blocked = "the target gave no answer to judge: " + q.pr.h.Redact(err.Error())
}

// cached sends a request the session may have sent already (its answer
// then, at no cost). In a lane, a request that waits out a 429 first waits
// for its key's room (pace); a burst (send) does not.
func (q *sequence) cached(req client.Request) *client.Response {
	c := q.pr.client()
	if !c.Known(req) {
		if err := q.pr.pace(q.ctx, req, 1); err != nil {
			q.fail(err)
			return nil
		}
	}
	resp, err := c.Cached(q.ctx, req)
	if err != nil {
		q.fail(err)
	}
	return resp
}

// sendIn sends a request anew, waiting out a 429 (after its key's room)
// when wait says so.
func (q *sequence) sendIn(ctx context.Context, req client.Request, wait bool) *client.Response {
	send := q.pr.client().Send
	if wait {
		if err := q.pr.pace(ctx, req, 1); err != nil {
			q.fail(err)
			return nil
		}
		send = q.pr.client().Do
	}
	resp, err := send(ctx, req)
	if err != nil {
		q.fail(err)
	}
	return resp
}

func (q *sequence) send(req client.Request, wait bool) *client.Response {
	return q.sendIn(q.ctx, req, wait)
}

// cursorPages walks depth pages of the owner's feed (a key without a feed
// follows the Pro key's walk at the default input), then asks for the
// page its cursor leads to and the one after it (a fault of deep pages
// shows across their boundary); to the end for the probes of where a
// walk ends.
func (q *sequence) cursorPages(depth int) {
	p, r := q.p, q.r
	lead := q.in
	if p.Role.Bad() {
		lead = probe.DefaultInput(probe.Feed)
	}
	cursor := ""
	for range depth {
		page := q.cached(request(lead, q.owner, cursor))
		if page == nil {
			return
		}
		if page.Status != http.StatusOK {
			r.blocked = fmt.Sprintf("%s answered %d: no cursor to follow", page.Request, page.Status)
			return
		}
		r.context = append(r.context, page)
		if _, cursor = q.pr.h.PageShape(page); cursor == "" {
			r.blocked = fmt.Sprintf("the feed ends after %d page(s) at %s: no page %d to ask for", len(r.context), lead.Name, depth+1)
			return
		}
	}
	for n := 0; cursor != "" && (n < 2 || p.Sequence() != string(p.Shape) && n < q.pr.h.MaxPages()); n++ {
		resp := q.cached(request(q.in, q.auth, cursor))
		if resp == nil {
			return
		}
		r.judged = append(r.judged, resp)
		if resp.Status != http.StatusOK {
			break
		}
		_, cursor = q.pr.h.PageShape(resp)
	}
}

// liveHead reads the first page, makes events arrive at the head (the
// manual clock moves), then reads the head again and the first page's
// cursor page.
func (q *sequence) liveHead() {
	h, r := q.pr.h, q.r
	if !h.VirtualClock() {
		r.blocked = liveHeadNeeds
		return
	}
	first := q.send(request(q.in, q.auth, ""), true)
	if first == nil {
		return
	}
	if err := h.TargetClock().Wait(q.ctx, growth); err != nil {
		q.fail(err)
		return
	}
	r.context = []*client.Response{first}
	if head := q.send(request(q.in, q.auth, ""), true); head != nil {
		r.judged = append(r.judged, head)
	}
	if _, next := q.pr.h.PageShape(first); next != "" && first.Status == http.StatusOK {
		if resp := q.send(request(q.in, q.auth, next), true); resp != nil {
			r.judged = append(r.judged, resp)
		}
	}
}

// longWalk follows the feed's cursors past the 100th, to its end or
// probe.LongWalkCursors.
func (q *sequence) longWalk() {
	cursor := ""
	for range probe.LongWalkCursors + 1 {
		page := q.cached(request(q.in, q.auth, cursor))
		if page == nil {
			return
		}
		q.r.judged = append(q.r.judged, page)
		if page.Status != http.StatusOK {
			return
		}
		if _, cursor = q.pr.h.PageShape(page); cursor == "" {
			return
		}
	}
}

// bothOps reads a feed page, tracked videos for its first video, and the
// feed page again.
func (q *sequence) bothOps() {
	wait := !q.p.Role.Bad()
	feed := probe.DefaultInput(probe.Feed)
	first := q.send(request(feed, q.auth, ""), wait)
	if first == nil {
		return
	}
	body := probe.DefaultInput(probe.Videos)
	if ids := q.pr.h.VideoIDsOf(first); len(ids) > 0 && wait {
		body.IDs, body.Body = ids[:1], string(q.pr.h.VideosRequest(ids[:1], "").Body)
	}
	videos := q.send(request(body, q.auth, ""), wait)
	again := q.send(request(feed, q.auth, ""), wait)
	for _, resp := range []*client.Response{first, videos, again} {
		if resp != nil {
			q.r.judged = append(q.r.judged, resp)
		}
	}
}

// afterBurst sends 21 requests as fast as the target answers: past 20 in
// a minute, a limiter that runs before authentication shows. A valid
// key's 20 from a window with room for them.
func (q *sequence) afterBurst() {
	if err := q.pr.pace(q.ctx, request(q.in, q.auth, ""), schemas.FeedRequestsPerMinute); err != nil {
		q.fail(err)
		return
	}
	for range schemas.FeedRequestsPerMinute + 1 {
		resp := q.send(request(q.in, q.auth, ""), false)
		if resp == nil {
			return
		}
		q.r.judged = append(q.r.judged, resp)
	}
}

// readByKey has the Pro key read a URL (the input's, and for the feed its
// first page's cursor page too) and the probe's role ask for it at once.
func (q *sequence) readByKey() {
	in := q.in
	pro := client.Bearer(q.pr.keys().Pro)
	urls := []client.Request{request(in, q.auth, "")}
	if in.Op == probe.Feed {
		if first := q.cached(request(probe.DefaultInput(probe.Feed), pro, "")); first != nil {
			if _, next := q.pr.h.PageShape(first); next != "" {
				urls = append(urls, request(in, q.auth, next))
			}
		}
	}
	for _, req := range urls {
		read := req
		read.Auth = pro
		// the Pro key reads it, and the role asks for it at once: with
		// room for both first, and no other request between them
		n := 1
		if req.Auth == pro {
			n = 2
		}
		if err := errors.Join(q.pr.pace(q.ctx, read, n), q.pr.pace(q.ctx, req, 1)); err != nil {
			q.fail(err)
			return
		}
		q.pr.h.Pace().Alone(q.ctx, func(ctx context.Context) {
			if got := q.sendIn(ctx, read, true); got != nil {
				q.r.context = append(q.r.context, got)
			}
			if resp := q.sendIn(ctx, req, !q.p.Role.Bad()); resp != nil {
				q.r.judged = append(q.r.judged, resp)
			}
		})
	}
}

// growth is how far the live-head probes move a simulator's clock: new
// events are recorded at the head meanwhile.
const growth = 2 * time.Hour
