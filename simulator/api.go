package simulator

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
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
	"github.com/tcmkit/tcmkit/simulator/world"
)

// The order of the checks, the same for both keyed operations:
//
//	401 (no valid key) → 429 (rate limit) → 403 (Pro plan, videos) → 400 (request) → 200
//
// A request that is not authenticated is not counted against any budget;
// every authenticated request is, also one that then gets a 400 or a 403.

func apiTable() []apiRoute {
	return []apiRoute{
		{method: http.MethodGet, path: schemas.PathFeed, op: OpFeed, h: (*Server).feed},
		{method: http.MethodPost, path: schemas.PathVideos, op: OpVideos, h: (*Server).videos},
		{method: http.MethodPost, path: schemas.PathHealth, op: OpHealth, h: (*Server).health},
	}
}

// routes builds the server's routes: the API's by path, the control API's
// mux, and the handler, serveRequest.
func (s *Server) routes() {
	s.api = map[string]*apiRoute{}
	var paths []string
	for _, rt := range apiTable() {
		rt := rt
		s.buildOperation(&rt)
		s.api[rt.path] = &rt
		paths = append(paths, rt.path)
	}
	s.apiPaths = strings.Join(paths[:len(paths)-1], ", ") + " and " + paths[len(paths)-1]
	if !s.cfg.NoControl {
		s.controlMux = s.controlRoutes()
	}
	s.handler = http.HandlerFunc(s.serveRequest)
}

// authorize authenticates a request and counts it against lim. It returns
// the answer (401 or 429) and ok=false if the request may not go on.
func (s *Server) authorize(c *call, r *http.Request, st *state, lim *limiter) (accountID string, refused answer, ok bool) {
	h, accountID, aerr := st.keys.authenticate(r, c.knownKey(r))
	if aerr != nil {
		return "", errorAnswer(http.StatusUnauthorized, aerr.Code, aerr.Message, nil).with("WWW-Authenticate", `Bearer realm="api"`), false
	}
	if uncounted(r) {
		return accountID, answer{}, true
	}
	if ok, wait := lim.Allow(h, s.clock.RateNow); !ok {
		ra := s.clock.RetryAfter(wait)
		return "", rateLimited(ra, lim.refusal(ra)), false
	}
	return accountID, answer{}, true
}

// refusal is the message of the limiter's 429 (an injected 429 says it too).
func (l *limiter) refusal(retryAfter int64) string {
	return fmt.Sprintf("rate limit of %d requests per %s per API key exceeded; retry after %d s", l.limit, windowName(l.window), retryAfter)
}

func windowName(d time.Duration) string {
	if d == time.Minute {
		return "minute"
	}
	return d.String()
}

// feed serves GET /api/public-feed.
func (s *Server) feed(c *call, r *http.Request) answer {
	st := s.st.Load()
	accountID, refused, ok := s.authorize(c, r, st, st.feed)
	if !ok {
		return refused
	}
	q, problems := ParseFeedQuery(r.URL.RawQuery)
	if len(problems) > 0 {
		// details say which parameters are invalid: every one, so a cursor
		// the account was never handed is named beside a bad limit
		if q.Cursor != "" && !slices.ContainsFunc(problems, func(p QueryProblem) bool { return p.Parameter == "cursor" }) {
			if _, err := st.world.AppendFeedPage(nil, accountID, q.Cursor, 1); errors.Is(err, world.ErrCursor) {
				problems = append(problems, cursorProblem(q.Cursor))
			}
		}
		return queryError(problems)
	}
	s.settle(st)
	cache, moment := &st.feedPages, st.feedMoment
	if q.Cursor != "" {
		cache, moment = &st.cursorPages, st.cursorMoment
	}
	a, err := s.answer(cache, moment, func() string { return feedKey(accountID, q.Cursor, q.Limit) }, func(dst []byte) ([]byte, error) {
		return st.world.AppendFeedPage(dst, accountID, q.Cursor, q.Limit)
	})
	switch {
	case errors.Is(err, world.ErrCursor):
		return queryError([]QueryProblem{cursorProblem(q.Cursor)})
	case err != nil:
		return s.internalError(r, err)
	}
	return a
}

// cursorProblem is a cursor the account was never handed.
func cursorProblem(cursor string) QueryProblem {
	return QueryProblem{Parameter: "cursor", Value: excerpt(cursor), Rule: "not a cursor of this account's feed: pass the nextCursor of a page this key received, or omit cursor for the first page"}
}

// answer is a 200 answer. With a cache, from the cache if it holds the
// answer for the current moment; otherwise built by build and kept, but
// only if the moment did not move while it was built, so that a kept
// answer is exactly the answer of its moment (a reader never gets an
// answer older than the world it reads). Without a cache (tracked videos
// in a live world, whose moment moves every millisecond), or with a full
// one, it is built into a pooled buffer that goes back to the pool once
// written, so that it costs no garbage.
func (s *Server) answer(cache *answerCache, moment func() cacheMoment, key func() string, build func([]byte) ([]byte, error)) (answer, error) {
	if cache != nil {
		m := moment()
		k := key()
		if body, ok := cache.Get(m, k); ok {
			return answer{Status: http.StatusOK, Body: body, shared: true}, nil
		}
		if cache.hasRoom(m) {
			body, err := build(nil)
			if err != nil {
				return answer{}, err
			}
			if moment() == m {
				cache.Put(m, k, body)
			}
			return answer{Status: http.StatusOK, Body: body, shared: true}, nil // no one changes it, kept or not
		}
	}
	bp := answerBuffers.Get().(*[]byte)
	body, err := build((*bp)[:0])
	if err != nil {
		if cap(body) <= maxPooledAnswer {
			*bp = body[:0]
			answerBuffers.Put(bp)
		}
		return answer{}, err
	}
	return answer{Status: http.StatusOK, Body: body, pooled: bp}, nil
}

// answerParts is a realtime answer built in pieces (world.VideosParts),
// for a connection that sends them in one writev (gather.go): the pieces
// the world keeps are written as they are, what is built goes into a
// pooled buffer; both go back to their pools once written.
func answerParts(build func(parts [][]byte, buf []byte) ([][]byte, []byte, error)) (answer, error) {
	bp := answerBuffers.Get().(*[]byte)
	pp := partsPool.Get().(*[][]byte)
	parts, buf, err := build((*pp)[:0], (*bp)[:0])
	*bp, *pp = buf[:0], parts[:0]
	if err != nil {
		answerBuffers.Put(bp)
		partsPool.Put(pp)
		return answer{}, err
	}
	return answer{Status: http.StatusOK, parts: parts, pooled: bp, pooledParts: pp}, nil
}

// partsPool holds the piece lists of answers in pieces.
var partsPool = sync.Pool{New: func() any { p := make([][]byte, 0, 32); return &p }}

// answerBuffers holds the buffers of realtime answers; one larger than
// maxPooledAnswer is left to the collector.
var answerBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 64<<10); return &b }}

const maxPooledAnswer = 1 << 20

// FeedQuery is the feed's query, checked.
type FeedQuery struct {
	Limit    int    // the page size served: the default, or limit capped
	Asked    int    // the limit asked for before capping (math.MaxInt when too large for an int); 0 when absent
	HasLimit bool   // limit was given
	Cursor   string // "" for the first page
	// Cursors counts the cursor parameters given, empty ones included
	// (cursor= is not an omitted cursor: a client judge counts it).
	Cursors int
}

var limitRule = fmt.Sprintf("must be a whole number of at least 1 (default %d; values above %d are capped)", schemas.DefaultPageSize, schemas.MaxPageSize)

// ParseFeedQuery reads limit and cursor as the server does. Unknown parameters are ignored
// (tolerant where the contract is silent); a parameter given twice, a limit
// that is not a whole number of at least 1, and undecodable escapes are
// problems. An empty cursor means the first page, like an omitted one.
func ParseFeedQuery(raw string) (FeedQuery, []QueryProblem) {
	q := FeedQuery{Limit: schemas.DefaultPageSize}
	var problems []QueryProblem
	var seenLimit, seenCursor bool
	for raw != "" {
		var seg string
		seg, raw, _ = strings.Cut(raw, "&")
		if seg == "" {
			continue
		}
		rawName, rawValue, _ := strings.Cut(seg, "=")
		name, err := url.QueryUnescape(rawName)
		if err != nil {
			problems = append(problems, QueryProblem{Parameter: excerpt(rawName), Value: excerpt(rawValue), Rule: "the parameter name is not valid percent-encoding"})
			continue
		}
		if name != "limit" && name != "cursor" {
			continue
		}
		value, err := url.QueryUnescape(rawValue)
		if err != nil {
			problems = append(problems, QueryProblem{Parameter: name, Value: excerpt(rawValue), Rule: "not valid percent-encoding"})
			continue
		}
		switch name {
		case "limit":
			if seenLimit {
				problems = appendOnce(problems, QueryProblem{Parameter: name, Value: excerpt(value), Rule: "given more than once"})
				continue
			}
			seenLimit = true
			n, ok := parseLimit(value)
			if !ok {
				problems = append(problems, QueryProblem{Parameter: name, Value: excerpt(value), Rule: limitRule})
				continue
			}
			q.Limit, q.Asked, q.HasLimit = n, n, true
			if n == schemas.MaxPageSize {
				// parseLimit caps: read what was asked for from the digits.
				if asked, err := strconv.Atoi(value); err == nil {
					q.Asked = asked
				} else {
					q.Asked = math.MaxInt
				}
			}
		case "cursor":
			q.Cursors++
			if seenCursor {
				problems = appendOnce(problems, QueryProblem{Parameter: name, Value: excerpt(value), Rule: "given more than once"})
				continue
			}
			seenCursor = true
			q.Cursor = value
		}
	}
	return q, problems
}

func appendOnce(ps []QueryProblem, p QueryProblem) []QueryProblem {
	for _, old := range ps {
		if old.Parameter == p.Parameter && old.Rule == p.Rule {
			return ps
		}
	}
	return append(ps, p)
}

// parseLimit accepts ASCII digits only: no sign, no exponent, no fraction.
// A whole number too large for an int is still a whole number above the
// maximum, so it is capped like any other.
func parseLimit(v string) (int, bool) {
	if v == "" {
		return 0, false
	}
	n := 0
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		if n <= schemas.MaxPageSize {
			n = n*10 + int(c-'0')
		}
	}
	switch {
	case n < 1:
		return 0, false
	case n > schemas.MaxPageSize:
		return schemas.MaxPageSize, true
	}
	return n, true
}

// videos serves POST /api/public/videos.
func (s *Server) videos(c *call, r *http.Request) answer {
	st := s.st.Load()
	accountID, refused, ok := s.authorize(c, r, st, st.videos)
	if !ok {
		return refused
	}
	plan, ok := st.world.PlanOf(accountID)
	if !ok {
		return s.internalError(r, fmt.Errorf("key of unknown account %q", accountID))
	}
	if plan != world.Pro {
		return errorAnswer(http.StatusForbidden, CodeProRequired, "the tracked-videos operation requires a Pro plan", nil)
	}
	var ids []string
	var plain bool
	raw, bad := readBody(r)
	if bad == nil {
		ids, plain, bad = parseVideosRequest(r.Header, raw)
	}
	if bad != nil {
		return errorAnswer(http.StatusBadRequest, CodeInvalidBody, bad.Message, bad.Details)
	}
	s.settle(st)
	var cache *answerCache
	if s.clock.Manual() && !s.realtimeVideos {
		cache = &st.answers
	}
	var a answer
	var err error
	missing := -1 // unknown
	if cache == nil && c.gather != nil {
		a, err = answerParts(func(parts [][]byte, buf []byte) ([][]byte, []byte, error) {
			parts, buf, n, err := st.world.VideosParts(parts, buf, accountID, ids)
			missing = n
			return parts, buf, err
		})
	} else {
		a, err = s.answer(cache, st.videosMoment, func() string { return videosKey(accountID, ids) }, func(dst []byte) ([]byte, error) {
			return st.world.AppendVideos(dst, accountID, ids)
		})
	}
	// A plain body of the world's own ids hides no key: observers need
	// not search it for one (keysSeen).
	if plain && r == c.r && c.rec.observe {
		c.knownBody = missing == 0 || (missing < 0 && st.world.KnownVideos(ids))
	}
	if err != nil {
		return s.internalError(r, err)
	}
	return a
}

// BadRequest is why a videos request was refused. Its details always hold
// "violations" in the shape of schemas.Violation, so a client reads every
// 400 of the operation the same way; a header problem has the pointer ""
// and names the header in keyword.
type BadRequest struct {
	Message string
	Details any
}

// bodyProblem is a 400 about the body as a whole (or a header).
func bodyProblem(keyword, rule, value string) *BadRequest {
	return &BadRequest{Message: rule, Details: map[string]any{"violations": []schemas.Violation{{Keyword: keyword, Rule: rule, Value: value}}}}
}

// readBody reads at most MaxBodyBytes+1 of the request body; more than
// MaxBodyBytes is left for ParseVideosRequest to refuse.
func readBody(r *http.Request) ([]byte, *BadRequest) {
	if tap, ok := r.Body.(*bodyTap); ok {
		if raw, ok := tap.whole(); ok {
			return raw, nil // read once, for the observers and the handler
		}
	}
	raw, err := io.ReadAll(io.LimitReader(r.Body, MaxBodyBytes+1))
	if err != nil {
		return nil, bodyProblem("body", "the request body could not be read", "")
	}
	return raw, nil
}

// ParseVideosRequest judges a tracked-videos request as the server does:
// the Content-Type, at most MaxBodyBytes, UTF-8, one JSON value, and the
// compiled schema schemas.VideosRequest (the one the suite uses). It
// returns the requested ids, or the 400's message and details.
func ParseVideosRequest(h http.Header, raw []byte) ([]string, *BadRequest) {
	ids, _, bad := parseVideosRequest(h, raw)
	return ids, bad
}

// parseVideosRequest is ParseVideosRequest that also says whether the body
// was plain (plainVideoIDs).
func parseVideosRequest(h http.Header, raw []byte) (ids []string, plain bool, bad *BadRequest) {
	if bad := checkJSONContentType(h.Values("Content-Type")); bad != nil {
		return nil, false, bad
	}
	if len(raw) > MaxBodyBytes {
		return nil, false, bodyProblem("maxBytes", fmt.Sprintf("the request body is larger than %d bytes", MaxBodyBytes), "")
	}
	if !utf8.Valid(raw) {
		return nil, false, bodyProblem("utf8", "the request body is not valid UTF-8", "")
	}
	if ids, ok := plainVideoIDs(raw); ok {
		return ids, true, nil
	}
	ids, bad = schemaVideoIDs(raw)
	return ids, false, bad
}

// schemaVideoIDs reads a body that is not plain: JSON, then the schema.
func schemaVideoIDs(raw []byte) ([]string, *BadRequest) {
	doc, err := jsondoc.Decode(raw)
	if err != nil {
		return nil, bodyProblem("json", "the request body is not valid JSON: "+err.Error(), excerpt(string(raw)))
	}
	if err := schemas.Validate(schemas.VideosRequest, doc); err != nil {
		var se *schemas.Error
		if errors.As(err, &se) {
			listed, omitted := capViolations(se.Violations)
			details := map[string]any{"violations": listed}
			if omitted > 0 {
				details["violationsOmitted"] = omitted
			}
			return nil, &BadRequest{Message: "the request body does not match the tracked-videos request: " + violationSummary(listed, omitted), Details: details}
		}
		return nil, bodyProblem("schema", "the request body could not be validated", "")
	}
	items := doc.(map[string]any)["videoIds"].([]any)
	ids := make([]string, len(items))
	for i, it := range items {
		ids[i] = it.(string)
	}
	return ids, nil
}

// plainVideoIDs reads the one shape that clients send, {"videoIds":[...]}
// with 1 to 20 ids of 1 to 32 characters, none with an escape or a
// control character, and only JSON whitespace around. Such a body is
// valid by the schema whatever else is true, so the schema need not be
// run (a test holds the two to the same ids). Anything else (another
// member, an escape, a number, a duplicate key, a bad count or length)
// returns false and goes to the schema, which says what is wrong.
func plainVideoIDs(raw []byte) ([]string, bool) {
	i := skipWS(raw, 0)
	const head = `"videoIds"`
	if i >= len(raw) || raw[i] != '{' {
		return nil, false
	}
	i = skipWS(raw, i+1)
	if !bytes.HasPrefix(raw[i:], []byte(head)) {
		return nil, false
	}
	i = skipWS(raw, i+len(head))
	if i >= len(raw) || raw[i] != ':' {
		return nil, false
	}
	i = skipWS(raw, i+1)
	if i >= len(raw) || raw[i] != '[' {
		return nil, false
	}
	body := string(raw) // one copy; the ids are substrings of it
	ids := make([]string, 0, schemas.MaxVideoIDs)
	for {
		i = skipWS(raw, i+1)
		if i >= len(raw) || raw[i] != '"' || len(ids) == schemas.MaxVideoIDs {
			return nil, false
		}
		start := i + 1
		end := start
		for end < len(raw) && raw[end] != '"' {
			if c := raw[end]; c == '\\' || c < 0x20 {
				return nil, false
			}
			end++
		}
		if end >= len(raw) {
			return nil, false
		}
		id := body[start:end]
		if n := utf8.RuneCountInString(id); n < schemas.MinVideoIDLen || n > schemas.MaxVideoIDLen {
			return nil, false
		}
		ids = append(ids, id)
		i = skipWS(raw, end+1)
		if i < len(raw) && raw[i] == ',' {
			continue
		}
		if i >= len(raw) || raw[i] != ']' {
			return nil, false
		}
		break
	}
	i = skipWS(raw, i+1)
	if i >= len(raw) || raw[i] != '}' {
		return nil, false
	}
	return ids, skipWS(raw, i+1) == len(raw)
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

func violationSummary(vs []schemas.Violation, omitted int) string {
	parts := make([]string, 0, len(vs)+1)
	for _, v := range vs {
		ptr := v.Pointer
		if ptr == "" {
			ptr = "/"
		}
		parts = append(parts, ptr+": "+v.Rule)
	}
	if omitted > 0 {
		parts = append(parts, fmt.Sprintf("and %d more", omitted))
	}
	return strings.Join(parts, "; ")
}

// CheckContentType judges a request's Content-Type as the tracked-videos
// operation does: application/json, with charset utf-8 if any.
func CheckContentType(h http.Header) *BadRequest {
	return checkJSONContentType(h.Values("Content-Type"))
}

// checkJSONContentType wants application/json, with charset utf-8 if any.
// The spec lists 400 for an invalid request, so a wrong type is a 400 too
// (not 415).
func checkJSONContentType(values []string) *BadRequest {
	if len(values) == 1 && values[0] == contentTypeJSON {
		return nil // what clients send: no need to parse it
	}
	want := "the Content-Type header must be " + contentTypeJSON
	got := excerpt(strings.Join(values, ", "))
	if len(values) != 1 {
		return bodyProblem("Content-Type", want, got)
	}
	mt, params, err := mime.ParseMediaType(values[0])
	if err != nil || mt != contentTypeJSON {
		return bodyProblem("Content-Type", want, got)
	}
	if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") {
		return bodyProblem("Content-Type", "the request body must be UTF-8 (charset=utf-8)", got)
	}
	return nil
}

var healthOK = []byte(`{"status":"ok"}`)

// health serves POST /api/public/health. It needs no key and reads no more
// than MaxBodyBytes of whatever body comes: the spec shows {} and lists no
// error for the health check, so the simulator does not invent one.
func (s *Server) health(c *call, r *http.Request) answer {
	_, _ = io.Copy(io.Discard, io.LimitReader(r.Body, MaxBodyBytes))
	return rawAnswer(http.StatusOK, healthOK)
}

// internalError is the 500 for what should not happen; the log has the cause.
func (s *Server) internalError(r *http.Request, err error) answer {
	s.log.Error("internal error", s.requestAttrs(r), "err", err)
	return errorAnswer(http.StatusInternalServerError, CodeInternal, "the simulator failed while serving this request; the failure is logged", nil)
}
