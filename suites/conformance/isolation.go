package conformance

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"

	. "github.com/onsi/ginkgo/v2"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/schemas/catalogue"
	"github.com/tcmkit/tcmkit/schemas/jsondoc"
	"github.com/tcmkit/tcmkit/suites/client"
	"github.com/tcmkit/tcmkit/suites/oracle"
)

// freeWalkLimit is the page size of the free key's walk: another than the
// Pro key's, so that no request of one key repeats the other's, and a page
// cached for one key cannot pass for the other's own.
var freeWalkLimit = strconv.Itoa(schemas.MaxPageSize - 1)

// isolationSpecs: one account never sees another's data. The suite learns
// what each key's account tracks from its own feed, walked whole: a channel
// the free feed shows and the Pro feed never does is not the Pro account's.
func (s *suite) isolationSpecs() {
	It("does not serve the Pro account a video of a channel only another account tracks", requires(catalogue.VideosTenant), func(ctx SpecContext) {
		pro, free := s.bothWalks(ctx)
		ids := foreignVideos(free, pro, schemas.MaxVideoIDs-1)
		if len(ids) == 0 {
			skipFor("--free-key", "the free account's feed shows no channel that the Pro account's feed lacks: give a free key (--free-key) of an account that tracks a channel the Pro account does not")
		}
		resp := s.validBody(s.fetch(ctx, foreignVideosRequest(ids, s.tg.Pro)))
		s.need(resp, http.StatusOK)
		if none := inventedID(len(ids), 24); listed(resp, none) == "videos" {
			s.Block(fmt.Sprintf("%s: %q, an id that cannot exist, is served as a VideoEntry (judged by VIDEOS-MISSING): a video served proves nothing of another account", resp.Request, none))
		}
		// the oracle judges the answer: a VideoEntry of a channel the
		// other account's whole feed shows and this one's never does is
		// VIDEOS-TENANT's
	})

	It("shows a key only its own account's events, whatever cursor or page another key got", requires(catalogue.FeedTenant), func(ctx SpecContext) {
		pro, free := s.bothWalks(ctx)
		var problems []string
		// The Pro key's requests, sent with the free key, and the other way round.
		check := func(req client.Request, own, other *walk) {
			problems = append(problems, foreignEvents(s.fetch(ctx, req), own, other)...)
		}
		check(pageRequest(strconv.Itoa(schemas.MaxPageSize), "", s.tg.Free), free, pro)
		if len(pro.Pages) > 1 {
			check(pageRequest(strconv.Itoa(schemas.MaxPageSize), pro.Pages[0].Next, s.tg.Free), free, pro)
		}
		if len(free.Pages) > 1 {
			check(pageRequest(freeWalkLimit, free.Pages[0].Next, s.tg.Pro), pro, free)
		}
		s.noneOf("rule: the feed returns the authenticated account's events only; another account's cursor is refused or leads to this account's own events", problems)
	})
}

// bothWalks are the Pro and free keys' walks, whole, or the spec is skipped.
func (s *suite) bothWalks(ctx SpecContext) (pro, free *walk) {
	GinkgoHelper()
	freeKey := s.needFree()
	pro, free = s.fullWalk(ctx), s.walkOf(ctx, freeKey, freeWalkLimit)
	s.walkOK(pro)
	s.walkOK(free)
	for _, w := range []*walk{pro, free} {
		if w.Err != nil {
			s.Block(fmt.Sprintf("the walk at %s did not finish: %v; what an account tracks is learnt from its whole feed", w.name(), w.Err))
		}
		if !w.Complete {
			skipFor("--max-pages", fmt.Sprintf("the walk at %s did not reach the end of its feed (%d pages; raise --max-pages=%d): what an account tracks is learnt from its whole feed", w.name(), len(w.Pages), s.cfg.MaxPages))
		}
	}
	return pro, free
}

// foreignVideosRequest asks the key for ids, videos of another account's
// channels, and for an id that cannot exist: the control. A server that
// serves that one invents entries (VIDEOS-MISSING's), and a video it
// serves proves nothing of another account.
func foreignVideosRequest(ids []string, key string) client.Request {
	return videosRequest(append(slices.Clone(ids), inventedID(len(ids), 24)), key)
}

// foreignVideos picks up to max videos of channels that the other walk
// shows and own never does, one per channel first. Only events older than own's newest count: on a live feed a
// channel of own's account may show its first event after own was walked.
func foreignVideos(other, own *walk, max int) (ids []string) {
	mine := map[string]bool{}
	var head int64
	for i, e := range own.Events() {
		mine[e.Channel] = true
		if i == 0 || e.CreatedAt > head {
			head = e.CreatedAt
		}
	}
	seen := map[string]bool{}
	for round := 0; round < 2 && len(ids) < max; round++ {
		perChannel := map[string]bool{}
		for _, e := range other.Events() {
			if e.Channel == "" || mine[e.Channel] || e.Video == "" || seen[e.Video] || len(e.Video) > schemas.MaxVideoIDLen || !e.HasTime || e.CreatedAt >= head {
				continue
			}
			if round == 0 && perChannel[e.Channel] {
				continue
			}
			perChannel[e.Channel], seen[e.Video] = true, true
			ids = append(ids, e.Video)
			if len(ids) == max {
				break
			}
		}
	}
	return ids
}

// foreignEvents names the events of a page that are shown to be another
// account's (see owner.foreign). An event in neither walk, or of a channel
// both accounts show, is no proof of a leak, and is not claimed.
func foreignEvents(resp *client.Response, own, other *walk) []string {
	switch {
	case resp.Status != http.StatusOK:
		return nil // refused, or broken: no event shown, no leak
	}
	o := ownerOf(own, other)
	doc, _ := resp.JSON()
	var out []string
	for i, ev := range jsondoc.Items(doc, "/events") {
		id, _ := jsondoc.String(ev, "/id")
		at, _ := jsondoc.Int(ev, "/createdAt")
		channel, _ := jsondoc.String(ev, "/channel/id")
		if o.foreign(id, channel, at) {
			out = append(out, fmt.Sprintf("%s: /events/%d (id %q, channel %q) is an event of the other account's feed, of a channel this key's whole feed never shows", resp.Request, i, id, channel))
		}
	}
	return out
}

// owner tells another account's events from this key's own, from both
// accounts' whole walks, by the oracle's rule (oracle.ShownForeign).
type owner struct{ mine, theirs oracle.KnownFeed }

func ownerOf(own, other *walk) owner {
	// The probes ask it once a page of every probe: the walks of a run are
	// done by then, so their owner is kept rather than built again.
	done := own.Complete && other.Complete
	if o, ok := own.owners.Load(other); ok && done {
		return o.(owner)
	}
	o := owner{mine: oracle.KnownFeed{IDs: map[string]bool{}, Channels: map[string]bool{}}, theirs: oracle.KnownFeed{IDs: map[string]bool{}, Channels: map[string]bool{}}}
	for _, e := range own.Events() {
		o.mine.IDs[e.ID], o.mine.Channels[e.Channel] = true, true
		if !o.mine.HasHead || e.CreatedAt > o.mine.Head {
			o.mine.Head, o.mine.HasHead = e.CreatedAt, true
		}
	}
	for _, e := range other.Events() {
		o.theirs.IDs[e.ID], o.theirs.Channels[e.Channel] = true, true
	}
	if done {
		own.owners.Store(other, o)
	}
	return o
}

// foreign reports whether an event served to this key is shown to be the
// other account's (oracle.ShownForeign).
func (o owner) foreign(id, channel string, at int64) bool {
	return oracle.ShownForeign(id, channel, at, true, o.mine, o.theirs)
}
