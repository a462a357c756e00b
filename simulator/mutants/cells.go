package mutants

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/schemas/catalogue"
	"github.com/tcmkit/tcmkit/schemas/jsondoc"
	"github.com/tcmkit/tcmkit/schemas/settings"
	"github.com/tcmkit/tcmkit/simulator"
)

// Cell faults: the suite generates its probes over requirement × key role
// × request shape × input class (the catalogue's grid); for each cell of that grid
// the kill matrix asks for a fault that a probe of the cell kills. CellFault
// makes it from the requirement's base fault, confined by a combinator
// (within) to requests of the cell's role, shape and input class, as the
// simulator sees them. Cell faults are not in the table (there are
// hundreds): Lookup and Layers know them by name, FAULT@ROLE.SHAPE.CLASS.

// Cell is one cell of the probe grid. Role, Shape and Class are names of
// the catalogue's grid (catalogue.Roles, GridShapes and Classes), which the
// suite's probes take too.
type Cell struct {
	Requirement catalogue.ID
	Role        catalogue.Role
	Shape       catalogue.Shape
	Class       catalogue.Class
}

func (c Cell) String() string { return string(c.Role) + "." + string(c.Shape) + "." + string(c.Class) }

// cellBases is each must requirement's fault on a cell's requests: the
// base fault of the grid (bases) where it shows on any request of the
// cell, another where it would not (an input's verdict, the plan gate on
// the feed, videos of ids that name none).
var cellBases = func() map[catalogue.ID]base {
	m := map[catalogue.ID]base{}
	for _, b := range bases {
		if _, ok := m[b.req]; !ok {
			m[b.req] = b
		}
	}
	for _, b := range []base{
		// (a 200 that is no HealthBody: with a key, health may refuse)
		{"health-not-ok", catalogue.HealthOK, `the health check answers 200 with {"status":"degraded"}`, healthOnly, editOK(healthDegraded)},
		{"gate-both-ways", catalogue.ProGate, "the plan gate is turned round: a free key's feed 403, its tracked videos served", keyed, gateBothWays},
		{"limit-not-capped", catalogue.FeedLimitCap, "a limit above 200 is honoured up to 400", feedOnly, notCapped(false)},
		{"bad-param-500", catalogue.FeedBadParam, "the feed answers 500 to a limit below 1 or not an integer, or a cursor that is none", feedOnly, answer500},
		{"ids-min-flipped", catalogue.VideosIDsMin, "a valid body is refused with 400, an invalid one served (bodies of its own rule)", videosOnly, flipVerdictOf(catalogue.VideosIDsMin)},
		{"ids-max-flipped", catalogue.VideosIDsMax, "a valid body is refused with 400, an invalid one served (bodies of its own rule)", videosOnly, flipVerdictOf(catalogue.VideosIDsMax)},
		{"id-len-flipped", catalogue.VideosIDLen, "a valid body is refused with 400, an invalid one served (bodies of its own rule)", videosOnly, flipVerdictOf(catalogue.VideosIDLen)},
		{"bad-body-flipped", catalogue.VideosBadBody, "a valid body is refused with 400, an invalid one served (bodies of its own rule)", videosOnly, flipVerdictOf(catalogue.VideosBadBody)},
		{"empty-list-omitted", catalogue.VideosEntrySchema, "an empty videos or missingVideoIds is left out", videosOnly, editOK(omitEmptyLists)},
		{"missing-not-listed", catalogue.VideosPartition, "ids of no video are in neither list", videosOnly, editOK(dropMissing)},
		{"cursor-any-account", catalogue.FeedTenant, "a cursor of one key is honoured for any key", feedOnly, cursorAnyAccount},
		{"retry-after-missing", catalogue.RateRetryAfter, "429s carry no Retry-After", keyed, editStatus(http.StatusTooManyRequests, func(a *answer) { a.Header.Del("Retry-After") })},
		{"rate-limit-shared", catalogue.RatePerKey, "one key's 429 throttles every key", feedOnly, rateLimitShared},
		// Faults of every event, not of one type: a page of a cell may hold
		// no event of a given type.
		{"events-without-channel", catalogue.EventSchema, "events carry no channel", keyed, eventEdit(drop("channel"))},
		{"every-type-unknown", catalogue.EventTypes, "every event's type is members_only_toggled", keyed, eventEdit(set("type", "members_only_toggled"))},
		{"video-events-without-video", catalogue.EventChannelNoVideo, "events of a video carry no video object", keyed, eventEdit(drop("video"))},
		{"ids-shared-in-pairs", catalogue.EventIDUnique, "every second event of a page has the id of the one before", keyed, editOK(idsInPairs)},
		{"valid-key-refused", catalogue.AuthValid, "the valid key is answered 401, whatever else the request holds (on plain requests once it was served)", keyed, refuseAlways},
		{"clamped-no-next-cursor", catalogue.FeedPageSchema, "pages carry no nextCursor; a limit that is no integer gets the default page (clamped), without one too", feedOnly, clampedNoCursor},
	} {
		m[b.req] = b
	}
	return m
}()

// CellFault is the fault of a cell.
func CellFault(c Cell) (Mutant, bool) {
	b, ok := cellBases[c.Requirement]
	if !ok {
		return Mutant{}, false
	}
	// The tracker sees both keyed operations (a key's role and the
	// operations in turn are learnt from both); the fault acts on its own.
	ops, acts := keyed, b.ops
	switch b.req {
	case catalogue.HealthOK:
		ops = healthOnly
	case catalogue.ContentTypeJSON, catalogue.ErrorBody:
		// every answer has a form, health's too (some cells hold only
		// health's requests: a free key's body of another JSON type)
		ops = []simulator.Operation{simulator.OpFeed, simulator.OpVideos, simulator.OpHealth}
		acts = append(slices.Clone(b.ops), simulator.OpHealth)
	}
	// A key refused on its first request of an operation is a stale key
	// to a run (its preflight checks each key's role so, and stops): the
	// valid key is refused from its second on.
	spare := c.Requirement == catalogue.AuthValid
	return Mutant{Name: b.fault + "@" + c.String(), Requirement: c.Requirement, Ops: ops,
		Does:  fmt.Sprintf("%s, on requests of %s × %s × %s", b.does, c.Role, c.Shape, c.Class),
		fresh: within(c, acts, spare, b.f)}, true
}

// The names a cell's role, shape and class take: the catalogue's grid, the
// names of the suite's probes. A cell fault of another name is an unknown
// fault, not one that never fires.
var (
	cellRoles   = strs(catalogue.Roles())
	cellShapes  = strs(catalogue.GridShapes())
	cellClasses = strs(catalogue.Classes())
)

func strs[S ~string](xs []S) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = string(x)
	}
	return out
}

// cellFaultNames are the base faults a cell fault is named after, sorted.
func cellFaultNames() []string {
	var names []string
	for _, b := range cellBases {
		names = append(names, b.fault)
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// CellSyntax says how a cell fault is named, and the names each part
// takes (--list-faults prints it under the named faults).
func CellSyntax() string {
	return "A cell fault is FAULT@ROLE.SHAPE.CLASS: the requirement's base fault confined to requests of one cell of the probe grid.\n" +
		"  FAULT: " + strings.Join(cellFaultNames(), ", ") + "\n  ROLE: " + strings.Join(cellRoles, ", ") +
		"\n  SHAPE: " + strings.Join(cellShapes, ", ") + "\n  CLASS: " + strings.Join(cellClasses, ", ") + "\n"
}

// splitCell splits the name of a cell fault into its base fault and parts.
func splitCell(name string) (fault string, parts []string, ok bool) {
	fault, cell, ok := strings.Cut(name, "@")
	parts = strings.Split(cell, ".")
	return fault, parts, ok && len(parts) == 3
}

// lookupCell reads the name of a cell fault.
func lookupCell(name string) (Mutant, bool) {
	fault, parts, ok := splitCell(name)
	if !ok || !slices.Contains(cellRoles, parts[0]) || !slices.Contains(cellShapes, parts[1]) || !slices.Contains(cellClasses, parts[2]) {
		return Mutant{}, false
	}
	for id, b := range cellBases {
		if b.fault == fault {
			if m, ok := CellFault(Cell{id, catalogue.Role(parts[0]), catalogue.Shape(parts[1]), catalogue.Class(parts[2])}); ok && m.Name == name {
				return m, true
			}
		}
	}
	return Mutant{}, false
}

// suggestCell is the cell fault nearest to a mistyped one, part by part;
// "" when the name is no cell fault's or a part is near no name.
func suggestCell(name string) string {
	fault, parts, ok := splitCell(name)
	if !ok {
		return ""
	}
	fault = settings.Suggest(fault, cellFaultNames())
	for i, known := range [][]string{cellRoles, cellShapes, cellClasses} {
		if slices.Contains(known, parts[i]) {
			continue // Suggest reads "n+1" as "n1", as near to "n-1"
		}
		parts[i] = settings.Suggest(parts[i], known)
	}
	if fault == "" || slices.Contains(parts, "") {
		return ""
	}
	return fault + "@" + strings.Join(parts, ".")
}

// within confines a fault to the requests of one cell: a request of the
// cell's role, shape and input class gets the fault's answer, any other
// the server's.
// With spareFirst, a key's first request of each operation is the
// server's whatever its cell.
func within(c Cell, ops []simulator.Operation, spareFirst bool, fault func() serveFunc) func() serveFunc {
	return func() serveFunc {
		t, f := newCellTracker(), fault()
		var seen memo[bool]
		return func(x *exchange) *answer {
			var a *answer
			k := x.auth() + " " + x.r.URL.Path
			first := false
			if _, ok := seen.get(k); !ok {
				seen.put(k, true)
				first = spareFirst
			}
			if !first && slices.Contains(ops, operationOf(x)) && t.in(x, c) {
				a = f(x)
			} else {
				a = x.serve()
			}
			t.saw(x, a)
			return a
		}
	}
}

// operationOf is the operation of a request, by its path.
func operationOf(x *exchange) simulator.Operation {
	switch x.r.URL.Path {
	case schemas.PathFeed:
		return simulator.OpFeed
	case schemas.PathVideos:
		return simulator.OpVideos
	}
	return simulator.OpHealth
}

// cellTracker learns what the shapes need beyond the grid's tracker: which
// keys are valid, each token's count, each key's last operation and head.
type cellTracker struct {
	*tracker
	mu     sync.Mutex
	valid  map[string]bool
	sent   map[string]int
	lastOp map[string]string
	head   map[string]string
	live   map[string]bool
}

func newCellTracker() *cellTracker {
	return &cellTracker{tracker: newTracker(), valid: map[string]bool{}, sent: map[string]int{}, lastOp: map[string]string{}, head: map[string]string{}, live: map[string]bool{}}
}

var roleOfCode = map[string]catalogue.Role{
	simulator.CodeRevokedKey:   catalogue.RoleRevoked,
	simulator.CodeUnknownKey:   catalogue.RoleUnknown,
	simulator.CodeMalformedKey: catalogue.RoleMalformed,
	simulator.CodeMissingKey:   catalogue.RoleNone,
}

// role is the key role of a request; a key not yet known valid is asked
// of the server (a refused key costs no window).
func (t *cellTracker) role(x *exchange) catalogue.Role {
	auth := x.auth()
	if auth == "" {
		return catalogue.RoleNone
	}
	t.mu.Lock()
	valid := t.valid[auth]
	t.mu.Unlock()
	if !valid {
		if code := t.keyCode(x); code != "" {
			return roleOfCode[code]
		}
		t.mu.Lock()
		t.valid[auth] = true
		t.mu.Unlock()
	}
	t.tracker.mu.Lock()
	first := t.first
	t.tracker.mu.Unlock()
	if first == "" || auth == first {
		return catalogue.RolePro
	}
	return catalogue.RoleFree
}

// keyCode is the server's word on the request's key ("" accepted, or the
// code of its 401): the request's own answer, or for health (which a key
// does not change) the server's authentication of the key, which costs no
// window.
func (t *cellTracker) keyCode(x *exchange) string {
	if operationOf(x) != simulator.OpHealth || x.srv == nil {
		if a := x.serve(); a.Status == http.StatusUnauthorized {
			return a.code()
		}
		return ""
	}
	code := x.srv.KeyCode(x.r)
	if code == "" {
		// the first key accepted is the Pro key's, as the tracker learns
		// it from the feed when it sees the feed
		t.tracker.mu.Lock()
		if t.first == "" {
			t.first = x.auth()
		}
		t.tracker.mu.Unlock()
	}
	return code
}

func (t *cellTracker) in(x *exchange, c Cell) bool {
	if !slices.Contains(inputClasses(x), c.Class) || !t.shaped(x, c) {
		return false
	}
	return t.role(x) == c.Role
}

func (t *cellTracker) shaped(x *exchange, c Cell) bool {
	is, ok := cellShaped[c.Shape]
	if !ok {
		return false
	}
	k := keyState{feed: x.r.URL.Path == schemas.PathFeed}
	t.mu.Lock()
	k.op, k.sent, k.live = t.lastOp[x.auth()], t.sent[x.auth()], t.live[x.auth()]
	t.mu.Unlock()
	return is(t, x, k)
}

// keyState is what a cell tracker knows of a request and of its key.
type keyState struct {
	feed bool   // a feed request
	op   string // the path of the key's request before
	sent int    // the key's requests in its window
	live bool   // the key's first page had a new head
}

// cellShaped tells, for each request shape of the probe grid, whether a
// request has it, as the simulator sees it (TestCellShapesAreTracked holds
// it to catalogue.GridShapes: a cell of a shape it did not know would
// never fire).
var cellShaped = map[catalogue.Shape]func(t *cellTracker, x *exchange, k keyState) bool{
	catalogue.ShapeFirstPage: func(t *cellTracker, x *exchange, k keyState) bool {
		return !k.feed || !t.is(x, ShapeCursorPage) || !t.handed(x)
	},
	catalogue.ShapeCursorPage: func(t *cellTracker, x *exchange, _ keyState) bool {
		return t.is(x, ShapeCursorPage) && t.handed(x) && !t.is(x, ShapeDeepPage)
	},
	catalogue.ShapeDeepPage: func(t *cellTracker, x *exchange, _ keyState) bool { return t.is(x, ShapeDeepPage) },
	catalogue.ShapeLiveHead: func(t *cellTracker, x *exchange, k keyState) bool {
		if k.feed && !k.live && !t.is(x, ShapeCursorPage) {
			k.live = t.moved(x) // the head, as the server would answer it now
		}
		return k.feed && k.live
	},
	catalogue.ShapeBothOperations: func(_ *cellTracker, x *exchange, k keyState) bool {
		return k.op != "" && k.op != x.r.URL.Path
	},
	catalogue.ShapeAfterBurst: func(t *cellTracker, x *exchange, k keyState) bool {
		return k.sent >= schemas.FeedRequestsPerMinute || t.is(x, ShapeAfterBurst)
	},
	catalogue.ShapeReadByOtherKey: func(t *cellTracker, x *exchange, _ keyState) bool { return t.is(x, ShapeReadByOther) },
	catalogue.ShapeLongWalk:       func(t *cellTracker, x *exchange, _ keyState) bool { return t.is(x, ShapeLongWalk) },
}

// moved reports whether the key's first page has a new head since the
// key last read it (asking the server once more).
func (t *cellTracker) moved(x *exchange) bool {
	t.mu.Lock()
	before := t.head[x.auth()]
	t.mu.Unlock()
	if before == "" {
		return false
	}
	pg, ok := readPage(x.serve())
	if !ok || len(pg.events) == 0 {
		return false
	}
	id, _ := pg.events[0].(map[string]any)["id"].(string)
	if id == before {
		return false
	}
	t.mu.Lock()
	t.live[x.auth()] = true
	t.mu.Unlock()
	return true
}

// handed reports whether the request's cursor is one the server handed out.
func (t *cellTracker) handed(x *exchange) bool {
	q, _ := x.feed()
	t.tracker.mu.Lock()
	defer t.tracker.mu.Unlock()
	_, ok := t.depth[q.Cursor]
	return ok
}

func (t *cellTracker) saw(x *exchange, a *answer) {
	t.tracker.saw(x, a)
	t.mu.Lock()
	defer t.mu.Unlock()
	auth := x.auth()
	if len(t.sent) > maxRemembered {
		t.sent, t.lastOp, t.head = map[string]int{}, map[string]string{}, map[string]string{}
	}
	t.sent[auth]++
	if a.Status != http.StatusTooManyRequests {
		t.lastOp[auth] = x.r.URL.Path // a retry after a 429 is the same request
	}
	if a.Status != http.StatusUnauthorized && operationOf(x) != simulator.OpHealth {
		t.valid[auth] = true // (health answers whatever the key)
	}
	if pg, ok := readPage(a); ok && x.r.URL.Query().Get("cursor") == "" && len(pg.events) > 0 {
		id, _ := pg.events[0].(map[string]any)["id"].(string)
		if before := t.head[auth]; before != "" && before != id {
			t.live[auth] = true // new events arrived at the head
		}
		t.head[auth] = id
	}
}

// InputClasses are the input classes of a request whose body is body, as
// the cell faults read them (inputClasses).
func InputClasses(r *http.Request, body []byte) []catalogue.Class {
	return inputClasses(&exchange{r: r, raw: body})
}

// inputClasses are the input classes of a request, as the probes name
// them: a request may have several (one id of 24 characters is the usage
// shown and a count at its bound).
func inputClasses(x *exchange) []catalogue.Class {
	switch x.r.URL.Path {
	case schemas.PathFeed:
		q := x.r.URL.Query()
		if c, ok := q["cursor"]; ok && (len(c) != 1 || !plainCursor(c[0])) {
			return []catalogue.Class{textClass(c[0])}
		}
		l, ok := q["limit"]
		if !ok {
			return []catalogue.Class{catalogue.ClassDefault}
		}
		return []catalogue.Class{numberClass(l[0], 1, schemas.MaxPageSize, 1000)}
	case schemas.PathHealth:
		return padded(x.raw, healthClasses)
	}
	return padded(x.raw, videosClasses)
}

// padded is the classes of a body: those of the text whitespace pads
// (JSON's insignificant whitespace: a padded body asks what its text
// asks), and whitespace when it is padded.
func padded(raw []byte, of func(text []byte) []catalogue.Class) []catalogue.Class {
	text := bytes.TrimSpace(raw)
	if len(text) == len(raw) {
		return of(raw)
	}
	return append(of(text), catalogue.ClassWhitespace)
}

// emptyObject reports whether text is a JSON object without members.
func emptyObject(text []byte) bool {
	var m map[string]json.RawMessage
	return len(text) > 0 && text[0] == '{' && json.Unmarshal(text, &m) == nil && len(m) == 0
}

// healthClasses are the classes of a health body's text.
func healthClasses(text []byte) []catalogue.Class {
	switch {
	case emptyObject(text):
		return []catalogue.Class{catalogue.ClassDefault}
	case len(text) == 0:
		return []catalogue.Class{catalogue.ClassEmpty}
	}
	return []catalogue.Class{catalogue.ClassJSONType}
}

// videosClasses are the classes of a tracked-videos body's text.
func videosClasses(text []byte) []catalogue.Class {
	var body struct {
		VideoIDs any `json:"videoIds"`
	}
	if len(text) == 0 || emptyObject(text) {
		return []catalogue.Class{catalogue.ClassEmpty}
	}
	if json.Unmarshal(text, &body) != nil {
		if trailing(text) {
			return []catalogue.Class{catalogue.ClassTrailing}
		}
		return []catalogue.Class{catalogue.ClassJSONType}
	}
	items, ok := body.VideoIDs.([]any)
	if !ok {
		return []catalogue.Class{catalogue.ClassJSONType}
	}
	classes := []catalogue.Class{numberClass(strconv.Itoa(len(items)), schemas.MinVideoIDs, schemas.MaxVideoIDs, 100)}
	for _, it := range items {
		id, ok := it.(string)
		if !ok {
			return []catalogue.Class{catalogue.ClassJSONType}
		}
		switch {
		case strings.TrimSpace(id) != id || id != "" && strings.TrimSpace(id) == "":
			classes = append(classes, catalogue.ClassWhitespace)
		case !isASCII(id):
			classes = append(classes, catalogue.ClassUnicode)
		default:
			classes = append(classes, numberClass(strconv.Itoa(utf8.RuneCountInString(id)), schemas.MinVideoIDLen, schemas.MaxVideoIDLen, 1000))
			if platformAlphabet(id) && len(id) <= schemas.MaxVideoIDLen {
				classes = append(classes, catalogue.ClassShaped) // the platform's alphabet (the feed's own ids are too)
			}
		}
	}
	if len(items) == 1 {
		if id, _ := items[0].(string); len(id) == 24 && isASCII(id) {
			classes = append(classes, catalogue.ClassDefault) // the usage shown: one id
		}
	}
	return slices.Compact(classes)
}

// trailing reports whether a body that is not JSON is a JSON value
// followed by more than whitespace, or a value with a trailing comma.
func trailing(raw []byte) bool {
	var first json.RawMessage
	if json.NewDecoder(bytes.NewReader(raw)).Decode(&first) == nil {
		return true // (raw itself is no JSON: more than whitespace follows)
	}
	return json.Valid(trailingComma.ReplaceAll(raw, []byte("$1")))
}

// trailingComma is a comma before the end of an object or array.
var trailingComma = regexp.MustCompile(`,(\s*[}\]])`)

// plainCursor: a cursor value that is none of the probes' inputs (a
// cursor a server handed out is opaque; the probes' are not).
func plainCursor(c string) bool {
	return c != "" && c != "null" && strings.TrimSpace(c) == c && isASCII(c) && len(c) < 4096 && c != "tcmkit-no-such-cursor"
}

func textClass(v string) catalogue.Class {
	switch {
	case v == "":
		return catalogue.ClassEmpty
	case strings.TrimSpace(v) != v || strings.TrimSpace(v) == "":
		return catalogue.ClassWhitespace
	case v == "null":
		return catalogue.ClassJSONType
	case len(v) >= 4096:
		return catalogue.ClassFarPast
	}
	return catalogue.ClassUnicode
}

// numberClass is the class of a number between the bounds lo and hi:
// n-1, n and n+1 at each, far past from far (or below -far), default
// between; a value that is no integer is of its own class.
func numberClass(v string, lo, hi, far int) catalogue.Class {
	switch {
	case v == "":
		return catalogue.ClassEmpty
	case strings.TrimSpace(v) != v:
		return catalogue.ClassWhitespace
	case !isASCII(v):
		return catalogue.ClassUnicode
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		if digits := strings.TrimPrefix(v, "-"); digits != "" && strings.Trim(digits, "0123456789") == "" {
			return catalogue.ClassFarPast // an integer past what an int holds
		}
		// digits, then letters ("50abc", not "1e2"): a reader of the
		// leading digits takes it
		if i := strings.IndexFunc(v, func(r rune) bool { return r < '0' || r > '9' }); i > 0 && unicode.IsLetter(rune(v[i])) && v[i] != 'e' && v[i] != 'E' {
			return catalogue.ClassTrailing
		}
		return catalogue.ClassJSONType
	}
	switch {
	case n >= far || n <= -far:
		return catalogue.ClassFarPast
	case n == lo-1 || n == hi-1:
		return catalogue.ClassBelow
	case n == lo || n == hi:
		return catalogue.ClassAt
	case n == lo+1 || n == hi+1:
		return catalogue.ClassAbove
	}
	return catalogue.ClassDefault
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// gateBothWays: a free key's feed pages are answered 403, its tracked
// videos served (every id missing).
var gateBothWays = stateless(func(x *exchange) *answer {
	a := x.serve()
	switch {
	case a.Status == http.StatusForbidden && a.code() == simulator.CodeProRequired:
		return anonymous(x)
	case x.r.URL.Path == schemas.PathFeed && a.Status == http.StatusOK:
		a.setError(http.StatusForbidden, simulator.CodeProRequired, "a Pro plan is required", nil)
	}
	return a
})

// idsInPairs gives every second event of a page the id of the one before.
func idsInPairs(_ *http.Request, doc any) bool {
	obj, _ := doc.(map[string]any)
	evs, _ := obj["events"].([]any)
	changed := false
	for i := 1; i < len(evs); i += 2 {
		prev, _ := evs[i-1].(map[string]any)
		ev, _ := evs[i].(map[string]any)
		if prev != nil && ev != nil {
			ev["id"], changed = prev["id"], true
		}
	}
	return changed
}

// refuseAlways answers the request 401 unless the server did.
var refuseAlways = stateless(func(x *exchange) *answer {
	a := x.serve()
	if a.Status != http.StatusUnauthorized {
		a.setHeader("WWW-Authenticate", `Bearer realm="api"`)
		a.setError(http.StatusUnauthorized, simulator.CodeUnknownKey, "the API key is not valid", nil)
	}
	return a
})

// clampedNoCursor serves a feed request the server refused for its query
// as the default page (clamping is conforming), and drops nextCursor from
// every page (which is not).
var clampedNoCursor = stateless(func(x *exchange) *answer {
	a := x.serve()
	if a.Status == http.StatusBadRequest && a.code() == simulator.CodeInvalidQuery {
		a = x.feedAs(schemas.DefaultPageSize, "")
	}
	if doc := a.doc(); a.Status == http.StatusOK && dropNextCursor(x.r, doc) {
		a.Body = jsondoc.Encode(doc)
	}
	return a
})

// answer500 answers 500 to a feed request the server did not refuse for
// its key.
var answer500 = stateless(func(x *exchange) *answer {
	a := x.serve()
	if (a.Status == http.StatusOK || a.Status == http.StatusBadRequest) && badParam(x) {
		a.setError(http.StatusInternalServerError, simulator.CodeInternal, "the query could not be processed", nil)
	}
	return a
})

// badParam reports whether FEED-BAD-PARAM's rule decides the feed query's
// verdict, as the probes' inputs are owned (suites/probe): a limit below 1
// or not an integer, or a cursor that is none of the server's form. A
// limit of 1 and up is FEED-LIMIT's or FEED-LIMIT-CAP's, however large:
// a cell's class says "n-1" of limit=0 and of limit=199 alike.
func badParam(x *exchange) bool {
	q := x.r.URL.Query()
	if c, ok := q["cursor"]; ok && (len(c) != 1 || !plainCursor(c[0])) {
		return true
	}
	l, ok := q["limit"]
	if !ok {
		return false
	}
	if len(l) != 1 || l[0] == "" {
		return true
	}
	if strings.Trim(l[0], "0123456789") == "" {
		n, err := strconv.Atoi(l[0])
		return err == nil && n < 1 // digits alone: 0, or 1 and up
	}
	return true
}

// flipVerdictOf refuses a body the server served with 400, and serves one
// it refused with 400 (every id it holds missing), for the bodies whose
// verdict rule id decides (bodyRule): a cell's class says "n-1" of 0 ids
// and of 19 alike, and flipping both would break two rules.
func flipVerdictOf(id catalogue.ID) func() serveFunc {
	return stateless(func(x *exchange) *answer {
		if bodyRule(x.raw) != id && (id != catalogue.VideosIDLen || !oneShapedID(x.raw)) {
			return x.serve()
		}
		return flipVerdict(x)
	})
}

// oneShapedID reports whether a body is one id of the platform's alphabet
// (the shaped class: an id like the feed's, which VIDEOS-ID-LEN's rule
// makes valid): VIDEOS-ID-LEN's body as well as its count's.
func oneShapedID(raw []byte) bool {
	var body struct {
		VideoIDs []string `json:"videoIds"`
	}
	return json.Unmarshal(raw, &body) == nil && len(body.VideoIDs) == 1 && platformAlphabet(body.VideoIDs[0]) && len(body.VideoIDs[0]) <= schemas.MaxVideoIDLen
}

// bodyRule is the rule that decides a tracked-videos body's verdict, as
// the probes' inputs are owned (suites/probe): no JSON object of an array
// of strings, or whitespace around it, VIDEOS-BAD-BODY; more than two ids,
// VIDEOS-IDS-MAX; an id near a bound of its length or padded,
// VIDEOS-ID-LEN; else VIDEOS-IDS-MIN.
func bodyRule(raw []byte) catalogue.ID {
	var body struct {
		VideoIDs []any `json:"videoIds"`
	}
	if strings.TrimSpace(string(raw)) != string(raw) || json.Unmarshal(raw, &body) != nil || body.VideoIDs == nil {
		return catalogue.VideosBadBody
	}
	rule := catalogue.VideosIDsMin
	for _, it := range body.VideoIDs {
		id, ok := it.(string)
		if !ok {
			return catalogue.VideosBadBody
		}
		if n := utf8.RuneCountInString(id); strings.TrimSpace(id) != id || n < schemas.MinVideoIDLen+2 || n > schemas.MaxVideoIDLen-2 {
			rule = catalogue.VideosIDLen
		}
	}
	if len(body.VideoIDs) > 2 {
		return catalogue.VideosIDsMax
	}
	return rule
}

func flipVerdict(x *exchange) *answer {
	a := x.serve()
	switch a.Status {
	case http.StatusOK:
		a.setError(http.StatusBadRequest, simulator.CodeInvalidBody, "invalid request body", map[string]any{"invalid": []string{"videoIds"}})
	case http.StatusBadRequest:
		var body struct {
			VideoIDs []any `json:"videoIds"`
		}
		_ = json.Unmarshal(x.raw, &body)
		missing := []string{}
		for _, it := range body.VideoIDs {
			if s, ok := it.(string); ok {
				missing = append(missing, s)
			}
		}
		return jsonOK(map[string]any{"videos": []any{}, "missingVideoIds": missing})
	}
	return a
}
