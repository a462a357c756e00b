package conformance

import (
	"context"
	"net/http"
	"slices"
	"time"

	. "github.com/onsi/ginkgo/v2"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/schemas/catalogue"
)

// eventSpecs judge every event the run saw, in the feed and in
// VideoEntries, against the Event table: they read the whole walks and the
// tracked-videos answers for the walk's videos, and the contract oracle
// judges each event by every rule (a failure names the rule it breaks).
func (s *suite) eventSpecs() {
	for _, e := range []struct {
		says string
		id   catalogue.ID
	}{
		{"validate against the schema of their type", catalogue.EventSchema},
		{"have one of the 11 types and no other", catalogue.EventTypes},
		{"carry a video unless they are channel-level, and then none", catalogue.EventChannelNoVideo},
		{"have timestamps that are integers of epoch milliseconds", catalogue.TimestampEpochMs},
		{"have counts that are integers >= 0 or null", catalogue.CountNonnegOrNull},
		{"have URIs where the contract says URI", catalogue.URIFormat},
		{"have ids that are unique in the feed and in each VideoEntry, each naming one event", catalogue.EventIDUnique},
	} {
		It(e.says, requires(e.id), func(ctx SpecContext) { s.eventSources(ctx) })
	}
	s.strictEventTypes()
}

// eventSources are the responses whose events the event specs judge: every
// page of the full walk and the tracked-videos answer for up to 20 ids
// seen in the feed.
func (s *suite) eventSources(ctx context.Context) []judged {
	GinkgoHelper()
	w := s.fullWalk(ctx)
	if w.Stopped == nil || w.Stopped.Status != http.StatusOK {
		s.walkOK(w) // no page of the feed to judge: blocked
	}
	var js []judged
	free := s.freeWalk(ctx)
	for _, p := range slices.Concat(w.Pages, free.Pages) {
		js = append(js, judged{p.Resp, schemas.FeedPage})
	}
	// a page a walk refused for its size still holds events to judge
	for _, wk := range []*walk{w, free} {
		if resp := wk.Stopped; resp != nil && resp.Status == http.StatusOK {
			js = append(js, judged{resp, schemas.FeedPage})
		}
	}
	reqs := s.videoBatches(ctx)
	if ids := s.knownVideoIDs(ctx, schemas.MaxVideoIDs); len(ids) > 0 {
		reqs = append(reqs, videosRequest(ids, s.tg.Pro))
	}
	for _, req := range reqs {
		if resp := s.fetch(ctx, req); resp.Status == http.StatusOK {
			js = append(js, judged{resp, schemas.VideosResponse})
		}
	}
	return js
}

// now is the later of the wall clock and the target's clock.
func (s *suite) now(ctx context.Context) time.Time {
	now := time.Now()
	if s.clock != nil {
		if t, err := s.clock.Now(ctx); err == nil && t.After(now) {
			now = t
		}
	}
	return now
}
