// Package world is the simulator's data: a seeded world of channels and
// videos, a poller that observes it in virtual time and records what changed
// as events, an append-only event log with per-account feed indexes and
// opaque cursors, and the tracked-videos view. It knows nothing of HTTP,
// keys or rate limits; the server builds on it.
//
// # Determinism
//
// Every random choice of a poll is drawn from a generator derived from
// (seed, entity, poll time, poll count), never from one shared stream, and
// polls run in one schedule order: tick, then the entity's offset inside the
// tick, then the entity. So the same Config and the same sequence of calls
// give byte-identical output, however time was advanced: one AdvanceTo(t+1h)
// equals four AdvanceTo(+15m). Text comes from gofakeit driven by that
// generator. Seed 0 is a seed like any other.
//
// # Polling schedule
//
// Virtual time is cut into ticks of schemas.PollInterval (15 min). Each
// channel and video has a fixed offset inside the tick (seeded), so polls roll
// through the quarter hour instead of happening all at once. Videos are polled
//
//   - every tick (15 min) while younger than 12 h,
//   - hourly while younger than 48 h,
//   - every 6 h while younger than 7 days,
//   - daily afterwards.
//
// Channels are polled hourly: for uploads (0.3 to 2.5 a day per channel; a
// video_published event when a poll finds one, and the video's first poll in
// the next tick), subscriber milestones (counts of 300 to 10 million growing
// 0.5% to 3% a day), renames (about one in 40 days) and avatar changes (one
// in 25 days). Each channel also starts with 4 to 12 videos published up to
// 180 days before the history began, which have no video_published event.
//
// A video poll records a stat sample (views follow a saturating curve with a
// long tail, likes and comments a per-video share of views) and finds at
// most one of: a title or thumbnail change, the start of a title or
// thumbnail A/B test, or a members-only switch, at rates per hour that fall
// with the video's age (findRates): a video has about 7 events in its
// first week, its video_published included. An A/B test event lists 2 to 4
// variants, the current one first; the shown variant then rotates for 2 to
// 7 polls without title_changed or thumbnail_changed events, and the next
// poll concludes it with a *_ab_test_concluded event naming the winner,
// which becomes current. PollAll polls everything at Now once more, besides
// the schedule.
//
// # Subscriber milestones
//
// A subscriber_change is recorded when a channel's count crosses a value
// with one significant digit: 1,000, 2,000, ..., 9,000, 10,000, 20,000 and
// so on (any power of ten times 1 to 9). newSubscriberCount is the count
// observed at that poll. oldSubscriberCount is the count observed at the
// channel's previous poll, or null when that poll could not see it (the
// platform hid the count: an edge case, at the edge rate) or there was none.
// A crossing seen while the count is hidden is reported at the next poll that
// sees it.
//
// # Events
//
// The log is append-only in one total order: createdAt, then position. An
// event's createdAt is its poll's time (the previous event's, should that
// be later), so createdAt never increases along a feed, and the events
// one poll records share it, as a real poller's would: a page boundary
// falls inside such a tie, and the cursor, a position, keeps them apart.
// Events are immutable snapshots: the embedded channel and video show their
// state when the event was recorded (after the change it reports), not their
// current state. Each event is JSON-encoded once, when it is recorded; a feed
// page is those bytes concatenated. Event ids are "evt_" and 16 hex digits.
//
// # Accounts and feeds
//
// The first account created tracks every channel (the server's seeded Pro
// account sees the whole world); every later account tracks a seeded subset
// of about half the channels, at least one. Account ids are "acc_1",
// "acc_2", ... in creation order. Each account keeps the positions of its
// channels' events, appended as events are recorded, so a page costs
// O(limit + log n) at any depth. A cursor is base64url (no padding) of the
// position of the last event returned and a MAC bound to the account id and
// the seed: garbage, truncated, altered or another account's cursors give
// ErrCursor. Events recorded after a walk started never make it repeat or skip
// an event. nextCursor is null exactly when no older event remains.
//
// # Tracked videos
//
// Videos answers each distinct requested id once, in request order (the first
// occurrence counts); a duplicate is neither answered twice nor listed as
// missing. An id is the video's platformVideoId; it is answered when such a
// video exists and its channel is tracked by the account, otherwise it goes
// to missingVideoIds. In a VideoEntry:
//
//   - video is the video's current state with its channel's current state;
//   - firstSeenAt is when the poller first saw the video: for uploads, the
//     time of the channel poll that found it (its video_published event has
//     that createdAt); for videos that existed before the history began,
//     the history's start;
//   - historyWindowDays is 30 for Pro, 7 for Free;
//   - statSamples are the samples of the last historyWindowDays, oldest
//     first. Every poll takes a sample, but at most one per clock hour is
//     kept (the first of the hour), and samples older than 48 hours are
//     served one per UTC day (the first of the day), so an entry holds
//     about 49 + historyWindowDays samples at most: graphs stay fine-grained
//     where a video changes fast and a 20-video answer stays small;
//   - isGraphLocked is true when the window hides part of the video's history
//     (it was first seen before the window began) or the plan is not Pro;
//   - events are all of the video's events, newest first, as in the feed.
//
// An encoded entry is cached per video and plan (room for about one entry
// a video in all, 64 MiB at least) and
// served again while neither the video nor its channel changed and the
// moving window has not cut a sample off; a test compares every cached
// answer with a fresh one. FeedPage and Videos allocate their answer;
// AppendFeedPage and AppendVideos append to a buffer the caller reuses,
// which matters with a big world, where each 30 KB allocation costs more in
// the allocator and the collector than the page costs to build.
//
// AdvanceTo's cost is that of the polls it runs: callers should bound how
// far one call may move the clock (a year of a default world takes about
// 2 s and makes 120,000 events; a world grows with its uploads).
//
// # Edge cases
//
// EdgeRate (0..1) is the probability of each edge case at its decision point:
// a channel without avatar (null thumbnailUrl), titles with emoji, non-ASCII
// scripts, quotes and backslashes, platformVideoIds of 12 to 32 characters
// instead of 11, counts near 2^53-1, counts hidden (null) at a poll, a hidden
// subscriber count, thumbnail URLs with query strings. With 0 none occurs.
package world

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Config describes a world. The zero value of each field means its default.
type Config struct {
	// Seed makes the world: same seed and calls, same bytes.
	Seed int64
	// Channels is the number of seeded channels (default 12).
	Channels int
	// History is the back-fill ending at Start (default 30 days).
	History time.Duration
	// Start is the virtual time at which the world is handed over
	// (default 2026-01-01T00:00:00Z).
	Start time.Time
	// EdgeRate is how often generated data hits edge cases, 0..1.
	EdgeRate float64
}

// Defaults and bounds of Config.
const (
	DefaultChannels = 12
	DefaultHistory  = 30 * 24 * time.Hour
	// MaxChannels and MaxHistory bound a world to what fits in memory.
	MaxChannels = 100_000
	MaxHistory  = 3 * 365 * 24 * time.Hour
)

// DefaultStart is the virtual time a world starts at when Config.Start is zero.
var DefaultStart = time.Date(2026, time.January, 1, 0, 0, 0, 0, time.UTC)

// Plan is an account's plan.
type Plan string

// The plans.
const (
	Free Plan = "free"
	Pro  Plan = "pro"
)

// History windows of the tracked-videos view, per plan, in days.
const (
	ProWindowDays  = 30
	FreeWindowDays = 7
)

// WindowDays is the history window of plan p, in days.
func (p Plan) WindowDays() int {
	if p == Pro {
		return ProWindowDays
	}
	return FreeWindowDays
}

// Account is an account of the world: its plan and the ids of the channels
// it tracks, in channel order.
type Account struct {
	ID       string
	Plan     Plan
	Channels []string
}

var (
	// ErrCursor is returned for a garbage, truncated, altered or foreign cursor.
	ErrCursor = errors.New("world: invalid cursor")
	// ErrNoAccount is returned for an unknown account id.
	ErrNoAccount = errors.New("world: no such account")
)

// World is a seeded, evolving world. Safe for concurrent use.
type World struct {
	mu sync.RWMutex
	// now is the virtual time up to which polls have run, in epoch ms.
	now atomic.Int64
	// nextDue is a lower bound of the next scheduled poll's time, so that
	// AdvanceTo is one atomic load when nothing is due.
	nextDue atomic.Int64

	cfg      Config
	edgeRate float64

	channels  []*channel
	videos    []*video
	videoByID map[string]int32

	log  eventLog
	last int64 // createdAt of the newest event

	accounts  []*account
	accountBy map[string]*account
	watchers  [][]int32 // per channel: the accounts that track it

	sched     schedule
	cursorKey [32]byte
	seedHash  uint64
	touched   uint32 // a sink for runUntil's reads ahead

	frozen atomic.Bool // Freeze: time passes, nothing is polled

	cacheBytes atomic.Int64 // bytes of cached VideoEntry documents
	noCache    bool         // tests compare cached entries with fresh ones
}

// New builds a world: seeded channels and videos, and History back-filled by
// polling from Start-History to Start. A small world is built once per
// Config and copied after (clone.go).
func New(cfg Config) (*World, error) {
	cfg, err := cfg.normalize()
	if err != nil {
		return nil, err
	}
	if w := fromTemplate(cfg); w != nil {
		return w, nil
	}
	w := build(cfg)
	keepTemplate(cfg, w)
	return w, nil
}

// build builds the world of a normalized Config.
func build(cfg Config) *World {
	w := newEmpty(cfg)
	w.edgeRate = cfg.EdgeRate
	t0 := cfg.Start.Add(-cfg.History).UnixMilli()
	w.now.Store(t0)
	w.sched.tick = floorDiv(t0, tickMs)
	w.seedWorld(t0)
	w.mu.Lock()
	w.runUntil(cfg.Start.UnixMilli())
	w.mu.Unlock()
	w.raiseNow(cfg.Start.UnixMilli())
	w.internIDs()
	return w
}

// internIDs puts the videos' ids in one string and keys videoByID with
// pieces of it. A tracked-videos request compares each id it asks for with
// a key: keys scattered over the heap cost a trip to memory each, as a
// server's answers sweep the CPU's caches; keys side by side stay in them.
// Videos published later keep ids of their own.
func (w *World) internIDs() {
	n := 0
	for _, v := range w.videos {
		n += len(v.ID)
	}
	var sb strings.Builder
	sb.Grow(n)
	for _, v := range w.videos {
		sb.WriteString(v.ID)
	}
	all := sb.String()
	byID := make(map[string]int32, len(w.videos))
	for i, v := range w.videos {
		v.ID, all = all[:len(v.ID)], all[len(v.ID):]
		byID[v.ID] = int32(i)
	}
	w.videoByID = byID
}

func (c Config) normalize() (Config, error) {
	if c.Channels == 0 {
		c.Channels = DefaultChannels
	}
	if c.History == 0 {
		c.History = DefaultHistory
	}
	if c.Start.IsZero() {
		c.Start = DefaultStart
	}
	c.Start = c.Start.UTC().Truncate(time.Millisecond)
	switch {
	case c.Channels < 0 || c.Channels > MaxChannels:
		return c, fmt.Errorf("world: channels must be 1..%d, got %d", MaxChannels, c.Channels)
	case c.History < 0 || c.History > MaxHistory:
		return c, fmt.Errorf("world: history must be 0..%s, got %s", MaxHistory, c.History)
	case math.IsNaN(c.EdgeRate) || c.EdgeRate < 0 || c.EdgeRate > 1:
		return c, fmt.Errorf("world: edge rate must be 0..1, got %v", c.EdgeRate)
	}
	return c, nil
}

func newEmpty(cfg Config) *World {
	w := &World{
		cfg:       cfg,
		videoByID: make(map[string]int32),
		accountBy: make(map[string]*account),
	}
	w.seedHash = mix(uint64(cfg.Seed) ^ 0x7463_6d6b_6974_2121)
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(cfg.Seed))
	w.cursorKey = sha256.Sum256(append([]byte("tcmkit world cursor key\x00"), b[:]...))
	return w
}

// Config returns the world's configuration, with defaults filled in.
func (w *World) Config() Config { return w.cfg }

// Now is the virtual time up to which polls have run.
func (w *World) Now() time.Time { return time.UnixMilli(w.now.Load()).UTC() }

func (w *World) raiseNow(ms int64) {
	for {
		cur := w.now.Load()
		if ms <= cur || w.now.CompareAndSwap(cur, ms) {
			return
		}
	}
}

// AdvanceTo runs every poll due at or before t, in schedule order, and
// returns the number of events made. When nothing is due it costs one atomic
// load (and a compare-and-swap of Now), so it may be called on every request.
// A t before Now changes nothing.
func (w *World) AdvanceTo(t time.Time) int {
	ms := t.UnixMilli()
	if ms < w.nextDue.Load() || w.frozen.Load() {
		w.raiseNow(ms)
		return 0
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	n := w.runUntil(ms)
	w.raiseNow(ms)
	return n
}

// PollAll polls every channel and video at Now, besides the schedule (which
// it leaves as it is), and returns the number of events made. Videos that
// this very poll discovers are first polled on the schedule.
func (w *World) PollAll() int {
	if w.frozen.Load() {
		return 0
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	at := w.now.Load()
	n := w.runUntil(at)
	nv := len(w.videos)
	for i := range w.channels {
		n += w.pollChannel(int32(i), at)
	}
	for i := range nv {
		n += w.pollVideo(int32(i), at)
	}
	return n
}

// Freeze stops the world: from now on time passes (Now follows AdvanceTo)
// but nothing is polled, so it serves what it holds, a recording as it
// was recorded (tcmkit simulate --frozen).
func (w *World) Freeze() { w.frozen.Store(true) }

// SetEdgeRate sets how often polls from now on hit edge cases (clamped to
// 0..1; NaN is 0).
func (w *World) SetEdgeRate(r float64) {
	if math.IsNaN(r) || r < 0 {
		r = 0
	}
	r = min(r, 1)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.runUntil(w.now.Load())
	w.edgeRate = r
}

// EdgeRate is the current edge rate.
func (w *World) EdgeRate() float64 {
	w.mu.RLock()
	defer w.mu.RUnlock()
	return w.edgeRate
}

// Stats counts what the world holds.
type Stats struct {
	Channels, Videos, Events, Accounts int
}

// Stats counts channels, videos, events and accounts.
func (w *World) Stats() Stats {
	w.mu.RLock()
	defer w.mu.RUnlock()
	return Stats{len(w.channels), len(w.videos), len(w.log.heads), len(w.accounts)}
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}
