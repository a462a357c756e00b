package mutants

import (
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/schemas/catalogue"
	"github.com/tcmkit/tcmkit/schemas/jsondoc"
	"github.com/tcmkit/tcmkit/simulator"
)

// The tests of the mutants judge each one with a small oracle of the
// requirement it breaks: the oracle must pass on the faultless simulator
// and fail with the breaker on. The oracles are deliberately independent
// of the conformance suite (suites/conformance); the kill matrix
// (suites/killmatrix) judges the mutants with the suite itself.

// faultEnv is a simulator with some named faults on.
type faultEnv struct {
	t      *testing.T
	s      *simulator.Server
	keys   simulator.Keys
	faults []string // the faults on, for another server of them
}

// newServer builds a simulator (seed 7) with some mutants on.
func newServer(t *testing.T, cfg simulator.Config, names ...string) *simulator.Server {
	t.Helper()
	layers, err := Layers(names...)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Seed, cfg.Layers = 7, layers
	// Half the default world's channels and a third of its days: the
	// oracles walk whole feeds, and every fault shows in this world too
	// (TestMutantsBreakTheirRequirement).
	cfg.Channels, cfg.History = 6, 10*24*time.Hour
	s, err := simulator.New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// newFaultEnv builds the simulator. Rate limits are off unless limited:
// the oracles of other requirements walk the feed more than 20 times.
func newFaultEnv(t *testing.T, limited bool, faults ...string) *faultEnv {
	t.Helper()
	var cfg simulator.Config
	if !limited {
		cfg.FeedLimit, cfg.VideosLimit = -1, -1
	}
	s := newServer(t, cfg, faults...)
	return &faultEnv{t: t, s: s, keys: s.Seeded(), faults: faults}
}

// faultAnswer is one answer, read once.
type faultAnswer struct {
	status int
	header http.Header
	body   []byte
}

func (a faultAnswer) String() string {
	return fmt.Sprintf("status %d, body %.200s", a.status, a.body)
}

func (a faultAnswer) doc() any {
	doc, _ := jsondoc.Decode(a.body)
	return doc
}

// send makes one request; auth is the whole Authorization value ("": none).
func (e *faultEnv) send(method, target, auth, body string) faultAnswer {
	e.t.Helper()
	var r *http.Request
	if body != "" {
		r = httptest.NewRequest(method, "http://sim.test"+target, strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
	} else {
		r = httptest.NewRequest(method, "http://sim.test"+target, nil)
	}
	if auth != "" {
		r.Header.Set("Authorization", auth)
	}
	w := httptest.NewRecorder()
	e.s.Handler().ServeHTTP(w, r)
	return faultAnswer{status: w.Code, header: w.Header(), body: w.Body.Bytes()}
}

func bearer(key string) string { return "Bearer " + key }

func (e *faultEnv) feed(key, query string) faultAnswer {
	e.t.Helper()
	target := schemas.PathFeed
	if query != "" {
		target += "?" + query
	}
	return e.send(http.MethodGet, target, bearer(key), "")
}

func (e *faultEnv) videos(key string, ids ...string) faultAnswer {
	e.t.Helper()
	if ids == nil {
		ids = []string{}
	}
	raw, _ := json.Marshal(map[string][]string{"videoIds": ids})
	return e.send(http.MethodPost, schemas.PathVideos, bearer(key), string(raw))
}

// faultWalk is a cursor walk of the Pro feed.
type faultWalk struct {
	pages []faultAnswer
	ids   []string
	times []int64
	err   string // why the walk stopped early
	sizes []int
	nexts []string
}

// walk follows nextCursor at a page size ("" = default) for at most
// maxPages pages, detecting cycles.
func (e *faultEnv) walk(limit string, maxPages int) faultWalk {
	e.t.Helper()
	return e.walkAs(e.keys.Pro, limit, maxPages, nil)
}

// walkAs walks the feed of a key; between(n) runs before page n+1 (n>0).
func (e *faultEnv) walkAs(key, limit string, maxPages int, between func(n int)) faultWalk {
	e.t.Helper()
	var w faultWalk
	seen := map[string]bool{}
	cursor := ""
	for len(w.pages) < maxPages {
		q := []string{}
		if limit != "" {
			q = append(q, "limit="+limit)
		}
		if cursor != "" {
			q = append(q, "cursor="+cursor)
		}
		if between != nil && len(w.pages) > 0 {
			between(len(w.pages))
		}
		a := e.feed(key, strings.Join(q, "&"))
		if a.status != http.StatusOK {
			w.err = "page answered " + a.String()
			return w
		}
		w.pages = append(w.pages, a)
		obj, _ := a.doc().(map[string]any)
		evs, _ := obj["events"].([]any)
		w.sizes = append(w.sizes, len(evs))
		for _, ev := range evs {
			m, _ := ev.(map[string]any)
			id, _ := m["id"].(string)
			w.ids = append(w.ids, id)
			n, _ := m["createdAt"].(json.Number)
			ms, _ := n.Int64()
			w.times = append(w.times, ms)
		}
		next, isString := obj["nextCursor"].(string)
		w.nexts = append(w.nexts, next)
		if isString && next == "" {
			w.err = `nextCursor "" (null marks the end)`
			return w
		}
		if next == "" {
			return w
		}
		if seen[next] {
			w.err = "cursor cycle"
			return w
		}
		seen[next] = true
		cursor = next
	}
	w.err = "walk bounded"
	return w
}

// knownIDs are up to n video ids of the Pro feed.
func (e *faultEnv) knownIDs(n int) []string {
	e.t.Helper()
	var ids []string
	for _, p := range e.walk(strconv.Itoa(schemas.MaxPageSize), 2).pages {
		eachEvent(p.doc(), func(ev map[string]any) {
			v, _ := ev["video"].(map[string]any)
			if id, ok := v["platformVideoId"].(string); ok && !slices.Contains(ids, id) && len(ids) < n {
				ids = append(ids, id)
			}
		})
	}
	if len(ids) < n {
		e.t.Fatalf("the feed shows %d videos, want %d", len(ids), n)
	}
	return ids
}

// sources are the answers whose events the event oracles judge: the whole
// feed at the largest page size and a videos answer for 20 known ids.
func (e *faultEnv) sources() []faultAnswer {
	e.t.Helper()
	w := e.walk(strconv.Itoa(schemas.MaxPageSize), 100)
	return append(w.pages, e.videos(e.keys.Pro, e.knownIDs(schemas.MaxVideoIDs)...))
}

// shapedID is an id of id's length and alphabet that names no video: each
// character moved half way round the platform's alphabet.
func shapedID(id string) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"
	b := []byte(id)
	for i, c := range b {
		if k := strings.IndexByte(alphabet, c); k >= 0 {
			b[i] = alphabet[(k+len(alphabet)/2)%len(alphabet)]
		}
	}
	return string(b)
}

func inventedVideoID(n, length int) string {
	s := fmt.Sprintf("~none~%d~", n)
	return (s + strings.Repeat("x", length))[:length]
}

// violationsOf validates an answer as a feed page or a videos answer.
func violationsOf(a faultAnswer) []schemas.Violation {
	res := schemas.FeedPage
	if obj, ok := a.doc().(map[string]any); ok {
		if _, isVideos := obj["videos"]; isVideos {
			res = schemas.VideosResponse
		}
	}
	err := schemas.ValidateJSON(res, a.body)
	var se *schemas.Error
	if errors.As(err, &se) {
		return se.Violations
	}
	if err != nil {
		return []schemas.Violation{{Rule: err.Error()}}
	}
	return nil
}

func isJSONType(v string) bool {
	mt, _, err := mime.ParseMediaType(v)
	return err == nil && mt == "application/json"
}

// oracle checks one requirement and returns what breaks it ("" if nothing).
type oracle func(e *faultEnv) string

// status expects an answer's status.
func want(a faultAnswer, status int, what string) string {
	if a.status != status {
		return fmt.Sprintf("%s: %s, want %d", what, a, status)
	}
	return ""
}

func firstOf(problems ...string) string {
	for _, p := range problems {
		if p != "" {
			return p
		}
	}
	return ""
}

// rejects expects 401 for an Authorization value on both keyed operations.
func rejects(auth func(e *faultEnv) string) oracle {
	return func(e *faultEnv) string {
		body := `{"videoIds":["` + inventedVideoID(0, 20) + `"]}`
		return firstOf(
			want(e.send(http.MethodGet, schemas.PathFeed, auth(e), ""), http.StatusUnauthorized, "feed"),
			want(e.send(http.MethodPost, schemas.PathVideos, auth(e), body), http.StatusUnauthorized, "videos"),
		)
	}
}

// burst sends feed requests on the free key until the first 429 (at most
// limit+5) and returns how many passed and the 429. The requests past the
// limit come 0.7 s into the window, so that it frees at no whole second
// from them: a Retry-After cut to whole seconds is short.
func (e *faultEnv) burst() (passed int, throttled *faultAnswer) {
	for i := range schemas.FeedRequestsPerMinute + 5 {
		if i == schemas.FeedRequestsPerMinute {
			e.s.Advance(700 * time.Millisecond)
		}
		a := e.feed(e.keys.Free, "limit=1")
		if a.status == http.StatusTooManyRequests {
			return passed, &a
		}
		if a.status == http.StatusOK {
			passed++
		}
	}
	return passed, nil
}

// eventOracle checks every event of the sources with fn.
func eventOracle(fn func(ev map[string]any) string) oracle {
	return func(e *faultEnv) string {
		for _, a := range e.sources() {
			problem := ""
			eachEvent(a.doc(), func(ev map[string]any) {
				if problem == "" {
					problem = fn(ev)
				}
			})
			if problem != "" {
				return problem
			}
		}
		return ""
	}
}

// violationOracle fails on a schema violation that keep selects.
func violationOracle(keep func(v schemas.Violation) bool) oracle {
	return func(e *faultEnv) string {
		for _, a := range e.sources() {
			for _, v := range violationsOf(a) {
				if keep(v) {
					return v.String()
				}
			}
		}
		return ""
	}
}

var floorMs = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()

// oracles maps every must requirement that has a breaker to its oracle.
var oracles = map[catalogue.ID]oracle{
	"HEALTH-OK": func(e *faultEnv) string {
		a := e.send(http.MethodPost, schemas.PathHealth, "", "{}")
		if a.status != http.StatusOK || schemas.ValidateJSON(schemas.HealthBody, a.body) != nil {
			return "health: " + a.String()
		}
		// whether health takes a key is open; a 200 is a HealthBody still
		for _, auth := range []string{bearer(e.keys.Pro), bearer(e.keys.Revoked)} {
			if a := e.send(http.MethodPost, schemas.PathHealth, auth, "{}"); a.status == http.StatusOK && schemas.ValidateJSON(schemas.HealthBody, a.body) != nil {
				return "health with a key: " + a.String()
			}
		}
		return ""
	},
	"AUTH-MISSING": rejects(func(*faultEnv) string { return "" }),
	"AUTH-MALFORMED": func(e *faultEnv) string {
		_, random, _ := strings.Cut(e.keys.Pro, "_")
		return firstOf(
			rejects(func(e *faultEnv) string { return "Token " + e.keys.Pro })(e),
			rejects(func(*faultEnv) string { return bearer(random) })(e), // the Pro key without its prefix
		)
	},
	"AUTH-UNKNOWN": func(e *faultEnv) string {
		e.feed(e.keys.Pro, "") // a key that works, seen first
		swapped := e.keys.Pro[:4] + strings.Map(func(r rune) rune {
			if unicode.IsUpper(r) {
				return unicode.ToLower(r)
			}
			return unicode.ToUpper(r)
		}, e.keys.Pro[4:])
		return firstOf(
			rejects(func(*faultEnv) string { return bearer("tcm_" + strings.Repeat("Q", simulator.KeyRandomLen)) })(e),
			rejects(func(*faultEnv) string { return bearer(swapped) })(e),
			rejects(func(e *faultEnv) string { return bearer(e.keys.Pro + "A") })(e),
			rejects(func(e *faultEnv) string { return bearer(e.keys.Pro[:len(e.keys.Pro)-1]) })(e),
		)
	},
	"AUTH-REVOKED": rejects(func(e *faultEnv) string { return bearer(e.keys.Revoked) }),
	"AUTH-VALID": func(e *faultEnv) string {
		return firstOf(want(e.feed(e.keys.Pro, ""), http.StatusOK, "feed"), want(e.videos(e.keys.Pro, inventedVideoID(0, 20)), http.StatusOK, "videos"))
	},
	"PRO-GATE": func(e *faultEnv) string {
		return firstOf(want(e.videos(e.keys.Free, inventedVideoID(0, 20)), http.StatusForbidden, "videos, free key"), want(e.feed(e.keys.Free, ""), http.StatusOK, "feed, free key"))
	},
	"FEED-PAGE-SCHEMA": func(e *faultEnv) string {
		for _, p := range e.walk(strconv.Itoa(schemas.MaxPageSize), 100).pages {
			if err := schemas.ValidateJSON(schemas.FeedPage, p.body); err != nil {
				return err.Error()
			}
		}
		return ""
	},
	"FEED-ORDER": func(e *faultEnv) string {
		w := e.walk("", 5)
		for i := 1; i < len(w.times); i++ {
			if w.times[i] > w.times[i-1] {
				return fmt.Sprintf("event %d is newer than the one before", i)
			}
		}
		return ""
	},
	"FEED-PAGE-DEFAULT": func(e *faultEnv) string { return pageSizes(e.walk("", 3), schemas.DefaultPageSize) },
	"FEED-LIMIT": func(e *faultEnv) string {
		return firstOf(pageSizes(e.walk("7", 3), 7), pageSizes(e.walk(strconv.Itoa(schemas.MaxPageSize), 2), schemas.MaxPageSize))
	},
	"FEED-LIMIT-CAP": func(e *faultEnv) string {
		w := e.walk(strconv.Itoa(schemas.MaxPageSize), 1)
		for _, limit := range []string{strconv.Itoa(schemas.MaxPageSize + 1), "100000", "201&cursor=" + w.nexts[0]} {
			a := e.feed(e.keys.Pro, "limit="+limit)
			if a.status != http.StatusOK {
				return "limit=" + limit + ": " + a.String()
			}
			if p := pageSizes(faultWalk{sizes: []int{len(pageEvents(a))}, nexts: []string{"more"}}, schemas.MaxPageSize); p != "" {
				return "limit=" + limit + ": " + p
			}
		}
		return ""
	},
	"FEED-CURSOR-WALK": func(e *faultEnv) string {
		big, small := e.walk(strconv.Itoa(schemas.MaxPageSize), 100), e.walk("37", 200)
		ones := e.walk("1", 300) // a boundary between every two events, ties included
		switch {
		case big.err != "" || small.err != "" || ones.err != "walk bounded" && ones.err != "":
			return "walk: " + big.err + small.err + ones.err
		case !slices.Equal(big.ids, small.ids):
			return fmt.Sprintf("walks differ: %d events at limit=200, %d at limit=37", len(big.ids), len(small.ids))
		case !slices.Equal(big.ids[:len(ones.ids)], ones.ids):
			return "the walk at limit=1 differs from the walk at limit=200"
		case len(dedupe(big.ids)) != len(big.ids):
			return "an event repeats"
		}
		// Events arrive at the head while a walk goes on: it still sees each once.
		live := e.walkAs(e.keys.Pro, "50", 6, func(int) { e.s.Advance(2 * time.Hour) })
		if len(dedupe(live.ids)) != len(live.ids) {
			return "an event repeats in a walk while new events arrive"
		}
		// A walk that waits out a 429 goes on with its cursor (on a
		// server of the same faults whose limits are on).
		e = newFaultEnv(e.t, true, e.faults...)
		first := e.feed(e.keys.Free, "limit=1")
		var page struct {
			NextCursor string `json:"nextCursor"`
		}
		if json.Unmarshal(first.body, &page) != nil || page.NextCursor == "" {
			return "the free key's first page: " + first.String()
		}
		if _, throttled := e.burst(); throttled != nil {
			if ra, err := strconv.Atoi(throttled.header.Get("Retry-After")); err == nil {
				e.s.Advance(time.Duration(ra) * time.Second)
			}
			return want(e.feed(e.keys.Free, "limit=1&cursor="+url.QueryEscape(page.NextCursor)), http.StatusOK, "a cursor handed out before a 429, after its wait")
		}
		return ""
	},
	"FEED-CURSOR-END": func(e *faultEnv) string {
		w := e.walk(strconv.Itoa(schemas.MaxPageSize), 100)
		if w.err != "" {
			return "walk: " + w.err
		}
		n := len(w.sizes)
		if n > 1 && w.sizes[n-1] == 0 {
			return "the last page is empty"
		}
		// the last page again, asked with exactly its size: it is full and last
		if n > 1 {
			a := e.feed(e.keys.Pro, fmt.Sprintf("limit=%d&cursor=%s", w.sizes[n-1], w.nexts[n-2]))
			if next, _ := jsondoc.String(a.doc(), "/nextCursor"); next != "" || a.status != http.StatusOK {
				return "a last page exactly full has a nextCursor: " + a.String()
			}
		}
		return ""
	},
	"FEED-BAD-PARAM": func(e *faultEnv) string {
		for _, q := range []string{"limit=0", "limit=abc", "cursor=nonsense"} {
			a := e.feed(e.keys.Pro, q)
			param, _, _ := strings.Cut(q, "=")
			switch {
			case a.status == http.StatusOK:
			case a.status == http.StatusBadRequest && strings.Contains(detailsOf(a), param):
			default:
				return q + ": " + a.String()
			}
		}
		return ""
	},
	"EVENT-SCHEMA": violationOracle(func(v schemas.Violation) bool { return strings.Contains(v.Pointer, "/events/") }),
	"EVENT-TYPES": eventOracle(func(ev map[string]any) string {
		if t, _ := ev["type"].(string); !slices.Contains(schemas.EventTypes, t) {
			return "unknown type " + t
		}
		return ""
	}),
	"EVENT-CHANNEL-NO-VIDEO": eventOracle(func(ev map[string]any) string {
		t, _ := ev["type"].(string)
		if v, has := ev["video"]; schemas.IsChannelLevel(t) == (has && v != nil) {
			return t + " with video: " + strconv.FormatBool(has)
		}
		return ""
	}),
	"TIMESTAMP-EPOCH-MS": func(e *faultEnv) string {
		ceiling := e.s.Now().AddDate(1, 0, 0).UnixMilli()
		for _, a := range e.sources() {
			problem := ""
			jsondoc.Walk(a.doc(), func(ptr string, v any) {
				if !slices.Contains(timestampKeys, jsondoc.Last(ptr)) || problem != "" {
					return
				}
				n, ok := v.(json.Number)
				ms, err := n.Int64()
				if !ok || err != nil || ms < floorMs || ms > ceiling {
					problem = fmt.Sprintf("%s: %v", ptr, v)
				}
			})
			if problem != "" {
				return problem
			}
		}
		return ""
	},
	"COUNT-NONNEG-OR-NULL": violationOracle(func(v schemas.Violation) bool {
		return slices.ContainsFunc([]string{"viewCount", "likeCount", "commentCount", "SubscriberCount"}, func(f string) bool {
			return strings.Contains(v.Pointer, f) || strings.Contains(v.Rule, f)
		})
	}),
	"URI-FORMAT":      violationOracle(func(v schemas.Violation) bool { return v.Keyword == "format" }),
	"EVENT-ID-UNIQUE": eventIDsUnique,
	"EVENT-CHANGE-DIFFERS": eventOracle(func(ev map[string]any) string {
		for _, pair := range [][2]string{{"oldTitle", "newTitle"}, {"oldThumbnailUrl", "newThumbnailUrl"}, {"oldChannelTitle", "newChannelTitle"}, {"oldAvatarUrl", "newAvatarUrl"}, {"oldSubscriberCount", "newSubscriberCount"}} {
			if old, ok := ev[pair[0]]; ok && old != nil && fmt.Sprint(old) == fmt.Sprint(ev[pair[1]]) {
				return fmt.Sprintf("%s: %s = %s = %v", ev["type"], pair[0], pair[1], old)
			}
		}
		return ""
	}),
	"EVENT-AB-VARIANTS": eventOracle(func(ev map[string]any) string {
		for _, f := range [][2]string{{"titles", "finalTitle"}, {"thumbnailUrls", "finalThumbnailUrl"}} {
			list, ok := ev[f[0]].([]any)
			if !ok {
				continue
			}
			distinct := map[any]bool{}
			for _, v := range list {
				distinct[v] = true
			}
			if final, has := ev[f[1]]; has && !distinct[final] {
				return fmt.Sprintf("%s: %s %v not among %v", ev["type"], f[1], final, list)
			}
			if !strings.HasSuffix(ev["type"].(string), "_concluded") && len(distinct) < 2 {
				return fmt.Sprintf("%s: %d variants", ev["type"], len(distinct))
			}
		}
		return ""
	}),
	"EVENT-MEMBERS-SWITCHED": func(e *faultEnv) string {
		last := map[string]bool{}
		for _, a := range e.walk(strconv.Itoa(schemas.MaxPageSize), 100).pages {
			for _, x := range pageEvents(a) {
				ev, _ := x.(map[string]any)
				v, _ := jsondoc.String(ev, "/video/platformVideoId")
				to, ok := ev["isMembersOnly"].(bool)
				if ev["type"] != schemas.TypeMembersOnlyChanged || !ok {
					continue
				}
				if was, seen := last[v]; seen && was == to {
					return fmt.Sprintf("video %s: two switches to isMembersOnly %t in a row", v, to)
				}
				last[v] = to
			}
		}
		return ""
	},
	"EVENT-PUBLISHED-ONCE": func(e *faultEnv) string {
		at := map[string]any{}
		for _, a := range e.walk(strconv.Itoa(schemas.MaxPageSize), 100).pages {
			for _, x := range pageEvents(a) {
				ev, _ := x.(map[string]any)
				v, _ := jsondoc.String(ev, "/video/platformVideoId")
				if ev["type"] != schemas.TypeVideoPublished {
					continue
				}
				if was, seen := at[v]; seen && fmt.Sprint(was) != fmt.Sprint(ev["createdAt"]) {
					return fmt.Sprintf("video %s published at %v and at %v", v, was, ev["createdAt"])
				}
				at[v] = ev["createdAt"]
			}
		}
		return ""
	},
	"VIDEOS-IDS-MIN": func(e *faultEnv) string {
		return firstOf(want(e.videos(e.keys.Pro, e.knownIDs(1)...), http.StatusOK, "1 id"), want(e.videos(e.keys.Pro), http.StatusBadRequest, "0 ids"))
	},
	"VIDEOS-IDS-MAX": func(e *faultEnv) string {
		var over []string
		for i := range schemas.MaxVideoIDs + 1 {
			over = append(over, inventedVideoID(i, 20))
		}
		var long []string
		for i := range schemas.MaxVideoIDs {
			long = append(long, inventedVideoID(i, schemas.MaxVideoIDLen))
		}
		twice := append(slices.Clone(over[:schemas.MaxVideoIDs]), over[0])
		return firstOf(want(e.videos(e.keys.Pro, e.knownIDs(schemas.MaxVideoIDs)...), http.StatusOK, "20 ids"), want(e.videos(e.keys.Pro, over...), http.StatusBadRequest, "21 ids"),
			want(e.videos(e.keys.Pro, twice...), http.StatusBadRequest, "21 ids, one twice"), want(e.videos(e.keys.Pro, long...), http.StatusOK, "20 ids of 32 characters"))
	},
	"FEED-TENANT": func(e *faultEnv) string {
		pro, free := e.walk(strconv.Itoa(schemas.MaxPageSize), 100), e.walkAs(e.keys.Free, "199", 100, nil)
		own := func(w faultWalk, a faultAnswer) string {
			if a.status >= 400 && a.status < 500 {
				return ""
			}
			for _, ev := range pageEvents(a) {
				if id, _ := jsondoc.String(ev, "/id"); !slices.Contains(w.ids, id) {
					return "another account's event " + id + ": " + a.String()
				}
			}
			return ""
		}
		return firstOf(
			own(free, e.feed(e.keys.Free, "limit=200")),
			own(free, e.feed(e.keys.Free, "limit=200&cursor="+pro.nexts[0])),
			own(pro, e.feed(e.keys.Pro, "limit=199&cursor="+free.nexts[0])),
		)
	},
	"VIDEOS-TENANT": func(e *faultEnv) string {
		pro, free := e.walk(strconv.Itoa(schemas.MaxPageSize), 100), e.walkAs(e.keys.Free, "199", 100, nil)
		mine := map[string]bool{}
		for _, p := range pro.pages {
			for _, ev := range pageEvents(p) {
				c, _ := jsondoc.String(ev, "/channel/id")
				mine[c] = true
			}
		}
		var foreign []string
		for _, p := range free.pages {
			for _, ev := range pageEvents(p) {
				c, _ := jsondoc.String(ev, "/channel/id")
				v, ok := jsondoc.String(ev, "/video/platformVideoId")
				if ok && !mine[c] && len(foreign) < schemas.MaxVideoIDs && !slices.Contains(foreign, v) {
					foreign = append(foreign, v)
				}
			}
		}
		if len(foreign) == 0 {
			return "no channel only the free account tracks"
		}
		if served, _ := lists(e.videos(e.keys.Pro, foreign...)); len(served) > 0 {
			return fmt.Sprintf("%d videos of channels the Pro account does not track are served", len(served))
		}
		return ""
	},
	"VIDEOS-ID-LEN": func(e *faultEnv) string {
		return firstOf(
			want(e.videos(e.keys.Pro, inventedVideoID(1, schemas.MaxVideoIDLen)), http.StatusOK, "32 characters"),
			want(e.videos(e.keys.Pro, inventedVideoID(1, schemas.MaxVideoIDLen+1)), http.StatusBadRequest, "33 characters"),
			want(e.videos(e.keys.Pro, ""), http.StatusBadRequest, "empty id"),
			want(e.videos(e.keys.Pro, strings.Repeat("é", schemas.MaxVideoIDLen)), http.StatusOK, "32 characters outside ASCII"),
			want(e.videos(e.keys.Pro, strings.Repeat("😀", schemas.MaxVideoIDLen)), http.StatusOK, "32 characters beyond the BMP"),
		)
	},
	"VIDEOS-BAD-BODY": func(e *faultEnv) string {
		for _, body := range []string{`{"videoIds": [`, `["abc"]`, `{}`, `{"videoIds":"abc"}`, `{"videoIds":[42]}`, `{"videoIds":["abc"]}x`, `{"videoIds":["abc"]}{}`} {
			if p := want(e.send(http.MethodPost, schemas.PathVideos, bearer(e.keys.Pro), body), http.StatusBadRequest, body); p != "" {
				return p
			}
		}
		return ""
	},
	"VIDEOS-ENTRY-SCHEMA": func(e *faultEnv) string {
		a := e.videos(e.keys.Pro, e.knownIDs(schemas.MaxVideoIDs)...)
		if err := schemas.ValidateJSON(schemas.VideosResponse, a.body); err != nil {
			return err.Error()
		}
		return ""
	},
	"VIDEOS-SERVED": func(e *faultEnv) string {
		ids := e.knownIDs(5)
		served, _ := lists(e.videos(e.keys.Pro, ids...))
		if !slices.Equal(served, ids) {
			return fmt.Sprintf("served %q, want %q", served, ids)
		}
		return ""
	},
	"VIDEOS-MISSING": func(e *faultEnv) string {
		// invented ids, and one of the feed's ids' length and alphabet
		ids := []string{inventedVideoID(1, 20), inventedVideoID(2, 20), shapedID(e.knownIDs(1)[0])}
		if served, missing := lists(e.videos(e.keys.Pro, ids...)); len(served) > 0 || !slices.Equal(missing, ids) {
			return fmt.Sprintf("served %q, missing %q", served, missing)
		}
		return ""
	},
	"VIDEOS-PARTITION": func(e *faultEnv) string {
		ids := append(e.knownIDs(3), inventedVideoID(1, 20), inventedVideoID(2, 20), "  "+inventedVideoID(3, 20)+" ")
		served, missing := lists(e.videos(e.keys.Pro, ids...))
		all := append(served, missing...)
		slices.Sort(all)
		sorted := slices.Clone(ids)
		slices.Sort(sorted)
		if !slices.Equal(all, sorted) {
			return fmt.Sprintf("answered %q, asked %q", all, sorted)
		}
		return ""
	},
	"RATE-LIMIT-429": func(e *faultEnv) string {
		// the free key's last page, then a fresh window
		w := e.walkAs(e.keys.Free, strconv.Itoa(schemas.MaxPageSize), 50, nil)
		e.s.Advance(schemas.RateWindow + time.Second)
		passed, throttled := e.burst()
		switch {
		case throttled == nil:
			return "no 429"
		case passed > schemas.FeedRequestsPerMinute:
			return fmt.Sprintf("%d passed before the 429", passed)
		}
		if n := len(w.nexts); n >= 2 && w.nexts[n-2] != "" && w.nexts[n-1] == "" {
			last := e.feed(e.keys.Free, "limit="+strconv.Itoa(schemas.MaxPageSize)+"&cursor="+url.QueryEscape(w.nexts[n-2]))
			if last.status == http.StatusOK {
				return "the last page served to a throttled key"
			}
		}
		// a key that keeps asking while throttled stays throttled while no
		// time passes, however many requests its server's housekeeping sees
		for i := range 2*housekeepingEvery + schemas.FeedRequestsPerMinute {
			if a := e.feed(e.keys.Free, "limit=1"); a.status == http.StatusOK {
				return fmt.Sprintf("the throttled key served at its request %d since the 429, no time passed", i+1)
			}
		}
		return ""
	},
	"RATE-RETRY-AFTER": func(e *faultEnv) string {
		_, throttled := e.burst()
		if throttled == nil {
			return "no 429"
		}
		n, err := strconv.Atoi(throttled.header.Get("Retry-After"))
		if err != nil {
			return "Retry-After: " + err.Error()
		}
		e.s.Advance(time.Duration(n) * time.Second)
		return want(e.feed(e.keys.Free, "limit=1"), http.StatusOK, "after Retry-After")
	},
	"RATE-ALLOWS-20": func(e *faultEnv) string {
		if passed, _ := e.burst(); passed < schemas.FeedRequestsPerMinute {
			return fmt.Sprintf("%d passed", passed)
		}
		return ""
	},
	"RATE-PER-KEY": func(e *faultEnv) string {
		if _, throttled := e.burst(); throttled == nil {
			return "no 429"
		}
		return want(e.feed(e.keys.Pro, "limit=1"), http.StatusOK, "the other key")
	},
	"ERROR-BODY": func(e *faultEnv) string {
		_, throttled := e.burst()
		for _, a := range []faultAnswer{
			e.send(http.MethodGet, schemas.PathFeed, "", ""),
			e.send(http.MethodPost, schemas.PathVideos, bearer(e.keys.Pro), "{}"),
			e.videos(e.keys.Free, inventedVideoID(0, 20)),
			*throttled,
		} {
			if err := schemas.ValidateJSON(schemas.ErrorBody, a.body); err != nil || a.status < 400 {
				return a.String()
			}
		}
		return ""
	},
	"CONTENT-TYPE-JSON": func(e *faultEnv) string {
		pages := e.walk("", 2).pages
		for _, a := range []faultAnswer{
			pages[len(pages)-1],
			e.feed(e.keys.Pro, ""),
			e.videos(e.keys.Pro, inventedVideoID(0, 20)),
			e.send(http.MethodGet, schemas.PathFeed, "", ""),
			e.send(http.MethodPost, schemas.PathVideos, bearer(e.keys.Pro), "{}"),
			e.send(http.MethodPost, schemas.PathHealth, "", "{}"),
		} {
			if !isJSONType(a.header.Get("Content-Type")) {
				return "Content-Type " + a.header.Get("Content-Type")
			}
		}
		return ""
	},
}

func pageEvents(a faultAnswer) []any {
	obj, _ := a.doc().(map[string]any)
	evs, _ := obj["events"].([]any)
	return evs
}

// pageSizes expects pages of size events, fewer only on the last one.
func pageSizes(w faultWalk, size int) string {
	for i, n := range w.sizes {
		if n > size || n < size && w.nexts[i] != "" {
			return fmt.Sprintf("page %d holds %d events, want %d", i+1, n, size)
		}
	}
	return ""
}

func detailsOf(a faultAnswer) string {
	obj, _ := a.doc().(map[string]any)
	raw, _ := json.Marshal(obj["details"])
	return string(raw)
}

// lists are the ids of a videos answer: served, missing.
func lists(a faultAnswer) (served, missing []string) {
	for _, id := range servedIDs(a.doc()) {
		served = append(served, id.(string))
	}
	for _, m := range jsondoc.Items(a.doc(), "/missingVideoIds") {
		id, _ := m.(string)
		missing = append(missing, id)
	}
	return served, missing
}

func eventIDsUnique(e *faultEnv) string {
	w := e.walk(strconv.Itoa(schemas.MaxPageSize), 100)
	if len(dedupe(w.ids)) != len(w.ids) {
		return "an event id repeats in the feed"
	}
	return ""
}

// limited says whether the oracle of a requirement needs the rate limits.
func limited(requirement catalogue.ID) bool {
	return strings.HasPrefix(string(requirement), "RATE-") || requirement == catalogue.ErrorBody
}

func TestMutantsBreakMustRequirements(t *testing.T) {
	cat, err := catalogue.Load()
	if err != nil {
		t.Fatal(err)
	}
	covered := map[catalogue.ID]bool{}
	for _, m := range All() {
		req, ok := cat.Lookup(m.Requirement)
		switch {
		case !ok:
			t.Errorf("%s breaks %q, which the catalogue does not list", m.Name, m.Requirement)
		case req.Kind != catalogue.Must:
			t.Errorf("%s breaks %s, which is %q, not must", m.Name, m.Requirement, req.Kind)
		}
		if got, ok := Lookup(m.Name); !ok || got.Name != m.Name {
			t.Errorf("Lookup(%q) = %v, %v", m.Name, got.Name, ok)
		}
		if len(m.Ops) == 0 || m.Does == "" {
			t.Errorf("%s: no operation or no description", m.Name)
		}
		covered[m.Requirement] = true
	}
	if len(Names()) != len(All()) {
		t.Errorf("%d names for %d mutants: a name is used twice", len(Names()), len(All()))
	}
	for _, req := range cat.List() {
		if req.Kind == catalogue.Must && !covered[req.ID] {
			t.Errorf("no mutant breaks %s", req.ID)
		}
	}
	if _, err := Layers("no-such-fault"); err == nil {
		t.Error("Layers accepts a fault that does not exist")
	}
}

// TestOraclesPassWithoutFaults proves the oracles: each passes on the
// faultless simulator, so a failure with a breaker on is the breaker's.
func TestOraclesPassWithoutFaults(t *testing.T) {
	for id, check := range oracles {
		t.Run(string(id), func(t *testing.T) {
			t.Parallel()
			if problem := check(newFaultEnv(t, limited(id))); problem != "" {
				t.Errorf("%s fails without faults: %s", id, problem)
			}
		})
	}
}

// TestMutantsBreakTheirRequirement turns each breaker on alone and
// expects the oracle of its requirement to fail.
//
// The derived mutants (a fault confined to one request shape) are left to
// the kill matrix: the oracles here ask the common shapes only, and the
// suite's specs are their oracle (suites/killmatrix).
func TestMutantsBreakTheirRequirement(t *testing.T) {
	for _, m := range All() {
		if m.Shape() != ShapeAny && strings.Contains(m.Name, "@") {
			continue
		}
		t.Run(m.Name, func(t *testing.T) {
			t.Parallel()
			check, ok := oracles[m.Requirement]
			if !ok {
				t.Fatalf("no oracle for %s", m.Requirement)
			}
			problem := check(newFaultEnv(t, limited(m.Requirement), m.Name))
			if problem == "" {
				t.Errorf("%s is on, but %s holds", m.Name, m.Requirement)
			}
			t.Logf("%s: %s", m.Requirement, problem)
		})
	}
}

// TestMutantsKeepHealthAndTheProKey: a breaker of another requirement
// leaves the health check and the Pro key's first page alone (the suite's
// preflight needs both).
func TestMutantsKeepHealthAndTheProKey(t *testing.T) {
	for _, m := range All() {
		// A generated mutant answers as its base fault on a subset of
		// requests: its base's check covers it.
		if m.Requirement == catalogue.HealthOK || m.Requirement == catalogue.ContentTypeJSON || isGenerated[m.Name] {
			continue
		}
		t.Run(m.Name, func(t *testing.T) {
			t.Parallel()
			e := newFaultEnv(t, true, m.Name)
			if p := oracles[catalogue.HealthOK](e); p != "" {
				t.Error(p)
			}
			if a := e.feed(e.keys.Pro, ""); a.status != http.StatusOK {
				t.Errorf("feed with the Pro key: %s", a)
			}
		})
	}
}

func TestMutantsSurviveHostileInput(t *testing.T) {
	// Every breaker on at once, fed what a fuzzer would send: no panic, and
	// every answer is JSON-typed or one of the content-type mutants'.
	e := newFaultEnv(t, true, Names()...)
	for _, q := range []string{"", "limit=", "limit=201", "limit=99999999999999999999", "cursor=%zz", "cursor=end-of-feed", "limit=1&limit=2", "cursor=" + endCursor + "&limit=0"} {
		e.feed(e.keys.Pro, q)
		e.feed("tcm_nope", q)
	}
	for _, body := range []string{"", "null", "[]", `{"videoIds":null}`, `{"videoIds":[""]}`, `{"videoIds":["` + strings.Repeat("x", 33) + `",""]}`, strings.Repeat("[", 100000)} {
		e.send(http.MethodPost, schemas.PathVideos, bearer(e.keys.Pro), body)
		e.send(http.MethodPost, schemas.PathVideos, "", body)
	}
}

// TestTwoCallMutantsHonourRetryAfter: a breaker that calls the server
// twice for one request passes a throttled second call on as a 429, keeps
// the first answer, and the client's retry after Retry-After gets the
// broken answer for one more request of its budget.
func TestTwoCallMutantsHonourRetryAfter(t *testing.T) {
	max := strconv.Itoa(schemas.MaxPageSize)
	tests := []struct {
		fault string
		query func(e *faultEnv) string // sends exactly one request
		want  int                      // events in the broken answer
	}{
		{"limit-not-capped", func(e *faultEnv) string {
			e.feed(e.keys.Pro, "limit=1")
			return "limit=" + strconv.Itoa(schemas.MaxPageSize+1)
		}, schemas.MaxPageSize + 1},
		{"cursor-skips", func(e *faultEnv) string {
			obj, _ := e.feed(e.keys.Pro, "limit="+max).doc().(map[string]any)
			return "limit=" + max + "&cursor=" + obj["nextCursor"].(string)
		}, schemas.MaxPageSize},
	}
	for _, tt := range tests {
		t.Run(tt.fault, func(t *testing.T) {
			e := newFaultEnv(t, true, tt.fault)
			query := tt.query(e) // one grant at t0
			e.s.Advance(schemas.RateWindow / 2)
			for e.feed(e.keys.Pro, "limit=1").status == http.StatusOK { // the other grants at t0+30s
			}
			e.s.Advance(schemas.RateWindow / 2) // the grant of t0 leaves: one request is free
			throttled := e.feed(e.keys.Pro, query)
			if throttled.status != http.StatusTooManyRequests {
				t.Fatalf("with one request free, the two calls got %s, want the second call's 429", throttled)
			}
			n, err := strconv.Atoi(throttled.header.Get("Retry-After"))
			if err != nil {
				t.Fatal(err)
			}
			e.s.Advance(time.Duration(n) * time.Second)
			got := e.feed(e.keys.Pro, query)
			if got.status != http.StatusOK || len(pageEvents(got)) != tt.want {
				t.Fatalf("after Retry-After: %d events, want %d: %s", len(pageEvents(got)), tt.want, got)
			}
			left := 0
			for e.feed(e.keys.Pro, "limit=1").status == http.StatusOK {
				left++
			}
			// The window holds the first call of the throttled request and
			// the retry's one call (the first answer was kept).
			if want := schemas.FeedRequestsPerMinute - 2; left != want {
				t.Errorf("%d requests left in the window, want %d", left, want)
			}
		})
	}
}
