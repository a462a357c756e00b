package mutants

import (
	"encoding/json"
	"net/http"
	"slices"
	"sync"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/schemas/catalogue"
	"github.com/tcmkit/tcmkit/simulator"
)

// The table of requirement × shape is the catalogue's (schemas/catalogue:
// each must requirement's "shapes" in requirements.json, the shapes on
// which a server can break it); the faults here are generated for its
// cells from one base fault of the requirement. A cell that applies and
// has no mutant is a hole, and the kill matrix shows it.

// catalogueOf is the embedded catalogue, loaded once. One that does not
// load (its own tests fail then) has no rows: every requirement is one the
// table does not know.
var catalogueOf = sync.OnceValue(func() catalogue.Catalogue {
	c, err := catalogue.Load()
	if err != nil {
		return catalogue.Catalogue{}
	}
	return c
})

// Applies lists the shapes on which a must requirement can be broken, "any"
// first, in the order of Shapes; nil for a requirement the table does not
// know.
func Applies(id catalogue.ID) []string {
	more, ok := catalogueOf().ShapesOf(id)
	if !ok {
		return nil
	}
	var out []string
	for _, sh := range Shapes {
		if sh.Name == ShapeAny || slices.Contains(more, catalogue.Shape(sh.Name)) {
			out = append(out, sh.Name)
		}
	}
	return out
}

// base is a requirement's fault that can be confined to any of its shapes.
type base struct {
	fault string
	req   catalogue.ID
	does  string // what it does, on the shape's requests
	ops   []simulator.Operation
	f     func() serveFunc
}

var bases = []base{
	{"accept-missing-key", catalogue.AuthMissing, "a request without a key is served as an account that tracks nothing", keyed, acceptKey(simulator.CodeMissingKey)},
	{"accept-malformed-key", catalogue.AuthMalformed, "a malformed key is served as an account that tracks nothing", keyed, acceptKey(simulator.CodeMalformedKey)},
	{"accept-unknown-key", catalogue.AuthUnknown, "a well-formed key of no account is served as an account that tracks nothing", keyed, acceptKey(simulator.CodeUnknownKey)},
	{"accept-revoked-key", catalogue.AuthRevoked, "a revoked key is served as an account that tracks nothing", keyed, acceptKey(simulator.CodeRevokedKey)},
	{"reject-valid-key", catalogue.AuthValid, "the valid key is answered 401", keyed, rejectValidKey},
	{"oldest-first", catalogue.FeedOrder, "pages list their events oldest first", keyed, editOK(reversePage)},
	{"cursor-repeats", catalogue.FeedCursorWalk, "a page reached through a cursor starts with the last event of the page before", keyed, cursorRepeats},
	{"no-next-cursor", catalogue.FeedPageSchema, "pages carry no nextCursor member", feedOnly, editOK(dropNextCursor)},
	{"default-page-size-49", catalogue.FeedPageDefault, "without limit a page holds 49 events", feedOnly, defaultPageSize(schemas.DefaultPageSize - 1)},
	{"limit-not-capped", catalogue.FeedLimitCap, "a limit above 200 is honoured up to 400", feedOnly, notCapped(false)},
	{"cursor-end-late", catalogue.FeedCursorEnd, "the last page has a nextCursor, which leads to an empty page", feedOnly, cursorEndLate},
	{"page-cache-ignores-key", catalogue.FeedTenant, "pages are cached by their query alone", feedOnly, pageCacheIgnoresKey},
	{"bad-param-no-details", catalogue.FeedBadParam, "the feed's 400 has no details", feedOnly, badParamNoDetails},
	{"limit-off-by-one", catalogue.FeedLimit, "limit=n gives n-1 events", feedOnly, limitOffByOne},
	{"missing-field", catalogue.EventSchema, "title_changed events lack oldTitle", keyed, eventEdit(ofType(schemas.TypeTitleChanged, drop("oldTitle")))},
	{"unknown-event-type", catalogue.EventTypes, "members_only_changed events come as members_only_toggled", keyed, eventEdit(ofType(schemas.TypeMembersOnlyChanged, set("type", "members_only_toggled")))},
	{"video-on-channel-event", catalogue.EventChannelNoVideo, "channel-level events carry a video object", keyed, editOK(videoOnChannelEvents)},
	{"timestamps-in-seconds", catalogue.TimestampEpochMs, "timestamps are epoch seconds", keyed, editOK(scale(timestampKeys, 1, 1000))},
	{"count-negative", catalogue.CountNonnegOrNull, "likeCount is -1 in video_published events and VideoSummaries", keyed, editOK(statsEdit(set("likeCount", json.Number("-1"))))},
	{"uri-not-uri", catalogue.URIFormat, "ChannelRef.thumbnailUrl is a phrase, not a URI", keyed, editOK(channelThumbnailNotURI)},
	{"duplicate-event-id", catalogue.EventIDUnique, "title_changed events of one video share one id", keyed, eventEdit(ofType(schemas.TypeTitleChanged, sharedID))},
	{"thumbnail-changed-to-itself", catalogue.EventChangeDiffers, "thumbnail_changed events carry the new thumbnail as the old one too", keyed, eventEdit(ofType(schemas.TypeThumbnailChanged, sameAsNew("oldThumbnailUrl", "newThumbnailUrl")))},
	{"ab-winner-not-a-variant", catalogue.EventAbVariants, "thumbnail_ab_test_concluded events name a winner that was none of the variants", keyed, eventEdit(ofType(schemas.TypeThumbnailABTestConcluded, notAVariant("finalThumbnailUrl")))},
	{"members-only-always-on", catalogue.EventMembersSwitched, "members_only_changed events always say members-only, the switches back to public too", keyed, eventEdit(ofType(schemas.TypeMembersOnlyChanged, set("isMembersOnly", true)))},
	{"title-change-as-published", catalogue.EventPublishedOnce, "title_changed events come as video_published: the video discovered again at each rewrite", keyed, eventEdit(rediscovered)},
	{"entry-schema-broken", catalogue.VideosEntrySchema, "VideoEntries have historyWindowDays 0", videosOnly, editOK(entryEdit(set("historyWindowDays", json.Number("0"))))},
	{"videos-not-served", catalogue.VideosServed, "every requested video is listed as missing", videosOnly, editOK(notServed)},
	{"missing-invented", catalogue.VideosMissing, "ids of no video come back as invented VideoEntries", videosOnly, editOK(inventEntries)},
	{"id-in-both-lists", catalogue.VideosPartition, "served ids are also listed in missingVideoIds", videosOnly, editOK(servedAlsoMissing)},
	{"videos-any-channel", catalogue.VideosTenant, "any video is served, whether or not the account tracks its channel", keyed, videosAnyChannel},
	{"no-rate-limit", catalogue.RateLimit429, "a request over the limit that repeats an earlier one is answered 200 (the earlier answer)", feedOnly, noRateLimit},
	{"counted-twice", catalogue.RateAllows20, "a request is counted twice against its key's budget", feedOnly, countedTwice},
	{"errors-not-errorbody", catalogue.ErrorBody, "error answers are JSON without error and message", keyed, errorsNotErrorBody},
	{"wrong-content-type", catalogue.ContentTypeJSON, "answers are sent as text/plain", keyed, anyContentType("text/plain; charset=utf-8")},
}

// generated confines each base fault to each shape of its requirement
// that no hand-written or derived mutant covers yet.
func generated(have []Mutant) []Mutant {
	covered := map[string]bool{}
	names := map[string]bool{}
	for _, m := range have {
		covered[string(m.Requirement)+" "+m.Shape()] = true
		names[m.Name] = true
	}
	var out []Mutant
	for _, b := range bases {
		for _, shape := range Applies(b.req) {
			name := b.fault + "@" + shape
			if shape == ShapeAny || covered[string(b.req)+" "+shape] || names[name] {
				continue
			}
			ops := opsOf(shape, b.ops)
			if len(ops) == 0 {
				continue
			}
			m := derive(b.fault, b.req, shape, b.does+", on "+shapeSays(shape), ops, b.f)
			out = append(out, m)
			covered[string(b.req)+" "+shape], names[name] = true, true
		}
	}
	return out
}

// opsOf are the operations a fault on a shape must see: the shape's, and
// both for after-burst (a lockout of either operation).
func opsOf(shape string, ops []simulator.Operation) []simulator.Operation {
	i := slices.IndexFunc(Shapes, func(s Shape) bool { return s.Name == shape })
	var out []simulator.Operation
	for _, op := range ops {
		if slices.Contains(Shapes[i].Ops, op) {
			out = append(out, op)
		}
	}
	if len(out) > 0 && shape == ShapeAfterBurst {
		return keyed
	}
	return out
}

func shapeSays(shape string) string {
	for _, s := range Shapes {
		if s.Name == shape {
			return s.Says
		}
	}
	return shape
}

// dropNextCursor leaves nextCursor out of a page.
func dropNextCursor(_ *http.Request, doc any) bool {
	obj, ok := doc.(map[string]any)
	if _, has := obj["nextCursor"]; ok && has {
		delete(obj, "nextCursor")
		return true
	}
	return false
}

// countedTwice serves each request twice: the server counts it twice.
func countedTwice() serveFunc {
	return func(x *exchange) *answer {
		a := x.serve()
		if a.Status == http.StatusOK {
			x.serve()
		}
		return a
	}
}

var errorsNotErrorBody = stateless(func(x *exchange) *answer {
	a := x.serve()
	if a.Status >= 400 {
		notErrorBody(a)
	}
	return a
})

func anyContentType(mediaType string) func() serveFunc {
	return stateless(func(x *exchange) *answer {
		a := x.serve()
		a.ContentType = mediaType
		return a
	})
}
