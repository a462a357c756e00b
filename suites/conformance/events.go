package conformance

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/schemas/catalogue"
	"github.com/tcmkit/tcmkit/schemas/jsondoc"
)

// eventSpecs judge every event the run saw, in the feed and in
// VideoEntries, against the Event table; they send no request of their own.
func (s *suite) eventSpecs() {
	It("validate against the schema of their type", requires(catalogue.EventSchema), func(ctx SpecContext) {
		s.none("rule: every event has the fields of the Event table for its type", schemaFindings(s.eventSources(ctx), owned(catalogue.EventSchema)))
	})
	It("have one of the 11 types and no other", requires(catalogue.EventTypes), func(ctx SpecContext) {
		s.none("rule: type is one of "+strings.Join(schemas.EventTypes, ", "), schemaFindings(s.eventSources(ctx), owned(catalogue.EventTypes)))
	})
	It("carry a video unless they are channel-level, and then none", requires(catalogue.EventChannelNoVideo), func(ctx SpecContext) {
		s.none("rule: subscriber_change, channel_renamed and channel_avatar_changed carry no video; the other types carry one",
			schemaFindings(s.eventSources(ctx), owned(catalogue.EventChannelNoVideo)))
	})
	It("have timestamps that are integers of epoch milliseconds", requires(catalogue.TimestampEpochMs), func(ctx SpecContext) {
		js := s.eventSources(ctx)
		fs := schemaFindings(js, owned(catalogue.TimestampEpochMs))
		fs = append(fs, timestampFindings(js, s.now(ctx))...)
		s.none("rule: createdAt, publishedAt and firstSeenAt are integers of Unix epoch milliseconds", fs)
	})
	It("have counts that are integers >= 0 or null", requires(catalogue.CountNonnegOrNull), func(ctx SpecContext) {
		s.none("rule: viewCount, likeCount, commentCount and oldSubscriberCount are integers >= 0 or null, and present; newSubscriberCount is an integer >= 0",
			schemaFindings(s.eventSources(ctx), owned(catalogue.CountNonnegOrNull)))
	})
	It("have URIs where the contract says URI", requires(catalogue.URIFormat), func(ctx SpecContext) {
		s.none("rule: fields typed URI hold URIs (ChannelRef.thumbnailUrl may be null)", schemaFindings(s.eventSources(ctx), owned(catalogue.URIFormat)))
	})
	It("have ids that are unique in the feed and in each VideoEntry", requires(catalogue.EventIDUnique), func(ctx SpecContext) {
		js := s.eventSources(ctx)
		s.noneOf("rule: no two events of the feed share an id", s.fullWalk(ctx).SharedIDs())
		s.noneOf("rule: no two events of a VideoEntry share an id", entryEventRepeats(js))
	})
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

// entryEventRepeats names event ids repeated inside one VideoEntry.
func entryEventRepeats(js []judged) []string {
	var out []string
	for _, j := range js {
		if j.res != schemas.VideosResponse {
			continue
		}
		doc, _ := j.resp.JSON()
		for i, entry := range jsondoc.Items(doc, "/videos") {
			seen := map[string]int{}
			for k, e := range jsondoc.Items(entry, "/events") {
				id, _ := jsondoc.String(e, "/id")
				if id == "" {
					continue
				}
				if first, ok := seen[id]; ok {
					out = append(out, fmt.Sprintf("%s: /videos/%d/events/%d repeats the id %q of /videos/%d/events/%d", j.resp.Request, i, k, id, i, first))
					continue
				}
				seen[id] = k
			}
		}
	}
	return out
}
