package conformance

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/schemas/catalogue"
	"github.com/tcmkit/tcmkit/schemas/jsondoc"
	"github.com/tcmkit/tcmkit/suites/client"
	"github.com/tcmkit/tcmkit/suites/explore"
	"github.com/tcmkit/tcmkit/suites/pace"
	"github.com/tcmkit/tcmkit/suites/probe"
	"github.com/tcmkit/tcmkit/suites/probegrid"
)

// The generated probes are package probegrid's; this is what they need of
// the suite (probegrid.Host), and the tenant judgments that read the
// suite's whole walks.

// probeLabel is the feature label of the generated probes.
const probeLabel = probegrid.Label

// paceGrain is what a key's window is given beyond its minute before the
// next request: the target stamps a request a little after the suite.
const paceGrain = 50 * time.Millisecond

// probeSpecs declares the generated probes.
func (s *suite) probeSpecs() { probegrid.Specs(&probeHost{s: s}) }

// probeHost is the suite as the probes see it.
type probeHost struct {
	s     *suite
	facts factsMemo
}

func (h *probeHost) Keys() probegrid.Keys {
	t := h.s.tg
	return probegrid.Keys{Pro: t.Pro, Free: t.Free, Revoked: t.Revoked, Unknown: t.unknownKey(), Malformed: t.unprefixedToken(), Burst: t.burstKey(), Other: t.otherKey()}
}

func (h *probeHost) Client() *client.Client                       { return h.s.c }
func (h *probeHost) Pace() *pace.Pacer                            { return h.s.pace }
func (h *probeHost) RunContext() context.Context                  { return h.s.runCtx }
func (h *probeHost) Profile() string                              { return h.s.cfg.Profile }
func (h *probeHost) MaxPages() int                                { return h.s.cfg.MaxPages }
func (h *probeHost) MaxWait() time.Duration                       { return h.s.cfg.MaxWait }
func (h *probeHost) VirtualClock() bool                           { return h.s.virtualClock() }
func (h *probeHost) TargetClock() client.Clock                    { return h.s.targetClock() }
func (h *probeHost) RoomIn(key, path string, n int) time.Duration { return h.s.roomIn(key, path, n) }
func (h *probeHost) Wait(ctx context.Context, d time.Duration, why string) error {
	return h.s.wait(ctx, d, why)
}
func (h *probeHost) Redact(s string) string { return h.s.Redactor().String(s) }

func (h *probeHost) Own(key string, room int) (release func()) {
	if h.s.or == nil {
		return func() {}
	}
	return h.s.or.Own(key, room)
}

func (h *probeHost) Log(line string) {
	fmt.Fprint(h.s.logWriter(), line)
	h.s.logWriter().Flush()
}

func (h *probeHost) Explore(roomPro, roomFree int) map[explore.Spend]int {
	if h.s.ex == nil || !h.s.explores() {
		return nil
	}
	return h.s.ex.decide(roomPro, roomFree, true)
}

func (h *probeHost) StartExplore() {
	if h.s.ex != nil && h.s.explores() && h.s.profile() == probe.Quick {
		h.s.ex.start()
	}
}

func (h *probeHost) Failf(format string, args ...any) {
	GinkgoHelper()
	h.s.failf(format, args...)
}

func (h *probeHost) Block(cause string) {
	GinkgoHelper()
	h.s.Block(cause)
}

func (h *probeHost) Unable(why string) {
	GinkgoHelper()
	if neededFlag.MatchString(why) {
		skipMissing(why)
	}
	h.s.Block(why)
}

func (h *probeHost) SkipFor(setting, reason string) {
	GinkgoHelper()
	skipFor(setting, reason)
}

func (h *probeHost) NoneOf(rule string, problems []string) {
	GinkgoHelper()
	h.s.noneOf(rule, problems)
}

func (h *probeHost) Needs(flag string) string { return needs(flag) }
func (h *probeHost) StatusCause(resp *client.Response) (catalogue.ID, string) {
	return h.s.statusCause(resp)
}
func (h *probeHost) Elsewhere(resp *client.Response, own catalogue.ID) string {
	return h.s.elsewhere(resp, own)
}
func (h *probeHost) Fetch(ctx context.Context, req client.Request) *client.Response {
	GinkgoHelper()
	return h.s.fetch(ctx, req)
}
func (h *probeHost) KnownVideoIDs(ctx context.Context, max int) []string {
	return h.s.knownVideoIDs(ctx, max)
}
func (h *probeHost) PageShape(resp *client.Response) (int, string) { return pageShape(resp) }
func (h *probeHost) VideosRequest(ids []string, key string) client.Request {
	return videosRequest(ids, key)
}
func (h *probeHost) LimitRequest(limit, key string) client.Request { return limitRequest(limit, key) }
func (h *probeHost) PageRequest(limit, cursor, key string) client.Request {
	return pageRequest(limit, cursor, key)
}
func (h *probeHost) InventedID(n, length int) string { return inventedID(n, length) }

// roleWalk is the role's whole walk (the Pro key's at limit=200, the free
// key's at 199).
func (h *probeHost) roleWalk(ctx context.Context, role probe.Role) *walk {
	if role == probe.Free {
		return h.s.freeWalk(ctx)
	}
	return h.s.fullWalk(ctx)
}

func (h *probeHost) Walk(ctx context.Context, role probe.Role) ([]probegrid.Event, bool) {
	w := h.roleWalk(ctx, role)
	var out []probegrid.Event
	for _, e := range w.Events() {
		out = append(out, probegrid.Event{ID: e.ID, Channel: e.Channel, Video: e.Video, CreatedAt: e.CreatedAt, HasTime: e.HasTime})
	}
	return out, w.Complete
}

// VideoIDsOf are the video ids a feed page shows.
func (h *probeHost) VideoIDsOf(resp *client.Response) []string {
	if resp == nil || resp.Status != http.StatusOK {
		return nil
	}
	page, _ := probePage(resp)
	var out []string
	for _, e := range page.Events {
		if id := e.Video; id != "" && len(id) <= schemas.MaxVideoIDLen && !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

// Tenant judges a tenant probe: the free key's answers hold no event of
// the Pro account's alone (the oracle's tenant rule judges only pages
// asked with another key's cursor: a page a cache by URL served across
// accounts is this scenario's to show, with both accounts' whole feeds);
// for tracked videos it sends the request the oracle judges.
func (h *probeHost) Tenant(ctx context.Context, p probe.Probe, lead, judged []*client.Response) ([]string, string) {
	s := h.s
	if s.tg.Free == "" {
		return nil, needs("free-key")
	}
	pro, free := s.fullWalk(ctx), s.freeWalk(ctx)
	if !pro.Complete || !free.Complete {
		return nil, fmt.Sprintf("a walk did not reach the end of its feed (raise --max-pages=%d): what an account tracks is learnt from its whole feed", s.cfg.MaxPages)
	}
	var out []string
	if p.Requirement == catalogue.VideosTenant {
		// the Pro key asks for videos of channels only the free account
		// tracks: the oracle judges the answer (a VideoEntry of a channel
		// only the other account's whole feed shows, VIDEOS-TENANT's; the
		// control served, VIDEOS-MISSING's)
		ids := foreignVideos(free, pro, schemas.MaxVideoIDs-1)
		if len(ids) == 0 {
			return nil, "no video of a channel only the free account tracks"
		}
		if resp := s.fetch(ctx, foreignVideosRequest(ids, s.tg.Pro)); resp.Status != http.StatusOK {
			return nil, fmt.Sprintf("%s answered %d", resp.Request, resp.Status)
		}
		return nil, ""
	}
	// A page of the Pro key's, read with the free key: only an event shown
	// to be the Pro account's alone is a leak (owner.foreign).
	// The pages the sequence read with the free key before (a cursor
	// page's lead) are the free key's answers too: a leak there is proof
	// enough, and the cursor page it handed out may never come.
	o := ownerOf(free, pro)
	var mine []*client.Response
	for _, resp := range lead {
		if resp.Request.Auth == client.Bearer(s.tg.Free) {
			mine = append(mine, resp)
		}
	}
	for _, resp := range append(mine, judged...) {
		if resp.Status != http.StatusOK {
			continue
		}
		page := h.facts.of(resp).page
		for i, e := range page.Events {
			if o.foreign(e.ID, e.Channel, e.CreatedAt) {
				out = append(out, fmt.Sprintf("%s: /events/%d (id %q, channel %q) is an event of the Pro account's feed, of a channel the free account's whole feed never shows, served to the free key", resp.Request, i, e.ID, e.Channel))
			}
		}
	}
	return out, ""
}

// ForeignPages is why a key's feed pages cannot be judged when one of
// them shows an event proven to be the other account's (owner.foreign): a
// page served across accounts (FEED-TENANT's) is no page of this key's
// walk, and its cursor, its size and its place are not this key's either.
func (h *probeHost) ForeignPages(ctx context.Context, p probe.Probe, resps []*client.Response) string {
	s := h.s
	if p.Requirement == catalogue.FeedTenant || s.tg.Free == "" || s.tg.Free == s.tg.Pro || p.Input.Op != probe.Feed {
		return ""
	}
	key := map[probe.Role]string{probe.Pro: s.tg.Pro, probe.Free: s.tg.Free}[p.Role]
	if key == "" {
		return ""
	}
	var pages []*client.Response
	for _, resp := range resps {
		if resp.Status == http.StatusOK && resp.Request.Auth == client.Bearer(key) && resp.Request.Path == schemas.PathFeed {
			pages = append(pages, resp)
		}
	}
	if len(pages) == 0 {
		return ""
	}
	pro, free := s.fullWalk(ctx), s.freeWalk(ctx)
	if !pro.Complete || !free.Complete {
		return ""
	}
	own, other := pro, free
	if key == s.tg.Free {
		own, other = free, pro
	}
	for _, resp := range pages {
		if found := foreignEvents(resp, own, other); len(found) > 0 {
			return fmt.Sprintf("%s (judged by FEED-TENANT): no page of %s to judge", found[0], probegrid.RoleSays[p.Role])
		}
	}
	return ""
}

// probePage reads a feed answer as a walk does, bounded: a page of more
// events than maxPageEvents is not read (a page-size oracle says so), so
// that a hostile target's pages of 100,000 events cost no memory here.
func probePage(resp *client.Response) (walkPage, bool) {
	doc, err := resp.JSON()
	if err != nil || len(jsondoc.Items(doc, "/events")) > maxPageEvents {
		return walkPage{}, false
	}
	page, err := readPage(resp, 0)
	return page, err == nil
}

// A feed page the tenant probes read is read once: hundreds of probes
// judge the same few hundred answers, and decoding them again for each
// would churn memory (a hostile target's bodies are decoded again whenever
// the client's budget of decoded documents evicts them).

type answerFacts struct {
	once   sync.Once
	page   walkPage
	pageOK bool
}

// factsMemo maps an answer to what is read of it.
type factsMemo struct{ m sync.Map } // *client.Response → *answerFacts

func (fm *factsMemo) of(resp *client.Response) *answerFacts {
	v, _ := fm.m.LoadOrStore(resp, &answerFacts{})
	f := v.(*answerFacts)
	f.once.Do(func() {
		if resp.Status == http.StatusOK {
			f.page, f.pageOK = probePage(resp)
		}
	})
	return f
}

// cursorRefused says why a page cannot be judged when its cursor, one the
// target handed out, was refused (a 400 whose details name the cursor and
// not the limit): FEED-CURSOR-WALK's rule, not the page's; "" otherwise.
func cursorRefused(resp *client.Response) string {
	q, _ := url.ParseQuery(resp.Request.Query)
	if resp.Status != http.StatusBadRequest || q.Get("cursor") == "" || !detailsMention(resp, "cursor") || detailsMention(resp, "limit") {
		return ""
	}
	return fmt.Sprintf("%s answered 400 to a cursor the target handed out (judged by FEED-CURSOR-WALK): no page to judge", resp.Request)
}

// elsewhere says why an unexpected answer is no finding of requirement
// own: its status breaks another rule (statusCause), or the target asks
// to be left alone, or it refused a cursor it handed out; "" when the
// answer is own's to judge.
func (s *Session) elsewhere(resp *client.Response, own catalogue.ID) string {
	if resp.Status == http.StatusServiceUnavailable && own == catalogue.RateLimit429 {
		return "" // a throttle that is no 429 is the limit's own finding
	}
	id, block := s.statusCause(resp)
	switch {
	case block != "":
		return block
	case id != "" && id != own:
		return fmt.Sprintf("%s answered %d, which breaks %s: no answer to judge", resp.Request, resp.Status, id)
	}
	return cursorRefused(resp)
}
