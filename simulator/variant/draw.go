// Package variant draws a conforming server: every point the contract
// leaves open (the catalogue's simulatorChoice entries and the rest the
// contract does not show) is drawn from a number N, within the musts. Two
// draws are two servers that both conform and differ wherever the contract
// lets them: error vocabularies and messages (the empty message too), extra
// fields, key order and layout, cursor formats, framing, precedence where
// the spec is silent, rate accounting, Retry-After forms, health handling,
// the world's shape and live growth.
//
// It serves the suite (which must pass every draw: suites/selftest,
// ci/draws.sh) and client developers (cmd/simulator --conforming-draw N): a
// client that depends on what the contract does not promise breaks on some
// draw.
//
// A Draw is a value derived from N alone (Draw.String says every choice in
// words). Apply sets the world's knobs on a simulator.Config and adds one
// layer (simulator.Config.Layers) that answers every request through the
// real handler, then decides, rewrites and frames the answer as the draw
// says. Authentication, the world and the Pro gate stay the server's; the
// rate limits become the draw's (a sliding window of 20 feed requests a
// minute per key, as the server's, with the draw's scope). The journal,
// the observers and the client judge see the server's cause of each error
// (simulator.Answer.Cause), whatever the draw spells, and a feed
// page with the draw's content (its cursors, its ids) in the server's own
// layout, which the judge reads without decoding the page whole.
//
// What a draw leaves as the simulator does it: the answers outside the
// three operations (404, 405, CORS preflights, the control API), the
// world's own generation (the event mix follows from the channels, the
// history and the edge rate), the accounts' channel sets, the length of a
// key's random part, which ids are missing (the musts leave no other
// choice), and the order of events that share a createdAt. A reset or an
// import through the control API does not empty the draw's budgets.
package variant

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/tcmkit/tcmkit/simulator"
)

// Draw is one conforming server: every open point, decided.
type Draw struct {
	N uint64

	// The world.
	Seed      int64
	Channels  int
	History   time.Duration
	Start     time.Time
	EdgeRate  float64
	KeyPrefix string
	// Growth is how far each API request moves a manual clock before it is
	// served (a live world: events arrive while a client walks). Kept under
	// 3 s so that 21 requests sent at once still fall in one minute. A
	// realtime clock (Config.Speed > 0) is live anyway and is not moved.
	Growth time.Duration

	// Errors.
	Vocabulary  string // how ErrorBody.error is spelled (see vocabularies)
	Message     string // how ErrorBody.message reads: server, empty, generic, long, non-ascii
	Details     string // server, minimal (only where a must asks: the feed's 400), list, map, text, null (every other error)
	ErrorExtras bool   // extra members in an ErrorBody (status, requestId)
	ProblemJSON bool   // errors as application/problem+json
	Challenge   string // the WWW-Authenticate value of a 401

	// Layout of every JSON body.
	KeyOrder string // server, sorted, reversed, hashed
	Indent   string // "" (compact) or the indent unit
	Spaced   bool   // a space after ':' and ',' in compact bodies
	CRLF     bool   // line breaks of an indented body are \r\n
	Newline  bool   // the body ends with a line break
	Escape   string // minimal, html (<>& as \u00XX), ascii (every non-ASCII rune as \uXXXX), slash (/ as \/)

	// Extra members: in feed pages, events, VideoEntries, tracked-videos
	// answers, health answers.
	ExtraPage, ExtraEvent, ExtraEntry, ExtraVideos, ExtraHealth bool
	// ChannelVideoNull: channel-level events carry "video": null.
	ChannelVideoNull bool
	// IDs is how the service's own ids (event ids, channel ids) are
	// spelled: server (evt_…, ch_…), bare (the hex alone), upper, uuid.
	IDs string

	// The feed.
	Cursor        string // server, hex, base64, decimal, long, short, prefixed, unicode (spaces and non-ASCII)
	UnknownCursor string // reject (400 naming cursor) or first (the first page)
	BadLimit      string // reject (400 naming limit), one (clamped to 1), default (the default page)

	// Tracked videos.
	LenientType  bool   // any Content-Type is read as JSON
	StrictBody   bool   // a body with members besides videoIds is a 400
	VideoOrder   string // request, reversed, sorted: the order of videos and missingVideoIds
	EntryEvents  string // newest or oldest first inside a VideoEntry
	EntrySamples string // oldest or newest first
	WindowDays   int    // historyWindowDays of every entry; 0: the server's (30 Pro, 7 free)
	GraphNever   bool   // isGraphLocked is always false

	// Precedence where the spec is silent (401 for a bad key always comes
	// before 429: a revoked key is no key with a budget).
	BadBeforeAuth bool // a malformed request is a 400 before its key is looked at
	BadBeforePro  bool // a free key's malformed tracked-videos request is a 400, not a 403
	// RateFirst: 429 before 400 and 403. Else those answer first (and a
	// request answered 400 or 403 still counts when its window has room:
	// every request of a key counts, whatever its answer).
	RateFirst bool

	// Rate accounting.
	Shared      bool // feed and tracked videos share one budget of 20
	VideosLimit int  // the tracked-videos budget when not shared; 0: none
	HealthKey   string
	// HealthCounted: a health check with a valid key counts against the
	// feed's budget (and may be answered 429).
	HealthCounted bool
	// HealthBody: a health body that is not a JSON object is a 400 (else
	// any body is accepted, as the server does).
	HealthBody bool
	RetryAfter string // exact, padded (a few seconds more), date (an HTTP-date after the Date header)
	RetryPad   int

	// Framing.
	Framing     string // length, chunked, gzip (when the client accepts it)
	ContentType string // the media type of 200 answers
	Headers     bool   // X-Request-Id, Cache-Control and API-Version on every answer
	Close       bool   // Connection: close on every answer

	// Heavy worlds (heavy.go).
	Titles             string // server, long (300+ characters), unicode, long-unicode
	EntryChannelEvents bool   // a VideoEntry's events include its channel's channel-level events
	HourlySamples      bool   // statSamples hourly over the last 30 days
}

// The values drawn from, in words (the first entry of most lists is the
// simulator's own choice).
var (
	vocabularies  = []string{"snake", "upper", "camel", "kebab", "reason", "status", "dotted", "generic", "synonyms", "uri", "empty"}
	messages      = []string{"server", "empty", "generic", "long", "non-ascii"}
	detailStyles  = []string{"server", "minimal", "list", "map", "text", "null"}
	challenges    = []string{`Bearer realm="api"`, "Bearer", `Bearer realm="tcm", error="invalid_token"`}
	keyOrders     = []string{"server", "sorted", "reversed", "hashed"}
	indents       = []string{"", "  ", "    ", "\t"}
	escapes       = []string{"minimal", "html", "ascii", "slash"}
	cursorFormats = []string{"server", "hex", "base64", "decimal", "long", "short", "prefixed", "unicode"}
	cursorUnknown = []string{"reject", "first"}
	badLimits     = []string{"reject", "one", "default"}
	videoOrders   = []string{"request", "reversed", "sorted"}
	healthKeys    = []string{"none", "optional", "required"}
	retryForms    = []string{"exact", "padded", "date"}
	framings      = []string{"length", "chunked", "gzip"}
	contentTypes  = []string{"application/json", "application/json; charset=utf-8", "application/json;charset=UTF-8", "application/vnd.tcm+json"}
	prefixes      = []string{"tcm", "sk", "live", "api", "k1", "tcmkit"}
	idStyles      = []string{"server", "bare", "upper", "uuid"}
)

// New derives the draw of n. The same n gives the same draw, on every
// machine and in every version that keeps these lists. Each dimension
// draws from its own sequence, seeded by n and the dimension's name, so a
// dimension added (anywhere, one line) leaves every other choice of every
// draw as it was (TestDrawsArePinned).
func New(n uint64) Draw {
	d, _ := newDraw(n)
	return d
}

// newDraw is New, and the names of the dimensions it drew.
func newDraw(n uint64) (Draw, []string) {
	r := &dims{n: n}
	d := Draw{N: n}

	d.Seed = int64(r.dim("seed").Uint32())
	d.Channels = oneOf(r, "channels", 2, 3, 4, 6, 9, 12, 16, 20)
	d.History = oneOf(r, "history", 24*time.Hour, 3*24*time.Hour, 7*24*time.Hour, 14*24*time.Hour, 30*24*time.Hour)
	d.Start = oneOf(r, "start", simulator.DefaultStart, time.Date(2025, 6, 15, 9, 30, 0, 0, time.UTC), time.Date(2026, 3, 29, 0, 59, 0, 0, time.UTC), time.Date(2028, 2, 29, 23, 0, 0, 0, time.UTC))
	d.EdgeRate = oneOf(r, "edge rate", 0, 0, 0.05, 0.2, 0.5, 1)
	d.KeyPrefix = oneOf(r, "key prefix", prefixes...)
	d.Growth = oneOf(r, "growth", 0, 0, 250*time.Millisecond, time.Second, 2*time.Second)

	d.Vocabulary = oneOf(r, "vocabulary", vocabularies...)
	d.Message = oneOf(r, "message", messages...)
	d.Details = oneOf(r, "details", detailStyles...)
	d.ErrorExtras = r.oneIn("error extras", 2)
	d.ProblemJSON = r.oneIn("problem json", 4)
	d.Challenge = oneOf(r, "challenge", challenges...)

	d.KeyOrder = oneOf(r, "key order", keyOrders...)
	d.Indent = oneOf(r, "indent", indents...)
	d.Spaced = r.oneIn("spaced", 2)
	d.CRLF = r.oneIn("crlf", 4)
	d.Newline = r.oneIn("newline", 2)
	d.Escape = oneOf(r, "escape", escapes...)

	d.ExtraPage = r.oneIn("extra page", 2)
	d.ExtraEvent = r.oneIn("extra event", 2)
	d.ExtraEntry = r.oneIn("extra entry", 2)
	d.ExtraVideos = r.oneIn("extra videos", 2)
	d.ExtraHealth = r.oneIn("extra health", 2)
	d.ChannelVideoNull = r.oneIn("channel video null", 3)
	d.IDs = oneOf(r, "ids", idStyles...)

	d.Cursor = oneOf(r, "cursor", cursorFormats...)
	d.UnknownCursor = oneOf(r, "unknown cursor", cursorUnknown...)
	d.BadLimit = oneOf(r, "bad limit", badLimits...)

	d.LenientType = r.oneIn("lenient type", 2)
	d.StrictBody = r.oneIn("strict body", 3)
	d.VideoOrder = oneOf(r, "video order", videoOrders...)
	d.EntryEvents = oneOf(r, "entry events", "newest", "oldest")
	d.EntrySamples = oneOf(r, "entry samples", "oldest", "newest")
	d.WindowDays = oneOf(r, "window days", 0, 0, 1, 14, 90, 365)
	d.GraphNever = r.oneIn("graph never", 3)

	d.BadBeforeAuth = r.oneIn("bad before auth", 3)
	d.BadBeforePro = r.oneIn("bad before pro", 2)
	d.RateFirst = r.oneIn("rate first", 2)

	d.Shared = r.oneIn("shared", 2)
	d.VideosLimit = oneOf(r, "videos limit", 20, 20, 10, 30, 60, 0)
	d.HealthKey = oneOf(r, "health key", healthKeys...)
	d.HealthCounted = d.HealthKey != "none" && r.oneIn("health counted", 2)
	d.HealthBody = r.oneIn("health body", 3)
	d.RetryAfter = oneOf(r, "retry after", retryForms...)
	if d.RetryAfter == "padded" {
		d.RetryPad = oneOf(r, "retry pad", 1, 2, 5, 30)
	}

	d.Framing = oneOf(r, "framing", framings...)
	d.ContentType = oneOf(r, "content type", contentTypes...)
	d.Headers = r.oneIn("headers", 2)
	d.Close = r.oneIn("close", 4)

	d.Titles = titleStyles[0]
	if r.oneIn("heavy titles", 2) { // heavy titles cost every page: half the draws
		d.Titles = oneOf(r, "titles", titleStyles[1:]...)
	}
	d.EntryChannelEvents = r.oneIn("entry channel events", 2)
	d.HourlySamples = r.oneIn("hourly samples", 4)
	return d, r.names
}

// dims gives each dimension of a draw its own random sequence, seeded by
// the draw's number and the dimension's name; names lists the names asked
// for, so that a test can tell no two dimensions share one.
type dims struct {
	n     uint64
	names []string
}

// dim is the sequence of one dimension.
func (r *dims) dim(name string) *rand.Rand {
	r.names = append(r.names, name)
	h := fnv.New64a()
	h.Write([]byte(name))
	return rand.New(rand.NewPCG(r.n, h.Sum64()))
}

// oneIn is true one time in k.
func (r *dims) oneIn(name string, k int) bool { return r.dim(name).IntN(k) == 0 }

// oneOf picks one of list for the dimension name.
func oneOf[T any](r *dims, name string, list ...T) T { return list[r.dim(name).IntN(len(list))] }

// String lists every choice of the draw, one "dimension: value" a line.
func (d Draw) String() string {
	var b strings.Builder
	line := func(name, format string, args ...any) {
		fmt.Fprintf(&b, "  %-15s "+format+"\n", append([]any{name + ":"}, args...)...)
	}
	yes := func(v bool, y, n string) string {
		if v {
			return y
		}
		return n
	}
	fmt.Fprintf(&b, "conforming draw %d:\n", d.N)
	line("world", "seed %d, %d channels, %s of history, start %s, edge rate %g, key prefix %q", d.Seed, d.Channels, days(d.History), d.Start.Format(time.RFC3339), d.EdgeRate, d.KeyPrefix)
	line("live growth", "%s", yes(d.Growth > 0, fmt.Sprintf("a manual clock moves %s with every API request", d.Growth), "none beyond the clock"))
	line("error codes", "%s (401 missing key: %q, 429: %q)", d.Vocabulary, d.code(401, simulator.CodeMissingKey), d.code(429, simulator.CodeRateLimited))
	line("messages", "%s", d.Message)
	line("details", "%s", d.Details)
	line("error extras", "%s", yes(d.ErrorExtras, "status and requestId in every ErrorBody", "none"))
	line("error type", "%s", yes(d.ProblemJSON, "application/problem+json", "as 200 answers"))
	line("401 challenge", "WWW-Authenticate: %s", d.Challenge)
	line("key order", "%s", d.KeyOrder)
	line("layout", "%s", d.layout())
	line("escaping", "%s", d.Escape)
	line("extra fields", "%s", d.extras())
	line("channel events", "%s", yes(d.ChannelVideoNull, `carry "video": null`, "carry no video member"))
	line("ids", "%s (event evt_0123456789abcdef: %q)", d.IDs, d.id("evt_0123456789abcdef"))
	line("cursors", "%s", d.Cursor)
	line("unknown cursor", "%s", map[string]string{"reject": "400, details name cursor", "first": "the first page"}[d.UnknownCursor])
	line("bad limit", "%s", map[string]string{"reject": "400, details name limit", "one": "read as 1", "default": "read as the default (50)"}[d.BadLimit])
	line("videos body", "%s; %s", yes(d.LenientType, "any Content-Type read as JSON", "Content-Type application/json or 400"), yes(d.StrictBody, "members besides videoIds are a 400", "other members ignored"))
	line("videos order", "%s", d.VideoOrder)
	line("entry order", "events %s first, statSamples %s first", d.EntryEvents, d.EntrySamples)
	line("entry window", "historyWindowDays %s, isGraphLocked %s", yes(d.WindowDays > 0, fmt.Sprint(d.WindowDays), "30 Pro / 7 free"), yes(d.GraphNever, "always false", "when the window hides history or the plan is free"))
	line("precedence", "%s", d.precedence())
	line("rate scope", "%s", d.scope())
	line("health", "%s", d.health())
	line("Retry-After", "%s", map[string]string{"exact": "delta-seconds, exactly when the next request passes", "padded": fmt.Sprintf("delta-seconds, %d s more than needed", d.RetryPad), "date": "an HTTP-date, that many seconds after the Date header"}[d.RetryAfter])
	line("framing", "%s, Content-Type %q%s%s", map[string]string{"length": "Content-Length", "chunked": "chunked (no Content-Length)", "gzip": "gzip when the client accepts it, else Content-Length"}[d.Framing], d.ContentType,
		yes(d.Headers, ", X-Request-Id, Cache-Control and API-Version headers", ""), yes(d.Close, ", Connection: close", ""))
	line("titles", "%s", d.titleNote())
	line("heavy", "%s", d.heavyNote())
	return b.String()
}

// Short is the draw on one line, for a banner.
func (d Draw) Short() string {
	return fmt.Sprintf("draw %d: %d channels, %s codes, %s cursors, %s, %s, health key %s, Retry-After %s, %s",
		d.N, d.Channels, d.Vocabulary, d.Cursor, d.precedence(), d.scope(), d.HealthKey, d.RetryAfter, d.Framing)
}

func days(h time.Duration) string {
	return fmt.Sprintf("%d days", int(h/(24*time.Hour)))
}

func (d Draw) layout() string {
	s := "compact"
	if d.Indent != "" {
		s = fmt.Sprintf("indented by %q", d.Indent)
		if d.CRLF {
			s += " with CRLF line breaks"
		}
	} else if d.Spaced {
		s += ", spaced"
	}
	if d.Newline {
		s += ", trailing line break"
	}
	return s
}

func (d Draw) extras() string {
	var parts []string
	for _, e := range []struct {
		on   bool
		name string
	}{{d.ExtraPage, "feed pages"}, {d.ExtraEvent, "events"}, {d.ExtraEntry, "VideoEntries"}, {d.ExtraVideos, "videos answers"}, {d.ExtraHealth, "health"}} {
		if e.on {
			parts = append(parts, e.name)
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return "in " + strings.Join(parts, ", ")
}

func (d Draw) precedence() string {
	order := "401"
	if d.BadBeforeAuth {
		order = "400 (malformed request) → 401"
	}
	gate := "403 → 400"
	if d.BadBeforePro {
		gate = "400 → 403"
	}
	if d.RateFirst {
		order += " → 429 → " + gate
	} else {
		order += " → " + gate + " → 429"
	}
	return order + "; a 400 or 403 of a valid key counts too"
}

func (d Draw) scope() string {
	switch {
	case d.Shared:
		return "feed and tracked videos share 20 a minute"
	case d.VideosLimit == 0:
		return "feed 20 a minute; tracked videos unlimited"
	}
	return fmt.Sprintf("feed 20 a minute; tracked videos %d a minute, apart", d.VideosLimit)
}

func (d Draw) health() string {
	s := map[string]string{"none": "no key needed, a key sent is ignored", "optional": "no key needed, a key sent must be valid (else 401)", "required": "a valid key required (else 401)"}[d.HealthKey]
	if d.HealthCounted {
		s += "; counted against the feed's budget"
	}
	if d.HealthBody {
		return s + "; a body that is not a JSON object is a 400"
	}
	return s + "; any body accepted"
}
