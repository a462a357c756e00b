package simulator

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/schemas/jsondoc"
)

// Breakers are the named faults of the conformance kit: each one breaks one
// "must" requirement of the catalogue (schemas/catalogue/requirements.json),
// observably over HTTP, and keeps every other rule it can. The kill matrix
// (suites/killmatrix) runs the suite once per breaker and expects a failed
// spec labelled with the breaker's requirement; client developers turn one
// on to see how their client copes with a server that misbehaves in one
// precise way.
//
// A breaker wraps one operation's handler. It serves the request with the
// real handler (so authentication, rate limits and the order of the checks
// stay what they are) and changes the answer, or the request, in one way.
// State a breaker needs (a rate counter, the cursors it handed out) lives
// in its closure: Wrap runs once per operation and server, so two servers
// never share it.

// breaker is one named fault and the requirement it breaks.
type breaker struct {
	name        string
	requirement string // a "must" id of the catalogue
	description string
	ops         []string // the operations it touches; others pass unchanged
	wrap        func(op string, next http.Handler) http.Handler
}

var (
	feedOnly   = []string{opFeed}
	videosOnly = []string{opVideos}
	healthOnly = []string{opHealth}
	keyed      = []string{opFeed, opVideos}
)

// breakers is the table of named faults, grouped by requirement.
var breakers = []breaker{
	{"health-not-ok", "HEALTH-OK", `the health check answers 200 with {"status":"degraded"}`, healthOnly, editOK(healthDegraded)},
	{"health-unavailable", "HEALTH-OK", "the health check answers 503 with an ErrorBody", healthOnly, healthUnavailable},

	{"accept-missing-key", "AUTH-MISSING", "a request without a key is served (an empty feed page; every video id missing) instead of 401", keyed, acceptKey(errAuthMissing.code)},
	{"accept-malformed-key", "AUTH-MALFORMED", "a malformed key (empty token, other scheme, no prefix) is served instead of 401", keyed, acceptKey(errAuthMalformed.code)},
	{"ignore-auth-scheme", "AUTH-MALFORMED", "a valid key is accepted under any scheme (Token, Basic...), not only Bearer", keyed, ignoreAuthScheme},
	{"accept-unknown-key", "AUTH-UNKNOWN", "a well-formed key of no account is served instead of 401", keyed, acceptKey(errAuthUnknown.code)},
	{"accept-revoked-key", "AUTH-REVOKED", "a revoked key is served instead of 401", keyed, acceptKey(errAuthRevoked.code)},
	{"reject-valid-key", "AUTH-VALID", "tracked videos answers a valid Pro key with 401 (the feed still accepts it)", videosOnly, rejectValidKey},
	{"no-pro-gate", "PRO-GATE", "tracked videos serves a free plan (every id missing) instead of 403", videosOnly, noProGate},

	{"feed-page-no-next-cursor", "FEED-PAGE-SCHEMA", "the last feed page omits nextCursor instead of sending null", feedOnly, editOK(omitNullCursor)},
	{"oldest-first", "FEED-ORDER", "each feed page lists its events oldest first", feedOnly, editOK(reversePage)},
	{"events-out-of-order", "FEED-ORDER", "title_changed events carry a createdAt 6 h later than their place in the feed: the sequence is the same at every page size, but not newest first", keyed, editOK(eventEdit(titleChangeLater))},
	{"default-page-size-49", "FEED-PAGE-DEFAULT", fmt.Sprintf("without limit a page holds %d events instead of %d", schemas.DefaultPageSize-1, schemas.DefaultPageSize), feedOnly, defaultPageSize(schemas.DefaultPageSize - 1)},
	{"default-page-size-max", "FEED-PAGE-DEFAULT", fmt.Sprintf("without limit a page holds %d events instead of %d", schemas.MaxPageSize, schemas.DefaultPageSize), feedOnly, defaultPageSize(schemas.MaxPageSize)},
	{"limit-ignored", "FEED-LIMIT", fmt.Sprintf("a limit of 1..%d is ignored: pages hold the default %d", schemas.MaxPageSize, schemas.DefaultPageSize), feedOnly, limitIgnored},
	{"limit-off-by-one", "FEED-LIMIT", fmt.Sprintf("limit=n (2..%d) gives pages of n-1 events", schemas.MaxPageSize), feedOnly, limitOffByOne},
	{"limit-not-capped", "FEED-LIMIT-CAP", fmt.Sprintf("a limit above %d is honoured up to %d events instead of capped", schemas.MaxPageSize, 2*schemas.MaxPageSize), feedOnly, limitNotCapped},
	{"limit-above-max-rejected", "FEED-LIMIT-CAP", fmt.Sprintf("a limit above %d is rejected with 400 instead of capped", schemas.MaxPageSize), feedOnly, limitAboveMaxRejected},
	{"cursor-repeats", "FEED-CURSOR-WALK", "a page reached through a cursor starts with the last event of the page before", feedOnly, cursorRepeats},
	{"cursor-skips", "FEED-CURSOR-WALK", "a page reached through a cursor leaves out the first event it should hold", feedOnly, cursorSkips},
	{"cursor-null-early", "FEED-CURSOR-WALK", "the first page reached through a cursor has a null nextCursor although older events exist", feedOnly, editOK(cursorNullEarly)},
	{"cursor-end-late", "FEED-CURSOR-END", "the last page has a nextCursor, which leads to an empty page", feedOnly, cursorEndLate},
	{"cursor-cycles", "FEED-CURSOR-END", "the last page's nextCursor is the cursor that reached it: the walk never ends", feedOnly, editOK(cursorCycles)},
	{"cursor-empty-at-end", "FEED-CURSOR-END", `the last page's nextCursor is "" instead of null`, feedOnly, editOK(emptyCursorAtEnd)},
	{"bad-limit-500", "FEED-BAD-PARAM", "an invalid limit or cursor gets 500 instead of 400", feedOnly, badParam500},
	{"bad-param-no-details", "FEED-BAD-PARAM", "the feed's 400 has no details naming the invalid parameter", feedOnly, badParamNoDetails},

	{"missing-field", "EVENT-SCHEMA", "title_changed events lack oldTitle", keyed, editOK(eventEdit(dropOldTitle))},
	{"entry-event-missing-field", "EVENT-SCHEMA", "title_changed events inside VideoEntries lack oldTitle (the feed is right)", videosOnly, editOK(eventEdit(dropOldTitle))},
	{"field-wrong-type", "EVENT-SCHEMA", `members_only_changed events carry isMembersOnly as a string ("true")`, keyed, editOK(eventEdit(membersOnlyString))},
	{"unknown-event-type", "EVENT-TYPES", "members_only_changed events come with the type members_only_toggled", keyed, editOK(eventEdit(renameMembersOnly))},
	{"video-on-channel-event", "EVENT-CHANNEL-NO-VIDEO", "channel-level events carry a video object", keyed, editOK(videoOnChannelEvents)},
	{"no-video-on-video-event", "EVENT-CHANNEL-NO-VIDEO", "title_changed events carry no video object", keyed, editOK(eventEdit(dropVideo))},
	{"timestamps-in-seconds", "TIMESTAMP-EPOCH-MS", "createdAt, publishedAt and firstSeenAt are epoch seconds", keyed, editOK(scaleTimestamps(func(ms int64) int64 { return ms / 1000 }))},
	{"timestamps-in-microseconds", "TIMESTAMP-EPOCH-MS", "createdAt, publishedAt and firstSeenAt are epoch microseconds", keyed, editOK(scaleTimestamps(func(ms int64) int64 { return ms * 1000 }))},
	{"timestamps-as-iso", "TIMESTAMP-EPOCH-MS", "publishedAt is an ISO 8601 string", keyed, editOK(publishedISO)},
	{"first-seen-in-seconds", "TIMESTAMP-EPOCH-MS", "VideoEntry.firstSeenAt is epoch seconds (everything else is right)", videosOnly, editOK(scaleKeys([]string{"firstSeenAt"}, func(ms int64) int64 { return ms / 1000 }))},
	{"count-omitted", "COUNT-NONNEG-OR-NULL", "commentCount is left out of video_published events and VideoSummaries instead of being null or a number", keyed, editOK(statsEdit(func(v map[string]any) { delete(v, "commentCount") }))},
	{"count-negative", "COUNT-NONNEG-OR-NULL", "likeCount is -1 in video_published events and VideoSummaries", keyed, editOK(statsEdit(func(v map[string]any) { v["likeCount"] = json.Number("-1") }))},
	{"sample-count-negative", "COUNT-NONNEG-OR-NULL", "viewCount is -1 in the statSamples of VideoEntries (the feed is right)", videosOnly, editOK(entryEdit(negativeSampleViews))},
	{"uri-not-uri", "URI-FORMAT", "ChannelRef.thumbnailUrl is a phrase, not a URI", keyed, editOK(channelThumbnailNotURI)},
	{"duplicate-event-id", "EVENT-ID-UNIQUE", "title_changed events of one video share one id", keyed, editOK(eventEdit(sharedTitleChangeID))},

	{"accept-empty-ids", "VIDEOS-IDS-MIN", "an empty videoIds is answered 200 instead of 400", videosOnly, acceptEmptyIDs},
	{"reject-single-id", "VIDEOS-IDS-MIN", "a request with 1 id is rejected with 400", videosOnly, rejectCount(schemas.MinVideoIDs)},
	{"reject-max-ids", "VIDEOS-IDS-MAX", fmt.Sprintf("%d ids are rejected with 400", schemas.MaxVideoIDs), videosOnly, rejectCount(schemas.MaxVideoIDs)},
	{"accept-too-many-ids", "VIDEOS-IDS-MAX", fmt.Sprintf("%d ids are accepted (the last one listed as missing)", schemas.MaxVideoIDs+1), videosOnly, acceptTooManyIDs},
	{"reject-longest-id", "VIDEOS-ID-LEN", fmt.Sprintf("an id of %d characters is rejected with 400", schemas.MaxVideoIDLen), videosOnly, rejectLongestID},
	{"accept-too-long-id", "VIDEOS-ID-LEN", fmt.Sprintf("an id of %d characters is accepted (listed as missing)", schemas.MaxVideoIDLen+1), videosOnly, lenientIDs(func(id string) bool { return utf8.RuneCountInString(id) == schemas.MaxVideoIDLen+1 })},
	{"accept-empty-id", "VIDEOS-ID-LEN", "an empty id is accepted (listed as missing)", videosOnly, lenientIDs(func(id string) bool { return id == "" })},
	{"bad-body-200", "VIDEOS-BAD-BODY", "a body that is not JSON, not an object, or without an array of string videoIds is answered 200 with empty lists", videosOnly, badBody200},
	{"number-ids-accepted", "VIDEOS-BAD-BODY", "ids that are JSON numbers are read as strings instead of giving 400", videosOnly, numberIDsAccepted},
	{"entry-schema-broken", "VIDEOS-ENTRY-SCHEMA", "VideoEntries have historyWindowDays 0", videosOnly, editOK(entryEdit(func(e map[string]any) { e["historyWindowDays"] = json.Number("0") }))},
	{"videos-not-served", "VIDEOS-SERVED", "every requested video is listed as missing, also those of tracked channels", videosOnly, editOK(notServed)},
	{"missing-invented", "VIDEOS-MISSING", "ids of no video come back as invented VideoEntries", videosOnly, editOK(inventEntries)},
	{"missing-not-listed", "VIDEOS-PARTITION", "ids of no video are dropped silently: in neither list", videosOnly, editOK(dropMissing)},
	{"id-in-both-lists", "VIDEOS-PARTITION", "ids served as VideoEntries are also listed in missingVideoIds", videosOnly, editOK(servedAlsoMissing)},
	{"unrequested-id-listed", "VIDEOS-PARTITION", "missingVideoIds also lists an id that was not requested", videosOnly, unrequestedMissing},

	{"no-rate-limit", "RATE-LIMIT-429", "a request over the limit that repeats an earlier one is answered 200 (the earlier answer) instead of 429", feedOnly, noRateLimit},
	{"rate-limit-21", "RATE-LIMIT-429", fmt.Sprintf("the first request over the limit still passes (answered like the one before): %d requests a minute pass", schemas.FeedRequestsPerMinute+1), feedOnly, rateLimitOneMore},
	{"rate-limit-503", "RATE-LIMIT-429", "a request over the limit gets 503 (with Retry-After and an ErrorBody) instead of 429", feedOnly, editStatus(http.StatusTooManyRequests, rateLimit503)},
	{"rate-limit-19", "RATE-ALLOWS-20", fmt.Sprintf("the %dth feed request of a fresh window gets 429", schemas.FeedRequestsPerMinute), feedOnly, rateLimitOneLess},
	{"retry-after-missing", "RATE-RETRY-AFTER", "429 answers carry no Retry-After", keyed, editStatus(http.StatusTooManyRequests, func(a *answer) { a.header.Del("Retry-After") })},
	{"retry-after-lies", "RATE-RETRY-AFTER", "Retry-After says one second less than the real wait: the request made after it still gets 429", keyed, editStatus(http.StatusTooManyRequests, retryAfterEarly)},
	{"rate-limit-shared", "RATE-PER-KEY", "while one key is throttled on the feed, every other key gets its 429 too", feedOnly, rateLimitShared},

	{"error-not-errorbody", "ERROR-BODY", `401 answers have the body {"code":401,"reason":"unauthorized"} (JSON, but no error and message)`, keyed, editStatus(http.StatusUnauthorized, notErrorBody)},
	{"error-body-missing-message", "ERROR-BODY", "403 answers have an ErrorBody without message", videosOnly, editStatus(http.StatusForbidden, dropMessage)},
	{"rate-limit-no-errorbody", "ERROR-BODY", `429 answers have the body {"code":429,"reason":"too many requests"}`, keyed, editStatus(http.StatusTooManyRequests, notErrorBody)},
	{"wrong-content-type", "CONTENT-TYPE-JSON", "feed pages are sent as text/plain", feedOnly, contentType(func(status int) bool { return status == http.StatusOK }, "text/plain; charset=utf-8")},
	{"videos-content-type", "CONTENT-TYPE-JSON", "tracked-videos answers with 200 are sent as text/plain", videosOnly, contentType(func(status int) bool { return status == http.StatusOK }, "text/plain; charset=utf-8")},
	{"error-content-type", "CONTENT-TYPE-JSON", "401 answers are sent as text/html", keyed, contentType(func(status int) bool { return status == http.StatusUnauthorized }, "text/html; charset=utf-8")},
}

func init() {
	for _, b := range breakers {
		RegisterFault(NamedFault{
			Name:        b.name,
			Description: b.requirement + ": " + b.description,
			Wrap: func(op string, next http.Handler) http.Handler {
				if !slices.Contains(b.ops, op) {
					return next
				}
				return b.wrap(op, next)
			},
		})
	}
}

// FaultRequirement returns the catalogue id of the requirement a named
// fault of this file breaks.
func FaultRequirement(name string) (string, bool) {
	for _, b := range breakers {
		if b.name == name {
			return b.requirement, true
		}
	}
	return "", false
}

// ---------------------------------------------------------------- plumbing

// answer is a response of the wrapped handler, held in memory.
type answer struct {
	status int
	header http.Header
	body   []byte
}

// serve runs next on r into an answer.
func serve(next http.Handler, r *http.Request) *answer {
	rec := &recorder{header: http.Header{}, status: http.StatusOK}
	next.ServeHTTP(rec, r)
	return &answer{status: rec.status, header: rec.header, body: rec.body.Bytes()}
}

// send writes the answer; its Content-Type is whatever its header says.
func (a *answer) send(w http.ResponseWriter) {
	copyHeader(w.Header(), a.header)
	w.Header().Set("Content-Length", strconv.Itoa(len(a.body)))
	w.WriteHeader(a.status)
	_, _ = w.Write(a.body)
}

// setJSON replaces the body with v, encoded, as JSON.
func (a *answer) setJSON(status int, v any) {
	a.status = status
	a.body = encodeDoc(v)
	a.header.Set("Content-Type", contentTypeJSON)
}

// setError replaces the answer with an ErrorBody.
func (a *answer) setError(status int, code, message string, details any) {
	a.setJSON(status, errorBody{Error: code, Message: message, Details: details})
}

// code is the error string of an ErrorBody answer, "" if it is none.
func (a *answer) code() string {
	var e errorBody
	if json.Unmarshal(a.body, &e) != nil {
		return ""
	}
	return e.Error
}

// decodeDoc reads a JSON document as schemas.Decode does (numbers stay
// json.Number, so large counts and timestamps survive exactly).
func decodeDoc(raw []byte) (any, bool) {
	doc, err := jsondoc.Decode(raw)
	return doc, err == nil
}

func encodeDoc(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(fmt.Sprintf("simulator: breaker: encoding: %v", err)) // decoded JSON always encodes
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// editOK changes the JSON body of a 200 answer in place; edit reports
// whether it changed anything (an unchanged body is sent as it came). edit
// may read the request's URL, not its body (next has read it).
func editOK(edit func(r *http.Request, doc any) bool) func(string, http.Handler) http.Handler {
	return func(_ string, next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			a := serve(next, r)
			if a.status == http.StatusOK {
				if doc, ok := decodeDoc(a.body); ok && edit(r, doc) {
					a.body = encodeDoc(doc)
				}
			}
			a.send(w)
		})
	}
}

// editStatus changes answers of one status.
func editStatus(status int, edit func(a *answer)) func(string, http.Handler) http.Handler {
	return func(_ string, next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			a := serve(next, r)
			if a.status == status {
				edit(a)
			}
			a.send(w)
		})
	}
}

// contentType sends answers of the chosen statuses with another media type.
func contentType(which func(status int) bool, mediaType string) func(string, http.Handler) http.Handler {
	return func(_ string, next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			a := serve(next, r)
			if which(a.status) {
				a.header.Set("Content-Type", mediaType)
			}
			a.send(w)
		})
	}
}

// bufferBody reads the request body (bounded like the server bounds it)
// and puts it back, so that both the breaker and next can read it.
func bufferBody(r *http.Request) []byte {
	if r.Body == nil || r.Body == http.NoBody {
		return nil
	}
	raw, _ := io.ReadAll(io.LimitReader(r.Body, MaxBodyBytes+1))
	r.Body = io.NopCloser(bytes.NewReader(raw))
	return raw
}

// withQuery is r with another query; the body is not shared.
func withQuery(r *http.Request, q url.Values) *http.Request {
	r2 := r.Clone(r.Context())
	u := *r.URL
	u.RawQuery = q.Encode()
	r2.URL = &u
	r2.RequestURI = u.RequestURI()
	r2.Body = http.NoBody
	return r2
}

// withBody is r with another JSON body.
func withBody(r *http.Request, body []byte) *http.Request {
	r2 := r.Clone(r.Context())
	r2.Body = io.NopCloser(bytes.NewReader(body))
	r2.ContentLength = int64(len(body))
	return r2
}

// feedParams reads the feed query as the server does for the parameters a
// breaker changes: ok is false when the query is one the server rejects
// (then the breaker leaves it alone and the server answers 400).
type feedParams struct {
	q        url.Values
	limit    int  // the page size the server will use
	rawLimit int  // the limit asked for, before capping (0 when absent; MaxInt when too large for an int)
	hasLimit bool // limit was given
	cursor   string
}

func readFeedParams(r *http.Request) (feedParams, bool) {
	if _, problems := parseFeedQuery(r.URL.RawQuery); len(problems) > 0 {
		return feedParams{}, false
	}
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return feedParams{}, false
	}
	p := feedParams{q: q, limit: schemas.DefaultPageSize, cursor: q.Get("cursor")}
	if v, ok := q["limit"]; ok && len(v) == 1 {
		n, _ := parseLimit(v[0])
		p.hasLimit, p.limit, p.rawLimit = true, n, n
		if n == schemas.MaxPageSize {
			// parseLimit caps: read what was asked for from the digits.
			if asked, err := strconv.Atoi(v[0]); err == nil {
				p.rawLimit = asked
			} else {
				p.rawLimit = math.MaxInt
			}
		}
	}
	return p, true
}

// request is the feed request with limit (and cursor, "" to drop it) set.
func (p feedParams) request(r *http.Request, limit int, cursor string) *http.Request {
	q := url.Values{}
	for k, v := range p.q {
		q[k] = v
	}
	q.Set("limit", strconv.Itoa(limit))
	if cursor == "" {
		q.Del("cursor")
	} else {
		q.Set("cursor", cursor)
	}
	return withQuery(r, q)
}

// page is a decoded FeedPage.
type page struct {
	doc    map[string]any
	events []any
	next   string // "" when null
}

func readPage(a *answer) (page, bool) {
	if a.status != http.StatusOK {
		return page{}, false
	}
	doc, ok := decodeDoc(a.body)
	if !ok {
		return page{}, false
	}
	obj, ok := doc.(map[string]any)
	if !ok {
		return page{}, false
	}
	evs, _ := obj["events"].([]any)
	next, _ := obj["nextCursor"].(string)
	return page{doc: obj, events: evs, next: next}, true
}

func (p page) set(a *answer) {
	p.doc["events"] = p.events
	if p.next == "" {
		p.doc["nextCursor"] = nil
	} else {
		p.doc["nextCursor"] = p.next
	}
	a.body = encodeDoc(p.doc)
}

// ---------------------------------------------------------------- health

func healthDegraded(_ *http.Request, doc any) bool {
	obj, ok := doc.(map[string]any)
	if ok {
		obj["status"] = "degraded"
	}
	return ok
}

func healthUnavailable(_ string, next http.Handler) http.Handler {
	return editStatus(http.StatusOK, func(a *answer) {
		a.setError(http.StatusServiceUnavailable, codeUnavailable, "the service is unavailable", nil)
	})("", next)
}

// ---------------------------------------------------------------- keys and plans

// acceptKey serves requests whose only fault is the key (the server's 401
// of this code) as if an anonymous account had made them.
func acceptKey(code string) func(string, http.Handler) http.Handler {
	return func(op string, next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			raw := bufferBody(r)
			a := serve(next, r)
			if a.status == http.StatusUnauthorized && a.code() == code {
				a = anonymous(op, r, raw)
			}
			a.send(w)
		})
	}
}

// anonymous is the answer to an account that tracks nothing: an empty feed,
// every requested video missing (a bad body still gets its 400).
func anonymous(op string, r *http.Request, raw []byte) *answer {
	a := &answer{header: http.Header{}}
	if op == opFeed {
		a.setJSON(http.StatusOK, map[string]any{"events": []any{}, "nextCursor": nil})
		return a
	}
	ids, bad := parseBody(r, raw)
	if bad != nil {
		a.setError(http.StatusBadRequest, codeInvalidBody, bad.message, bad.details)
		return a
	}
	a.setJSON(http.StatusOK, map[string]any{"videos": []any{}, "missingVideoIds": dedupe(ids)})
	return a
}

// parseBody checks a videos request body as the server does.
func parseBody(r *http.Request, raw []byte) ([]string, *badRequest) {
	if bad := checkJSONContentType(r.Header.Values("Content-Type")); bad != nil {
		return nil, bad
	}
	if len(raw) > MaxBodyBytes {
		return nil, &badRequest{message: fmt.Sprintf("the request body is larger than %d bytes", MaxBodyBytes)}
	}
	return parseVideosBody(raw)
}

func dedupe(ids []string) []string {
	out := []string{}
	for _, id := range ids {
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

func rejectValidKey(_ string, next http.Handler) http.Handler {
	return editStatus(http.StatusOK, func(a *answer) {
		a.header.Set("WWW-Authenticate", `Bearer realm="api"`)
		a.setError(http.StatusUnauthorized, errAuthUnknown.code, errAuthUnknown.message, nil)
	})("", next)
}

func noProGate(op string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw := bufferBody(r)
		a := serve(next, r)
		if a.status == http.StatusForbidden && a.code() == codeProRequired {
			a = anonymous(op, r, raw)
		}
		a.send(w)
	})
}

// ignoreAuthScheme retries a request refused for its scheme as Bearer.
func ignoreAuthScheme(_ string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw := bufferBody(r)
		a := serve(next, r)
		scheme, token, found := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
		if a.status == http.StatusUnauthorized && found && !strings.EqualFold(scheme, "Bearer") {
			r2 := withBody(r, raw)
			r2.Header.Set("Authorization", "Bearer "+strings.TrimSpace(token))
			a = serve(next, r2)
		}
		a.send(w)
	})
}

// ---------------------------------------------------------------- feed pages

func omitNullCursor(_ *http.Request, doc any) bool {
	obj, ok := doc.(map[string]any)
	if !ok {
		return false
	}
	if next, present := obj["nextCursor"]; present && next == nil {
		delete(obj, "nextCursor")
		return true
	}
	return false
}

func reversePage(_ *http.Request, doc any) bool {
	obj, _ := doc.(map[string]any)
	evs, ok := obj["events"].([]any)
	if !ok || len(evs) < 2 {
		return false
	}
	slices.Reverse(evs)
	return true
}

// defaultPageSize serves a request without limit as if it asked for size.
func defaultPageSize(size int) func(string, http.Handler) http.Handler {
	return func(_ string, next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if p, ok := readFeedParams(r); ok && !p.hasLimit {
				r = p.request(r, size, p.cursor)
			}
			next.ServeHTTP(w, r)
		})
	}
}

func limitIgnored(_ string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p, ok := readFeedParams(r); ok && p.hasLimit && p.rawLimit <= schemas.MaxPageSize {
			r = p.request(r, schemas.DefaultPageSize, p.cursor)
		}
		next.ServeHTTP(w, r)
	})
}

func limitOffByOne(_ string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p, ok := readFeedParams(r); ok && p.hasLimit && p.rawLimit >= 2 && p.rawLimit <= schemas.MaxPageSize {
			r = p.request(r, p.rawLimit-1, p.cursor)
		}
		next.ServeHTTP(w, r)
	})
}

// limitNotCapped answers a limit above the cap with two pages joined.
func limitNotCapped(_ string, next http.Handler) http.Handler {
	var firsts held
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := readFeedParams(r)
		if !ok || p.rawLimit <= schemas.MaxPageSize {
			next.ServeHTTP(w, r)
			return
		}
		a := firsts.take(next, r)
		first, ok := readPage(a)
		if ok && first.next != "" {
			more := min(p.rawLimit, 2*schemas.MaxPageSize) - schemas.MaxPageSize
			b := serve(next, p.request(r, more, first.next))
			if b.status == http.StatusTooManyRequests {
				firsts.hold(r, a)
				b.send(w)
				return
			}
			if second, ok := readPage(b); ok {
				first.events = append(first.events, second.events...)
				first.next = second.next
				first.set(a)
			}
		}
		a.send(w)
	})
}

// held keeps the first answer of a request that needs two calls to next
// when the second one was throttled: the client gets that 429, and its
// retry after Retry-After needs only the second call, so a client that
// honours Retry-After gets through.
type held struct {
	mu sync.Mutex
	m  map[string]*answer
}

func heldKey(r *http.Request) string {
	return r.Header.Get("Authorization") + "\x00" + r.URL.RawQuery
}

// take returns the held first answer of r, or serves r with next.
func (h *held) take(next http.Handler, r *http.Request) *answer {
	h.mu.Lock()
	a, ok := h.m[heldKey(r)]
	delete(h.m, heldKey(r))
	h.mu.Unlock()
	if ok {
		return a
	}
	return serve(next, r)
}

func (h *held) hold(r *http.Request, a *answer) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.m == nil || len(h.m) >= maxRemembered {
		h.m = map[string]*answer{}
	}
	h.m[heldKey(r)] = &answer{status: a.status, header: a.header.Clone(), body: slices.Clone(a.body)}
}

func limitAboveMaxRejected(_ string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := readFeedParams(r)
		a := serve(next, r)
		if ok && a.status == http.StatusOK && p.rawLimit > schemas.MaxPageSize {
			problem := queryProblem{Parameter: "limit", Value: excerpt(p.q.Get("limit")), Rule: fmt.Sprintf("must be at most %d", schemas.MaxPageSize)}
			a.setError(http.StatusBadRequest, codeInvalidQuery, "invalid query parameter: limit",
				map[string]any{"invalid": []string{"limit"}, "problems": []queryProblem{problem}})
		}
		a.send(w)
	})
}

// cursors remembers, for each nextCursor handed out, the last event of the
// page that carried it. Bounded: a long-running simulator forgets.
type cursors struct {
	mu   sync.Mutex
	last map[string]any
}

const maxRemembered = 4096

func (c *cursors) remember(pg page) {
	if pg.next == "" || len(pg.events) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.last == nil || len(c.last) >= maxRemembered {
		c.last = map[string]any{}
	}
	c.last[pg.next] = pg.events[len(pg.events)-1]
}

func (c *cursors) lookup(cursor string) (any, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ev, ok := c.last[cursor]
	return ev, ok
}

// cursorRepeats starts a page reached through a cursor with the last event
// of the page before, and holds one event fewer after it: the page size
// stays right, the walk sees one event twice.
func cursorRepeats(_ string, next http.Handler) http.Handler {
	var seen cursors
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := readFeedParams(r)
		prev, known := seen.lookup(p.cursor)
		if !ok || p.cursor == "" || !known || p.limit < 2 {
			a := serve(next, r)
			if pg, ok := readPage(a); ok {
				seen.remember(pg)
			}
			a.send(w)
			return
		}
		a := serve(next, p.request(r, p.limit-1, p.cursor))
		if pg, ok := readPage(a); ok {
			seen.remember(pg)
			pg.events = append([]any{prev}, pg.events...)
			pg.set(a)
		}
		a.send(w)
	})
}

// cursorSkips reads one event more than asked through a cursor and leaves
// out the first: the page size stays right, the walk misses one event at
// every page boundary.
func cursorSkips(_ string, next http.Handler) http.Handler {
	var firsts held
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := readFeedParams(r)
		if !ok || p.cursor == "" {
			next.ServeHTTP(w, r)
			return
		}
		if p.limit < schemas.MaxPageSize {
			a := serve(next, p.request(r, p.limit+1, p.cursor))
			if pg, ok := readPage(a); ok && len(pg.events) > 0 {
				pg.events = pg.events[1:]
				pg.set(a)
			}
			a.send(w)
			return
		}
		a := firsts.take(next, r)
		if pg, ok := readPage(a); ok && len(pg.events) > 0 {
			if pg.next != "" {
				b := serve(next, p.request(r, 1, pg.next))
				if b.status == http.StatusTooManyRequests {
					firsts.hold(r, a)
					b.send(w)
					return
				}
				if more, ok := readPage(b); ok {
					pg.events = append(pg.events, more.events...)
					pg.next = more.next
				}
			}
			pg.events = pg.events[1:]
			pg.set(a)
		}
		a.send(w)
	})
}

func cursorNullEarly(r *http.Request, doc any) bool {
	obj, _ := doc.(map[string]any)
	if next, _ := obj["nextCursor"].(string); next == "" || r.URL.Query().Get("cursor") == "" {
		return false
	}
	obj["nextCursor"] = nil
	return true
}

func emptyCursorAtEnd(_ *http.Request, doc any) bool {
	obj, _ := doc.(map[string]any)
	if next, present := obj["nextCursor"]; !present || next != nil {
		return false
	}
	obj["nextCursor"] = ""
	return true
}

func cursorCycles(r *http.Request, doc any) bool {
	obj, _ := doc.(map[string]any)
	cursor := r.URL.Query().Get("cursor")
	if next, present := obj["nextCursor"]; !present || next != nil || cursor == "" {
		return false
	}
	obj["nextCursor"] = cursor
	return true
}

// endCursor is the nextCursor cursor-end-late hands out on the last page.
const endCursor = "end-of-feed"

// cursorEndLate gives the last page a nextCursor that leads to an empty
// page with a null one.
func cursorEndLate(_ string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := readFeedParams(r)
		if ok && p.cursor == endCursor {
			// Authenticate and count the request like any other page.
			a := serve(next, p.request(r, 1, ""))
			if a.status == http.StatusOK {
				a.setJSON(http.StatusOK, map[string]any{"events": []any{}, "nextCursor": nil})
			}
			a.send(w)
			return
		}
		a := serve(next, r)
		if pg, ok := readPage(a); ok && pg.next == "" && len(pg.events) > 0 {
			pg.next = endCursor
			pg.set(a)
		}
		a.send(w)
	})
}

func badParam500(_ string, next http.Handler) http.Handler {
	return editStatus(http.StatusBadRequest, func(a *answer) {
		a.setError(http.StatusInternalServerError, codeInternal, "the query could not be processed", nil)
	})("", next)
}

func badParamNoDetails(_ string, next http.Handler) http.Handler {
	return editStatus(http.StatusBadRequest, func(a *answer) {
		var e errorBody
		if json.Unmarshal(a.body, &e) == nil {
			a.setError(http.StatusBadRequest, e.Error, "invalid query", nil)
		}
	})("", next)
}

// ---------------------------------------------------------------- events

// eachEvent calls fn for every event of a feed page or a videos answer.
func eachEvent(doc any, fn func(ev map[string]any)) {
	obj, _ := doc.(map[string]any)
	visit := func(list any) {
		evs, _ := list.([]any)
		for _, e := range evs {
			if ev, ok := e.(map[string]any); ok {
				fn(ev)
			}
		}
	}
	visit(obj["events"])
	entries, _ := obj["videos"].([]any)
	for _, e := range entries {
		if entry, ok := e.(map[string]any); ok {
			visit(entry["events"])
		}
	}
}

// eventEdit applies edit to every event; edit says whether it changed one.
func eventEdit(edit func(ev map[string]any) bool) func(*http.Request, any) bool {
	return func(_ *http.Request, doc any) bool {
		changed := false
		eachEvent(doc, func(ev map[string]any) {
			if edit(ev) {
				changed = true
			}
		})
		return changed
	}
}

// titleChangeLater moves title_changed events 6 hours later than their
// place in the feed.
func titleChangeLater(ev map[string]any) bool {
	n, ok := ev["createdAt"].(json.Number)
	ms, err := n.Int64()
	if ev["type"] != schemas.TypeTitleChanged || !ok || err != nil {
		return false
	}
	ev["createdAt"] = json.Number(strconv.FormatInt(ms+(6*time.Hour).Milliseconds(), 10))
	return true
}

func dropOldTitle(ev map[string]any) bool {
	if ev["type"] != schemas.TypeTitleChanged {
		return false
	}
	delete(ev, "oldTitle")
	return true
}

func membersOnlyString(ev map[string]any) bool {
	b, ok := ev["isMembersOnly"].(bool)
	if ev["type"] != schemas.TypeMembersOnlyChanged || !ok {
		return false
	}
	ev["isMembersOnly"] = strconv.FormatBool(b)
	return true
}

func renameMembersOnly(ev map[string]any) bool {
	if ev["type"] != schemas.TypeMembersOnlyChanged {
		return false
	}
	ev["type"] = "members_only_toggled"
	return true
}

func dropVideo(ev map[string]any) bool {
	if ev["type"] != schemas.TypeTitleChanged {
		return false
	}
	delete(ev, "video")
	return true
}

// videoOnChannelEvents gives channel-level events the VideoRef of a video
// of the same answer (a valid one, so that only its presence is wrong).
func videoOnChannelEvents(_ *http.Request, doc any) bool {
	var ref map[string]any
	eachEvent(doc, func(ev map[string]any) {
		if v, ok := ev["video"].(map[string]any); ok && ref == nil {
			ref = map[string]any{}
			for _, k := range []string{"platformVideoId", "currentTitle", "currentThumbnailUrl", "publishedAt"} {
				ref[k] = v[k]
			}
		}
	})
	if ref == nil {
		ref = map[string]any{"platformVideoId": "dQw4w9WgXcQ", "currentTitle": "A video", "currentThumbnailUrl": "https://i.example.com/vi/dQw4w9WgXcQ/default.jpg", "publishedAt": json.Number(strconv.FormatInt(DefaultStart.UnixMilli(), 10))}
	}
	changed := false
	eachEvent(doc, func(ev map[string]any) {
		if t, _ := ev["type"].(string); schemas.IsChannelLevel(t) {
			ev["video"] = ref
			changed = true
		}
	})
	return changed
}

// eachValue calls fn for every member of every object of doc.
func eachValue(doc any, fn func(obj map[string]any, key string)) {
	switch t := doc.(type) {
	case map[string]any:
		for k, v := range t {
			fn(t, k)
			eachValue(v, fn)
		}
	case []any:
		for _, v := range t {
			eachValue(v, fn)
		}
	}
}

var timestampKeys = []string{"createdAt", "publishedAt", "firstSeenAt"}

func scaleTimestamps(scale func(ms int64) int64) func(*http.Request, any) bool {
	return scaleKeys(timestampKeys, scale)
}

// scaleKeys rescales the integers of the members named keys.
func scaleKeys(keys []string, scale func(ms int64) int64) func(*http.Request, any) bool {
	return func(_ *http.Request, doc any) bool {
		changed := false
		eachValue(doc, func(obj map[string]any, key string) {
			n, ok := obj[key].(json.Number)
			if !ok || !slices.Contains(keys, key) {
				return
			}
			if ms, err := n.Int64(); err == nil {
				obj[key] = json.Number(strconv.FormatInt(scale(ms), 10))
				changed = true
			}
		})
		return changed
	}
}

func publishedISO(_ *http.Request, doc any) bool {
	changed := false
	eachValue(doc, func(obj map[string]any, key string) {
		n, ok := obj[key].(json.Number)
		if !ok || key != "publishedAt" {
			return
		}
		if ms, err := n.Int64(); err == nil {
			obj[key] = time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z")
			changed = true
		}
	})
	return changed
}

// statsEdit changes the counters of every video that has them: the video of
// a video_published event and the VideoSummary of an entry.
func statsEdit(edit func(video map[string]any)) func(*http.Request, any) bool {
	return func(_ *http.Request, doc any) bool {
		changed := false
		eachEvent(doc, func(ev map[string]any) {
			if v, ok := ev["video"].(map[string]any); ok && ev["type"] == schemas.TypeVideoPublished {
				edit(v)
				changed = true
			}
		})
		obj, _ := doc.(map[string]any)
		entries, _ := obj["videos"].([]any)
		for _, e := range entries {
			entry, _ := e.(map[string]any)
			if v, ok := entry["video"].(map[string]any); ok {
				edit(v)
				changed = true
			}
		}
		return changed
	}
}

func channelThumbnailNotURI(_ *http.Request, doc any) bool {
	changed := false
	eachValue(doc, func(obj map[string]any, key string) {
		ch, ok := obj[key].(map[string]any)
		if key != "channel" || !ok {
			return
		}
		if _, isString := ch["thumbnailUrl"].(string); isString {
			ch["thumbnailUrl"] = "avatar not available"
			changed = true
		}
	})
	return changed
}

// sharedTitleChangeID gives every title_changed event of one video the same
// id, derived from the video, so that walks of any page size agree on it.
func sharedTitleChangeID(ev map[string]any) bool {
	v, _ := ev["video"].(map[string]any)
	id, ok := v["platformVideoId"].(string)
	if ev["type"] != schemas.TypeTitleChanged || !ok {
		return false
	}
	sum := sha256.Sum256([]byte(id))
	ev["id"] = "evt_" + hex.EncodeToString(sum[:8])
	return true
}

// ---------------------------------------------------------------- tracked videos

// videosAnswer is a decoded tracked-videos answer.
func videosAnswer(doc any) (obj map[string]any, entries []any, missing []any, ok bool) {
	obj, ok = doc.(map[string]any)
	if !ok {
		return nil, nil, nil, false
	}
	entries, ok1 := obj["videos"].([]any)
	missing, ok2 := obj["missingVideoIds"].([]any)
	return obj, entries, missing, ok1 && ok2
}

func entryID(e any) string {
	entry, _ := e.(map[string]any)
	v, _ := entry["video"].(map[string]any)
	id, _ := v["platformVideoId"].(string)
	return id
}

func entryEdit(edit func(entry map[string]any)) func(*http.Request, any) bool {
	return func(_ *http.Request, doc any) bool {
		_, entries, _, ok := videosAnswer(doc)
		for _, e := range entries {
			if entry, isObj := e.(map[string]any); isObj {
				edit(entry)
			}
		}
		return ok && len(entries) > 0
	}
}

func negativeSampleViews(entry map[string]any) {
	samples, _ := entry["statSamples"].([]any)
	for _, sm := range samples {
		if sample, ok := sm.(map[string]any); ok {
			sample["viewCount"] = json.Number("-1")
		}
	}
}

// requestedIDs reads videoIds from a body, if it is an array of strings.
func requestedIDs(raw []byte) ([]string, bool) {
	var body struct {
		VideoIDs *[]string `json:"videoIds"`
	}
	if json.Unmarshal(raw, &body) != nil || body.VideoIDs == nil {
		return nil, false
	}
	return *body.VideoIDs, true
}

func acceptEmptyIDs(_ string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw := bufferBody(r)
		a := serve(next, r)
		if ids, ok := requestedIDs(raw); ok && len(ids) == 0 && a.status == http.StatusBadRequest {
			a.setJSON(http.StatusOK, map[string]any{"videos": []any{}, "missingVideoIds": []any{}})
		}
		a.send(w)
	})
}

// rejectCount answers a request of exactly n ids with 400.
func rejectCount(n int) func(string, http.Handler) http.Handler {
	return func(_ string, next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			raw := bufferBody(r)
			a := serve(next, r)
			if ids, ok := requestedIDs(raw); ok && len(ids) == n && a.status == http.StatusOK {
				lo, hi := schemas.MinVideoIDs, schemas.MaxVideoIDs
				if n == lo {
					lo++
				} else {
					hi--
				}
				a.setError(http.StatusBadRequest, codeInvalidBody, fmt.Sprintf("videoIds must hold %d to %d items", lo, hi), nil)
			}
			a.send(w)
		})
	}
}

// numberIDsAccepted reads ids that are JSON numbers as their digits.
func numberIDsAccepted(_ string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw := bufferBody(r)
		doc, ok := decodeDoc(raw)
		obj, isObj := doc.(map[string]any)
		list, isList := obj["videoIds"].([]any)
		if !ok || !isObj || !isList {
			next.ServeHTTP(w, r)
			return
		}
		coerced := false
		for i, v := range list {
			if n, isNum := v.(json.Number); isNum {
				list[i], coerced = n.String(), true
			}
		}
		if coerced {
			r = withBody(r, encodeDoc(obj))
		}
		next.ServeHTTP(w, r)
	})
}

func rejectLongestID(_ string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw := bufferBody(r)
		a := serve(next, r)
		ids, ok := requestedIDs(raw)
		if ok && a.status == http.StatusOK && slices.ContainsFunc(ids, func(id string) bool { return utf8.RuneCountInString(id) == schemas.MaxVideoIDLen }) {
			a.setError(http.StatusBadRequest, codeInvalidBody, fmt.Sprintf("each video id must be %d to %d characters", schemas.MinVideoIDLen, schemas.MaxVideoIDLen-1), nil)
		}
		a.send(w)
	})
}

// acceptTooManyIDs serves one id more than the maximum: the first ones as
// usual, the last one listed as missing.
func acceptTooManyIDs(_ string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw := bufferBody(r)
		ids, ok := requestedIDs(raw)
		if !ok || len(ids) != schemas.MaxVideoIDs+1 {
			next.ServeHTTP(w, r)
			return
		}
		head, extra := ids[:schemas.MaxVideoIDs], ids[schemas.MaxVideoIDs]
		a := serve(next, withBody(r, encodeDoc(map[string]any{"videoIds": head})))
		if a.status == http.StatusOK && !slices.Contains(head, extra) {
			addMissing(a, extra)
		}
		a.send(w)
	})
}

// addMissing appends ids to missingVideoIds of a 200 answer.
func addMissing(a *answer, ids ...string) {
	doc, ok := decodeDoc(a.body)
	obj, _, missing, isAnswer := videosAnswer(doc)
	if !ok || !isAnswer {
		return
	}
	for _, id := range ids {
		missing = append(missing, id)
	}
	obj["missingVideoIds"] = missing
	a.body = encodeDoc(obj)
}

// placeholderID stands in for the ids lenientIDs takes out, when none is
// left: the server needs at least one; '~' is in no platform id.
const placeholderID = "~breaker~placeholder~"

// lenientIDs accepts ids that break the length rule in the way bad says:
// they are left out of the request the server sees and listed as missing.
func lenientIDs(bad func(id string) bool) func(string, http.Handler) http.Handler {
	return func(_ string, next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			raw := bufferBody(r)
			ids, ok := requestedIDs(raw)
			if !ok || !slices.ContainsFunc(ids, bad) {
				next.ServeHTTP(w, r)
				return
			}
			var keep, drop []string
			for _, id := range ids {
				if bad(id) {
					drop = append(drop, id)
				} else {
					keep = append(keep, id)
				}
			}
			if len(keep) == 0 {
				keep = []string{placeholderID}
			}
			a := serve(next, withBody(r, encodeDoc(map[string]any{"videoIds": keep})))
			if a.status == http.StatusOK {
				if doc, ok := decodeDoc(a.body); ok {
					if obj, _, missing, ok := videosAnswer(doc); ok {
						missing = slices.DeleteFunc(missing, func(m any) bool { return m == placeholderID && !slices.Contains(ids, placeholderID) })
						for _, id := range dedupe(drop) {
							missing = append(missing, id)
						}
						obj["missingVideoIds"] = missing
						a.body = encodeDoc(obj)
					}
				}
			}
			a.send(w)
		})
	}
}

// structurallyBad reports whether a body is not even the shape of a
// request: not JSON, not an object, no videoIds, or not an array of strings.
func structurallyBad(raw []byte) bool {
	doc, ok := decodeDoc(raw)
	if !ok {
		return true
	}
	obj, ok := doc.(map[string]any)
	if !ok {
		return true
	}
	list, ok := obj["videoIds"].([]any)
	if !ok {
		return true
	}
	for _, v := range list {
		if _, isString := v.(string); !isString {
			return true
		}
	}
	return false
}

func badBody200(_ string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw := bufferBody(r)
		a := serve(next, r)
		if a.status == http.StatusBadRequest && structurallyBad(raw) {
			a.setJSON(http.StatusOK, map[string]any{"videos": []any{}, "missingVideoIds": []any{}})
		}
		a.send(w)
	})
}

func notServed(_ *http.Request, doc any) bool {
	obj, entries, missing, ok := videosAnswer(doc)
	if !ok || len(entries) == 0 {
		return false
	}
	for _, e := range entries {
		missing = append(missing, entryID(e))
	}
	obj["videos"], obj["missingVideoIds"] = []any{}, missing
	return true
}

func dropMissing(_ *http.Request, doc any) bool {
	obj, _, missing, ok := videosAnswer(doc)
	if !ok || len(missing) == 0 {
		return false
	}
	obj["missingVideoIds"] = []any{}
	return true
}

func servedAlsoMissing(_ *http.Request, doc any) bool {
	obj, entries, missing, ok := videosAnswer(doc)
	if !ok || len(entries) == 0 {
		return false
	}
	for _, e := range entries {
		missing = append(missing, entryID(e))
	}
	obj["missingVideoIds"] = missing
	return true
}

func unrequestedMissing(_ string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw := bufferBody(r)
		a := serve(next, r)
		if a.status == http.StatusOK {
			ids, _ := requestedIDs(raw)
			extra := "unrequested"
			for n := 0; slices.Contains(ids, extra); n++ {
				extra = "unrequested-" + strconv.Itoa(n)
			}
			addMissing(a, extra)
		}
		a.send(w)
	})
}

// inventEntries answers every missing id with a made-up VideoEntry that
// validates: the channel and times of a real entry when there is one.
func inventEntries(_ *http.Request, doc any) bool {
	obj, entries, missing, ok := videosAnswer(doc)
	if !ok || len(missing) == 0 {
		return false
	}
	channel := any(map[string]any{"id": "ch_invented", "platformChannelId": "UCinventedchannel", "title": "Invented", "thumbnailUrl": nil})
	at := any(json.Number(strconv.FormatInt(DefaultStart.UnixMilli(), 10)))
	if len(entries) > 0 {
		entry, _ := entries[0].(map[string]any)
		v, _ := entry["video"].(map[string]any)
		channel, at = v["channel"], v["publishedAt"]
	}
	zero := json.Number("0")
	for _, m := range missing {
		id, _ := m.(string)
		entries = append(entries, map[string]any{
			"video": map[string]any{
				"platformVideoId": id, "currentTitle": "Untitled", "currentThumbnailUrl": "https://i.example.com/vi/" + url.PathEscape(id) + "/default.jpg",
				"publishedAt": at, "isMembersOnly": false, "viewCount": zero, "likeCount": zero, "commentCount": zero, "channel": channel,
			},
			"firstSeenAt": at, "historyWindowDays": json.Number("30"), "isGraphLocked": false, "events": []any{}, "statSamples": []any{},
		})
	}
	obj["videos"], obj["missingVideoIds"] = entries, []any{}
	return true
}

// ---------------------------------------------------------------- rate limits

// noRateLimit answers a throttled feed request with the last 200 the same
// key got for the same query: the client sees no limit as long as it
// repeats itself, and stale-but-valid data.
func noRateLimit(_ string, next http.Handler) http.Handler {
	var (
		mu   sync.Mutex
		last = map[string][]byte{}
	)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.Header.Get("Authorization") + "\x00" + r.URL.RawQuery
		a := serve(next, r)
		mu.Lock()
		switch a.status {
		case http.StatusOK:
			if len(last) >= maxRemembered {
				clear(last)
			}
			last[key] = a.body
		case http.StatusTooManyRequests:
			if body, ok := last[key]; ok {
				a = &answer{status: http.StatusOK, header: http.Header{}, body: body}
				a.header.Set("Content-Type", contentTypeJSON)
			}
		}
		mu.Unlock()
		a.send(w)
	})
}

func rateLimit503(a *answer) {
	a.status = http.StatusServiceUnavailable
	var e errorBody
	if json.Unmarshal(a.body, &e) == nil {
		a.setError(http.StatusServiceUnavailable, codeUnavailable, e.Message, e.Details)
	}
}

// shadow sends a copy of a feed request to next and keeps the answer from
// the client: it uses up the key's budget like a request would.
func shadow(next http.Handler, r *http.Request, auth string) *answer {
	r2 := r.Clone(r.Context())
	r2.Body = http.NoBody
	if auth != "" {
		r2.Header.Set("Authorization", auth)
	}
	return serve(next, r2)
}

// counted reports whether the server counted a request against its key's
// budget: it does for every authenticated request it did not refuse.
func counted(status int) bool {
	return status != http.StatusUnauthorized && status != http.StatusTooManyRequests
}

// rateLimitOneLess spends one request of the key's budget itself after
// every limit-1 requests the client got through: a fast client gets its
// 429 one request early, with a truthful Retry-After, and a client that
// waited what Retry-After said is let through (the spent request came
// with the others, and leaves the window with them).
func rateLimitOneLess(_ string, next http.Handler) http.Handler {
	var (
		mu     sync.Mutex
		passed = map[string]int{}
	)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		mu.Lock()
		if passed[auth] >= schemas.FeedRequestsPerMinute-1 {
			shadow(next, r, "")
			passed[auth] = 0
		}
		mu.Unlock()
		a := serve(next, r)
		mu.Lock()
		switch {
		case a.status == http.StatusTooManyRequests:
			passed[auth] = 0
		case counted(a.status):
			if len(passed) >= maxRemembered {
				clear(passed)
			}
			passed[auth]++
		}
		mu.Unlock()
		a.send(w)
	})
}

// rateLimitOneMore lets the first request over the limit pass, answered
// with the last 200 of the same key and query; the next one gets the 429
// (with a truthful Retry-After).
func rateLimitOneMore(_ string, next http.Handler) http.Handler {
	var (
		mu     sync.Mutex
		last   = map[string][]byte{}
		passed = map[string]bool{} // the key's last answer was a 200
	)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		key := auth + "\x00" + r.URL.RawQuery
		a := serve(next, r)
		mu.Lock()
		if len(last) >= maxRemembered {
			clear(last)
			clear(passed)
		}
		switch a.status {
		case http.StatusOK:
			last[key], passed[auth] = a.body, true
		case http.StatusTooManyRequests:
			if body, ok := last[key]; ok && passed[auth] {
				a = &answer{status: http.StatusOK, header: http.Header{}, body: body}
				a.header.Set("Content-Type", contentTypeJSON)
			}
			passed[auth] = false
		}
		mu.Unlock()
		a.send(w)
	})
}

// retryAfterEarly says one second less than the truth (0 for 1).
func retryAfterEarly(a *answer) {
	n, err := strconv.Atoi(a.header.Get("Retry-After"))
	if err != nil || n < 1 {
		return
	}
	a.header.Set("Retry-After", strconv.Itoa(n-1))
	var e errorBody
	if json.Unmarshal(a.body, &e) == nil {
		a.setError(a.status, e.Error, fmt.Sprintf("rate limit exceeded; retry after %d s", n-1), map[string]any{"retryAfterSeconds": n - 1})
	}
}

// rateLimitShared throttles every key while one is throttled: a request is
// answered with the 429 of a key whose last answer was 429, as long as a
// probe of that key (a copy of the request with its key) still gets one.
// The probe is a real request: when the other key is free again, it uses
// up one of that key's requests.
func rateLimitShared(_ string, next http.Handler) http.Handler {
	var (
		mu        sync.Mutex
		throttled = map[string]bool{}
	)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		mu.Lock()
		others := make([]string, 0, len(throttled))
		for k := range throttled {
			if k != auth {
				others = append(others, k)
			}
		}
		mu.Unlock()
		slices.Sort(others)
		for _, other := range others {
			// Only a request with a well-formed key (of the same prefix)
			// is throttled; the others keep their 401.
			prefix, _, _ := strings.Cut(bearerKey(other), "_")
			if !wellFormed(bearerKey(auth), prefix) {
				break
			}
			probe := shadow(next, r, other)
			if probe.status == http.StatusTooManyRequests {
				probe.send(w)
				return
			}
			mu.Lock()
			delete(throttled, other)
			mu.Unlock()
		}
		a := serve(next, r)
		mu.Lock()
		if a.status == http.StatusTooManyRequests {
			if len(throttled) >= maxRemembered {
				clear(throttled)
			}
			throttled[auth] = true
		} else {
			delete(throttled, auth)
		}
		mu.Unlock()
		a.send(w)
	})
}

// bearerKey is the key of an Authorization value, "" if it is not Bearer.
func bearerKey(auth string) string {
	scheme, key, ok := strings.Cut(strings.TrimSpace(auth), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimLeft(key, " ")
}

// ---------------------------------------------------------------- error bodies

func notErrorBody(a *answer) {
	a.setJSON(a.status, map[string]any{"code": a.status, "reason": strings.ToLower(http.StatusText(a.status))})
}

func dropMessage(a *answer) {
	doc, ok := decodeDoc(a.body)
	if obj, isObj := doc.(map[string]any); ok && isObj {
		delete(obj, "message")
		a.body = encodeDoc(obj)
	}
}
