package conformance

import (
	"context"
	"net/http"

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
		{"record a change: an old value differs from its new one", catalogue.EventChangeDiffers},
		{"name several variants of an A/B test, and its winner among them", catalogue.EventAbVariants},
		{"switch a video between public and members-only, each the other way", catalogue.EventMembersSwitched},
		{"publish a video once", catalogue.EventPublishedOnce},
	} {
		It(e.says, requires(e.id), func(ctx SpecContext) { s.eventSources(ctx) })
	}
	s.strictEventTypes()
}

// eventSources reads what the event specs judge: every page of the whole
// walks, and the tracked-videos answers for the walk's videos (the oracle
// judges each answer as it comes, and a spec reports its own rule's
// problems in what it read).
func (s *suite) eventSources(ctx context.Context) {
	GinkgoHelper()
	w := s.fullWalk(ctx)
	if w.Stopped == nil || w.Stopped.Status != http.StatusOK {
		s.walkOK(w) // no page of the feed to judge: blocked
	}
	s.freeWalk(ctx)
	reqs := s.videoBatches(ctx)
	if ids := s.knownVideoIDs(ctx, schemas.MaxVideoIDs); len(ids) > 0 {
		reqs = append(reqs, videosRequest(ids, s.tg.Pro))
	}
	for _, req := range reqs {
		s.fetch(ctx, req)
	}
}
