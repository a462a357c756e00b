package world

import (
	"fmt"
	"math"
	"slices"

	"github.com/tcmkit/tcmkit/schemas"
)

// Videos returns the whole JSON 200 body of the tracked-videos operation for
// an account: a VideoEntry per distinct id (request order) that names a video
// of a channel the account tracks, the other distinct ids in missingVideoIds.
// The caller has validated ids against the request schema and the plan.
func (w *World) Videos(accountID string, ids []string) ([]byte, error) {
	return w.AppendVideos(nil, accountID, ids)
}

// AppendVideos is Videos appending to dst, for a server that reuses its
// buffers: VideosParts joined. On error dst is returned as it was.
func (w *World) AppendVideos(dst []byte, accountID string, ids []string) ([]byte, error) {
	parts, _, _, err := w.VideosParts(nil, nil, accountID, ids)
	if err != nil {
		return dst, err
	}
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	dst = slices.Grow(dst, n)
	for _, p := range parts {
		dst = append(dst, p...)
	}
	return dst, nil
}

// VideosParts is AppendVideos in pieces, to be written one after the
// other: a VideoEntry that is cached is a piece as the cache keeps it, not
// copied; what is built (an entry the cache does not hold, and
// missingVideoIds) goes into buf, returned for the caller's pool. Every
// piece stays valid while the caller holds it, whatever the world does
// meanwhile (a cached entry is never written again, only replaced), and
// until buf is reused. missing counts the distinct ids in
// missingVideoIds. On error parts and buf are returned as they were.
func (w *World) VideosParts(parts [][]byte, buf []byte, accountID string, ids []string) (_ [][]byte, _ []byte, missing int, _ error) {
	w.mu.RLock()
	defer w.mu.RUnlock()
	a, ok := w.accountBy[accountID]
	if !ok {
		return parts, buf, 0, fmt.Errorf("%w: %q", ErrNoAccount, accountID)
	}
	now := w.now.Load()
	out, b := append(parts, videosHead), buf
	// The videos and their cached entries are read for all ids first, each
	// step over all of them: the reads of one step do not wait on each
	// other, so the CPU overlaps their trips to memory (the videos of an
	// answer are scattered over a working set far larger than its caches).
	var vsArr [schemas.MaxVideoIDs]*video
	var csArr [schemas.MaxVideoIDs]*entryCache
	vs, cs := vsArr[:0], csArr[:0]
	if len(ids) > len(vsArr) {
		vs, cs = make([]*video, 0, len(ids)), make([]*entryCache, 0, len(ids))
	}
	for _, id := range ids {
		var v *video
		if vi, ok := w.videoByID[id]; ok {
			v = w.videos[vi]
		}
		vs = append(vs, v)
	}
	for _, v := range vs {
		var c *entryCache
		if v != nil {
			c = v.cache.Load()
		}
		cs = append(cs, c)
	}
	for i, c := range cs {
		if c != nil && !w.valid(c, vs[i], a.plan, now) {
			cs[i] = nil
		}
	}
	var absent []string
	first := true
	for i, id := range ids {
		v := vs[i]
		if v == nil || !a.tracks[v.Channel] {
			if !slices.Contains(absent, id) {
				absent = append(absent, id)
			}
			continue
		}
		if slices.Contains(vs[:i], v) {
			continue // a repeated id: a video is answered once
		}
		if c := cs[i]; c != nil {
			piece := c.b // the comma before it, then the entry
			if first {
				piece = piece[1:]
			}
			out = append(out, piece)
		} else {
			start := len(b)
			if !first {
				b = append(b, ',')
			}
			var err error
			if b, err = w.appendEntry(b, v, a.plan, now); err != nil {
				return parts, buf, 0, fmt.Errorf("world: video %q: %w", id, err)
			}
			out = append(out, b[start:len(b):len(b)])
		}
		first = false
	}
	start := len(b)
	b = append(b, `],"missingVideoIds":`...)
	b = appendStrings(b, absent)
	b = append(b, '}')
	return append(out, b[start:len(b):len(b)]), b, len(absent), nil
}

// KnownVideos says whether every id names a video of the world.
func (w *World) KnownVideos(ids []string) bool {
	w.mu.RLock()
	defer w.mu.RUnlock()
	for _, id := range ids {
		if _, ok := w.videoByID[id]; !ok {
			return false
		}
	}
	return true
}

// videosHead begins every tracked-videos answer; no one writes into it.
var videosHead = []byte(`{"videos":[`)

// entryCache is a video's encoded VideoEntry for one plan, valid while the
// video and its channel are unchanged and now is in [since, until].
type entryCache struct {
	ver, chVer   uint64
	plan         Plan
	since, until int64
	// b is a comma, then the entry: an answer written in pieces
	// (VideosParts) writes the separator and the entry at once. It is
	// never written to once kept.
	b []byte
}

// cachedEntry is v's cached entry for plan p at now, nil if there is none.
func (w *World) cachedEntry(v *video, p Plan, now int64) *entryCache {
	if c := v.cache.Load(); c != nil && w.valid(c, v, p, now) {
		return c
	}
	return nil
}

// valid says whether c, an entry v's cache held, is v's entry for plan p
// at now.
func (w *World) valid(c *entryCache, v *video, p Plan, now int64) bool {
	return !w.noCache && c.ver == v.ver && c.chVer == w.channels[v.Channel].ver && c.plan == p && c.since <= now && now <= c.until
}

// entryCacheBudget is the least bound of the bytes of all cached entries
// (entryBudget).
const entryCacheBudget = 64 << 20

func (w *World) appendEntry(b []byte, v *video, p Plan, now int64) ([]byte, error) {
	ch := w.channels[v.Channel]
	if c := w.cachedEntry(v, p, now); c != nil {
		return append(b, c.b[1:]...), nil
	}
	start := len(b)
	window := int64(p.WindowDays()) * dayMs
	from := now - window
	b = appendKey(append(b, '{'), "video", true)
	b = appendStats(append(b, '{'), v)
	b = appendKey(b, "channel", false)
	b = append(b, ch.ref...)
	b = append(b, '}')
	b = appendKey(b, "firstSeenAt", false)
	b = appendInt(b, v.FirstSeenAt)
	b = appendKey(b, "historyWindowDays", false)
	b = appendInt(b, int64(p.WindowDays()))
	b = appendKey(b, "isGraphLocked", false)
	locked := p != Pro || v.FirstSeenAt < from
	b = appendBool(b, locked)
	b = appendKey(b, "events", false)
	b = append(b, '[')
	for i := len(v.events) - 1; i >= 0; i-- {
		if i < len(v.events)-1 {
			b = append(b, ',')
		}
		b = append(b, w.log.raw(v.events[i])...)
	}
	b = append(b, ']')
	b = appendKey(b, "statSamples", false)
	b, slack, err := appendSamples(b, v.Samples, from, now-hourlyFor)
	if err != nil {
		return b, err
	}
	b = append(b, '}')
	if !locked {
		slack = min(slack, v.FirstSeenAt-from) // it locks once from passes it
	}
	until := now + slack
	if slack > math.MaxInt64-now {
		until = math.MaxInt64
	}
	if w.noCache {
		return b, nil
	}
	w.storeEntry(v, &entryCache{
		ver: v.ver, chVer: ch.ver, plan: p, since: now, until: until,
		b: append(append(make([]byte, 0, 1+len(b)-start), ','), b[start:]...),
	})
	return b, nil
}

// storeEntry caches an entry within the budget; past it, it drops the
// video's stale entry instead.
func (w *World) storeEntry(v *video, e *entryCache) {
	old := v.cache.Load()
	delta := int64(len(e.b))
	if old != nil {
		delta -= int64(len(old.b))
	}
	if w.cacheBytes.Load()+delta > w.entryBudget() {
		if old != nil && v.cache.CompareAndSwap(old, nil) {
			w.cacheBytes.Add(-int64(len(old.b)))
		}
		return
	}
	if v.cache.CompareAndSwap(old, e) {
		w.cacheBytes.Add(delta)
	}
}
