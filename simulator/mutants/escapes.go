package mutants

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/schemas/catalogue"
	"github.com/tcmkit/tcmkit/schemas/jsondoc"
	"github.com/tcmkit/tcmkit/simulator"
)

// The one-rule breaks of servers written blind that slipped past the
// generated probes (issue 24, the second measure), each as the class the
// probes now generate: a body read up to its first JSON value, stubs for
// unknown ids shaped like real ones, a key repaired before its lookup,
// health wrapped when a key comes with it, ids trimmed before the lookup.
// They are survivors (Escaped): the default kill matrix runs them.
var escapedProbes = []Mutant{
	{Name: "videos-trailing-garbage", Requirement: catalogue.VideosBadBody, Ops: videosOnly, fresh: firstValueOnly,
		Does: `only the body's first JSON value is read (a json.Decoder): {"videoIds":[...]} followed by other bytes or a second value is served 200`},
	{Name: "videos-stub-shaped", Requirement: catalogue.VideosMissing, Ops: keyed, fresh: stubShaped,
		Does: "an unknown id of the length and alphabet of the ids the feed showed gets a stub VideoEntry (empty title, null counts, a channel of no account, no events) instead of being listed as missing"},
	{Name: "videos-prefixless-key", Requirement: catalogue.AuthMalformed, Ops: videosOnly, fresh: prefixlessKey,
		Does: "tracked videos takes a token without the key prefix (a key's random part alone) as <prefix>_<token> and serves it; the feed is right"},
	{Name: "health-keyed-wrapped", Requirement: catalogue.HealthOK, Ops: healthOnly, fresh: healthKeyedWrapped,
		Does: `with an Authorization header (any), the health check answers 200 {"data":{"status":"ok"}}; without one it is right`},
	{Name: "videos-trim-ids", Requirement: catalogue.VideosPartition, Ops: videosOnly, fresh: trimIDs,
		Does: `ids are trimmed of spaces before the lookup and both lists carry the trimmed id: a requested " id" is in neither list`},
}

// firstValueOnly serves a body the server refused as its first JSON value
// alone, when more than whitespace follows it.
var firstValueOnly = stateless(func(x *exchange) *answer {
	a := x.serve()
	if a.Status != http.StatusBadRequest {
		return a
	}
	var first json.RawMessage
	if json.NewDecoder(bytes.NewReader(x.raw)).Decode(&first) != nil || len(bytes.TrimSpace(first)) == len(bytes.TrimSpace(x.raw)) {
		return a
	}
	return x.serveAs(x.r, first)
})

// platformAlphabet reports whether s is of the platform's id alphabet.
func platformAlphabet(s string) bool {
	return s != "" && strings.Trim(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-") == ""
}

// stubShaped learns the ids feed pages show (real videos, of some
// account: they stay missing) and answers a missing id of their length and
// alphabet with a stub VideoEntry of a channel no account has.
func stubShaped() serveFunc {
	var (
		seen    memo[bool]
		mu      sync.Mutex
		lengths = map[int]bool{}
	)
	return func(x *exchange) *answer {
		a := x.serve()
		if x.r.URL.Path == schemas.PathFeed {
			if pg, ok := readPage(a); ok {
				for _, ev := range pg.events {
					if id, _ := jsondoc.String(ev, "/video/platformVideoId"); id != "" {
						seen.put(id, true)
						mu.Lock()
						lengths[len(id)] = true
						mu.Unlock()
					}
				}
			}
			return a
		}
		doc := a.doc()
		if a.Status != http.StatusOK || !isVideosAnswer(doc) {
			return a
		}
		list, still := jsondoc.Items(doc, "/videos"), []any{}
		stubbed := false
		at := json.Number(strconv.FormatInt(simulator.DefaultStart.UnixMilli(), 10))
		for _, m := range jsondoc.Items(doc, "/missingVideoIds") {
			id, _ := m.(string)
			mu.Lock()
			shaped := lengths[len(id)] && platformAlphabet(id)
			mu.Unlock()
			if known, _ := seen.get(id); known || !shaped {
				still = append(still, m)
				continue
			}
			stubbed = true
			list = append(list, map[string]any{
				"video": map[string]any{
					"platformVideoId": id, "currentTitle": "", "currentThumbnailUrl": "https://i.example.com/vi/" + url.PathEscape(id) + "/default.jpg",
					"publishedAt": at, "isMembersOnly": false, "viewCount": nil, "likeCount": nil, "commentCount": nil,
					"channel": map[string]any{"id": "ch_unknown", "platformChannelId": "unknown", "title": "", "thumbnailUrl": nil},
				},
				"firstSeenAt": at, "historyWindowDays": json.Number("30"), "isGraphLocked": true, "events": []any{}, "statSamples": []any{},
			})
		}
		if stubbed {
			obj := doc.(map[string]any)
			obj["videos"], obj["missingVideoIds"] = list, still
			a.Body = jsondoc.Encode(doc)
		}
		return a
	}
}

// prefixlessKey serves a bearer token refused as malformed that holds no
// underscore as the key prefix, an underscore and the token: the prefix
// of the keys the server accepted, or the simulator's default.
func prefixlessKey() serveFunc {
	var (
		mu     sync.Mutex
		prefix = simulator.DefaultKeyPrefix
	)
	return func(x *exchange) *answer {
		a := x.serve()
		scheme, token, ok := strings.Cut(strings.TrimSpace(x.auth()), " ")
		switch {
		case !ok || !strings.EqualFold(scheme, "Bearer"):
		case a.Status != http.StatusUnauthorized:
			if p, _, found := strings.Cut(token, "_"); found && p != "" {
				mu.Lock()
				prefix = p
				mu.Unlock()
			}
		case a.code() == simulator.CodeMalformedKey && token != "" && !strings.Contains(token, "_"):
			mu.Lock()
			p := prefix
			mu.Unlock()
			return x.serveAs(x.withAuth("Bearer "+p+"_"+strings.TrimSpace(token)), x.raw)
		}
		return a
	}
}

// healthKeyedWrapped wraps the health body in data when a key comes.
var healthKeyedWrapped = stateless(func(x *exchange) *answer {
	a := x.serve()
	if a.Status != http.StatusOK || len(x.r.Header.Values("Authorization")) == 0 {
		return a
	}
	return jsonOK(map[string]any{"data": map[string]any{"status": "ok"}})
})

// trimIDs serves the ids trimmed of spaces (an id of spaces alone is left
// to the server).
var trimIDs = stateless(func(x *exchange) *answer {
	ids, ok := x.ids()
	if !ok {
		return x.serve()
	}
	trimmed, changed := make([]string, len(ids)), false
	for i, id := range ids {
		trimmed[i] = strings.TrimSpace(id)
		if trimmed[i] == "" {
			return x.serve()
		}
		changed = changed || trimmed[i] != id
	}
	if !changed {
		return x.serve()
	}
	return x.videosAs(trimmed)
})
