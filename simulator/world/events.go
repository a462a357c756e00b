package world

import (
	"github.com/tcmkit/tcmkit/schemas"
)

// eventLog holds every event's JSON in large chunks, and a small header
// per event; no per-event allocation, nothing for the GC to scan.
type eventLog struct {
	heads  []head
	chunks [][]byte
}

type head struct {
	createdAt int64
	off       uint32
	n         uint32
	chunk     uint32
	channel   int32
	video     int32 // -1 for channel-level events
	typ       uint8 // index into schemas.EventTypes
}

// A log's chunks double from minChunk to chunkSize: a small world (a
// fuzz input's, a test's) does not clear 4 MB for its first event.
const (
	minChunk  = 128 << 10
	chunkSize = 4 << 20
)

// nextChunk is the capacity of the log's next chunk, at least n.
func (l *eventLog) nextChunk(n int) int {
	size := chunkSize
	if k := len(l.chunks); k < 5 {
		size = minChunk << k
	}
	return max(size, n)
}

// tail is the free end of the last chunk, with room for any usual event:
// events are encoded in place, not copied in.
func (l *eventLog) tail() []byte {
	last := len(l.chunks) - 1
	if last < 0 || cap(l.chunks[last])-len(l.chunks[last]) < maxInPlace {
		l.chunks = append(l.chunks, make([]byte, 0, l.nextChunk(0)))
		last++
	}
	c := l.chunks[last]
	return c[len(c):len(c):cap(c)]
}

// maxInPlace is the room tail leaves; a bigger event still works (append
// moves it out of the chunk, and commit copies it back through add).
const maxInPlace = 64 << 10

// commitTail appends an event encoded in tail's buffer.
func (l *eventLog) commitTail(h head, b []byte) {
	last := len(l.chunks) - 1
	c := l.chunks[last]
	if len(b) == 0 || cap(c) == len(c) || &b[0] != &c[:len(c)+1][len(c)] {
		l.add(h, b) // it outgrew the chunk and moved
		return
	}
	h.chunk, h.off, h.n = uint32(last), uint32(len(c)), uint32(len(b))
	l.chunks[last] = c[:len(c)+len(b)]
	l.heads = append(l.heads, h)
}

func (l *eventLog) add(h head, raw []byte) {
	last := len(l.chunks) - 1
	if last < 0 || len(l.chunks[last])+len(raw) > cap(l.chunks[last]) {
		l.chunks = append(l.chunks, make([]byte, 0, l.nextChunk(len(raw))))
		last++
	}
	c := l.chunks[last]
	h.chunk, h.off, h.n = uint32(last), uint32(len(c)), uint32(len(raw))
	l.chunks[last] = append(c, raw...)
	l.heads = append(l.heads, h)
}

func (l *eventLog) raw(pos uint32) []byte {
	h := &l.heads[pos]
	return l.chunks[h.chunk][h.off : h.off+h.n : h.off+h.n]
}

// Event type indexes, in the order of schemas.EventTypes.
var typeIndex = func() map[string]uint8 {
	m := make(map[string]uint8, len(schemas.EventTypes))
	for i, t := range schemas.EventTypes {
		m[t] = uint8(i)
	}
	return m
}()

// eventID is unique per position: mix is a bijection.
func (w *World) eventID(b []byte, pos uint32) []byte {
	x := mix(uint64(pos) ^ w.seedHash)
	b = append(b, `"evt_`...)
	for i := 60; i >= 0; i -= 4 {
		b = append(b, hexDigits[x>>uint(i)&0xf])
	}
	return append(b, '"')
}

// begin starts an event of type typ on channel ci at poll time at, in the
// log's tail: it returns the buffer holding
// {"id":...,"createdAt":...,"type":...,"channel":{...} and the event's
// header. The caller appends its fields and calls commit.
func (w *World) begin(typ string, ci, vi int32, at int64) ([]byte, head) {
	created := max(at, w.last)
	pos := uint32(len(w.log.heads))
	b := appendKey(append(w.log.tail(), '{'), "id", true)
	b = w.eventID(b, pos)
	b = appendKey(b, "createdAt", false)
	b = appendInt(b, created)
	b = appendKey(b, "type", false)
	b = appendString(b, typ)
	b = appendKey(b, "channel", false)
	b = append(b, w.channels[ci].ref...)
	return b, head{createdAt: created, channel: ci, video: vi, typ: typeIndex[typ]}
}

// commit closes the event and appends it to the log and to the indexes of
// its video and of every account that tracks its channel.
func (w *World) commit(b []byte, h head) {
	b = append(b, '}')
	pos := uint32(len(w.log.heads))
	w.log.commitTail(h, b)
	w.last = h.createdAt
	if h.video >= 0 {
		v := w.videos[h.video]
		v.events = append(v.events, pos)
		v.ver++
	}
	for _, ai := range w.watchers[h.channel] {
		a := w.accounts[ai]
		a.feed = append(a.feed, pos)
	}
}

// appendVideoRef appends "video":{VideoRef}.
func appendVideoRef(b []byte, v *video) []byte {
	b = appendKey(b, "video", false)
	return append(appendRefFields(append(b, '{'), v), '}')
}

// appendRefFields appends the VideoRef fields, without braces; VideoStats
// starts with the same four.
func appendRefFields(b []byte, v *video) []byte {
	b = appendKey(b, "platformVideoId", true)
	b = appendString(b, v.ID)
	b = appendKey(b, "currentTitle", false)
	b = appendString(b, v.Title)
	b = appendKey(b, "currentThumbnailUrl", false)
	b = appendString(b, v.Thumb)
	b = appendKey(b, "publishedAt", false)
	return appendInt(b, v.PublishedAt)
}

// appendStats appends the VideoStats fields, without braces.
func appendStats(b []byte, v *video) []byte {
	b = appendRefFields(b, v)
	b = appendKey(b, "isMembersOnly", false)
	b = appendBool(b, v.MembersOnly)
	b = appendKey(b, "viewCount", false)
	b = appendCount(b, v.Views, v.Hidden&hideViews != 0)
	b = appendKey(b, "likeCount", false)
	b = appendCount(b, v.Likes, v.Hidden&hideLikes != 0)
	b = appendKey(b, "commentCount", false)
	b = appendCount(b, v.Comments, v.Hidden&hideComments != 0)
	return b
}

// The events the poller records. Each returns 1, the number of events made.

func (w *World) emitPublished(vi int32, at int64) int {
	v := w.videos[vi]
	b, h := w.begin(schemas.TypeVideoPublished, v.Channel, vi, at)
	b = appendKey(b, "video", false)
	b = appendStats(append(b, '{'), v)
	b = append(b, '}')
	w.commit(b, h)
	return 1
}

// emitVideo records an event of a video with string fields (name, value)
// pairs, a string list and a boolean as its type needs.
func (w *World) emitVideo(typ string, vi int32, at int64, fields ...string) int {
	v := w.videos[vi]
	b, h := w.begin(typ, v.Channel, vi, at)
	b = appendVideoRef(b, v)
	for i := 0; i+1 < len(fields); i += 2 {
		b = appendKey(b, fields[i], false)
		b = appendString(b, fields[i+1])
	}
	w.commit(b, h)
	return 1
}

func (w *World) emitABTest(typ, listKey string, vi int32, at int64, variants []string, finalKey, final string) int {
	v := w.videos[vi]
	b, h := w.begin(typ, v.Channel, vi, at)
	b = appendVideoRef(b, v)
	b = appendKey(b, listKey, false)
	b = appendStrings(b, variants)
	if finalKey != "" {
		b = appendKey(b, finalKey, false)
		b = appendString(b, final)
	}
	w.commit(b, h)
	return 1
}

func (w *World) emitMembersOnly(vi int32, at int64) int {
	v := w.videos[vi]
	b, h := w.begin(schemas.TypeMembersOnlyChanged, v.Channel, vi, at)
	b = appendVideoRef(b, v)
	b = appendKey(b, "isMembersOnly", false)
	b = appendBool(b, v.MembersOnly)
	w.commit(b, h)
	return 1
}

func (w *World) emitSubscribers(ci int32, at int64, old, cur int64) int {
	b, h := w.begin(schemas.TypeSubscriberChange, ci, -1, at)
	b = appendKey(b, "oldSubscriberCount", false)
	b = appendCount(b, old, old < 0)
	b = appendKey(b, "newSubscriberCount", false)
	b = appendInt(b, cur)
	w.commit(b, h)
	return 1
}

func (w *World) emitChannel(typ string, ci int32, at int64, k1, v1, k2, v2 string) int {
	b, h := w.begin(typ, ci, -1, at)
	b = appendKey(b, k1, false)
	b = appendString(b, v1)
	b = appendKey(b, k2, false)
	b = appendString(b, v2)
	w.commit(b, h)
	return 1
}

// pickOther returns a random element of list other than cur, if any.
func pickOther(r *rng, list []string, cur string) string {
	n := 0
	for _, s := range list {
		if s != cur {
			n++
		}
	}
	if n == 0 {
		return cur
	}
	k := r.intn(n)
	for _, s := range list {
		if s != cur {
			if k == 0 {
				return s
			}
			k--
		}
	}
	return cur
}
