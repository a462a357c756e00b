package variant

import (
	"cmp"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tcmkit/tcmkit/schemas"
)

// Heavy worlds: the contract bounds neither a title's length nor its
// characters, lets a VideoEntry hold events of every type, and says
// nothing of how dense its stat samples are. A server that uses that room
// makes large, costly answers; these draws make them.

// titleStyles are how the draw spells every title (video and channel).
var titleStyles = []string{"server", "long", "unicode", "long-unicode"}

// Heavy is the draw with every heavy choice made: long Unicode titles,
// channel-level events in VideoEntries, hourly samples and extra members
// on events.
func (d Draw) Heavy() Draw {
	d.Titles, d.EntryChannelEvents, d.HourlySamples, d.ExtraEvent = "long-unicode", true, true, true
	return d
}

// Pieces of heavy titles: combining marks, emoji sequences (ZWJ, flags,
// skin tones), right-to-left text and embeddings, zero-width characters.
const (
	unicodeHead = "\u202bשלום עולם\u202c 👨\u200d👩\u200d👧\u200d👦 "
	unicodeTail = " — e\u0301 n\u0303 a\u0308\u0323 🏳\ufe0f\u200d🌈 👋🏽 zero\u200bwidth\u200djoiner مرحبا \U0001D518\U0001D52B"
	longTail    = " — the full story, every detail explained, with the timeline, the people involved, what happened next and why it matters (part one of a series)"
)

// title is a title as the draw spells it: the server's title inside a
// fixed frame, so that two titles stay apart and a title reads the same
// wherever it appears.
func (d Draw) title(t string) string {
	switch d.Titles {
	case "long":
		return t + longTail + longTail
	case "unicode":
		return unicodeHead + t + unicodeTail
	case "long-unicode":
		return unicodeHead + t + unicodeTail + longTail + longTail + unicodeTail
	}
	return t
}

// titles respells every title of an event or a video object.
func (x *exchange) titles(o *object) {
	d := x.b.d
	if d.Titles == "server" || d.Titles == "" || o == nil {
		return
	}
	for _, k := range []string{"currentTitle", "oldTitle", "newTitle", "finalTitle", "oldChannelTitle", "newChannelTitle"} {
		if v, ok := o.get(k); ok {
			if s, isStr := v.(string); isStr {
				o.set(k, d.title(s))
			}
		}
	}
	for i, v := range o.list("titles") {
		if s, ok := v.(string); ok {
			o.list("titles")[i] = d.title(s)
		}
	}
	for _, k := range []string{"channel", "video"} {
		if v, _ := o.get(k); v != nil {
			if inner, _ := v.(*object); inner != nil {
				if k == "channel" {
					if s, ok := inner.get("title"); ok {
						if str, isStr := s.(string); isStr {
							inner.set("title", d.title(str))
						}
					}
					continue
				}
				x.titles(inner)
			}
		}
	}
}

// Bounds of the channel-level events a VideoEntry carries: the newest of
// its channel, from the first page(s) of the account's feed (each read
// again for every tracked-videos request: one page of 200 keeps that cheap).
const (
	entryChannelEvents = 4
	entryFeedPages     = 1
)

// channelEvents are the channel-level events of the account's feed (its
// first entryFeedPages pages, as the server has them), newest first, at
// most entryChannelEvents a channel, by the server's channel id.
func (x *exchange) channelEvents() map[string][]*object {
	out := map[string][]*object{}
	if x.b.feedInner == nil {
		return out
	}
	cursor := ""
	for range entryFeedPages {
		probe := x.r.Clone(x.r.Context())
		probe.Method = http.MethodGet
		q := url.Values{"limit": {strconv.Itoa(schemas.MaxPageSize)}}
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		u := *x.r.URL
		u.Path, u.RawQuery = schemas.PathFeed, q.Encode()
		probe.URL, probe.RequestURI = &u, u.RequestURI()
		in := x.serveInner(x.b.feedInner, probe, nil)
		page, _ := in.doc.(*object)
		if in.Status != http.StatusOK || page == nil {
			return out
		}
		for _, e := range page.list("events") {
			ev, _ := e.(*object)
			if ev == nil || !schemas.IsChannelLevel(ev.str("type")) {
				continue
			}
			ch, _ := ev.get("channel")
			chObj, _ := ch.(*object)
			id := chObj.str("id")
			if len(out[id]) < entryChannelEvents {
				out[id] = append(out[id], ev)
			}
		}
		next, _ := page.get("nextCursor")
		if cursor, _ = next.(string); cursor == "" {
			return out
		}
	}
	return out
}

// addChannelEvents puts the channel-level events of an entry's channel
// among its events (newest first, as the server orders them), each a copy:
// the draw rewrites every entry's events in place.
func addChannelEvents(entry *object, byChannel map[string][]*object) {
	v, _ := entry.get("video")
	video, _ := v.(*object)
	if video == nil {
		return
	}
	ch, _ := video.get("channel")
	chObj, _ := ch.(*object)
	if chObj == nil {
		return
	}
	events := entry.list("events")
	for _, ev := range byChannel[chObj.str("id")] {
		events = append(events, clone(ev))
	}
	slices.SortStableFunc(events, func(a, b any) int { return cmp.Compare(createdAt(b), createdAt(a)) })
	entry.set("events", events)
}

func createdAt(ev any) int64 {
	o, _ := ev.(*object)
	v, _ := o.get("createdAt")
	n, _ := v.(json.Number)
	i, _ := n.Int64()
	return i
}

// clone copies a document of objects and lists.
func clone(v any) any {
	switch t := v.(type) {
	case *object:
		c := &object{keys: slices.Clone(t.keys), vals: make([]any, len(t.vals))}
		for i, x := range t.vals {
			c.vals[i] = clone(x)
		}
		return c
	case []any:
		c := make([]any, len(t))
		for i, x := range t {
			c[i] = clone(x)
		}
		return c
	}
	return v
}

// hourlyFor is how far back the draw serves stat samples hourly (the
// server: the last 48 hours, then one a day).
const hourlyFor = 30 * 24 * time.Hour

// hourly fills the gaps of more than an hour between the samples of the
// last hourlyFor (oldest first, as the server serves them) with hourly
// samples whose counts lie between their neighbours'.
func hourly(samples []any, now time.Time) []any {
	from := now.Add(-hourlyFor).UnixMilli()
	hour := time.Hour.Milliseconds()
	out := make([]any, 0, len(samples))
	for i, s := range samples {
		out = append(out, s)
		if i+1 == len(samples) {
			break
		}
		a, _ := s.(*object)
		b, _ := samples[i+1].(*object)
		if a == nil || b == nil {
			continue
		}
		ta, tb := createdAt(a), createdAt(b)
		start := ta + hour
		if from > start { // the first hour after a within hourlyFor
			start = ta + (from-ta+hour-1)/hour*hour
		}
		for t := start; t < tb; t += hour {
			m := &object{}
			for _, k := range []string{"viewCount", "likeCount", "commentCount"} {
				m.set(k, between(a, b, k, t-ta, tb-ta))
			}
			m.set("createdAt", json.Number(strconv.FormatInt(t, 10)))
			out = append(out, m)
		}
	}
	return out
}

// between is a count at a fraction of the way from a to b: a's when
// either is null (hidden).
func between(a, b *object, k string, part, whole int64) any {
	va, _ := a.get(k)
	vb, _ := b.get(k)
	na, okA := va.(json.Number)
	nb, okB := vb.(json.Number)
	if !okA || !okB {
		return va
	}
	x, errA := na.Int64()
	y, errB := nb.Int64()
	if errA != nil || errB != nil || whole <= 0 {
		return va
	}
	return json.Number(strconv.FormatInt(x+int64(float64(y-x)*float64(part)/float64(whole)), 10))
}

// titleNote says how the draw spells titles, for String.
func (d Draw) titleNote() string {
	return map[string]string{"server": "as the server's", "long": "300+ characters", "unicode": "framed in combining marks, emoji sequences, right-to-left text, zero-width characters",
		"long-unicode": "300+ characters of combining marks, emoji sequences, right-to-left text, zero-width characters", "": "as the server's"}[d.Titles]
}

// heavyNote says what else the draw makes heavy, for String.
func (d Draw) heavyNote() string {
	var parts []string
	if d.EntryChannelEvents {
		parts = append(parts, "VideoEntries carry their channel's channel-level events")
	}
	if d.HourlySamples {
		parts = append(parts, "statSamples hourly over the last 30 days")
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, "; ")
}
