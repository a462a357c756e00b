package conformance

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"time"

	. "github.com/onsi/ginkgo/v2"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/schemas/catalogue"
	"github.com/tcmkit/tcmkit/schemas/jsondoc"
	"github.com/tcmkit/tcmkit/schemas/redact"
	"github.com/tcmkit/tcmkit/suites/client"
	"github.com/tcmkit/tcmkit/suites/probe"
)

// Where breaks hide: the request shapes on which a server that gets the
// common case right gets a rule wrong (issue 18). A second lockout of the
// burst key, at the end of the run where it delays nothing: Retry-After
// and an ErrorBody on every 429 of it, on both operations; bad keys still
// 401 while a key is throttled (the limiter does not run first); the
// feed's count not reset by the other operation. And, with what the walks
// fetched anyway: tracked videos for the walk's videos, 20 at a time,
// with a repeated id, a missing id of capitals and accents, and lists
// that come back empty.

// hides labels a spec of this file with its requirements and "hidden":
// --label-filter='!hidden' leaves them out, and the report's table counts
// their requests apart.
func hides(ids ...catalogue.ID) Labels { return append(requires(ids...), "hidden") }

// maxVideoBatches bounds the tracked-videos requests for the walk's
// videos: 10 requests of 20 ids, sent while the rate-limit specs wait.
const maxVideoBatches = 10

// walkVideoIDs are the distinct video ids of the full walk (at most 32
// characters), at most max of them, spread over the whole walk: when it
// shows more, every k-th is taken, so that videos of its deep pages are
// asked for too.
func (s *Session) walkVideoIDs(ctx context.Context, max int) []string {
	all := s.knownVideoIDs(ctx, 0)
	if len(all) <= max {
		return all
	}
	out := make([]string, 0, max)
	for i := range max {
		out = append(out, all[i*len(all)/max])
	}
	return out
}

// videoBatches are the tracked-videos requests for the walk's videos, 20
// ids each.
func (s *Session) videoBatches(ctx context.Context) []client.Request {
	ids := s.walkVideoIDs(ctx, maxVideoBatches*schemas.MaxVideoIDs)
	s.c.Claim(videoScope)
	var out []client.Request
	for batch := range slices.Chunk(ids, schemas.MaxVideoIDs) {
		out = append(out, videosRequest(batch, s.tg.Pro))
	}
	return out
}

// videoScope names the requests of the batches made ahead of time.
const videoScope = "tracked videos of the walk's videos"

// prefetchVideos sends the batches and the rare bodies ahead of time
// (while the rate-limit specs wait), as prefetchWalks does the walks: the
// Pro key's tracked-videos budget is idle then.
func (s *Session) prefetchVideos(ctx context.Context) {
	reqs := s.videoBatches(ctx)
	for _, name := range slices.Sorted(maps.Keys(s.rareBodies(ctx))) {
		reqs = append(reqs, videosRequest(s.rareBodies(ctx)[name], s.tg.Pro))
	}
	for _, req := range reqs {
		if _, err := s.c.Cached(ctx, req); err != nil {
			return
		}
	}
}

// oddID is a video id that cannot exist, with capitals, an accent and a
// space: a server that lists it as missing must list it as sent.
const oddID = "~No Such Vidéo~"

// rareBodies are tracked-videos bodies a client may send that the common
// ones are not: an id twice, an id of capitals and accents, only ids that
// exist (missingVideoIds comes back empty), only ids that cannot (videos
// comes back empty).
func (s *Session) rareBodies(ctx context.Context) map[string][]string {
	known := s.knownVideoIDs(ctx, 3)
	out := map[string][]string{"missing only": {oddID, inventedID(7, 20)}}
	if len(known) > 0 {
		// the missing id in plain ASCII: a 400 is then the repeat's alone
		out["an id twice"] = []string{known[0], inventedID(8, 20), known[0]}
		out["served only"] = known
	}
	return out
}

// batchAnswers fetches the batches and the rare bodies, each a 200 or the
// spec fails.
func (s *suite) batchAnswers(ctx context.Context) (resps []*client.Response, asked [][]string) {
	GinkgoHelper()
	reqs := s.videoBatches(ctx)
	if len(reqs) == 0 {
		Skip("the feed shows no video to ask for")
	}
	for _, req := range reqs {
		resp := s.validBody(s.fetch(ctx, req))
		s.need(resp, http.StatusOK)
		doc, _ := jsondoc.Decode(req.Body) // the request's own body: valid
		var ids []string
		for _, it := range jsondoc.Items(doc, "/videoIds") {
			ids = append(ids, it.(string))
		}
		resps, asked = append(resps, resp), append(asked, ids)
	}
	return resps, asked
}

// validBody blocks a spec whose valid tracked-videos body was refused with
// 400: the specs of the body's bounds judge that, this one has nothing to.
func (s *suite) validBody(resp *client.Response) *client.Response {
	GinkgoHelper()
	if resp.Status == http.StatusBadRequest {
		s.Block(fmt.Sprintf("%s: a valid body was refused with 400 (judged by VIDEOS-IDS-MIN, VIDEOS-IDS-MAX and VIDEOS-ID-LEN)", resp.Request))
	}
	return resp
}

// hiddenVideoSpecs judge the walk's videos and the rarer bodies.
func (s *suite) hiddenVideoSpecs() {
	It("returns every video of the walk as a VideoEntry, 20 at a time", hides(catalogue.VideosServed), func(ctx SpecContext) {
		// the oracle judges each answer: a video the key's feed showed is
		// served (VIDEOS-SERVED), every id in one list (VIDEOS-PARTITION)
		s.batchAnswers(ctx)
	})
	It("answers every batch of the walk's videos with VideoEntries that validate, missingVideoIds empty but present", hides(catalogue.VideosEntrySchema), func(ctx SpecContext) {
		// the contract oracle judges each answer
		s.batchAnswers(ctx)
		for _, ids := range s.rareBodies(ctx) {
			s.validBody(s.fetch(ctx, videosRequest(ids, s.tg.Pro)))
		}
	})
	It("accepts a valid body that repeats an id, and answers it", hides(catalogue.VideosIDsMax, catalogue.VideosServed), func(ctx SpecContext) {
		ids, ok := s.rareBodies(ctx)["an id twice"]
		if !ok {
			Skip("the feed shows no video to ask for")
		}
		// the oracle judges the answer: the video the feed showed, asked
		// twice, is served (VIDEOS-SERVED), each id in one list
		s.need(s.fetch(ctx, videosRequest(ids, s.tg.Pro)), http.StatusOK)
	})
	It("lists missing ids exactly as sent, in every body shape", hides(catalogue.VideosPartition), func(ctx SpecContext) {
		// the oracle judges the partition of each answer
		for _, ids := range s.rareBodies(ctx) {
			s.need(s.validBody(s.fetch(ctx, videosRequest(ids, s.tg.Pro))), http.StatusOK)
		}
		s.batchAnswers(ctx)
	})
}

// proGateSpecs beyond the first page and one id: a free key's batch of 20
// ids, and every page of its walk.
func (s *suite) hiddenProSpecs() {
	It("answers tracked videos of 20 ids for a free key with 403 and an ErrorBody", hides(catalogue.ProGate, catalogue.ErrorBody), func(ctx SpecContext) {
		ids := make([]string, schemas.MaxVideoIDs)
		for i := range ids {
			ids[i] = inventedID(i, 24)
		}
		s.need(s.fetch(ctx, videosRequest(ids, s.needFree())), http.StatusForbidden)
	})
	It("serves a free key every page of its feed", hides(catalogue.ProGate), func(ctx SpecContext) {
		// the oracle judges every page: a valid key refused is
		// AUTH-VALID's, the feed gated by plan PRO-GATE's
		s.walkOK(s.walkOf(ctx, s.needFree(), freeWalkLimit))
	})
}

// hiddenAuthSpecs: the valid key accepted on every request the walks and
// batches made (no request of their own).
func (s *suite) hiddenAuthSpecs() {
	It("accepts the valid Pro key on every page of its walk and every batch of tracked videos", hides(catalogue.AuthValid), func(ctx SpecContext) {
		// the oracle judges every answer: a valid key refused with 401 is
		// AUTH-VALID's, the Pro key refused with 403 PRO-GATE's
		s.walkOK(s.fullWalk(ctx))
		reqs := s.videoBatches(ctx)
		for _, ids := range s.rareBodies(ctx) {
			reqs = append(reqs, videosRequest(ids, s.tg.Pro))
		}
		for _, req := range reqs {
			s.fetch(ctx, req)
		}
	})
}

// lockout is a second lockout of the burst key, at the end of the run: a
// burst until the first 429, the bad keys sent meanwhile, then cycles of a
// tracked-videos request and feed requests until a 429.
type lockout struct {
	key       string
	first     *client.Response
	admitted  []*client.Response // feed 200s from the lockout's first request on
	limited   []*client.Response // every 429, both operations
	badKeys   []*client.Response // bad credentials sent while the key was throttled
	forms     []*client.Response // the key in another form, while throttled
	other     *client.Response   // the other key's feed request while the key was throttled
	elapsed   time.Duration
	noLockout string // why no lockout came, "" when one did
	// sweep: under --profile thorough, the feed requests the key went on
	// sending after the lockout, hundreds, across a server's housekeeping
	sweep []*client.Response
	// resumed: on a virtual clock, the key's feed request after waiting
	// exactly what the lockout's last 429 said
	resumed *client.Response
}

// secondLockout returns the lockout, making it on first use.
func (s *suite) secondLockout(ctx context.Context, lo **lockout) *lockout {
	GinkgoHelper()
	if *lo == nil {
		*lo = s.makeLockout(ctx)
	}
	if (*lo).noLockout != "" {
		Skip((*lo).noLockout)
	}
	// what the lockout sent is the evidence of every spec that judges it
	l := *lo
	s.c.Saw(ctx, slices.Concat(l.admitted, l.limited, l.badKeys, l.forms, []*client.Response{l.other}, l.sweep, []*client.Response{l.resumed})...)
	return l
}

// mostAdmitted is what any 20-a-minute limiter may admit in d from a key
// whose window may be fresh: two fixed windows' worth when one turns over,
// and what a bucket refills meanwhile.
func mostAdmitted(d time.Duration) int {
	limit := schemas.FeedRequestsPerMinute
	return 2*limit + int(float64(limit)*d.Seconds()/schemas.RateWindow.Seconds())
}

// throttleLeft is how much of the burst key's throttle the lockout keeps
// for its requests after the other key's.
const throttleLeft = 15 * time.Second

// cycles is how many times the lockout asks tracked videos and then the
// feed again: a limiter reset by the other operation admits a window's
// worth each time, past what any limiter may.
const cycles = 3

// makeLockout makes the second lockout: a burst until the first 429
// (burst), what the key's throttle must not change (whileThrottled), then
// cycles of the other operation and the feed (cycle), and under thorough
// the sweep; on a virtual clock, the request after the last Retry-After.
func (s *suite) makeLockout(ctx context.Context) *lockout {
	GinkgoHelper()
	r := &lockoutRun{s: s, ctx: ctx, lo: &lockout{key: s.tg.burstKey()}}
	// The probes' lanes are done first: nothing else spends a key's window
	// meanwhile.
	if err := s.pace.Drain(ctx); err != nil {
		s.failf("%v", err)
	}
	r.began = r.now()
	if !r.burst() {
		return r.lo
	}
	r.whileThrottled()
	r.cycle()
	lo := r.lo
	lo.elapsed = r.now().Sub(r.began)
	last := lo.limited[len(lo.limited)-1]
	if profile, _ := probe.ParseProfile(s.cfg.Profile); profile == probe.Thorough {
		lo.sweep = s.sweep(ctx, lo.key)
		last = lo.sweep[len(lo.sweep)-1]
	}
	lo.resumed = s.resume(ctx, last, lo.key)
	return lo
}

// lockoutRun is a lockout being made: what the key was answered, and when
// the lockout began on the target's clock.
type lockoutRun struct {
	s     *suite
	ctx   context.Context
	lo    *lockout
	began time.Time
}

// now is the target's time: a server whose clock moves with every request
// (a manual clock) counts its windows on that clock.
func (r *lockoutRun) now() time.Time {
	if t, err := r.s.targetClock().Now(r.ctx); err == nil {
		return t
	}
	return time.Now()
}

// send sends req and files its answer: a feed 200 as admitted, any 429 as
// limited.
func (r *lockoutRun) send(req client.Request) *client.Response {
	GinkgoHelper()
	resp, err := r.s.c.Send(r.ctx, req)
	if healthCut(req, err) {
		return &client.Response{Request: req} // HEALTH-OK's finding
	}
	if err != nil {
		r.s.failf("%v", err)
	}
	switch resp.Status {
	case http.StatusOK:
		if req.Path == schemas.PathFeed {
			r.lo.admitted = append(r.lo.admitted, resp)
		}
	case http.StatusTooManyRequests:
		r.lo.limited = append(r.lo.limited, resp)
	}
	return resp
}

// feedUntil429 sends feed requests, first pages and cursor pages, until a
// 429 or more than any limiter may admit, and reports whether a 429 came.
// Each call starts again from the first page, limit 1: after a 429,
// queries that passed before come again (a server that answers a
// throttled request with an earlier answer shows).
func (r *lockoutRun) feedUntil429(spread time.Duration) bool {
	GinkgoHelper()
	cursor := ""
	for i := 0; len(r.lo.admitted) <= mostAdmitted(r.now().Sub(r.began)); i++ {
		if i > 0 && i < schemas.FeedRequestsPerMinute && spread > 0 {
			// (the first window's worth only: a world whose clock also
			// moves with every request admits a request every few
			// seconds for ever)
			if err := r.s.pace.Wait(r.ctx, spread); err != nil {
				r.s.failf("%v", err)
			}
		}
		resp := r.send(pageRequest(strconv.Itoa(i%10+1), cursor, r.lo.key))
		if resp.Status == http.StatusTooManyRequests {
			return true
		}
		if resp.Status != http.StatusOK {
			return false
		}
		_, cursor = pageShape(resp)
	}
	return false
}

// burst sends feed requests until the first 429, and reports whether one
// came (else lo.noLockout says why not).
func (r *lockoutRun) burst() bool {
	GinkgoHelper()
	s, lo := r.s, r.lo
	// On a virtual clock the first burst goes a second a request, at no
	// cost: the window it fills then ends a request at a time, and a 429
	// after it says when the oldest leaves (resume).
	spread := time.Duration(0)
	if s.virtualClock() {
		spread = time.Second
	}
	got429 := r.feedUntil429(spread)
	// A key still throttled by what came before (a spec that did not wait
	// for its Retry-After, another client on the key) is waited for first
	// on a virtual clock, at no cost: the lockout is a new one. In real
	// time that would cost a window: the throttle there is the lockout.
	if got429 && len(lo.admitted) == 0 && s.virtualClock() {
		d, err := client.ParseRetryAfter(lo.limited[0].Header.Get("Retry-After"), client.ServerTime(lo.limited[0].Header, time.Now()))
		if err != nil || d > s.cfg.MaxWait {
			lo.noLockout = fmt.Sprintf("key %s was throttled before the lockout, and its Retry-After cannot be waited for (the rate-limit specs judge it)", redact.Form(lo.key))
			return false
		}
		if err := s.wait(r.ctx, d, "the burst key is still throttled; the second lockout starts from a window with room"); err != nil {
			s.failf("%v", err)
		}
		r.began = r.now()
		got429 = r.feedUntil429(spread)
	}
	if !got429 {
		lo.noLockout = fmt.Sprintf("no 429 came on key %s after %d feed requests passed (the rate-limit specs judge the limit)", redact.Form(lo.key), len(lo.admitted))
		return false
	}
	lo.first = lo.limited[len(lo.limited)-1]
	return true
}

// whileThrottled sends, while the key is throttled, what its throttle must
// not change: the other key's request, the key in another form, and bad
// credentials.
func (r *lockoutRun) whileThrottled() {
	GinkgoHelper()
	s, lo, ctx := r.s, r.lo, r.ctx
	// The other key while the key is throttled. Under thorough the other
	// key's lane may have just filled its window: it waits for room for
	// its one request if the room comes well before the key's throttle
	// ends (quick waits for no window).
	if other := s.tg.otherKey(); other != "" {
		d, err := client.ParseRetryAfter(lo.first.Header.Get("Retry-After"), client.ServerTime(lo.first.Header, time.Now()))
		room := s.roomIn(other, "", 1)
		if profile, _ := probe.ParseProfile(s.cfg.Profile); profile == probe.Thorough && err == nil && room > 0 && room < d-r.now().Sub(r.began)-throttleLeft {
			if err := s.wait(ctx, room, "room in the other key's window for one request, while the key is still throttled"); err != nil {
				s.failf("%v", err)
			}
		}
		lo.other = r.send(limitRequest("1", other))
	}
	// The throttled key itself with its scheme in lower case: HTTP's
	// grammar lets a server accept it or not, but a limiter that serves it
	// at once counts the key apart by the way it is written (the oracle
	// judges it).
	lo.forms = append(lo.forms, r.send(client.Request{Method: http.MethodGet, Path: schemas.PathFeed, Query: "limit=1", Auth: "bearer " + lo.key}))
	// Bad credentials while the key is throttled: 401, not 429.
	for _, cr := range credentials() {
		if cr.name == "the Pro key with a character added" || cr.name == "the Pro key without its last character" || cr.name == "a scheme other than Bearer (with the valid Pro key)" {
			continue
		}
		auth, skip := cr.auth(s.tg)
		if skip != "" {
			continue
		}
		lo.badKeys = append(lo.badKeys, r.send(client.Get(schemas.PathFeed, nil, auth)), r.send(client.PostJSON(schemas.PathVideos, oneInventedID(), auth)))
		if w := s.fullWalk(ctx); len(w.Pages) > 1 {
			// a cursor handed to the Pro key is no credential
			req := pageRequest("", w.Pages[0].Next, "")
			req.Auth = auth
			lo.badKeys = append(lo.badKeys, r.send(req))
		}
	}
}

// cycle asks tracked videos until a 429 (its limit is open: none may
// come), then the feed; then twice more a tracked-videos request and the
// feed.
func (r *lockoutRun) cycle() {
	GinkgoHelper()
	key := r.lo.key
	for range schemas.FeedRequestsPerMinute + 1 {
		if r.send(videosRequest([]string{inventedID(0, 24)}, key)).Status == http.StatusTooManyRequests {
			break
		}
	}
	r.feedUntil429(0)
	for i := range cycles - 1 {
		r.send(videosRequest([]string{inventedID(0, 24)}, key))
		r.send(throttledAsk(i, key))
		r.feedUntil429(0)
	}
}

// resume waits what the key's last answer, a feed 429 after many refused
// requests, said in Retry-After, and asks the feed once more: it must
// pass (the oracle judges it: RATE-RETRY-AFTER). A limiter that keeps the
// requests it refused in its log while its Retry-After counts from the
// oldest request it admitted refuses it again, once the requests it
// admitted were spread over time (makeLockout). Only on a virtual clock,
// where the wait costs nothing; nil when the last answer was no feed 429
// or its wait is longer than allowed.
func (s *suite) resume(ctx context.Context, last *client.Response, key string) *client.Response {
	GinkgoHelper()
	if !s.virtualClock() || last.Status != http.StatusTooManyRequests || last.Request.Path != schemas.PathFeed {
		return nil
	}
	d, err := client.ParseRetryAfter(last.Header.Get("Retry-After"), client.ServerTime(last.Header, time.Now()))
	if err != nil || d > s.cfg.MaxWait {
		return nil
	}
	if err := s.wait(ctx, d, "what the lockout's last 429 said, after the requests it refused"); err != nil {
		s.failf("%v", err)
	}
	resp, err := s.c.Send(ctx, limitRequest("1", key))
	if err != nil {
		s.failf("%v", err)
	}
	return resp
}

// sweepRequests is how many feed requests the sweep sends: past two
// housekeepings of a limiter that runs one every 100 requests of a key
// (in real time one looks like a fixed window's turn, two within a minute
// do not), at most what a thorough run can spend at the end.
const sweepRequests = 250

// sweep sends feed requests on the key as fast as the target answers,
// first pages, cursor pages and last pages as the burst mixes them,
// whatever the answers: a limiter whose state a housekeeping clears every
// so many requests (a sweep that drops live entries, a counter that
// wraps) admits a window's worth at once. The oracle judges them: after a
// 429 no limiter of 20 a minute admits more than 20 for each minute since,
// none while no time passed.
func (s *suite) sweep(ctx context.Context, key string) []*client.Response {
	GinkgoHelper()
	last := s.lastPage(ctx, key)
	var sent []*client.Response
	for range sweepRequests {
		resp, err := s.c.Send(ctx, burstRequest(sent, key, last))
		if err != nil {
			s.failf("%v", err)
		}
		sent = append(sent, resp)
	}
	return sent
}

// throttledAsk is the i-th request of another kind the lockout sends on
// the throttled key before its feed again: health with the key, tracked
// videos with an invalid body (400, or 403 for a free key). Whether they
// count against the feed's limit is open, and so is what they answer (429
// or served); that they reset it is not: the feed's next request is still
// refused (the oracle judges it: none admitted while no time passed, 20
// for each minute since the 429).
func throttledAsk(i int, key string) client.Request {
	if i%2 == 0 {
		return client.PostJSON(schemas.PathHealth, "{}", client.Bearer(key))
	}
	return videosBody(`{"videoIds":[]}`, key)
}

// lockoutSpecs: the second lockout, at the end of the run.
func (s *suite) lockoutSpecs() {
	var lo *lockout
	It("answers every 429 of a second lockout with Retry-After and an ErrorBody, on both operations", hides(catalogue.RateRetryAfter, catalogue.ErrorBody), func(ctx SpecContext) {
		s.secondLockout(ctx, &lo) // the oracle judges every 429's Retry-After and body
	})
	It("sends a JSON Content-Type with every answer of a second lockout", hides(catalogue.ContentTypeJSON), func(ctx SpecContext) {
		s.secondLockout(ctx, &lo) // the oracle judges every answer
	})
	It("accepts another valid key while a key is throttled", hides(catalogue.AuthValid, catalogue.RatePerKey), func(ctx SpecContext) {
		l := s.secondLockout(ctx, &lo)
		if l.other == nil {
			skipFor("--free-key", needs("free-key")+": a second key to send while the first is throttled")
		}
		// the oracle judges its answer: a 429 may be the other key's own
		// history, a refusal of the key is not (AUTH-VALID's)
	})
	It("counts cursor pages and keeps counting when the other operation is asked", hides(catalogue.RateLimit429), func(ctx SpecContext) {
		// the oracle judges what the key was admitted: no more in a span
		// than any limiter of 20 a minute admits, nor after a 429 more than
		// 20 for each minute since (cursor pages and all; whether the other
		// operations share the limit is open, that they reset it is not)
		s.secondLockout(ctx, &lo)
	})
	It("keeps counting a throttled key's feed requests across the server's housekeeping (hundreds of requests)", hides(catalogue.RateLimit429), func(ctx SpecContext) {
		l := s.secondLockout(ctx, &lo)
		if l.sweep == nil {
			Skip(fmt.Sprintf("only --profile thorough sends it: %d feed requests of the throttled key", sweepRequests))
		}
		// the oracle judges what the key was admitted after its 429s
	})
	for _, bad := range []struct {
		id   catalogue.ID
		what string
	}{
		{catalogue.AuthMissing, "no key"},
		{catalogue.AuthMalformed, "a malformed key"},
		{catalogue.AuthUnknown, "a key of no account"},
		{catalogue.AuthRevoked, "the revoked key"},
	} {
		It("answers "+bad.what+" with 401 while another key is throttled, also with a cursor handed to another key", hides(bad.id, catalogue.ErrorBody), func(ctx SpecContext) {
			if bad.id == catalogue.AuthRevoked && s.tg.Revoked == "" {
				skipFor("--revoked-key", needs("revoked-key"))
			}
			l := s.secondLockout(ctx, &lo)
			// the oracle judges each answer by its credential's rule; what
			// only blocks is a limit no key escapes (RATE-PER-KEY's)
			for _, resp := range l.badKeys {
				if credentialOf(s.tg, resp.Request.Auth) == bad.id && resp.Status == http.StatusTooManyRequests && l.other != nil && l.other.Status == http.StatusTooManyRequests {
					s.Block(fmt.Sprintf("%s answered 429 while the other valid key was throttled too (%s → 429): the limit is not per key (judged by RATE-PER-KEY)", resp.Request, l.other.Request))
				}
			}
		})
	}
}

// credentialOf is the requirement of a credential, by its Authorization value.
func credentialOf(t Target, auth string) catalogue.ID {
	for _, cr := range credentials() {
		if a, skip := cr.auth(t); skip == "" && a == auth {
			return cr.id
		}
	}
	return ""
}
