package oracle

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tcmkit/tcmkit/schemas/catalogue"
	"github.com/tcmkit/tcmkit/suites/client"
)

const (
	pro     = "tcm_PROPROPROPROPROPRO1234"
	free    = "tcm_FREEFREEFREEFREEFRE567"
	revoked = "tcm_REVOKEDREVOKEDREVOKE89"
)

var t0 = time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)

// world is a test's oracle on a clock the test moves.
type world struct {
	o   *Oracle
	now time.Time
	seq int
	// released: the keys' ownerships to give back (Oracle.Own)
	released map[string]func()
}

func newWorld() *world {
	w := &world{now: t0}
	w.o = New(Options{
		Keys:      Keys{Pro: []string{pro}, Free: []string{free}, Revoked: []string{revoked}, Prefix: "tcm", Invented: func(id string) bool { return strings.Contains(id, "~") }},
		Exclusive: true,
		Now:       func() time.Time { return w.now },
		Frozen:    func(a, b time.Time) bool { return a.Equal(b) },
	})
	return w
}

// ex is one exchange of a test: the request, the status, headers and
// body, and how long the test's clock moves before it.
type ex struct {
	req    client.Request
	status int
	header http.Header
	body   string
	wait   time.Duration
	// out: how long before it was judged the request was sent (the clock
	// moved while it was out)
	out time.Duration
	// do, when set, makes the step no exchange: what a sequence tells
	// the oracle between two (Oracle.Own)
	do func(w *world)
}

func retryAfter(v string) http.Header {
	return http.Header{"Content-Type": {"application/json"}, "Retry-After": {v}}
}

// burstAfter is a burst that begins after a wait.
func burstAfter(key string, n int, wait time.Duration) []ex {
	b := burst(key, n)
	b[0].wait = wait
	return b
}

// burst is n feed requests of a key admitted, a second apart.
func burst(key string, n int) []ex {
	var out []ex
	for i := range n {
		out = append(out, ex{req: feed(fmt.Sprintf("n=%d", i+1), key), status: 200, body: page(""), wait: time.Second})
	}
	return out
}

// walksOf is n walks of two pages (a first page, its cursor's last page)
// of the same two events, a second apart, then more first pages.
func walksOf(key string, n, more int) []ex {
	var out []ex
	for i := range n {
		c := fmt.Sprintf("c%d", i)
		out = append(out,
			ex{req: feed("limit=1", key), status: 200, body: page(c, ev("e1", ms(1), "v1")), wait: time.Second},
			ex{req: feed("cursor="+c+"&limit=1", key), status: 200, body: page("", ev("e0", ms(2), "v1")), wait: 500 * time.Millisecond})
	}
	for range more {
		out = append(out, ex{req: feed("limit=1", key), status: 200, body: page("cz", ev("e1", ms(1), "v1")), wait: time.Second})
	}
	return out
}

// halfSecondApart is n feed requests of a key admitted half a second apart.
func halfSecondApart(key string, n int) []ex {
	b := burst(key, n)
	for i := range b {
		b[i].wait = 500 * time.Millisecond
	}
	return b
}

// threeSecondsApart is n feed requests of a key admitted 3 s apart, as a
// bucket of 20 a minute refills.
func threeSecondsApart(key string, n int) []ex {
	b := burst(key, n)
	for i := range b {
		b[i].wait = 3 * time.Second
	}
	return b
}

// afterWait begins exchanges after a wait.
func afterWait(xs []ex, d time.Duration) []ex {
	xs[0].wait = d
	return xs
}

// sentClose is n feed requests sent a quarter second apart, each answered
// later than the one before: their answers 1.75 s apart.
func sentClose(key string, n int) []ex {
	var out []ex
	for i := range n {
		out = append(out, ex{req: feed(fmt.Sprintf("n=%d", i+1), key), status: 200, body: page(""), wait: 1750 * time.Millisecond, out: time.Duration(i) * 1500 * time.Millisecond})
	}
	return out
}

func (w *world) judge(e ex) []Problem {
	if e.do != nil {
		e.do(w)
		return nil
	}
	w.now = w.now.Add(e.wait)
	w.seq++
	answered := w.now
	w.now = w.now.Add(-e.out)
	w.o.Sending(e.req, w.seq)
	w.now = answered
	h := e.header
	if h == nil {
		h = http.Header{"Content-Type": {"application/json"}}
	}
	return w.o.Judge(&client.Response{Request: e.req, Status: e.status, Header: h, Body: []byte(e.body), Seq: w.seq, Sent: w.now.Add(-e.out)})
}

func feed(query, key string) client.Request {
	r := client.Request{Method: "GET", Path: "/api/public-feed", Query: query}
	if key != "" {
		r.Auth = "Bearer " + key
	}
	return r
}

func videos(body, key string) client.Request {
	r := client.Request{Method: "POST", Path: "/api/public/videos", Body: []byte(body), ContentType: "application/json"}
	if key != "" {
		r.Auth = "Bearer " + key
	}
	return r
}

func health(key string) client.Request {
	r := client.Request{Method: "POST", Path: "/api/public/health", Body: []byte("{}"), ContentType: "application/json"}
	if key != "" {
		r.Auth = "Bearer " + key
	}
	return r
}

const channel = `{"id":"ch1","platformChannelId":"UC1","title":"Chan","thumbnailUrl":"https://i.example/c.jpg"}`
const channel2 = `{"id":"ch2","platformChannelId":"UC2","title":"Other","thumbnailUrl":null}`

// ev is a title_changed event of video v at ms.
func ev(id string, ms int64, v string) string {
	return evOn(id, ms, v, channel, "Old", "New")
}

func evOn(id string, ms int64, v, ch, old, new string) string {
	return fmt.Sprintf(`{"id":%q,"createdAt":%d,"channel":%s,"type":"title_changed","video":{"platformVideoId":%q,"currentTitle":%q,"currentThumbnailUrl":"https://i.example/%s.jpg","publishedAt":1700000000000},"oldTitle":%q,"newTitle":%q}`,
		id, ms, ch, v, new, v, old, new)
}

// videoEv is an event of type typ of video v at ms, with its extra fields.
func videoEv(id string, ms int64, v, typ, extra string) string {
	return fmt.Sprintf(`{"id":%q,"createdAt":%d,"channel":%s,"type":%q,"video":{"platformVideoId":%q,"currentTitle":"T","currentThumbnailUrl":"https://i.example/%s.jpg","publishedAt":1700000000000},%s}`,
		id, ms, channel, typ, v, v, extra)
}

// channelEv is a channel-level event of type typ, with its extra fields.
func channelEv(id, typ, extra string) string {
	return fmt.Sprintf(`{"id":%q,"createdAt":%d,"channel":%s,"type":%q,%s}`, id, ms(30), channel, typ, extra)
}

// publishedEv is a video_published event of video v at ms.
func publishedEv(id string, ms int64, v string) string {
	return fmt.Sprintf(`{"id":%q,"createdAt":%d,"channel":%s,"type":"video_published","video":{"platformVideoId":%q,"currentTitle":"T","currentThumbnailUrl":"https://i.example/%s.jpg","publishedAt":1700000000000,"isMembersOnly":false,"viewCount":1,"likeCount":null,"commentCount":0}}`,
		id, ms, channel, v, v)
}

func page(next string, events ...string) string {
	n := "null"
	if next != "" {
		n = fmt.Sprintf("%q", next)
	}
	return fmt.Sprintf(`{"events":[%s],"nextCursor":%s}`, strings.Join(events, ","), n)
}

func entry(v string, ch string, title string) string {
	return fmt.Sprintf(`{"video":{"platformVideoId":%q,"currentTitle":%q,"currentThumbnailUrl":"https://i.example/v.jpg","publishedAt":1700000000000,"isMembersOnly":false,"viewCount":1,"likeCount":null,"commentCount":0,"channel":%s},"firstSeenAt":1700000000000,"historyWindowDays":30,"isGraphLocked":false,"events":[],"statSamples":[]}`, v, title, ch)
}

func videosAnswer(missing []string, entries ...string) string {
	m := "[]"
	if len(missing) > 0 {
		m = `["` + strings.Join(missing, `","`) + `"]`
	}
	return fmt.Sprintf(`{"videos":[%s],"missingVideoIds":%s}`, strings.Join(entries, ","), m)
}

// ids21 are 21 ids, one past the bound, as JSON strings.
const ids21 = `"1","2","3","4","5","6","7","8","9","10","11","12","13","14","15","16","17","18","19","20","21"`

const errBody = `{"error":"unauthorized","message":"no"}`

// ms is the epoch milliseconds of t0 less n minutes.
func ms(n int) int64 { return t0.Add(-time.Duration(n) * time.Minute).UnixMilli() }

// breaks are, for each rule, exchanges of which the last breaks it (the
// ones before set the scene and break nothing).
var breaks = []struct {
	id   catalogue.ID
	name string
	xs   []ex
}{
	{catalogue.HealthOK, "health without a key failing", []ex{{req: health(""), status: 503, body: errBody}}},
	{catalogue.HealthOK, "health with the Pro key refused", []ex{{req: health(pro), status: 401, body: errBody}}},
	{catalogue.HealthOK, "health's 200 not ok", []ex{{req: health(""), status: 200, body: `{"status":"up"}`}}},
	{catalogue.AuthMissing, "the key in the query", []ex{{req: feed("api_key="+pro, ""), status: 200, body: page("")}}},
	{catalogue.AuthMissing, "the key in a cookie", []ex{{req: client.Request{Method: "GET", Path: "/api/public-feed", Header: []client.Field{{Name: "Cookie", Value: "key=" + pro}}}, status: 200, body: page("")}}},
	{catalogue.AuthMissing, "a data leak on another path", []ex{
		{req: feed("", pro), status: 200, body: page("", ev("e1", ms(1), "v1"))},
		{req: client.Request{Method: "GET", Path: "/api/public-feed/"}, status: 200, body: page("", ev("e1", ms(1), "v1"))}}},
	{catalogue.AuthMalformed, "a malformed key and a bad limit answered 400 for the key (its details name no parameter)", []ex{{req: client.Request{Method: "GET", Path: "/api/public-feed", Query: "limit=0", Auth: "Bearer nokey"}, status: 400, body: `{"error":"invalid_request","message":"malformed credentials"}`}}},
	{catalogue.AuthMalformed, "Basic", []ex{{req: client.Request{Method: "GET", Path: "/api/public-feed", Auth: "Basic " + pro}, status: 200, body: page("")}}},
	{catalogue.AuthMalformed, "an extra token", []ex{{req: client.Request{Method: "GET", Path: "/api/public-feed", Auth: "Bearer " + pro + " x"}, status: 200, body: page("")}}},
	{catalogue.AuthUnknown, "a look-alike", []ex{{req: feed("", strings.Replace(pro, "O", "О", 1)), status: 200, body: page("")}}},
	{catalogue.AuthUnknown, "429 for an unknown key", []ex{{req: feed("", "tcm_nosuchkeynosuchkey"), status: 429, header: http.Header{"Content-Type": {"application/json"}, "Retry-After": {"5"}}, body: errBody}}},
	{catalogue.AuthRevoked, "revoked served", []ex{{req: videos(`{"videoIds":["a"]}`, revoked), status: 200, body: videosAnswer([]string{"a"})}}},
	{catalogue.AuthValid, "the Pro key refused", []ex{{req: feed("", pro), status: 401, body: errBody}}},
	{catalogue.AuthValid, "two spaces after the scheme accepted on one operation only", []ex{
		{req: client.Request{Method: "GET", Path: "/api/public-feed", Auth: "Bearer  " + pro}, status: 200, body: page("")},
		{req: client.Request{Method: "POST", Path: "/api/public/videos", Auth: "Bearer  " + pro, Body: []byte(`{"videoIds":["a"]}`), ContentType: "application/json"}, status: 401, body: errBody}}},
	// requests that mean what the plain one means, by the standards
	{catalogue.AuthValid, "the free key's scheme in lower case refused on tracked videos, its plain form 403 (the form, not the plan)", []ex{
		{req: videos(`{"videoIds":["a"]}`, free), status: 403, body: errBody},
		{req: client.Request{Method: "POST", Path: "/api/public/videos", Auth: "bearer " + free, Body: []byte(`{"videoIds":["a"]}`), ContentType: "application/json"}, status: 401, body: errBody}}},
	{catalogue.ProGate, "the free key refused 401 on tracked videos in every form (the plan, not the form)", []ex{
		{req: client.Request{Method: "POST", Path: "/api/public/videos", Auth: "bearer " + free, Body: []byte(`{"videoIds":["a"]}`), ContentType: "application/json"}, status: 401, body: errBody}}},
	{catalogue.AuthValid, "the scheme in lower case refused (RFC 9110 §11.1)", []ex{{req: client.Request{Method: "GET", Path: "/api/public-feed", Auth: "bearer " + pro}, status: 401, body: errBody}}},
	{catalogue.AuthValid, "whitespace around the field value refused (RFC 9112 §5.1)", []ex{{req: client.Request{Method: "GET", Path: "/api/public-feed", Auth: " Bearer " + pro + "\t"}, status: 401, body: errBody}}},
	{catalogue.AuthValid, "the header name in lower case refused (RFC 9110 §5.1)", []ex{{req: client.Request{Method: "GET", Path: "/api/public-feed", Header: []client.Field{{Name: "authorization", Value: "Bearer " + pro}}}, status: 401, body: errBody}}},
	{catalogue.AuthValid, "HTTP/1.0 refused the key (RFC 9112 §2.3)", []ex{{req: client.Request{Method: "GET", Path: "/api/public-feed", Auth: "Bearer " + pro, Framing: client.Framing{HTTP10: true}}, status: 401, body: errBody}}},
	{catalogue.AuthValid, "HEAD of the feed refuses the Pro key (RFC 9110 §9.3.2)", []ex{{req: client.Request{Method: "HEAD", Path: "/api/public-feed", Auth: "Bearer " + pro}, status: 401}}},
	{catalogue.AuthMissing, "HEAD of the feed served without a key (RFC 9110 §9.3.2)", []ex{{req: client.Request{Method: "HEAD", Path: "/api/public-feed"}, status: 200}}},
	{catalogue.FeedLimit, "the parameter's name percent-encoded (%6Cimit=5) read as no limit (RFC 3986 §6.2.2.2)", []ex{{req: feed("%6Cimit=5", pro), status: 200, body: page("c", manyEvents(50)...)}}},
	{catalogue.FeedLimit, "the value percent-encoded (limit=%35) refused (RFC 3986 §2.3)", []ex{{req: feed("limit=%35", pro), status: 400, body: `{"error":"x","message":"y","details":"limit"}`}}},
	{catalogue.VideosBadBody, "a chunked body refused as invalid (RFC 9112 §7.1)", []ex{{req: client.Request{Method: "POST", Path: "/api/public/videos", Auth: "Bearer " + pro, Body: []byte(`{"videoIds":["a","b"]}`), ContentType: "application/json", Framing: client.Framing{Chunked: true}}, status: 400, body: errBody}}},
	{catalogue.VideosServed, "a media type with a parameter, in upper case, refused (RFC 9110 §8.3.1, RFC 8259 §11)", []ex{{req: client.Request{Method: "POST", Path: "/api/public/videos", Auth: "Bearer " + pro, Body: []byte(`{"videoIds":["a","b"]}`), ContentType: "Application/JSON; charset=utf-8"}, status: 415, body: errBody}}},
	{catalogue.VideosServed, "an id written in JSON escapes not read as the id (RFC 8259 §7)", []ex{
		{req: feed("", pro), status: 200, body: page("", ev("e1", ms(1), "v1"))},
		{req: videos(`{"videoIds":["\u0076\u0031"]}`, pro), status: 200, body: videosAnswer([]string{"v1"})}}},
	{catalogue.ProGate, "free served videos", []ex{{req: videos(`{"videoIds":["a"]}`, free), status: 200, body: videosAnswer([]string{"a"})}}},
	{catalogue.ProGate, "the feed 403", []ex{{req: feed("", free), status: 403, body: errBody}}},
	{catalogue.FeedPageSchema, "a 500 on the feed", []ex{{req: feed("", pro), status: 500, body: errBody}}},
	{catalogue.FeedPageSchema, "no nextCursor", []ex{{req: feed("", pro), status: 200, body: `{"events":[]}`}}},
	{catalogue.FeedOrder, "oldest first", []ex{{req: feed("", pro), status: 200, body: page("", ev("e1", ms(5), "v1"), ev("e2", ms(1), "v1"))}}},
	{catalogue.FeedOrder, "a cursor page newer than the page before", []ex{
		{req: feed("limit=2", pro), status: 200, body: page("c1", ev("e1", ms(1), "v1"), ev("e2", ms(5), "v1"))},
		{req: feed("cursor=c1&limit=2", pro), status: 200, body: page("", ev("e3", ms(3), "v1"))}}},
	{catalogue.FeedPageDefault, "fewer than 50 and a cursor to more events", []ex{
		{req: feed("", pro), status: 200, body: page("c", ev("e1", ms(1), "v1"))},
		{req: feed("cursor=c", pro), status: 200, body: page("", ev("e0", ms(5), "v1"))}}},
	{catalogue.FeedPageDefault, "fewer than 50 and a cursor after a whole walk of 50", []ex{
		{req: feed("limit=200", pro), status: 200, body: page("", manyEvents(50)...)},
		{req: feed("", pro), status: 200, body: page("c", ev("m0", ms(0), "v1"))}}},
	{catalogue.FeedCursorEnd, "a short first page whose cursor leads to an empty end", []ex{
		{req: feed("", pro), status: 200, body: page("c1", ev("e1", ms(5), "v1"))},
		{req: feed("cursor=c1", pro), status: 200, body: page("")}}},
	{catalogue.FeedPageDefault, "a short first page that ends the feed, shown no end by a later whole walk", []ex{
		{req: feed("", pro), status: 200, body: page("", ev("e1", ms(1), "v1"), ev("e2", ms(2), "v1"))},
		{req: feed("limit=200", pro), status: 200, body: page("", ev("e1", ms(1), "v1"), ev("e2", ms(2), "v1"), ev("e3", ms(3), "v1"))}}},
	{catalogue.FeedLimit, "limit=2 gives 3", []ex{{req: feed("limit=2", pro), status: 200, body: page("", ev("e1", ms(1), "v1"), ev("e2", ms(2), "v1"), ev("e3", ms(3), "v1"))}}},
	{catalogue.FeedLimit, "limit=5 refused", []ex{{req: feed("limit=5", free), status: 400, body: `{"error":"bad","message":"limit","details":{"limit":"5"}}`}}},
	{catalogue.FeedLimit, "limit=010 read as octal", []ex{{req: feed("limit=010", pro), status: 200, body: page("c", manyEvents(8)...)}}},
	{catalogue.FeedLimitCap, "a limit of 25 digits refused", []ex{{req: feed("limit=1000000000000000000000000", free), status: 400, body: `{"error":"bad","message":"limit","details":["limit"]}`}}},
	{catalogue.FeedLimitCap, "limit=201 refused", []ex{{req: feed("limit=201", pro), status: 400, body: `{"error":"bad","message":"limit","details":["limit"]}`}}},
	{catalogue.FeedLimitCap, "limit=abc gives 201", []ex{{req: feed("limit=abc", pro), status: 200, body: page("", manyEvents(201)...)}}},
	{catalogue.FeedCursorWalk, "a repeat", []ex{
		{req: feed("limit=2", pro), status: 200, body: page("c1", ev("e1", ms(1), "v1"), ev("e2", ms(5), "v1"))},
		{req: feed("cursor=c1&limit=2", pro), status: 200, body: page("", ev("e2", ms(5), "v1"), ev("e3", ms(6), "v1"))}}},
	{catalogue.FeedCursorWalk, "a cursor that skips (it moved by the limit asked, not the page's size)", []ex{
		{req: feed("limit=200", pro), status: 200, body: page("", ev("e1", ms(1), "v1"), ev("e2", ms(2), "v1"), ev("e3", ms(3), "v1"), ev("e4", ms(4), "v1"))},
		{req: feed("limit=1", pro), status: 200, body: page("c", ev("e1", ms(1), "v1"))},
		{req: feed("cursor=c&limit=1", pro), status: 200, body: page("d", ev("e3", ms(3), "v1"))}}},
	{catalogue.FeedCursorWalk, "a cursor by time that loses an event tied with the page's last", []ex{
		{req: feed("limit=200", pro), status: 200, body: page("", ev("e1", ms(1), "v1"), ev("e2", ms(2), "v1"), ev("e3", ms(2), "v1"), ev("e4", ms(3), "v1"))},
		{req: feed("limit=2", pro), status: 200, body: page("c", ev("e1", ms(1), "v1"), ev("e2", ms(2), "v1"))},
		{req: feed("cursor=c&limit=2", pro), status: 200, body: page("", ev("e4", ms(3), "v1"))}}},
	{catalogue.FeedCursorWalk, "events new at the head behind a cursor (an offset)", []ex{
		{req: feed("limit=1", pro), status: 200, body: page("c1", ev("e1", ms(5), "v1"))},
		{req: feed("cursor=c1&limit=1", pro), status: 200, body: page("", ev("e2", ms(1), "v1")), wait: time.Hour}}},
	{catalogue.FeedOrder, "an event newer than the head behind a cursor, the clock moving, but created before the walk's first page came (its Date)", []ex{
		{req: feed("limit=1", pro), status: 200, header: http.Header{"Content-Type": {"application/json"}, "Date": {t0.Format(http.TimeFormat)}}, body: page("c1", ev("e1", ms(5), "v1"))},
		{req: feed("cursor=c1&limit=1", pro), status: 200, body: page("", ev("e2", ms(1), "v1")), wait: time.Hour}}},
	{catalogue.FeedOrder, "an event newer than the head behind a cursor, the clock still", []ex{
		{req: feed("limit=1", pro), status: 200, body: page("c1", ev("e1", ms(5), "v1"))},
		{req: feed("cursor=c1&limit=1", pro), status: 200, body: page("", ev("e2", ms(1), "v1"))}}},
	{catalogue.FeedCursorEnd, "a cursor that loops", []ex{
		{req: feed("limit=1", pro), status: 200, body: page("c1", ev("e1", ms(5), "v1"))},
		{req: feed("cursor=c1&limit=1", pro), status: 200, body: page("c1", ev("e1", ms(5), "v1"))}}},
	{catalogue.FeedCursorWalk, "a handed-out cursor refused", []ex{
		{req: feed("limit=1", pro), status: 200, body: page("c1", ev("e1", ms(5), "v1"))},
		{req: feed("cursor=c1&limit=1", pro), status: 400, body: `{"error":"bad","message":"cursor","details":{"cursor":"bad"}}`}}},
	{catalogue.FeedCursorWalk, "a gap in a later walk", []ex{
		{req: feed("limit=200", pro), status: 200, body: page("", ev("e3", ms(1), "v1"), ev("e2", ms(2), "v1"), ev("e1", ms(3), "v1"))},
		{req: feed("limit=1", pro), status: 200, body: page("c", ev("e3", ms(1), "v1"))},
		{req: feed("cursor=c&limit=1", pro), status: 200, body: page("", ev("e1", ms(3), "v1"))}}},
	{catalogue.FeedCursorWalk, "a free walk that drops a shared channel's event", []ex{
		{req: feed("limit=200", pro), status: 200, body: page("", ev("p3", ms(1), "v1"), ev("p2", ms(2), "v1"), ev("p1", ms(3), "v1"))},
		{req: feed("limit=200", free), status: 200, body: page("", evOn("f3", ms(1), "v1", channel, "Old", "New"), evOn("f1", ms(3), "v1", channel, "Old", "New"))}}},
	{catalogue.FeedCursorEnd, "an empty string", []ex{{req: feed("", pro), status: 200, body: page("")[:len(page(""))-5] + `""}`}}},
	{catalogue.FeedCursorEnd, "a cursor to an empty end", []ex{
		{req: feed("limit=1", pro), status: 200, body: page("c1", ev("e1", ms(5), "v1"))},
		{req: feed("cursor=c1&limit=1", pro), status: 200, body: page("")}}},
	{catalogue.FeedCursorEnd, "a short last page whose cursor leads to an empty page that hands it out again", []ex{
		{req: feed("limit=2", pro), status: 200, body: page("c1", ev("e1", ms(1), "v1"), ev("e2", ms(2), "v1"))},
		{req: feed("cursor=c1&limit=2", pro), status: 200, body: page("c2", ev("e3", ms(3), "v1"))},
		{req: feed("cursor=c2&limit=2", pro), status: 200, body: page("c2")}}},
	{catalogue.FeedCursorEnd, "a full last page above events a walk showed", []ex{
		{req: feed("limit=200", pro), status: 200, body: page("", ev("e1", ms(1), "v1"), ev("e2", ms(2), "v1"), ev("e3", ms(3), "v1"))},
		{req: feed("limit=2", pro), status: 200, body: page("", ev("e1", ms(1), "v1"), ev("e2", ms(2), "v1"))}}},
	{catalogue.FeedLimit, "a short last page above events a walk showed", []ex{
		{req: feed("limit=200", pro), status: 200, body: page("", ev("e1", ms(1), "v1"), ev("e2", ms(2), "v1"), ev("e3", ms(3), "v1"))},
		{req: feed("limit=3", pro), status: 200, body: page("", ev("e1", ms(1), "v1"), ev("e2", ms(2), "v1"))}}},
	{catalogue.FeedLimit, "a short page whose cursor, handed out first at another limit, leads on to events", []ex{
		{req: feed("limit=1", pro), status: 200, body: page("c1", ev("e1", ms(1), "v1"))},
		{req: feed("cursor=c1&limit=1", pro), status: 200, body: page("c2", ev("e2", ms(2), "v1"))},
		{req: feed("cursor=c2&limit=1", pro), status: 200, body: page("c3", ev("e3", ms(3), "v1"))},
		{req: feed("cursor=c2&limit=2", pro), status: 200, body: page("c3", ev("e3", ms(3), "v1"))},
		{req: feed("cursor=c3&limit=1", pro), status: 200, body: page("", ev("e4", ms(4), "v1"))}}},
	{catalogue.FeedPageDefault, "a short default page that ends above events a walk showed", []ex{
		{req: feed("limit=200", pro), status: 200, body: page("", manyEvents(60)...)},
		{req: feed("", pro), status: 200, body: page("", manyEvents(30)...)}}},
	{catalogue.FeedTenant, "another key's cursor shows its events", []ex{
		{req: feed("limit=200", free), status: 200, body: page("", evOn("f1", ms(1), "fv1", channel2, "a", "b"))},
		{req: feed("limit=200", pro), status: 200, body: page("", ev("p1", ms(0), "v1"))},
		{req: feed("limit=1", free), status: 200, body: page("fc", evOn("f1", ms(1), "fv1", channel2, "a", "b"))},
		{req: feed("cursor=fc&limit=1", pro), status: 200, body: page("", evOn("f1", ms(1), "fv1", channel2, "a", "b"))}}},
	{catalogue.FeedBadParam, "details naming nothing", []ex{{req: feed("limit=abc", pro), status: 400, body: `{"error":"bad","message":"no"}`}}},
	{catalogue.FeedBadParam, "one of two refused parameters named", []ex{
		{req: feed("limit=abc", pro), status: 400, body: `{"error":"bad","message":"no","details":["limit"]}`},
		{req: feed("limit=abc&cursor=zzz", pro), status: 400, body: `{"error":"bad","message":"no","details":["cursor"]}`}}},
	{catalogue.EventSchema, "no newTitle", []ex{{req: feed("", pro), status: 200, body: page("", strings.Replace(ev("e1", ms(1), "v1"), `"newTitle"`, `"x"`, 1))}}},
	{catalogue.EventTypes, "an unknown type", []ex{{req: feed("", pro), status: 200, body: page("", strings.Replace(ev("e1", ms(1), "v1"), `"title_changed"`, `"title_rewritten"`, 1))}}},
	{catalogue.EventChannelNoVideo, "a title change without video", []ex{{req: feed("", pro), status: 200, body: page("", `{"id":"e1","createdAt":1764244800000,"channel":`+channel+`,"type":"title_changed","oldTitle":"a","newTitle":"b"}`)}}},
	{catalogue.TimestampEpochMs, "seconds in firstSeenAt", []ex{{req: videos(`{"videoIds":["v1"]}`, pro), status: 200, body: videosAnswer(nil, strings.Replace(entry("v1", channel, "t"), `"firstSeenAt":1700000000000`, `"firstSeenAt":1700000000`, 1))}}},
	{catalogue.CountNonnegOrNull, "a negative count", []ex{{req: videos(`{"videoIds":["v1"]}`, pro), status: 200, body: videosAnswer(nil, strings.Replace(entry("v1", channel, "t"), `"viewCount":1`, `"viewCount":-1`, 1))}}},
	{catalogue.URIFormat, "not a URI", []ex{{req: videos(`{"videoIds":["v1"]}`, pro), status: 200, body: videosAnswer(nil, strings.Replace(entry("v1", channel, "t"), `"https://i.example/v.jpg"`, `"not a uri"`, 1))}}},
	{catalogue.EventIDUnique, "twice in a page", []ex{{req: feed("", pro), status: 200, body: page("", ev("e1", ms(1), "v1"), ev("e1", ms(2), "v1"))}}},
	{catalogue.EventIDUnique, "an id reused for another event", []ex{
		{req: feed("limit=200", pro), status: 200, body: page("", ev("e1", ms(5), "v1"))},
		{req: feed("limit=199", pro), status: 200, body: page("", evOn("e1", ms(1), "v2", channel, "x", "y"))}}},
	{catalogue.FeedCursorWalk, "the key's own cursor, handed out by walks of two page sizes, refused", []ex{
		{req: feed("limit=2", pro), status: 200, body: page("c2", ev("e1", ms(1), "v1"), ev("e2", ms(2), "v1"))},
		{req: feed("limit=1", pro), status: 200, body: page("c1", ev("e1", ms(1), "v1"))},
		{req: feed("cursor=c1&limit=1", pro), status: 200, body: page("c2", ev("e2", ms(2), "v1"))},
		{req: feed("cursor=c2&limit=5", pro), status: 400, body: `{"error":"bad","message":"cursor","details":["cursor"]}`}}},
	{catalogue.EventChangeDiffers, "a title rewritten to itself", []ex{{req: feed("", pro), status: 200, body: page("", evOn("e1", ms(1), "v1", channel, "Same", "Same"))}}},
	{catalogue.EventChangeDiffers, "a channel renamed to its name, in a VideoEntry", []ex{{req: videos(`{"videoIds":["v1"]}`, pro), status: 200,
		body: videosAnswer(nil, strings.Replace(entry("v1", channel, "t"), `"events":[]`, `"events":[`+channelEv("e1", "channel_renamed", `"oldChannelTitle":"A","newChannelTitle":"A"`)+`]`, 1))}}},
	{catalogue.EventChangeDiffers, "a subscriber count that crossed nothing", []ex{{req: feed("", pro), status: 200, body: page("", channelEv("e1", "subscriber_change", `"oldSubscriberCount":1000,"newSubscriberCount":1e3`))}}},
	{catalogue.EventAbVariants, "a rotation of one title", []ex{{req: feed("", pro), status: 200, body: page("", videoEv("e1", ms(1), "v1", "title_ab_test", `"titles":["A","A"]`))}}},
	{catalogue.EventAbVariants, "a winner that was no variant", []ex{{req: feed("", pro), status: 200, body: page("", videoEv("e1", ms(1), "v1", "thumbnail_ab_test_concluded", `"thumbnailUrls":["https://i.example/a.jpg","https://i.example/b.jpg"],"finalThumbnailUrl":"https://i.example/c.jpg"`))}}},
	{catalogue.EventMembersSwitched, "two switches to members-only in a row on a page", []ex{{req: feed("", pro), status: 200,
		body: page("", videoEv("e1", ms(1), "v1", "members_only_changed", `"isMembersOnly":true`), ev("e2", ms(2), "v1"), videoEv("e3", ms(3), "v1", "members_only_changed", `"isMembersOnly":true`))}}},
	{catalogue.EventMembersSwitched, "two switches to public in a row across a cursor", []ex{
		{req: feed("limit=1", pro), status: 200, body: page("c", videoEv("e1", ms(1), "v1", "members_only_changed", `"isMembersOnly":false`))},
		{req: feed("cursor=c&limit=2", pro), status: 200, body: page("", ev("e2", ms(2), "v2"), videoEv("e3", ms(3), "v1", "members_only_changed", `"isMembersOnly":false`))}}},
	{catalogue.EventPublishedOnce, "a video published twice", []ex{{req: feed("", pro), status: 200,
		body: page("", publishedEv("e1", ms(1), "v1"), publishedEv("e2", ms(9), "v1"))}}},
	{catalogue.VideosIDsMin, "empty served", []ex{{req: videos(`{"videoIds":[]}`, pro), status: 200, body: videosAnswer(nil)}}},
	{catalogue.VideosIDsMin, "one refused", []ex{{req: videos(`{"videoIds":["a"]}`, pro), status: 400, body: errBody}}},
	{catalogue.VideosIDsMax, "21 served", []ex{{req: videos(`{"videoIds":["1","2","3","4","5","6","7","8","9","10","11","12","13","14","15","16","17","18","19","20","21"]}`, pro), status: 200, body: videosAnswer(nil)}}},
	// a valid body at no bound refused: the rule of what sets it apart
	{catalogue.VideosIDsMin, "two ids refused", []ex{{req: videos(`{"videoIds":["abcdef","ghijkl"]}`, pro), status: 400, body: errBody}}},
	{catalogue.VideosIDsMax, "19 ids refused", []ex{{req: videos(`{"videoIds":["id1","id2","id3","id4","id5","id6","id7","id8","id9","id10","id11","id12","id13","id14","id15","id16","id17","id18","id19"]}`, pro), status: 400, body: errBody}}},
	{catalogue.VideosIDLen, "one id refused once one was served", []ex{
		{req: videos(`{"videoIds":["abcdef"]}`, pro), status: 200, body: videosAnswer([]string{"abcdef"})},
		{req: videos(`{"videoIds":["ghijkl"]}`, pro), status: 400, body: errBody}}},
	{catalogue.VideosBadBody, "a valid body padded with whitespace refused", []ex{{req: videos(" \n{\"videoIds\":[\"abcdef\"]}\t ", pro), status: 400, body: errBody}}},
	{catalogue.VideosIDsMax, "an id twice refused", []ex{{req: videos(`{"videoIds":["a","b","a"]}`, pro), status: 400, body: errBody}}},
	{catalogue.VideosIDLen, "33 served", []ex{{req: videos(`{"videoIds":["`+strings.Repeat("x", 33)+`"]}`, pro), status: 200, body: videosAnswer([]string{strings.Repeat("x", 33)})}}},
	{catalogue.VideosBadBody, "a member in another case", []ex{{req: videos(`{"VideoIds":["a"]}`, pro), status: 200, body: videosAnswer([]string{"a"})}}},
	{catalogue.VideosBadBody, "trailing data", []ex{{req: videos(`{"videoIds":["a"]} x`, pro), status: 200, body: videosAnswer([]string{"a"})}}},
	{catalogue.VideosPartition, "videoIds given twice, the answer of neither reading (RFC 8259 §4)", []ex{{req: videos(`{"videoIds":["a"],"videoIds":["b"]}`, pro), status: 200, body: videosAnswer([]string{"c"})}}},
	{catalogue.VideosIDsMin, "videoIds given twice, the invalid reading answered (RFC 8259 §4)", []ex{{req: videos(`{"videoIds":["a"],"videoIds":[]}`, pro), status: 200, body: videosAnswer(nil)}}},
	{catalogue.VideosIDsMax, "videoIds given twice, the first checked and the last, of 21 ids, answered", []ex{{req: videos(`{"videoIds":["a"],"videoIds":[`+ids21+`]}`, pro), status: 200, body: videosAnswer(strings.Split(strings.ReplaceAll(ids21, `"`, ""), ","))}}},
	{catalogue.VideosIDsMax, "videoIds given twice, the first checked and the last, of 21 ids, answered cut to 20", []ex{{req: videos(`{"videoIds":["a"],"videoIds":[`+ids21+`]}`, pro), status: 200, body: videosAnswer(strings.Split(strings.ReplaceAll(ids21, `"`, ""), ",")[:20])}}},
	{catalogue.VideosIDsMax, "videoIds given twice, the last checked and the first, of 21 ids, answered", []ex{{req: videos(`{"videoIds":[`+ids21+`],"videoIds":["a"]}`, pro), status: 200, body: videosAnswer(strings.Split(strings.ReplaceAll(ids21, `"`, ""), ","))}}},
	{catalogue.VideosBadBody, "videoIds given twice, neither reading valid", []ex{{req: videos(`{"videoIds":[],"videoIds":[1]}`, pro), status: 200, body: videosAnswer(nil)}}},
	{catalogue.VideosBadBody, "form encoded", []ex{{req: client.Request{Method: "POST", Path: "/api/public/videos", Auth: "Bearer " + pro, Body: []byte("videoIds=a"), ContentType: "application/x-www-form-urlencoded"}, status: 200, body: videosAnswer([]string{"a"})}}},
	{catalogue.VideosEntrySchema, "no missingVideoIds", []ex{{req: videos(`{"videoIds":["a"]}`, pro), status: 200, body: `{"videos":[]}`}}},
	{catalogue.VideosServed, "a video of the feed missing", []ex{
		{req: feed("", pro), status: 200, body: page("", ev("e1", ms(1), "v1"))},
		{req: videos(`{"videoIds":["v1"]}`, pro), status: 200, body: videosAnswer([]string{"v1"})}}},
	{catalogue.FeedCursorEnd, "a page of events whose nextCursor is the cursor that asked for it (a walk that never ends)", []ex{
		{req: feed("limit=1", pro), status: 200, body: page("c1", ev("e1", ms(1), "v1"))},
		{req: feed("cursor=c1&limit=1", pro), status: 200, body: page("c1", ev("e2", ms(2), "v1"))}}},
	{catalogue.FeedCursorEnd, "a walk that ends above events a walk from the same first page showed", []ex{
		{req: feed("limit=2", pro), status: 200, body: page("c1", ev("e1", ms(1), "v1"), ev("e2", ms(2), "v1"))},
		{req: feed("cursor=c1&limit=2", pro), status: 200, body: page("", ev("e3", ms(3), "v1"), ev("e4", ms(4), "v1"))},
		{req: feed("cursor=c1&limit=1", pro), status: 200, body: page("", ev("e3", ms(3), "v1"))}}},
	{catalogue.VideosServed, "a video of the feed, of a channel the other key's feed shows too, served, then listed missing when asked twice", []ex{
		{req: feed("", pro), status: 200, body: page("", ev("e1", ms(1), "v1"))},
		{req: feed("", free), status: 200, body: page("", ev("e2", ms(2), "v2"))},
		{req: videos(`{"videoIds":["v1"]}`, pro), status: 200, body: videosAnswer(nil, entry("v1", channel, "New"))},
		{req: videos(`{"videoIds":["v1","~x","v1"]}`, pro), status: 200, body: videosAnswer([]string{"v1", "~x"})}}},
	{catalogue.VideosServed, "a title the feed superseded, the clock still", []ex{
		{req: feed("", pro), status: 200, body: page("", ev("e1", ms(1), "v1"))},
		{req: videos(`{"videoIds":["v1"]}`, pro), status: 200, body: videosAnswer(nil, entry("v1", channel, "Old"))}}},
	{catalogue.VideosServed, "a small valid body refused with 413", []ex{{req: videos(`{"videoIds":["a"]}`, pro), status: 413, body: errBody}}},
	{catalogue.ErrorBody, "a body of 12 KiB refused with 413, no ErrorBody", []ex{{req: videos(`{"videoIds":["a"]`+strings.Repeat(" ", 12<<10)+`}`, pro), status: 413, body: `{"status":413}`}}},
	{catalogue.VideosMissing, "an id in the other case than the feed's served as its video (a case-insensitive collation)", []ex{
		{req: feed("", pro), status: 200, body: page("", ev("e1", ms(1), "Vid1"))},
		{req: videos(`{"videoIds":["vID1"]}`, pro), status: 200, body: videosAnswer(nil, entry("vID1", channel, "New"))}}},
	{catalogue.VideosMissing, "an id in fullwidth letters served as the feed's video (NFKC)", []ex{
		{req: feed("", pro), status: 200, body: page("", ev("e1", ms(1), "Vid1"))},
		{req: videos(`{"videoIds":["Ｖｉｄ１"]}`, pro), status: 200, body: videosAnswer(nil, entry("Ｖｉｄ１", channel, "New"))}}},
	{catalogue.VideosMissing, "an invented id served", []ex{{req: videos(`{"videoIds":["~no~such"]}`, pro), status: 200, body: videosAnswer(nil, entry("~no~such", channel, "t"))}}},
	{catalogue.VideosPartition, "an id in neither list", []ex{{req: videos(`{"videoIds":["a","b"]}`, pro), status: 200, body: videosAnswer([]string{"a"})}}},
	{catalogue.VideosPartition, "a case-folded id", []ex{{req: videos(`{"videoIds":["V1"]}`, pro), status: 200, body: videosAnswer(nil, entry("v1", channel, "t"))}}},
	{catalogue.VideosTenant, "the other account's video", []ex{
		{req: feed("limit=200", free), status: 200, body: page("", evOn("f1", ms(1), "fv1", channel2, "a", "b"))},
		{req: feed("limit=200", pro), status: 200, body: page("", ev("p1", ms(1), "v1"))},
		{req: videos(`{"videoIds":["fv1"]}`, pro), status: 200, body: videosAnswer(nil, entry("fv1", channel2, "b"))}}},
	{catalogue.RateLimit429, "a throttle of 503", []ex{{req: feed("", pro), status: 503, header: http.Header{"Content-Type": {"application/json"}, "Retry-After": {"5"}}, body: errBody}}},
	{catalogue.RateLimit429, "a 429 that carries events", append(append([]ex{
		{req: feed("", free), status: 200, body: page("", ev("evt-00001", ms(1), "v1"))}}, burst(pro, 20)...),
		ex{req: feed("limit=3", pro), status: 429, header: retryAfter("5"), body: `{"error":"x","message":"y","details":{"last":"evt-00001"}}`})},
	{catalogue.RateRetryAfter, "no Retry-After", append(burst(pro, 20), ex{req: feed("", pro), status: 429, body: errBody})},
	{catalogue.RateRetryAfter, "still 429 after waiting it", append(burst(pro, 20), ex{req: feed("limit=1", pro), status: 429, header: retryAfter("5"), body: errBody},
		ex{req: feed("limit=2", pro), status: 429, header: retryAfter("5"), body: errBody, wait: 5 * time.Second})},
	{catalogue.RateAllows20, "429 on a key whose window the run has held a minute", []ex{
		{req: feed("n=0", pro), status: 200, body: page("")},
		{req: feed("", pro), status: 429, header: retryAfter("5"), body: errBody, wait: 62 * time.Second}}},
	{catalogue.RatePerKey, "429 for another key's traffic", append([]ex{{req: feed("n=0", pro), status: 200, body: page(""), wait: 0}},
		append(burstAfter(free, 20, 62*time.Second), ex{req: feed("", pro), status: 429, header: retryAfter("5"), body: errBody})...)},
	{catalogue.RateLimit429, "41 admitted in a minute", burst(pro, 41)},
	{catalogue.RateLimit429, "41 admitted in a minute: first pages, cursor pages and last pages alike", walksOf(pro, 20, 1)},
	{catalogue.RateLimit429, "41 sent within 11 s, their answers spread over 72 s (counted from their send times)", sentClose(pro, 41)},
	{catalogue.RateLimit429, "throttled, then served at once under another form of the key", append(burst(pro, 20),
		ex{req: feed("", pro), status: 429, header: retryAfter("40"), body: errBody},
		ex{req: client.Request{Method: "GET", Path: "/api/public-feed", Auth: "bearer " + pro}, status: 200, body: page("")})},
	{catalogue.RateLimit429, "throttled, then served at once under another form, both written as header lines", append(burst(pro, 20),
		ex{req: client.Request{Method: "GET", Path: "/api/public-feed", Header: []client.Field{{Name: "authorization", Value: "Bearer " + pro}}}, status: 429, header: retryAfter("40"), body: errBody},
		ex{req: client.Request{Method: "GET", Path: "/api/public-feed", Header: []client.Field{{Name: "authorization", Value: "BEARER " + pro}}}, status: 200, body: page("")})},
	{catalogue.RateAllows20, "429 after 18 feed requests and health without a key (no request of the key: it does not count)", slices.Concat([]ex{
		{req: feed("n=0", pro), status: 200, body: page("")}},
		burstAfter(pro, 18, 62*time.Second),
		[]ex{{req: health(""), status: 200, body: `{"status":"ok"}`},
			{req: feed("", pro), status: 429, header: retryAfter("5"), body: errBody}})},
	{catalogue.RateLimit429, "throttled, then served at once: a limiter whose state was cleared", append(burst(pro, 20),
		ex{req: feed("limit=1", pro), status: 429, header: retryAfter("40"), body: errBody},
		ex{req: feed("limit=2", pro), status: 200, body: page("")})},
	{catalogue.RateLimit429, "21 admitted in the 56 s after a 429 (more than any limiter frees in a minute)", append(append(burst(pro, 20),
		ex{req: feed("limit=1", pro), status: 429, header: retryAfter("40"), body: errBody}),
		afterWait(halfSecondApart(pro, 21), 45*time.Second)...)},
	{catalogue.ErrorBody, "message a number", []ex{{req: feed("", ""), status: 401, body: `{"error":"x","message":5}`}}},
	{catalogue.ContentTypeJSON, "text/html for Accept text/html", []ex{{req: client.Request{Method: "GET", Path: "/api/public-feed", Auth: "Bearer " + pro, Accept: "text/html"}, status: 200, header: http.Header{"Content-Type": {"text/html"}}, body: page("")}}},
}

func manyEvents(n int) []string {
	var out []string
	for i := range n {
		out = append(out, ev(fmt.Sprintf("m%d", i), ms(i), "v1"))
	}
	return out
}

// brokenLast plays a break's scene: the exchanges before the last break
// nothing, and the last breaks something (its problems, returned).
func brokenLast(t *testing.T, w *world, id catalogue.ID, xs []ex) []Problem {
	t.Helper()
	var last []Problem
	for i, x := range xs {
		ps := w.judge(x)
		if i < len(xs)-1 && len(ps) > 0 {
			t.Fatalf("exchange %d of the scene breaks a rule: %s", i, describe(ps))
		}
		last = ps
	}
	if len(last) == 0 {
		t.Fatalf("no problem, want %s", id)
	}
	return last
}

func TestEachRuleCatchesItsBreak(t *testing.T) {
	for _, b := range breaks {
		t.Run(string(b.id)+"/"+b.name, func(t *testing.T) {
			last := brokenLast(t, newWorld(), b.id, b.xs)
			for _, p := range last {
				if p.Requirement != b.id {
					t.Errorf("blames %s, want %s alone: %s", p.Requirement, b.id, describe(last))
				}
				if p.Request == "" || len(p.Evidence) == 0 {
					t.Errorf("a problem without its request or evidence: %+v", p)
				}
			}
		})
	}
}

func describe(ps []Problem) string {
	var b strings.Builder
	for _, p := range ps {
		fmt.Fprintf(&b, "\n  %s %s %s: want %s; got %s", p.Requirement, p.Request, p.Pointer, p.Expected, p.Actual)
	}
	return b.String()
}

// TestEveryMustHasAnOracleRule holds every must requirement of the
// catalogue to a rule of the oracle and to a break above that fires it.
func TestEveryMustHasAnOracleRule(t *testing.T) {
	cat, err := catalogue.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range cat.OfKind(catalogue.Must) {
		if r.Kind != catalogue.Must {
			continue
		}
		if !slices.ContainsFunc(Rules, func(x Rule) bool { return x.Requirement == r.ID }) {
			t.Errorf("%s: no rule of the oracle", r.ID)
		}
		if !slices.ContainsFunc(breaks, func(b struct {
			id   catalogue.ID
			name string
			xs   []ex
		}) bool {
			return b.id == r.ID
		}) {
			t.Errorf("%s: no break proves its rule (breaks in oracle_test.go)", r.ID)
		}
	}
}

// conforming are scenes where the contract is silent or allows a choice:
// no exchange of them may break a rule.
var conforming = []struct {
	name string
	xs   []ex
}{
	{"a video of the feed, of a channel the other key's feed shows too, listed missing (it may have come from the other's feed) and never served", []ex{
		{req: feed("", pro), status: 200, body: page("", ev("e1", ms(1), "v1"))},
		{req: feed("", free), status: 200, body: page("", ev("e2", ms(2), "v2"))},
		{req: videos(`{"videoIds":["v1","~x","v1"]}`, pro), status: 200, body: videosAnswer([]string{"v1", "~x"})}}},
	{"two walks from the same first page, at two page sizes, the second page's tie in another order", []ex{
		{req: feed("limit=2", pro), status: 200, body: page("c1", ev("e1", ms(1), "v1"), ev("e2", ms(2), "v1"))},
		{req: feed("cursor=c1&limit=2", pro), status: 200, body: page("", ev("e3", ms(3), "v1"), ev("e4", ms(3), "v1"))},
		{req: feed("cursor=c1&limit=1", pro), status: 200, body: page("c2", ev("e4", ms(3), "v1"))},
		{req: feed("cursor=c2&limit=1", pro), status: 200, body: page("", ev("e3", ms(3), "v1"))}}},
	{"a video of the feed served, then served again when asked twice", []ex{
		{req: feed("", pro), status: 200, body: page("", ev("e1", ms(1), "v1"))},
		{req: videos(`{"videoIds":["v1"]}`, pro), status: 200, body: videosAnswer(nil, entry("v1", channel, "New"))},
		{req: videos(`{"videoIds":["v1","~x","v1"]}`, pro), status: 200, body: videosAnswer([]string{"~x"}, entry("v1", channel, "New"))}}},
	{"an empty feed, then a whole walk of the events that arrived since", []ex{
		{req: feed("limit=3", pro), status: 200, body: page("")},
		{req: feed("limit=200", pro), status: 200, body: page("", ev("e1", ms(1), "v1"), ev("e2", ms(2), "v1"))}}},
	{"a short last page, then a whole walk with newer events at its head only", []ex{
		{req: feed("", pro), status: 200, body: page("", ev("e1", ms(2), "v1"), ev("e2", ms(3), "v1"))},
		{req: feed("limit=200", pro), status: 200, body: page("", ev("e0", ms(1), "v1"), ev("e1", ms(2), "v1"), ev("e2", ms(3), "v1"))}}},
	{"a 429 to a request sent before the Retry-After had passed, answered after", append(burst(pro, 20),
		ex{req: feed("limit=1", pro), status: 429, header: retryAfter("5"), body: errBody},
		ex{req: feed("limit=2", pro), status: 429, header: retryAfter("5"), body: errBody, wait: 6 * time.Second, out: 2 * time.Second})},
	{"a 429 read only after the clock moved a minute, then a request served at once (the clock moved while the 429 was out)", append(burst(pro, 20),
		ex{req: feed("limit=1", pro), status: 429, header: retryAfter("60"), body: errBody, wait: time.Minute, out: time.Minute},
		ex{req: feed("limit=2", pro), status: 200, body: page("")})},
	{"a 429 read only after the clock moved a minute, then a request served at once, on a key whose first minute is long past", append(afterWait(burst(free, 20), 2*time.Minute),
		ex{req: feed("limit=1", free), status: 429, header: retryAfter("60"), body: errBody, wait: time.Minute, out: time.Minute},
		ex{req: feed("limit=2", free), status: 200, body: page("")})},
	{"a body of 12 KiB refused with 413 in an ErrorBody (RFC 9110 §15.5.14)", []ex{{req: videos(`{"videoIds":["a"]`+strings.Repeat(" ", 12<<10)+`}`, pro), status: 413, body: errBody}}},
	{"a malformed key and a bad limit answered 400 for the limit (which error wins is open)", []ex{{req: client.Request{Method: "GET", Path: "/api/public-feed", Query: "limit=0", Auth: "Bearer nokey"}, status: 400, body: `{"error":"invalid_query","message":"bad","details":{"invalid":["limit"]}}`}}},
	{"two videos whose ids differ only in case, each served as itself", []ex{
		{req: feed("", pro), status: 200, body: page("", ev("e1", ms(1), "Vid1"))},
		{req: videos(`{"videoIds":["vID1"]}`, pro), status: 200, body: videosAnswer(nil, strings.Replace(entry("vID1", channel, "New"), "1700000000000", "1700000000001", 1))}}},
	{"a tie spread over pages of one event", []ex{
		{req: feed("limit=200", pro), status: 200, body: page("", ev("e1", ms(1), "v1"), ev("e2", ms(2), "v1"), ev("e3", ms(2), "v1"), ev("e4", ms(2), "v1"))},
		{req: feed("limit=2", pro), status: 200, body: page("c", ev("e1", ms(1), "v1"), ev("e2", ms(2), "v1"))},
		{req: feed("cursor=c&limit=1", pro), status: 200, body: page("d", ev("e3", ms(2), "v1"))},
		{req: feed("cursor=d&limit=1", pro), status: 200, body: page("", ev("e4", ms(2), "v1"))}}},
	{"health with a bad key refused or served", []ex{
		{req: health("tcm_nosuchkeynosuchkey"), status: 401, body: errBody},
		{req: health("nope"), status: 200, body: `{"status":"ok"}`}}},
	{"events whose change the contract reads as a change", []ex{{req: feed("", pro), status: 200, body: page("",
		videoEv("e3", ms(1), "v1", "title_ab_test_concluded", `"titles":["A","B"],"finalTitle":"B"`),
		videoEv("e4", ms(2), "v1", "title_ab_test", `"titles":["A","B","A"]`),
		videoEv("e5", ms(3), "v2", "members_only_changed", `"isMembersOnly":false`),
		videoEv("e6", ms(4), "v2", "members_only_changed", `"isMembersOnly":true`),
		videoEv("e7", ms(5), "v2", "members_only_changed", `"isMembersOnly":false`),
		videoEv("e8", ms(6), "v3", "members_only_changed", `"isMembersOnly":true`),
		videoEv("e9", ms(6), "v3", "members_only_changed", `"isMembersOnly":true`),
		channelEv("e1", "subscriber_change", `"oldSubscriberCount":null,"newSubscriberCount":1000`),
		channelEv("e2", "subscriber_change", `"oldSubscriberCount":2000,"newSubscriberCount":1000`))}}},
	{"members switches a cut walk hides between, and one video published under two ids at one time", []ex{
		{req: feed("limit=1", pro), status: 200, body: page("c", videoEv("e1", ms(1), "v1", "members_only_changed", `"isMembersOnly":false`))},
		{req: feed("limit=1", pro), status: 200, body: page("", videoEv("e3", ms(3), "v1", "members_only_changed", `"isMembersOnly":false`))},
		{req: feed("limit=5", pro), status: 200, body: page("", publishedEv("p1", ms(9), "v9"))},
		{req: feed("limit=6", pro), status: 200, body: page("", publishedEv("p2", ms(9), "v9"))}}},
	{"health that wants a key", []ex{{req: health(""), status: 401, body: errBody}, {req: health(pro), status: 200, body: `{"status":"ok"}`}}},
	{"a key throttled at the start of a run by what was sent before it", []ex{{req: feed("", pro), status: 429, header: retryAfter("30"), body: errBody}}},
	{"health with the Pro key limited", []ex{{req: health(pro), status: 429, header: retryAfter("3"), body: errBody}}},
	{"a bad limit clamped or refused naming it", []ex{
		{req: feed("limit=0", pro), status: 200, body: page("")},
		{req: feed("limit=abc", pro), status: 400, body: `{"error":"","message":"","details":"limit"}`}}},
	{"limit=05 read as 5, ignored, or refused", []ex{
		{req: feed("limit=05", pro), status: 200, body: page("c", manyEvents(5)...)},
		{req: feed("limit=%2B5", pro), status: 200, body: page("d", manyEvents(50)...)},
		{req: feed("limit=005", free), status: 400, body: `{"error":"","message":"","details":"limit"}`}}},
	{"a free account that sees a shared channel's history from a later time", []ex{
		{req: feed("limit=200", pro), status: 200, body: page("", ev("p3", ms(1), "v1"), ev("p2", ms(2), "v1"), ev("p1", ms(3), "v1"))},
		{req: feed("limit=200", free), status: 200, body: page("", evOn("f3", ms(1), "v1", channel, "Old", "New"), evOn("f2", ms(2), "v1", channel, "Old", "New"))}}},
	{"an unknown cursor answered with the first page", []ex{{req: feed("cursor=zzz", pro), status: 200, body: page("", ev("e1", ms(1), "v1"))}}},
	{"two bad parameters, one named (neither refused alone)", []ex{{req: feed("limit=0&cursor=zzz", pro), status: 400, body: `{"error":"x","message":"y","details":["cursor"]}`}}},
	{"which error wins: 400 for a bad key and a bad body", []ex{{req: videos(`{}`, ""), status: 400, body: errBody}}},
	{"the free key's bad body: 400 or 403", []ex{
		{req: videos(`{}`, free), status: 400, body: errBody},
		{req: videos(`[]`, free), status: 403, body: errBody}}},
	{"two spaces after the scheme refused on both operations", []ex{
		{req: client.Request{Method: "GET", Path: "/api/public-feed", Auth: "Bearer  " + pro}, status: 401, body: errBody},
		{req: client.Request{Method: "POST", Path: "/api/public/videos", Auth: "Bearer  " + pro, Body: []byte(`{"videoIds":["a"]}`), ContentType: "application/json"}, status: 401, body: errBody}}},
	{"requests written otherwise that mean the same, served alike", []ex{
		{req: client.Request{Method: "GET", Path: "/api/public-feed", Auth: "bearer " + pro, Query: "%6Cimit=%32"}, status: 200, body: page("c", manyEvents(2)...)},
		{req: client.Request{Method: "GET", Path: "/api/public-feed", Query: "limit=2", Header: []client.Field{{Name: "authorization", Value: " BEARER " + pro + " "}, {Name: "X-Forwarded-For", Value: "127.0.0.1"}}, Framing: client.Framing{HTTP10: true, Absolute: true}}, status: 200, body: page("c", manyEvents(2)...)},
		{req: client.Request{Method: "POST", Path: "/api/public/videos", Auth: "Bearer " + pro, Body: []byte(` {"videoIds" : [ "\u0061" ] } `), ContentType: "Application/JSON; charset=UTF-8", Framing: client.Framing{Chunked: true}}, status: 200, body: videosAnswer([]string{"a"})}}},
	{"a chunked body refused for its framing (411), HEAD not implemented or served without content", []ex{
		{req: client.Request{Method: "POST", Path: "/api/public/videos", Auth: "Bearer " + pro, Body: []byte(`{"videoIds":["a"]}`), ContentType: "application/json", Framing: client.Framing{Chunked: true}}, status: 411, body: errBody},
		{req: client.Request{Method: "POST", Path: "/api/public/health", Body: []byte(`{}`), ContentType: "application/json", Framing: client.Framing{Chunked: true}}, status: 411, body: errBody},
		{req: client.Request{Method: "HEAD", Path: "/api/public-feed", Auth: "Bearer " + pro}, status: 405, header: http.Header{"Content-Type": {"text/plain"}}},
		{req: client.Request{Method: "HEAD", Path: "/api/public-feed", Auth: "Bearer " + pro}, status: 200},
		{req: client.Request{Method: "HEAD", Path: "/api/public-feed"}, status: 401}}},
	{"a media type the contract does not show: 415 or served", []ex{
		{req: client.Request{Method: "POST", Path: "/api/public/videos", Auth: "Bearer " + pro, Body: []byte(`{"videoIds":["a"]}`), ContentType: "text/plain"}, status: 415, body: errBody},
		{req: client.Request{Method: "POST", Path: "/api/public/videos", Auth: "Bearer " + pro, Body: []byte(`{"videoIds":["a"]}`)}, status: 200, body: videosAnswer([]string{"a"})}}},
	{"a byte order mark, and a repeated member, either reading", []ex{
		{req: videos("\ufeff"+`{"videoIds":["a"]}`, pro), status: 400, body: errBody},
		{req: videos(`{"videoIds":["a"],"videoIds":["b"]}`, pro), status: 200, body: videosAnswer([]string{"a"})}}},
	{"videoIds given twice, one reading invalid: the valid one served, or refused (RFC 8259 §4)", []ex{
		{req: videos(`{"videoIds":["a"],"videoIds":[]}`, pro), status: 200, body: videosAnswer([]string{"a"})},
		{req: videos(`{"videoIds":[],"videoIds":["b"]}`, pro), status: 200, body: videosAnswer([]string{"b"})},
		{req: videos(`{"videoIds":["a"],"videoIds":[1]}`, pro), status: 400, body: errBody}}},
	{"an id asked twice, answered once", []ex{{req: videos(`{"videoIds":["a","a"]}`, pro), status: 200, body: videosAnswer([]string{"a"})}}},
	{"a charset on the media type and error strings empty", []ex{{req: feed("", ""), status: 401, header: http.Header{"Content-Type": {"application/problem+json; charset=utf-8"}}, body: `{"error":"","message":""}`}}},
	{"an HTTP-date Retry-After", append(burst(pro, 20), ex{req: feed("", pro), status: 429, header: retryAfter(t0.Add(21 * time.Second).Format(http.TimeFormat)), body: errBody})},
	{"a fixed window: 40 admitted across its edge", append(burst(pro, 20), burst(pro, 20)...)},
	{"tracked videos, health with the key and a 400 counted with the feed: 429 after 17 feed requests", slices.Concat([]ex{
		{req: feed("n=0", pro), status: 200, body: page("")}},
		burstAfter(pro, 17, 62*time.Second),
		[]ex{{req: videos(`{"videoIds":["~x"]}`, pro), status: 200, body: videosAnswer([]string{"~x"})},
			{req: health(pro), status: 200, body: `{"status":"ok"}`},
			{req: videos(`{"videoIds":[]}`, pro), status: 400, body: errBody},
			{req: feed("", pro), status: 429, header: retryAfter("5"), body: errBody}})},
	{"tracked videos, health with the key and a 400 not counted: 20 feed requests pass between them", slices.Concat(
		burst(pro, 5),
		[]ex{{req: videos(`{"videoIds":["~x"]}`, pro), status: 200, body: videosAnswer([]string{"~x"})},
			{req: health(pro), status: 200, body: `{"status":"ok"}`},
			{req: videos(`{"videoIds":[]}`, pro), status: 400, body: errBody}},
		burst(pro, 15),
		[]ex{{req: feed("", pro), status: 429, header: retryAfter("5"), body: errBody},
			{req: health(pro), status: 429, header: retryAfter("5"), body: errBody},
			{req: videos(`{"videoIds":["~x"]}`, pro), status: 200, body: videosAnswer([]string{"~x"})},
			{req: feed("limit=2", pro), status: 429, header: retryAfter("5"), body: errBody}})},
	{"a fixed window that turns over half a second after a 429", append(append(burst(pro, 20),
		ex{req: feed("limit=1", pro), status: 429, header: retryAfter("1"), body: errBody}),
		afterWait(halfSecondApart(pro, 20), 500*time.Millisecond)...)},
	{"a bucket that refills one request every 3 s after a 429", append(append(burst(pro, 20),
		ex{req: feed("limit=1", pro), status: 429, header: retryAfter("3"), body: errBody}),
		threeSecondsApart(pro, 20)...)},
	{"a sliding log: three lockouts, each after waiting its Retry-After", slices.Concat(burst(pro, 20),
		[]ex{{req: feed("limit=1", pro), status: 429, header: retryAfter("41"), body: errBody}}, afterWait(halfSecondApart(pro, 20), 41*time.Second),
		[]ex{{req: feed("limit=1", pro), status: 429, header: retryAfter("51"), body: errBody}}, afterWait(halfSecondApart(pro, 20), 51*time.Second))},
	{"10 walks of two pages in a minute, 20 first pages in the next", append(walksOf(pro, 10, 0), afterWait(walksOf(pro, 0, 20), 45*time.Second)...)},
	{"a title that moved on once the clock moved", []ex{
		{req: feed("", pro), status: 200, body: page("", ev("e1", ms(1), "v1"))},
		{req: videos(`{"videoIds":["v1"]}`, pro), status: 200, body: videosAnswer(nil, entry("v1", channel, "Old")), wait: time.Minute}}},
	{"a title the feed never replaced", []ex{
		{req: feed("", pro), status: 200, body: page("", ev("e1", ms(1), "v1"))},
		{req: videos(`{"videoIds":["v1"]}`, pro), status: 200, body: videosAnswer(nil, entry("v1", channel, "Newer still"))}}},
	{"a new event at the head between two whole walks", []ex{
		{req: feed("limit=200", pro), status: 200, body: page("", ev("e2", ms(2), "v1"), ev("e1", ms(3), "v1"))},
		{req: feed("limit=1", pro), status: 200, body: page("c", ev("e3", ms(1), "v1"))},
		{req: feed("cursor=c&limit=1", pro), status: 200, body: page("d", ev("e2", ms(2), "v1"))},
		{req: feed("cursor=d&limit=1", pro), status: 200, body: page("", ev("e1", ms(3), "v1"))}}},
	{"other methods and paths answered as the target likes", []ex{
		{req: client.Request{Method: "DELETE", Path: "/api/public-feed"}, status: 405, header: http.Header{"Content-Type": {"text/plain"}}, body: "no"},
		{req: client.Request{Method: "GET", Path: "/api/public-feed/"}, status: 404, header: http.Header{"Content-Type": {"text/html"}}, body: "<p>"}}},
	{"the same event in the feed and a VideoEntry, its VideoRef moved on", []ex{
		{req: feed("", pro), status: 200, body: page("", ev("evt-00001", ms(1), "v1"))},
		{req: videos(`{"videoIds":["v1"]}`, pro), status: 200, body: videosAnswer(nil, strings.Replace(entry("v1", channel, "New"), `"events":[]`, `"events":[`+strings.Replace(ev("evt-00001", ms(1), "v1"), `"currentTitle":"New"`, `"currentTitle":"Newest"`, 1)+`]`, 1))}}},
}

func TestConformingAnswersPass(t *testing.T) {
	for _, c := range conforming {
		t.Run(c.name, func(t *testing.T) { breaksNothing(t, newWorld(), c.xs) })
	}
}

// breaksNothing plays a conforming scene: no exchange of it breaks a rule.
func breaksNothing(t *testing.T, w *world, xs []ex) {
	t.Helper()
	for i, x := range xs {
		if ps := w.judge(x); len(ps) > 0 {
			t.Errorf("exchange %d breaks a rule: %s", i, describe(ps))
		}
	}
}

// An id asked twice may be answered once or once per ask, in one list;
// anything else breaks the partition.
func TestPartition(t *testing.T) {
	asked := []string{"a", "~x", "a"}
	for _, tc := range []struct {
		name            string
		served, missing []string
		ok              bool
	}{
		{"once", []string{"a"}, []string{"~x"}, true},
		{"once per ask", []string{"a", "a"}, []string{"~x"}, true},
		{"in both lists", []string{"a"}, []string{"~x", "a"}, false},
		{"more than asked", []string{"a", "a", "a"}, []string{"~x"}, false},
		{"missing not as sent", []string{"a"}, []string{"~X"}, false},
		{"in neither", []string{"a"}, nil, false},
	} {
		if got := partition(asked, tc.served, tc.missing); (got == "") != tc.ok {
			t.Errorf("%s: partition = %q, want ok=%v", tc.name, got, tc.ok)
		}
	}
}

// A cursor that lost an event at a page boundary leaves that page short:
// the skip is the break, not the page's size.
func TestASkipExplainsAShortPage(t *testing.T) {
	w := newWorld()
	var all []Problem
	for _, x := range []ex{
		{req: feed("limit=200", pro), status: 200, body: page("", ev("e1", ms(1), "v1"), ev("e2", ms(2), "v1"), ev("e3", ms(2), "v1"), ev("e4", ms(3), "v1"), ev("e5", ms(4), "v1"))},
		{req: feed("limit=2", pro), status: 200, body: page("c", ev("e1", ms(1), "v1"), ev("e2", ms(2), "v1"))},
		{req: feed("cursor=c&limit=2", pro), status: 200, body: page("d", ev("e4", ms(3), "v1"))},
		{req: feed("cursor=d&limit=2", pro), status: 200, body: page("", ev("e5", ms(4), "v1"))},
	} {
		all = append(all, w.judge(x)...)
	}
	if len(all) == 0 {
		t.Fatal("no problem, want FEED-CURSOR-WALK")
	}
	for _, p := range all {
		if p.Requirement != catalogue.FeedCursorWalk {
			t.Errorf("blames %s, want FEED-CURSOR-WALK alone: %s", p.Requirement, describe(all))
		}
	}
}

// A short page whose cursor led on to more events, its place kept, broke
// its limit, though the walk never reached its end.
func TestAShortPageAWalkWentPastBreaksItsLimit(t *testing.T) {
	w := newWorld()
	var all []Problem
	for _, x := range []ex{
		{req: feed("limit=2", pro), status: 200, body: page("c", ev("e1", ms(1), "v1"), ev("e2", ms(2), "v1"))},
		{req: feed("cursor=c&limit=2", pro), status: 200, body: page("d", ev("e3", ms(3), "v1"))},
		{req: feed("cursor=d&limit=2", pro), status: 200, body: page("f", ev("e4", ms(4), "v1"), ev("e5", ms(5), "v1"))},
	} {
		all = append(all, w.judge(x)...)
	}
	if len(all) != 1 || all[0].Requirement != catalogue.FeedLimit {
		t.Fatalf("want FEED-LIMIT alone, got: %s", describe(all))
	}
}

// A walk whose pages come oldest first breaks FEED-ORDER alone: its members
// switches, read by time, alternate.
func TestMembersSwitchesOfAPageOutOfOrder(t *testing.T) {
	w := newWorld()
	for _, e := range []ex{
		{req: feed("limit=2", pro), status: 200, body: page("c", videoEv("e3", ms(3), "v1", "members_only_changed", `"isMembersOnly":false`), videoEv("e1", ms(1), "v1", "members_only_changed", `"isMembersOnly":true`))},
		{req: feed("cursor=c&limit=2", pro), status: 200, body: page("", videoEv("e5", ms(5), "v1", "members_only_changed", `"isMembersOnly":true`), videoEv("e4", ms(4), "v1", "members_only_changed", `"isMembersOnly":false`))},
	} {
		for _, p := range w.judge(e) {
			if p.Requirement != catalogue.FeedOrder {
				t.Errorf("%s: %s %s", p.Requirement, p.Pointer, p.Actual)
			}
		}
	}
}

// A request sent before a 429 came back may have been decided before it:
// admitted at the same moment, it breaks nothing; sent after the 429 came
// back, at the same moment, it does.
func TestAdmittedAfterA429CountsFromWhenItCameBack(t *testing.T) {
	for _, tc := range []struct {
		name        string
		sentAfter   bool
		wantProblem bool
	}{
		{"sent while the 429 was out", false, false},
		{"sent once the 429 came back", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld()
			for _, x := range burst(pro, 19) {
				if ps := w.judge(x); len(ps) > 0 {
					t.Fatalf("the burst breaks a rule: %s", describe(ps))
				}
			}
			w.now = w.now.Add(time.Second)
			a, b := feed("limit=1", pro), feed("limit=2", pro)
			w.o.Sending(a, 100)
			if !tc.sentAfter {
				w.o.Sending(b, 101)
			}
			var ps []Problem
			ps = append(ps, w.o.Judge(&client.Response{Request: a, Status: 429, Header: retryAfter("40"), Body: []byte(errBody), Seq: 100, Sent: w.now})...)
			if tc.sentAfter {
				w.o.Sending(b, 101)
			}
			ps = append(ps, w.o.Judge(&client.Response{Request: b, Status: 200, Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte(page("")), Seq: 101, Sent: w.now})...)
			if got := len(ps) > 0; got != tc.wantProblem {
				t.Fatalf("problems: %s; want a problem: %v", describe(ps), tc.wantProblem)
			}
			for _, p := range ps {
				if p.Requirement != catalogue.RateLimit429 {
					t.Errorf("blames %s, want RATE-LIMIT-429: %s", p.Requirement, describe(ps))
				}
			}
		})
	}
}

// A limiter that counts a bad credential it served (another case of the
// Pro key, AUTH-UNKNOWN's finding) as the Pro key throttles the key with
// fewer than 20 of its own requests in the minute: no RATE-ALLOWS-20.
func TestBadCredentialServedLeavesTheWindowUnjudged(t *testing.T) {
	w := newWorld()
	other := pro[:4] + strings.ToLower(pro[4:]) // the Pro key, its letters after the prefix in lower case
	xs := append([]ex{{req: feed("first", pro), status: 200, body: page("")}}, afterWait(burst(pro, 10), 2*time.Minute)...)
	for i := range 10 {
		xs = append(xs, ex{req: feed(fmt.Sprintf("m=%d", i), other), status: 200, body: page(""), wait: time.Second})
	}
	xs = append(xs, ex{req: feed("limit=1", pro), status: 429, header: retryAfter("40"), body: errBody})
	var blamed []catalogue.ID
	for _, x := range xs {
		for _, p := range w.judge(x) {
			blamed = append(blamed, p.Requirement)
		}
	}
	if slices.Contains(blamed, catalogue.RateAllows20) || !slices.Contains(blamed, catalogue.AuthUnknown) {
		t.Errorf("blamed %v, want AUTH-UNKNOWN and no RATE-ALLOWS-20", blamed)
	}
}

// A whole walk that ends inside events that share a createdAt, above many
// older events an earlier walk showed, is blamed for both: the events it
// ended above (FEED-CURSOR-END) and the gap it left in the tie
// (FEED-CURSOR-WALK), however many of the former there are.
func TestAWalkEndedInsideATieShowsItsGap(t *testing.T) {
	tie := []string{ev("h", ms(0), "v1"), ev("ta", ms(1), "v1"), ev("tb", ms(1), "v1"), ev("tc", ms(1), "v1")}
	var older []string
	for i := range 25 {
		older = append(older, ev(fmt.Sprintf("o%02d", i), ms(2+i), "v1"))
	}
	w := newWorld()
	if ps := w.judge(ex{req: feed("limit=200", pro), status: 200, body: page("", slices.Concat(tie, older)...)}); len(ps) > 0 {
		t.Fatalf("the first walk breaks a rule: %s", describe(ps))
	}
	ps := w.judge(ex{req: feed("limit=3", pro), status: 200, body: page("", tie[:3]...), wait: time.Second})
	got := map[catalogue.ID]int{}
	for _, p := range ps {
		got[p.Requirement]++
	}
	if got[catalogue.FeedCursorWalk] != 1 || got[catalogue.FeedCursorEnd] == 0 {
		t.Errorf("want the gap in the tie (FEED-CURSOR-WALK, once) and the events below (FEED-CURSOR-END): %s", describe(ps))
	}
}
