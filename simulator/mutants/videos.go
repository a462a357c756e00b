package mutants

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/schemas/jsondoc"
	"github.com/tcmkit/tcmkit/simulator"
)

// The mutants of the tracked-videos operation: its limits, its bodies and
// the partition of the answer into videos and missingVideoIds.

// reject answers with a 400 whose message states a wrong rule.
func reject(a *answer, rule string) {
	a.setError(http.StatusBadRequest, simulator.CodeInvalidBody, rule, nil)
}

var acceptEmptyIDs = stateless(func(x *exchange) *answer {
	a := x.serve()
	if ids, ok := x.ids(); ok && len(ids) == 0 && a.Status == http.StatusBadRequest {
		return jsonOK(map[string]any{"videos": []any{}, "missingVideoIds": []any{}})
	}
	return a
})

// rejectCount answers a request of exactly n ids with 400.
func rejectCount(n int) func() serveFunc {
	return stateless(func(x *exchange) *answer {
		a := x.serve()
		if ids, ok := x.ids(); ok && len(ids) == n && a.Status == http.StatusOK {
			lo, hi := schemas.MinVideoIDs, schemas.MaxVideoIDs
			if n == lo {
				lo++
			} else {
				hi--
			}
			reject(a, fmt.Sprintf("videoIds must hold %d to %d items", lo, hi))
		}
		return a
	})
}

var rejectLongestID = stateless(func(x *exchange) *answer {
	a := x.serve()
	ids, ok := x.ids()
	if ok && a.Status == http.StatusOK && slices.ContainsFunc(ids, func(id string) bool { return utf8.RuneCountInString(id) == schemas.MaxVideoIDLen }) {
		reject(a, fmt.Sprintf("each video id must be %d to %d characters", schemas.MinVideoIDLen, schemas.MaxVideoIDLen-1))
	}
	return a
})

// numberIDsAccepted reads ids that are JSON numbers as their digits.
var numberIDsAccepted = stateless(func(x *exchange) *answer {
	doc, err := jsondoc.Decode(x.raw)
	list := jsondoc.Items(doc, "/videoIds")
	if err != nil || list == nil {
		return x.serve()
	}
	coerced := false
	for i, v := range list {
		if n, isNum := v.(json.Number); isNum {
			list[i], coerced = n.String(), true
		}
	}
	if !coerced {
		return x.serve()
	}
	return x.serveAs(x.r, jsondoc.Encode(doc))
})

// acceptTooManyIDs serves one id more than the maximum: the first ones as
// usual, the last one listed as missing.
var acceptTooManyIDs = stateless(func(x *exchange) *answer {
	ids, ok := x.ids()
	if !ok || len(ids) != schemas.MaxVideoIDs+1 {
		return x.serve()
	}
	head, extra := ids[:schemas.MaxVideoIDs], ids[schemas.MaxVideoIDs]
	a := x.videosAs(head)
	if !slices.Contains(head, extra) {
		addMissing(a, extra)
	}
	return a
})

// placeholderID stands in for the ids lenientIDs takes out, when none is
// left: the server needs at least one; '~' is in no platform id.
const placeholderID = "~breaker~placeholder~"

// lenientIDs accepts ids that break the length rule in the way bad says:
// they are left out of the request the server sees and listed as missing.
func lenientIDs(bad func(id string) bool) func() serveFunc {
	return stateless(func(x *exchange) *answer {
		ids, ok := x.ids()
		if !ok || !slices.ContainsFunc(ids, bad) {
			return x.serve()
		}
		var keep, dropped []string
		for _, id := range ids {
			if bad(id) {
				dropped = append(dropped, id)
			} else {
				keep = append(keep, id)
			}
		}
		if len(keep) == 0 {
			keep = []string{placeholderID}
		}
		a := x.videosAs(keep)
		if doc := a.doc(); a.Status == http.StatusOK && isVideosAnswer(doc) {
			missing := slices.DeleteFunc(jsondoc.Items(doc, "/missingVideoIds"), func(m any) bool {
				return m == placeholderID && !slices.Contains(ids, placeholderID)
			})
			for _, id := range dedupe(dropped) {
				missing = append(missing, id)
			}
			doc.(map[string]any)["missingVideoIds"] = missing
			a.Body = jsondoc.Encode(doc)
		}
		return a
	})
}

// structurallyBad reports whether a body is not even the shape of a
// request: not JSON, not an object, no videoIds, or not an array of strings.
func structurallyBad(x *exchange) bool {
	_, ok := x.ids()
	return !ok
}

var badBody200 = stateless(func(x *exchange) *answer {
	a := x.serve()
	if a.Status == http.StatusBadRequest && structurallyBad(x) {
		return jsonOK(map[string]any{"videos": []any{}, "missingVideoIds": []any{}})
	}
	return a
})

// servedIDs lists the platformVideoIds of the entries of an answer.
func servedIDs(doc any) []any {
	var out []any
	for _, e := range entries(doc) {
		id, _ := jsondoc.String(e, "/video/platformVideoId")
		out = append(out, id)
	}
	return out
}

func notServed(_ *http.Request, doc any) bool {
	served := servedIDs(doc)
	if !isVideosAnswer(doc) || len(served) == 0 {
		return false
	}
	obj := doc.(map[string]any)
	obj["videos"], obj["missingVideoIds"] = []any{}, append(jsondoc.Items(doc, "/missingVideoIds"), served...)
	return true
}

func dropMissing(_ *http.Request, doc any) bool {
	if !isVideosAnswer(doc) || len(jsondoc.Items(doc, "/missingVideoIds")) == 0 {
		return false
	}
	doc.(map[string]any)["missingVideoIds"] = []any{}
	return true
}

func servedAlsoMissing(_ *http.Request, doc any) bool {
	served := servedIDs(doc)
	if !isVideosAnswer(doc) || len(served) == 0 {
		return false
	}
	doc.(map[string]any)["missingVideoIds"] = append(jsondoc.Items(doc, "/missingVideoIds"), served...)
	return true
}

var unrequestedMissing = stateless(func(x *exchange) *answer {
	a := x.serve()
	ids, _ := x.ids()
	extra := "unrequested"
	for n := 0; slices.Contains(ids, extra); n++ {
		extra = "unrequested-" + strconv.Itoa(n)
	}
	addMissing(a, extra)
	return a
})

// inventEntries answers every missing id with a made-up VideoEntry that
// validates: the channel and times of a real entry when there is one.
func inventEntries(_ *http.Request, doc any) bool {
	missing := jsondoc.Items(doc, "/missingVideoIds")
	if !isVideosAnswer(doc) || len(missing) == 0 {
		return false
	}
	channel := any(map[string]any{"id": "ch_invented", "platformChannelId": "UCinventedchannel", "title": "Invented", "thumbnailUrl": nil})
	at := any(json.Number(strconv.FormatInt(simulator.DefaultStart.UnixMilli(), 10)))
	list := jsondoc.Items(doc, "/videos")
	if len(list) > 0 {
		channel, _ = jsondoc.Get(list[0], "/video/channel")
		at, _ = jsondoc.Get(list[0], "/video/publishedAt")
	}
	zero := json.Number("0")
	for _, m := range missing {
		id, _ := m.(string)
		list = append(list, map[string]any{
			"video": map[string]any{
				"platformVideoId": id, "currentTitle": "Untitled", "currentThumbnailUrl": "https://i.example.com/vi/" + url.PathEscape(id) + "/default.jpg",
				"publishedAt": at, "isMembersOnly": false, "viewCount": zero, "likeCount": zero, "commentCount": zero, "channel": channel,
			},
			"firstSeenAt": at, "historyWindowDays": json.Number("30"), "isGraphLocked": false, "events": []any{}, "statSamples": []any{},
		})
	}
	obj := doc.(map[string]any)
	obj["videos"], obj["missingVideoIds"] = list, []any{}
	return true
}
