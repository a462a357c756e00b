package world

import (
	"maps"
	"slices"
	"sync"
)

// New's cost is the back-fill's polls (about 15 ms for 8 channels and 30
// days), and a fuzz test builds a simulator, so a world, for every input:
// most inputs share their world with the input they were mutated from. So
// New keeps the worlds it built, small ones only, and hands out copies:
// the same Config gives the same world whether built or copied (a test
// compares a copy with a world built afresh, after both moved on).
const (
	templateMaxBytes = 4 << 20  // a bigger world is built every time
	templatesBudget  = 32 << 20 // all the worlds kept, at most
)

var templates struct {
	mu    sync.Mutex
	list  []template // least recently used first
	bytes int64
}

type template struct {
	cfg  Config
	w    *World // never changed: only copied
	size int64
}

// fromTemplate is a copy of the world New built for cfg, if one is kept.
func fromTemplate(cfg Config) *World {
	templates.mu.Lock()
	defer templates.mu.Unlock()
	for i, t := range templates.list {
		if t.cfg == cfg {
			templates.list = append(slices.Delete(templates.list, i, i+1), t)
			return t.w.clone()
		}
	}
	return nil
}

// keepTemplate keeps a copy of a world New just built, if it is small.
func keepTemplate(cfg Config, w *World) {
	size := w.approxBytes()
	if size > templateMaxBytes {
		return
	}
	t := template{cfg: cfg, w: w.clone(), size: size}
	templates.mu.Lock()
	defer templates.mu.Unlock()
	for templates.bytes+size > templatesBudget && len(templates.list) > 0 {
		templates.bytes -= templates.list[0].size
		templates.list = slices.Delete(templates.list, 0, 1)
	}
	templates.list = append(templates.list, t)
	templates.bytes += size
}

// approxBytes is about what a copy of the world takes.
func (w *World) approxBytes() int64 {
	n := int64(len(w.log.heads)) * 40
	for _, c := range w.log.chunks {
		n += int64(len(c))
	}
	for _, v := range w.videos {
		n += 400 + int64(len(v.Samples)+4*len(v.events))
	}
	return n + 300*int64(len(w.channels))
}

// clone is a deep copy of the world, but for what never changes once
// written: event bytes, encoded channel refs, strings. The copy's log
// starts a new chunk for its next event, so the two never write to one
// array. Cached VideoEntry documents are not copied. Caller holds no lock
// of the copy; the original must not change meanwhile (a template never
// does).
func (w *World) clone() *World {
	c := &World{
		cfg: w.cfg, edgeRate: w.edgeRate, last: w.last,
		cursorKey: w.cursorKey, seedHash: w.seedHash, touched: w.touched, noCache: w.noCache,
		videoByID: maps.Clone(w.videoByID),
		accountBy: make(map[string]*account, len(w.accountBy)),
	}
	c.now.Store(w.now.Load())
	c.nextDue.Store(w.nextDue.Load())
	c.frozen.Store(w.frozen.Load())
	c.channels = make([]*channel, len(w.channels))
	for i, ch := range w.channels {
		cc := *ch
		cc.Unknown = slices.Clone(ch.Unknown)
		c.channels[i] = &cc
	}
	c.videos = make([]*video, len(w.videos))
	for i, v := range w.videos {
		c.videos[i] = v.clone()
	}
	c.log.heads = slices.Clone(w.log.heads)
	c.log.chunks = slices.Clone(w.log.chunks)
	if last := len(c.log.chunks) - 1; last >= 0 {
		c.log.chunks[last] = slices.Clip(c.log.chunks[last])
	}
	c.watchers = make([][]int32, len(w.watchers))
	for i, ws := range w.watchers {
		c.watchers[i] = slices.Clone(ws)
	}
	c.accounts = make([]*account, len(w.accounts))
	for i, a := range w.accounts {
		ca := &account{id: a.id, plan: a.plan, chans: slices.Clone(a.chans), tracks: slices.Clone(a.tracks), feed: slices.Clone(a.feed)}
		c.accounts[i] = ca
		c.accountBy[ca.id] = ca
	}
	c.sched.tick, c.sched.pos, c.sched.sorted = w.sched.tick, w.sched.pos, w.sched.sorted
	for i := range w.sched.ring {
		c.sched.ring[i] = slices.Clone(w.sched.ring[i])
	}
	return c
}

// clone copies a video's state, field by field (the entry cache is an
// atomic, not copied); a test checks that no field is left out.
func (v *video) clone() *video {
	return &video{
		Polls: v.Polls, Offset: v.Offset, NextTick: v.NextTick, PublishedAt: v.PublishedAt, LastPoll: v.LastPoll,
		Reach: v.Reach, Expect: v.Expect, Tau: v.Tau, LikeRate: v.LikeRate, CommentRate: v.CommentRate,
		Views: v.Views, Likes: v.Likes, Comments: v.Comments, Hidden: v.Hidden,
		SHour: v.SHour, TitleTest: v.TitleTest.clone(), ThumbTest: v.ThumbTest.clone(),
		ID: v.ID, Channel: v.Channel, MembersOnly: v.MembersOnly, FirstSeenAt: v.FirstSeenAt, Title: v.Title, Thumb: v.Thumb,
		Samples: slices.Clone(v.Samples), ST: v.ST, SV: v.SV, SL: v.SL, SC: v.SC,
		events: slices.Clone(v.events), ver: v.ver, Unknown: slices.Clone(v.Unknown),
	}
}

func (t *abTest) clone() *abTest {
	if t == nil {
		return nil
	}
	return &abTest{Variants: slices.Clone(t.Variants), Left: t.Left}
}
