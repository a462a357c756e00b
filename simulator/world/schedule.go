package world

import (
	"slices"
	"time"

	"github.com/tcmkit/tcmkit/schemas"
)

const (
	tickMs = int64(schemas.PollInterval / time.Millisecond)
	hourMs = int64(time.Hour / time.Millisecond)
	dayMs  = 24 * hourMs
	// ringSize is a power of two above the longest interval (a day, 96 ticks),
	// so a reschedule never lands in the slot being processed.
	ringSize = 128
	// channelEvery is a channel's poll interval, in ticks (hourly).
	channelEvery = int64(time.Hour / schemas.PollInterval)
	// channelBit marks a channel in a schedule key; without it, a video.
	channelBit = 1 << 31
)

// freshFor is how long a new video is polled every tick.
const freshFor = 12 * hourMs

// videoEvery is a video's poll interval in ticks at a given age.
func videoEvery(ageMs int64) int64 {
	switch {
	case ageMs < freshFor:
		return 1
	case ageMs < 2*dayMs:
		return hourMs / tickMs
	case ageMs < 7*dayMs:
		return 6 * hourMs / tickMs
	default:
		return dayMs / tickMs
	}
}

// schedule is a calendar queue: one slot per tick, holding keys
// offset<<32 | entity, sorted when the tick's turn comes. An entity's poll
// time is tick*tickMs + offset.
type schedule struct {
	ring   [ringSize][]uint64
	tick   int64 // the tick being processed
	pos    int   // next key of the current slot, once sorted
	sorted bool
}

func schedKey(offset uint32, entity uint32) uint64 { return uint64(offset)<<32 | uint64(entity) }

func slot(tick int64) int { return int(tick & (ringSize - 1)) }

func (s *schedule) push(tick int64, key uint64) {
	i := slot(tick)
	if tick == s.tick && s.sorted {
		// Not reached by the poller (it never schedules into the current
		// tick); kept correct anyway.
		at, _ := slices.BinarySearch(s.ring[i][s.pos:], key)
		s.ring[i] = slices.Insert(s.ring[i], s.pos+at, key)
		return
	}
	s.ring[i] = append(s.ring[i], key)
}

// runUntil runs every scheduled poll with time <= t, in schedule order, and
// returns the number of events made. Caller holds w.mu.
func (w *World) runUntil(t int64) int {
	n := 0
	s := &w.sched
	for {
		base := s.tick * tickMs
		if base > t {
			break
		}
		i := slot(s.tick)
		if !s.sorted {
			slices.Sort(s.ring[i])
			s.sorted = true
		}
		for s.pos < len(s.ring[i]) {
			k := s.ring[i][s.pos]
			at := base + int64(k>>32)
			if at > t {
				w.nextDue.Store(at)
				return n
			}
			s.pos++
			if ahead := s.pos + touchAhead; ahead < len(s.ring[i]) {
				w.touch(uint32(s.ring[i][ahead]))
			}
			n += w.pollScheduled(uint32(k), at)
		}
		s.ring[i] = s.ring[i][:0]
		s.tick++
		s.pos = 0
		s.sorted = false
	}
	w.nextDue.Store(s.tick * tickMs)
	return n
}

func (w *World) pollScheduled(entity uint32, at int64) int {
	tick := floorDiv(at, tickMs)
	if entity&channelBit != 0 {
		i := int32(entity &^ channelBit)
		c := w.channels[i]
		n := w.pollChannel(i, at)
		c.NextTick = tick + channelEvery
		w.sched.push(c.NextTick, schedKey(c.Offset, entity))
		return n
	}
	v := w.videos[entity]
	n := w.pollVideo(int32(entity), at)
	v.NextTick = tick + videoEvery(at-v.PublishedAt)
	w.sched.push(v.NextTick, schedKey(v.Offset, entity))
	return n
}

// firstTick is the first tick at which an entity with this offset polls at
// or after t.
func firstTick(t int64, offset uint32) int64 {
	k := floorDiv(t, tickMs)
	if k*tickMs+int64(offset) < t {
		k++
	}
	return k
}

// touchAhead is how many polls ahead runUntil reads an entity's state, so
// that its cache miss overlaps the polls in between.
const touchAhead = 4

func (w *World) touch(entity uint32) {
	if entity&channelBit == 0 {
		w.touched += w.videos[entity].Polls
	}
}
