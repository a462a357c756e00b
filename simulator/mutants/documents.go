package mutants

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/schemas/jsondoc"
	"github.com/tcmkit/tcmkit/simulator"
)

// The mutants that change documents: events, timestamps, counts, URIs,
// entries. Each edit reports whether it changed anything.

// drop removes a member.
func drop(key string) func(obj map[string]any) bool {
	return func(obj map[string]any) bool {
		_, had := obj[key]
		delete(obj, key)
		return had
	}
}

// set gives a member a value.
func set(key string, v any) func(obj map[string]any) bool {
	return func(obj map[string]any) bool {
		obj[key] = v
		return true
	}
}

// sameAsNew gives a change's old value its new one: a change that changed
// nothing.
func sameAsNew(oldKey, newKey string) func(ev map[string]any) bool {
	return func(ev map[string]any) bool {
		v, ok := ev[newKey]
		if ok {
			ev[oldKey] = v
		}
		return ok
	}
}

// notAVariant gives a concluded A/B test a winner that was none of its
// variants (still a URI or a title of the same shape).
func notAVariant(key string) func(ev map[string]any) bool {
	return func(ev map[string]any) bool {
		s, ok := ev[key].(string)
		if ok {
			ev[key] = s + "-final"
		}
		return ok
	}
}

// oneVariant leaves an A/B test's rotation one variant.
func oneVariant(key string) func(ev map[string]any) bool {
	return func(ev map[string]any) bool {
		list, ok := ev[key].([]any)
		if ok && len(list) > 1 {
			ev[key] = list[:1]
			return true
		}
		return false
	}
}

// rediscovered makes a title_changed event a video_published one: the
// video discovered again at each rewrite (a valid event of its type).
func rediscovered(ev map[string]any) bool {
	v, ok := ev["video"].(map[string]any)
	if !ok || ev["type"] != schemas.TypeTitleChanged {
		return false
	}
	ev["type"] = schemas.TypeVideoPublished
	delete(ev, "oldTitle")
	delete(ev, "newTitle")
	v["isMembersOnly"] = false
	for _, k := range []string{"viewCount", "likeCount", "commentCount"} {
		v[k] = nil
	}
	return true
}

// later moves an event's createdAt by d.
func later(d time.Duration) func(ev map[string]any) bool {
	return func(ev map[string]any) bool {
		ms, ok := jsondoc.Int(ev, "/createdAt")
		if ok {
			ev["createdAt"] = json.Number(strconv.FormatInt(ms+d.Milliseconds(), 10))
		}
		return ok
	}
}

// boolAsString sends a boolean member as the string "true" or "false".
func boolAsString(key string) func(obj map[string]any) bool {
	return func(obj map[string]any) bool {
		b, ok := obj[key].(bool)
		if ok {
			obj[key] = strconv.FormatBool(b)
		}
		return ok
	}
}

// sharedID gives every event of one video the same id, derived from the
// video, so that walks of any page size agree on it.
func sharedID(ev map[string]any) bool {
	id, ok := jsondoc.String(ev, "/video/platformVideoId")
	if ok {
		sum := sha256.Sum256([]byte(id))
		ev["id"] = "evt_" + hex.EncodeToString(sum[:8])
	}
	return ok
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
		ref = map[string]any{"platformVideoId": "dQw4w9WgXcQ", "currentTitle": "A video", "currentThumbnailUrl": "https://i.example.com/vi/dQw4w9WgXcQ/default.jpg", "publishedAt": json.Number(strconv.FormatInt(simulator.DefaultStart.UnixMilli(), 10))}
	}
	changed := false
	eachEvent(doc, func(ev map[string]any) {
		if t, _ := ev["type"].(string); schemas.IsChannelLevel(t) {
			ev["video"], changed = ref, true
		}
	})
	return changed
}

var timestampKeys = []string{"createdAt", "publishedAt", "firstSeenAt"}

// scale multiplies the integers of the members named keys by mul/div.
func scale(keys []string, mul, div int64) func(*http.Request, any) bool {
	return func(_ *http.Request, doc any) bool {
		changed := false
		for _, key := range keys {
			changed = members(doc, key, func(obj map[string]any) bool {
				ms, ok := jsondoc.Int(obj, "/"+key)
				if ok {
					obj[key] = json.Number(strconv.FormatInt(ms*mul/div, 10))
				}
				return ok
			}) || changed
		}
		return changed
	}
}

func publishedISO(_ *http.Request, doc any) bool {
	return members(doc, "publishedAt", func(obj map[string]any) bool {
		ms, ok := jsondoc.Int(obj, "/publishedAt")
		if ok {
			obj["publishedAt"] = time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z")
		}
		return ok
	})
}

// statsEdit changes the counters of every video that has them: the video of
// a video_published event and the VideoSummary of an entry.
func statsEdit(edit func(video map[string]any) bool) func(*http.Request, any) bool {
	return func(_ *http.Request, doc any) bool {
		changed := false
		eachEvent(doc, func(ev map[string]any) {
			if v, ok := ev["video"].(map[string]any); ok && ev["type"] == schemas.TypeVideoPublished {
				changed = edit(v) || changed
			}
		})
		for _, entry := range entries(doc) {
			if v, ok := entry["video"].(map[string]any); ok {
				changed = edit(v) || changed
			}
		}
		return changed
	}
}

// entryEdit changes every VideoEntry of a tracked-videos answer.
func entryEdit(edit func(entry map[string]any) bool) func(*http.Request, any) bool {
	return func(_ *http.Request, doc any) bool {
		changed := false
		for _, entry := range entries(doc) {
			changed = edit(entry) || changed
		}
		return changed
	}
}

func negativeSampleViews(entry map[string]any) bool {
	changed := false
	for _, sm := range jsondoc.Items(entry, "/statSamples") {
		if sample, ok := sm.(map[string]any); ok {
			sample["viewCount"], changed = json.Number("-1"), true
		}
	}
	return changed
}

func channelThumbnailNotURI(_ *http.Request, doc any) bool {
	return members(doc, "channel", func(obj map[string]any) bool {
		ch, _ := obj["channel"].(map[string]any)
		if _, isString := ch["thumbnailUrl"].(string); isString {
			ch["thumbnailUrl"] = "avatar not available"
			return true
		}
		return false
	})
}
