package mutants

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"
	"unicode/utf8"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/schemas/catalogue"
	"github.com/tcmkit/tcmkit/simulator"
)

// table is every mutant, grouped by the requirement it breaks: name,
// requirement, what it does, the operations it touches, and its body.
var table = []Mutant{
	{"health-not-ok", catalogue.HealthOK, `the health check answers 200 with {"status":"degraded"}`, healthOnly, editOK(healthDegraded)},
	{"health-unavailable", catalogue.HealthOK, "the health check answers 503 with an ErrorBody", healthOnly, healthUnavailable},

	{"accept-missing-key", catalogue.AuthMissing, "a request without a key is served (an empty feed page; every video id missing) instead of 401", keyed, acceptKey(simulator.CodeMissingKey)},
	{"accept-malformed-key", catalogue.AuthMalformed, "a malformed key (empty token, other scheme, no prefix) is served instead of 401", keyed, acceptKey(simulator.CodeMalformedKey)},
	{"ignore-auth-scheme", catalogue.AuthMalformed, "a valid key is accepted under any scheme (Token, Basic...), not only Bearer", keyed, ignoreAuthScheme},
	{"accept-unknown-key", catalogue.AuthUnknown, "a well-formed key of no account is served instead of 401", keyed, acceptKey(simulator.CodeUnknownKey)},
	{"accept-revoked-key", catalogue.AuthRevoked, "a revoked key is served instead of 401", keyed, acceptKey(simulator.CodeRevokedKey)},
	{"key-case-insensitive", catalogue.AuthUnknown, "keys are compared without case: a valid key with its letters' case changed is accepted", keyed, keyLoose(sameButCase)},
	{"key-prefix-match", catalogue.AuthUnknown, "keys are compared by prefix: a valid key with a character more or less at its end is accepted", keyed, keyLoose(prefixMatch)},
	{"reject-valid-key", catalogue.AuthValid, "tracked videos answers a valid Pro key with 401 (the feed still accepts it)", videosOnly, rejectValidKey},
	{"no-pro-gate", catalogue.ProGate, "tracked videos serves a free plan (every id missing) instead of 403", videosOnly, noProGate},

	{"feed-page-no-next-cursor", catalogue.FeedPageSchema, "the last feed page omits nextCursor instead of sending null", feedOnly, editOK(omitNullCursor)},
	{"oldest-first", catalogue.FeedOrder, "each feed page lists its events oldest first", feedOnly, editOK(reversePage)},
	{"events-out-of-order", catalogue.FeedOrder, "title_changed events carry a createdAt 6 h later than their place in the feed: the sequence is the same at every page size, but not newest first", keyed, eventEdit(ofType(schemas.TypeTitleChanged, later(6*time.Hour)))},
	{"default-page-size-49", catalogue.FeedPageDefault, fmt.Sprintf("without limit a page holds %d events instead of %d", schemas.DefaultPageSize-1, schemas.DefaultPageSize), feedOnly, defaultPageSize(schemas.DefaultPageSize - 1)},
	{"default-page-size-max", catalogue.FeedPageDefault, fmt.Sprintf("without limit a page holds %d events instead of %d", schemas.MaxPageSize, schemas.DefaultPageSize), feedOnly, defaultPageSize(schemas.MaxPageSize)},
	{"limit-ignored", catalogue.FeedLimit, fmt.Sprintf("a limit of 1..%d is ignored: pages hold the default %d", schemas.MaxPageSize, schemas.DefaultPageSize), feedOnly, limitIgnored},
	{"limit-off-by-one", catalogue.FeedLimit, fmt.Sprintf("limit=n (2..%d) gives pages of n-1 events", schemas.MaxPageSize), feedOnly, limitOffByOne},
	{"limit-not-capped", catalogue.FeedLimitCap, fmt.Sprintf("a limit above %d is honoured up to %d events instead of capped", schemas.MaxPageSize, 2*schemas.MaxPageSize), feedOnly, notCapped(false)},
	{"cap-first-page-only", catalogue.FeedLimitCap, fmt.Sprintf("a limit above %d is capped on the first page only: pages reached through a cursor hold up to %d events", schemas.MaxPageSize, 2*schemas.MaxPageSize), feedOnly, notCapped(true)},
	{"limit-above-max-rejected", catalogue.FeedLimitCap, fmt.Sprintf("a limit above %d is rejected with 400 instead of capped", schemas.MaxPageSize), feedOnly, limitAboveMaxRejected},
	{"cursor-repeats", catalogue.FeedCursorWalk, "a page reached through a cursor starts with the last event of the page before", feedOnly, cursorRepeats},
	{"cursor-skips", catalogue.FeedCursorWalk, "a page reached through a cursor leaves out the first event it should hold", feedOnly, cursorSkips},
	{"cursor-null-early", catalogue.FeedCursorWalk, "the first page reached through a cursor has a null nextCursor although older events exist", feedOnly, editOK(cursorNullEarly)},
	{"cursor-end-late", catalogue.FeedCursorEnd, "the last page has a nextCursor, which leads to an empty page", feedOnly, cursorEndLate},
	{"cursor-cycles", catalogue.FeedCursorEnd, "the last page's nextCursor is the cursor that reached it: the walk never ends", feedOnly, editOK(cursorCycles)},
	{"cursor-empty-at-end", catalogue.FeedCursorEnd, `the last page's nextCursor is "" instead of null`, feedOnly, editOK(emptyCursorAtEnd)},
	{"full-last-page-has-cursor", catalogue.FeedCursorEnd, "a last page that holds exactly limit events has a nextCursor, which leads to an empty page", feedOnly, fullLastPageCursor},
	{"cursor-by-time", catalogue.FeedCursorWalk, "createdAt is recorded to the second (so events share it) and a cursor means older than the page's last createdAt: events that share it with the last one are lost at the boundary", keyed, cursorByTime},
	{"offset-cursor", catalogue.FeedCursorWalk, "cursors are offsets into the feed: once new events arrive at its head, the next page repeats that many", feedOnly, offsetCursor},

	{"cursor-any-account", catalogue.FeedTenant, "a cursor handed to one key is honoured for any key: the page comes from the account that got it", feedOnly, cursorAnyAccount},
	{"page-cache-ignores-key", catalogue.FeedTenant, "feed pages are cached by their query alone: a key that asks what another key asked gets the other's page", feedOnly, pageCacheIgnoresKey},
	{"videos-any-channel", catalogue.VideosTenant, "tracked videos serves any video it knows, whether or not the account tracks its channel", keyed, videosAnyChannel},
	{"bad-limit-500", catalogue.FeedBadParam, "an invalid limit or cursor gets 500 instead of 400", feedOnly, badParam500},
	{"bad-param-no-details", catalogue.FeedBadParam, "the feed's 400 has no details naming the invalid parameter", feedOnly, badParamNoDetails},

	{"missing-field", catalogue.EventSchema, "title_changed events lack oldTitle", keyed, eventEdit(ofType(schemas.TypeTitleChanged, drop("oldTitle")))},
	{"entry-event-missing-field", catalogue.EventSchema, "title_changed events inside VideoEntries lack oldTitle (the feed is right)", videosOnly, eventEdit(ofType(schemas.TypeTitleChanged, drop("oldTitle")))},
	{"field-wrong-type", catalogue.EventSchema, `members_only_changed events carry isMembersOnly as a string ("true")`, keyed, eventEdit(ofType(schemas.TypeMembersOnlyChanged, boolAsString("isMembersOnly")))},
	{"unknown-event-type", catalogue.EventTypes, "members_only_changed events come with the type members_only_toggled", keyed, eventEdit(ofType(schemas.TypeMembersOnlyChanged, set("type", "members_only_toggled")))},
	{"video-on-channel-event", catalogue.EventChannelNoVideo, "channel-level events carry a video object", keyed, editOK(videoOnChannelEvents)},
	{"no-video-on-video-event", catalogue.EventChannelNoVideo, "title_changed events carry no video object", keyed, eventEdit(ofType(schemas.TypeTitleChanged, drop("video")))},
	{"timestamps-in-seconds", catalogue.TimestampEpochMs, "createdAt, publishedAt and firstSeenAt are epoch seconds", keyed, editOK(scale(timestampKeys, 1, 1000))},
	{"timestamps-in-microseconds", catalogue.TimestampEpochMs, "createdAt, publishedAt and firstSeenAt are epoch microseconds", keyed, editOK(scale(timestampKeys, 1000, 1))},
	{"timestamps-as-iso", catalogue.TimestampEpochMs, "publishedAt is an ISO 8601 string", keyed, editOK(publishedISO)},
	{"first-seen-in-seconds", catalogue.TimestampEpochMs, "VideoEntry.firstSeenAt is epoch seconds (everything else is right)", videosOnly, editOK(scale([]string{"firstSeenAt"}, 1, 1000))},
	{"count-omitted", catalogue.CountNonnegOrNull, "commentCount is left out of video_published events and VideoSummaries instead of being null or a number", keyed, editOK(statsEdit(drop("commentCount")))},
	{"count-negative", catalogue.CountNonnegOrNull, "likeCount is -1 in video_published events and VideoSummaries", keyed, editOK(statsEdit(set("likeCount", json.Number("-1"))))},
	{"sample-count-negative", catalogue.CountNonnegOrNull, "viewCount is -1 in the statSamples of VideoEntries (the feed is right)", videosOnly, editOK(entryEdit(negativeSampleViews))},
	{"uri-not-uri", catalogue.URIFormat, "ChannelRef.thumbnailUrl is a phrase, not a URI", keyed, editOK(channelThumbnailNotURI)},
	{"thumbnail-changed-to-itself", catalogue.EventChangeDiffers, "thumbnail_changed events carry the new thumbnail as the old one too", keyed, eventEdit(ofType(schemas.TypeThumbnailChanged, sameAsNew("oldThumbnailUrl", "newThumbnailUrl")))},
	{"ab-winner-not-a-variant", catalogue.EventAbVariants, "thumbnail_ab_test_concluded events name a winner that was none of the variants", keyed, eventEdit(ofType(schemas.TypeThumbnailABTestConcluded, notAVariant("finalThumbnailUrl")))},
	{"members-only-always-on", catalogue.EventMembersSwitched, "members_only_changed events always say members-only, the switches back to public too", keyed, eventEdit(ofType(schemas.TypeMembersOnlyChanged, set("isMembersOnly", true)))},
	{"title-change-as-published", catalogue.EventPublishedOnce, "title_changed events come as video_published: the video discovered again at each rewrite", keyed, eventEdit(rediscovered)},
	{"channel-renamed-to-itself", catalogue.EventChangeDiffers, "channel_renamed events carry the new name as the old one too", keyed, eventEdit(ofType(schemas.TypeChannelRenamed, sameAsNew("oldChannelTitle", "newChannelTitle")))},
	{"ab-test-one-variant", catalogue.EventAbVariants, "title_ab_test events name one title, not the variants it rotates between", keyed, eventEdit(ofType(schemas.TypeTitleABTest, oneVariant("titles")))},
	{"duplicate-event-id", catalogue.EventIDUnique, "title_changed events of one video share one id", keyed, eventEdit(ofType(schemas.TypeTitleChanged, sharedID))},

	{"accept-empty-ids", catalogue.VideosIDsMin, "an empty videoIds is answered 200 instead of 400", videosOnly, acceptEmptyIDs},
	{"reject-single-id", catalogue.VideosIDsMin, "a request with 1 id is rejected with 400", videosOnly, rejectCount(schemas.MinVideoIDs)},
	{"reject-max-ids", catalogue.VideosIDsMax, fmt.Sprintf("%d ids are rejected with 400", schemas.MaxVideoIDs), videosOnly, rejectCount(schemas.MaxVideoIDs)},
	{"accept-too-many-ids", catalogue.VideosIDsMax, fmt.Sprintf("%d ids are accepted (the last one listed as missing)", schemas.MaxVideoIDs+1), videosOnly, acceptTooManyIDs},
	{"reject-longest-id", catalogue.VideosIDLen, fmt.Sprintf("an id of %d characters is rejected with 400", schemas.MaxVideoIDLen), videosOnly, rejectLongestID},
	{"accept-too-long-id", catalogue.VideosIDLen, fmt.Sprintf("an id of %d characters is accepted (listed as missing)", schemas.MaxVideoIDLen+1), videosOnly, lenientIDs(func(id string) bool { return utf8.RuneCountInString(id) == schemas.MaxVideoIDLen+1 })},
	{"accept-empty-id", catalogue.VideosIDLen, "an empty id is accepted (listed as missing)", videosOnly, lenientIDs(func(id string) bool { return id == "" })},
	{"bad-body-200", catalogue.VideosBadBody, "a body that is not JSON, not an object, or without an array of string videoIds is answered 200 with empty lists", videosOnly, badBody200},
	{"number-ids-accepted", catalogue.VideosBadBody, "ids that are JSON numbers are read as strings instead of giving 400", videosOnly, numberIDsAccepted},
	{"entry-schema-broken", catalogue.VideosEntrySchema, "VideoEntries have historyWindowDays 0", videosOnly, editOK(entryEdit(set("historyWindowDays", json.Number("0"))))},
	{"videos-not-served", catalogue.VideosServed, "every requested video is listed as missing, also those of tracked channels", videosOnly, editOK(notServed)},
	{"missing-invented", catalogue.VideosMissing, "ids of no video come back as invented VideoEntries", videosOnly, editOK(inventEntries)},
	{"missing-not-listed", catalogue.VideosPartition, "ids of no video are dropped silently: in neither list", videosOnly, editOK(dropMissing)},
	{"id-in-both-lists", catalogue.VideosPartition, "ids served as VideoEntries are also listed in missingVideoIds", videosOnly, editOK(servedAlsoMissing)},
	{"unrequested-id-listed", catalogue.VideosPartition, "missingVideoIds also lists an id that was not requested", videosOnly, unrequestedMissing},
	{"count-after-dedupe", catalogue.VideosIDsMax, fmt.Sprintf("ids are counted after duplicates are dropped: %d ids with one twice are accepted", schemas.MaxVideoIDs+1), videosOnly, countAfterDedupe},
	{"small-body-limit", catalogue.VideosIDsMax, fmt.Sprintf("bodies over 512 bytes are refused: %d ids of %d characters do not fit", schemas.MaxVideoIDs, schemas.MaxVideoIDLen), videosOnly, smallBody},
	{"id-length-in-bytes", catalogue.VideosIDLen, fmt.Sprintf("an id's length is counted in bytes: %d characters outside ASCII are refused", schemas.MaxVideoIDLen), videosOnly, idLength("bytes", func(s string) int { return len(s) })},
	{"id-length-utf16", catalogue.VideosIDLen, fmt.Sprintf("an id's length is counted in UTF-16 code units: %d characters beyond the Basic Multilingual Plane are refused", schemas.MaxVideoIDLen), videosOnly, idLength("UTF-16 code units", utf16Len)},

	{"no-rate-limit", catalogue.RateLimit429, "a request over the limit that repeats an earlier one is answered 200 (the earlier answer) instead of 429", feedOnly, noRateLimit},
	{"rate-limit-21", catalogue.RateLimit429, fmt.Sprintf("the first request over the limit still passes (answered like the one before): %d requests a minute pass", schemas.FeedRequestsPerMinute+1), feedOnly, rateLimitOneMore},
	{"rate-limit-503", catalogue.RateLimit429, "a request over the limit gets 503 (with Retry-After and an ErrorBody) instead of 429", feedOnly, editStatus(http.StatusTooManyRequests, rateLimit503)},
	{"rate-limit-19", catalogue.RateAllows20, fmt.Sprintf("the %dth feed request of a fresh window gets 429", schemas.FeedRequestsPerMinute), feedOnly, rateLimitOneLess},
	{"retry-after-missing", catalogue.RateRetryAfter, "429 answers carry no Retry-After", keyed, editStatus(http.StatusTooManyRequests, func(a *answer) { a.delHeader("Retry-After") })},
	{"retry-after-lies", catalogue.RateRetryAfter, "Retry-After says one second less than the real wait: the request made after it still gets 429", keyed, editStatus(http.StatusTooManyRequests, retryAfterEarly)},
	{"retry-after-truncated", catalogue.RateRetryAfter, "the feed's Retry-After is the wait truncated to whole seconds (59 for 59.3 s): the request made after it still gets 429 unless the wait was whole", feedOnly, retryAfterTruncated},
	{"last-page-uncounted", catalogue.RateLimit429, "a feed page reached through a cursor whose nextCursor is null is served and not counted, even to a throttled key", feedOnly, lastPageUncounted},
	{"cursor-lost-on-429", catalogue.FeedCursorWalk, "a key's cursors handed out before its latest feed 429 are answered 400 (unknown cursor): a walk that waits out a 429 cannot go on with its cursor", feedOnly, cursorLostOn429},
	{"limiter-reset-every-100", catalogue.RateLimit429, fmt.Sprintf("the limiter's housekeeping clears a key's window at every %dth request of the key: a key that keeps asking while throttled gets %d more feed requests at once", housekeepingEvery, schemas.FeedRequestsPerMinute), keyed, limiterResetEvery(housekeepingEvery)},
	{"rate-limit-shared", catalogue.RatePerKey, "while one key is throttled on the feed, every other key gets its 429 too", feedOnly, rateLimitShared},

	{"error-not-errorbody", catalogue.ErrorBody, `401 answers have the body {"code":401,"reason":"unauthorized"} (JSON, but no error and message)`, keyed, editStatus(http.StatusUnauthorized, notErrorBody)},
	{"error-body-missing-message", catalogue.ErrorBody, "403 answers have an ErrorBody without message", videosOnly, editStatus(http.StatusForbidden, dropMessage)},
	{"rate-limit-no-errorbody", catalogue.ErrorBody, `429 answers have the body {"code":429,"reason":"too many requests"}`, keyed, editStatus(http.StatusTooManyRequests, notErrorBody)},
	{"wrong-content-type", catalogue.ContentTypeJSON, "feed pages are sent as text/plain", feedOnly, contentType(http.StatusOK, "text/plain; charset=utf-8")},
	{"videos-content-type", catalogue.ContentTypeJSON, "tracked-videos answers with 200 are sent as text/plain", videosOnly, contentType(http.StatusOK, "text/plain; charset=utf-8")},
	{"later-pages-text-plain", catalogue.ContentTypeJSON, "feed pages reached through a cursor are sent as text/plain (the first page is right)", feedOnly, laterPagesType},
	{"error-content-type", catalogue.ContentTypeJSON, "401 answers are sent as text/html", keyed, contentType(http.StatusUnauthorized, "text/html; charset=utf-8")},
}
