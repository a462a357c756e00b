package world

import (
	"cmp"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"time"

	"github.com/tcmkit/tcmkit/schemas"
)

// A recorded world (tcmkit record) is built from what the API showed of
// an account: its feed's events and the tracked-videos entries of the
// videos they name. It is a world like any other (the export format, with
// two additive members: "unknown" on a channel or a video lists what the
// API did not show), so it is served with the whole contract and, unless
// frozen, keeps growing. What the API shows is kept as shown: event ids,
// order and fields, video summaries, firstSeenAt, stat samples. What it
// does not show is not invented: a subscriber count seen at no milestone is
// unknown (0, and no milestone is reported until one is), counters of a
// video no entry showed are null. The model of growth (uploads a day,
// subscriber growth, each video's curve) is estimated from what was seen.

// Observed is what a recorder saw.
type Observed struct {
	// Now is the recording's time, epoch ms: the world's clock starts here.
	Now int64
	// Events are the events seen, oldest first (the feeds merged).
	Events []json.RawMessage
	// Entries are the VideoEntry documents of tracked videos.
	Entries []json.RawMessage
	// Accounts are the accounts recorded, each with the ids of the
	// channels its feed showed.
	Accounts []Account
	// MaxEvents bounds the events of the world (0: none): the events of
	// entries beyond it are left out.
	MaxEvents int
}

// Unknown values of a recorded channel or video, as its "unknown" member
// names them.
const (
	UnknownSubscribers = "subscribers"
	UnknownCounts      = "counts"
	UnknownMembersOnly = "isMembersOnly"
	UnknownFirstSeenAt = "firstSeenAt"
	UnknownSamples     = "statSamples"
)

// Recorded builds the world of a recording. Its seed, which makes the
// cursors and the ids of the events it grows, comes from what was
// recorded. It fails when what was shown cannot make a world the contract
// allows (an event the schema refuses, a video under two channels): that
// server broke the contract. Events are ordered by createdAt, the feeds'
// order kept among equal times.
func Recorded(o Observed) (*World, error) {
	events := make([]*obsEvent, 0, len(o.Events))
	seen := make(map[string]bool, len(o.Events))
	add := func(raw []byte, what string) error {
		e, err := parseEvent(raw)
		if err != nil {
			return fmt.Errorf("%s%s: %w", what, idOf(raw), err)
		}
		if !seen[e.ID] && (o.MaxEvents <= 0 || len(events) < o.MaxEvents) {
			seen[e.ID] = true
			events = append(events, e)
		}
		return nil
	}
	for i, raw := range o.Events {
		if err := add(raw, fmt.Sprintf("event %d", i)); err != nil {
			return nil, err
		}
	}
	entries := make([]*obsEntry, 0, len(o.Entries))
	for i, raw := range o.Entries {
		en, err := parseEntry(raw)
		if err != nil {
			return nil, fmt.Errorf("video entry %d: %w", i, err)
		}
		for j, ev := range en.Events {
			if err := add(ev, fmt.Sprintf("video entry %d, event %d", i, j)); err != nil {
				return nil, err
			}
		}
		entries = append(entries, en)
	}
	// Events only a video entry showed join the log at their time; the
	// feeds' order stands among equal times.
	slices.SortStableFunc(events, func(a, b *obsEvent) int { return cmp.Compare(a.CreatedAt, b.CreatedAt) })
	if len(events) == 0 && len(entries) == 0 {
		return nil, errors.New("world: recording: the API showed no event and no video: nothing to serve")
	}
	b := recBuilder{now: o.Now, chanBy: map[string]int{}, vidBy: map[string]int{}}
	for _, e := range events {
		b.now = max(b.now, e.CreatedAt)
	}
	for _, e := range events {
		if err := b.event(e); err != nil {
			return nil, err
		}
	}
	for _, en := range entries {
		if err := b.entry(en); err != nil {
			return nil, err
		}
	}
	return b.world(events, o.Accounts)
}

type recBuilder struct {
	now      int64
	channels []*channel
	chanBy   map[string]int
	videos   []*video
	vidBy    map[string]int
	// per channel: uploads seen and the first and last subscriber_change
	uploads  []int
	subsSeen [][2]obsSubs
}

type obsSubs struct {
	at, n int64
}

func (b *recBuilder) channelOf(c *obsChannel) int {
	i, ok := b.chanBy[c.ID]
	if !ok {
		i = len(b.channels)
		b.chanBy[c.ID] = i
		b.channels = append(b.channels, &channel{Unknown: []string{UnknownSubscribers}, SeenSubs: -1})
		b.uploads = append(b.uploads, 0)
		b.subsSeen = append(b.subsSeen, [2]obsSubs{})
	}
	// The newest showing wins: events come oldest first, entries last.
	ch := b.channels[i]
	ch.ID, ch.PlatformID, ch.Title, ch.Avatar = c.ID, c.PlatformID, c.Title, ""
	if c.Thumb != nil {
		ch.Avatar = *c.Thumb
	}
	return i
}

func (b *recBuilder) event(e *obsEvent) error {
	ci := b.channelOf(&e.Channel)
	ch := b.channels[ci]
	switch e.Type {
	case schemas.TypeVideoPublished:
		b.uploads[ci]++
	case schemas.TypeSubscriberChange:
		ch.Subs, ch.SeenSubs, ch.Milestone = e.NewSubs, e.NewSubs, milestone(e.NewSubs)
		ch.Unknown = nil
		s := obsSubs{e.CreatedAt, e.NewSubs}
		if b.subsSeen[ci][0].at == 0 {
			b.subsSeen[ci][0] = s
		}
		b.subsSeen[ci][1] = s
	}
	if e.Video == nil || schemas.IsChannelLevel(e.Type) {
		return nil
	}
	vi, ok := b.vidBy[e.Video.ID]
	if !ok {
		vi = len(b.videos)
		b.vidBy[e.Video.ID] = vi
		b.videos = append(b.videos, &video{
			ID: e.Video.ID, Channel: int32(ci), FirstSeenAt: e.CreatedAt, Hidden: hideViews | hideLikes | hideComments,
			Unknown: []string{UnknownCounts, UnknownMembersOnly, UnknownFirstSeenAt, UnknownSamples},
		})
	}
	v := b.videos[vi]
	if v.Channel != int32(ci) {
		return fmt.Errorf("world: recording: video %s shows in events of two channels", short(v.ID))
	}
	v.Title, v.Thumb, v.PublishedAt = e.Video.Title, e.Video.Thumb, e.Video.PublishedAt
	switch e.Type {
	case schemas.TypeVideoPublished:
		v.FirstSeenAt = e.CreatedAt
		v.Unknown = slices.DeleteFunc(v.Unknown, func(s string) bool { return s == UnknownFirstSeenAt })
		fallthrough
	case schemas.TypeMembersOnlyChanged:
		if e.Video.MembersOnly != nil {
			v.MembersOnly = *e.Video.MembersOnly
		} else {
			v.MembersOnly = e.Members
		}
		v.Unknown = slices.DeleteFunc(v.Unknown, func(s string) bool { return s == UnknownMembersOnly })
	case schemas.TypeTitleABTest:
		v.TitleTest = &abTest{Variants: e.Titles, Left: minABPolls}
	case schemas.TypeTitleABTestConcluded:
		v.TitleTest = nil
	case schemas.TypeThumbnailABTest:
		v.ThumbTest = &abTest{Variants: e.Thumbs, Left: minABPolls}
	case schemas.TypeThumbnailABTestConcluded:
		v.ThumbTest = nil
	}
	return nil
}

func (b *recBuilder) entry(en *obsEntry) error {
	if en.Video.Channel == nil {
		return fmt.Errorf("world: recording: video %s: no channel", short(en.Video.ID))
	}
	ci := b.channelOf(en.Video.Channel)
	vi, ok := b.vidBy[en.Video.ID]
	if !ok {
		vi = len(b.videos)
		b.vidBy[en.Video.ID] = vi
		b.videos = append(b.videos, &video{ID: en.Video.ID, Channel: int32(ci)})
	}
	v := b.videos[vi]
	if v.Channel != int32(ci) {
		return fmt.Errorf("world: recording: video %s shows under two channels", short(v.ID))
	}
	s := en.Video.state()
	v.Title, v.Thumb, v.PublishedAt, v.MembersOnly = s.Title, s.Thumb, s.PublishedAt, s.MembersOnly
	v.Views, v.Likes, v.Comments, v.Hidden = s.Views, s.Likes, s.Comments, s.Hidden
	v.FirstSeenAt = en.FirstSeenAt
	v.Unknown = nil
	b.now = max(b.now, en.FirstSeenAt, en.Video.PublishedAt)
	samples := slices.Clone(en.Samples)
	slices.SortStableFunc(samples, func(a, b obsSample) int { return cmp.Compare(a.CreatedAt, b.CreatedAt) })
	v.Samples, v.ST, v.SV, v.SL, v.SC = nil, 0, 0, 0, 0
	v.SHour = math.MinInt64
	for _, sm := range samples {
		views, likes, comments, hidden := counts(sm.Views, sm.Likes, sm.Comments)
		// A hidden counter keeps its last value: the stream holds deltas.
		if hidden&hideViews != 0 {
			views = v.SV
		}
		if hidden&hideLikes != 0 {
			likes = v.SL
		}
		if hidden&hideComments != 0 {
			comments = v.SC
		}
		v.Samples = binary.AppendVarint(v.Samples, sm.CreatedAt-v.ST)
		v.Samples = append(v.Samples, hidden)
		v.Samples = binary.AppendVarint(v.Samples, views-v.SV)
		v.Samples = binary.AppendVarint(v.Samples, likes-v.SL)
		v.Samples = binary.AppendVarint(v.Samples, comments-v.SC)
		v.ST, v.SV, v.SL, v.SC = sm.CreatedAt, views, likes, comments
		v.SHour = floorDiv(sm.CreatedAt, hourMs)
		b.now = max(b.now, sm.CreatedAt)
	}
	return nil
}

// offsetOf places an entity inside the poll tick, from its id: the same
// recording polls the same way.
func offsetOf(id string) uint32 {
	h := fnv.New64a()
	h.Write([]byte(id))
	return uint32(h.Sum64() % uint64(tickMs))
}

func (b *recBuilder) world(events []*obsEvent, accounts []Account) (*World, error) {
	now := b.now
	oldest := now
	for _, e := range events {
		oldest = min(oldest, e.CreatedAt)
	}
	for _, v := range b.videos {
		oldest = min(oldest, v.FirstSeenAt)
	}
	span := max(float64(now-oldest)/float64(dayMs), 1.0/24)
	next := floorDiv(now, tickMs) + 1
	seed := fnv.New64a()
	for i, c := range b.channels {
		seed.Write([]byte(c.ID))
		c.Offset = offsetOf(c.ID)
		c.NextTick, c.LastPoll = next, now
		// The recorded channel's pace: its uploads over the time seen, and
		// its growth between the first and last milestone seen (none when
		// fewer than two were: not invented).
		c.Uploads = float64(b.uploads[i]) / span
		if s := b.subsSeen[i]; s[0].n > 0 && s[1].at > s[0].at {
			days := float64(s[1].at-s[0].at) / float64(dayMs)
			c.Growth = min(math.Max(math.Log(float64(s[1].n)/float64(s[0].n))/days, 0), 0.1)
		}
	}
	for _, v := range b.videos {
		seed.Write([]byte(v.ID))
		v.Offset = offsetOf(v.ID)
		v.NextTick, v.LastPoll = next, now
		v.SHour = max(v.SHour, floorDiv(now, hourMs)) // no second sample of this hour
		v.Tau = 48
		if v.Hidden&hideViews == 0 && v.Views > 0 {
			// The curve through the counter as shown: growth goes on from it.
			// A video seen at its first hours would extrapolate wildly: its
			// reach stays within a hundred times what it has.
			v.Reach = min(float64(v.Views)/curve(v.Tau, now-v.PublishedAt), 100*float64(v.Views)+1000)
			v.Expect = float64(v.Views)
			v.LikeRate = float64(v.Likes) / float64(v.Views)
			v.CommentRate = float64(v.Comments) / float64(v.Views)
		}
		if v.Samples == nil {
			v.Samples = []byte{}
		}
	}
	channels := b.channels
	ids := make([]string, len(channels))
	for i, c := range channels {
		ids[i] = c.ID
	}
	var accs []accountState
	for _, a := range accounts {
		chans := slices.DeleteFunc(slices.Clone(a.Channels), func(id string) bool { _, ok := b.chanBy[id]; return !ok })
		if len(chans) == 0 {
			continue // an account whose feed showed nothing cannot be served
		}
		accs = append(accs, accountState{ID: a.ID, Plan: a.Plan, Channels: chans})
	}
	raw := make([]json.RawMessage, len(events))
	for i, e := range events {
		raw[i] = e.raw
	}
	s := snapshot{
		Version: exportVersion,
		Config: configState{
			Seed: int64(seed.Sum64() >> 1), Channels: len(channels), HistoryMs: min(now-oldest, int64(MaxHistory/time.Millisecond)),
			Start: now,
		},
		Now:      now,
		Tick:     floorDiv(now, tickMs),
		Channels: channels,
		Videos:   b.videos,
		Accounts: accs,
		Events:   raw,
	}
	if err := s.importLimits(); err != nil {
		return nil, fmt.Errorf("world: recording: %w", err)
	}
	w, err := fromSnapshot(&s)
	if err != nil {
		return nil, fmt.Errorf("world: recording: %w", err)
	}
	return w, nil
}

// curve is viewsAt for a reach of 1: the share of its reach a video has at
// an age.
func curve(tau float64, ageMs int64) float64 {
	v := video{Reach: 1, Tau: tau}
	return max(v.viewsAt(ageMs), 1e-9)
}
