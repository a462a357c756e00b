package world

import (
	"math"

	"github.com/tcmkit/tcmkit/schemas"
)

// What a video poll may find, at most one per poll.
const (
	findMembers = iota
	findTitleAB
	findTitle
	findThumbAB
	findThumb
	finds
)

// Rates per hour of what a video poll finds, by age: younger than 24 h,
// 72 h, 7 days, older. Creators rework new videos most.
var findRates = [4][finds]float64{
	{0.003, 0.012, 0.045, 0.012, 0.03},
	{0.0015, 0.0045, 0.012, 0.0045, 0.009},
	{0.0008, 0.0015, 0.0045, 0.0015, 0.003},
	{0.0003, 0.00015, 0.0008, 0.00015, 0.0006},
}

var findTotals = func() (t [4]float64) {
	for band, rates := range findRates {
		for _, r := range rates {
			t[band] += r
		}
	}
	return t
}()

const (
	rateRename    = 1.0 / (40 * 24) // per channel, per hour
	rateAvatar    = 1.0 / (25 * 24)
	minABPolls    = 3
	extraABPolls  = 6 // a test lasts minABPolls + [0, extraABPolls) polls
	maxABVariants = 4
)

// find draws what a poll dt ms after the last one finds, or -1: one draw
// against the sum of the rates, then which in proportion to each.
func find(r *rng, band int, dt int64) int {
	if dt <= 0 {
		return -1
	}
	total := findTotals[band]
	x := total * float64(dt) / float64(hourMs)
	// 1 - e^-x; x stays below 0.05 with these rates, where three terms of
	// the series are exact to 1e-7 and much cheaper than math.Exp.
	p := x * (1 - x/2*(1-x/3))
	if x > 0.05 {
		p = -math.Expm1(-x)
	}
	u := r.float()
	if u >= p {
		return -1
	}
	pick := u / p * total
	for i, rate := range findRates[band] {
		if pick < rate {
			return i
		}
		pick -= rate
	}
	return finds - 1
}

func ageBand(ageMs int64) int {
	switch {
	case ageMs < dayMs:
		return 0
	case ageMs < 3*dayMs:
		return 1
	case ageMs < 7*dayMs:
		return 2
	default:
		return 3
	}
}

// pollChannel looks at a channel at time at: uploads since its last poll,
// subscribers, name and avatar.
func (w *World) pollChannel(ci int32, at int64) int {
	c := w.channels[ci]
	r := w.rngFor(kindChannel, uint64(ci), at, c.Polls)
	edge := w.edgeRate
	dt := at - c.LastPoll
	from := c.LastPoll
	c.LastPoll = at
	c.Polls++
	n := 0

	// Uploads published since the last poll are discovered now.
	for range r.poisson(c.Uploads*float64(dt)/float64(dayMs), 3) {
		pub := from + 1 + int64(r.float()*float64(max(dt-1, 0)))
		vi := int32(len(w.videos))
		w.addVideo(&r, ci, pub, at, floorDiv(at, tickMs)+1, edge)
		n += w.emitPublished(vi, at)
	}

	// Subscribers grow; a crossed milestone is reported once seen.
	if dt > 0 {
		c.Subs = addCount(c.Subs, float64(c.Subs)*c.Growth*float64(dt)/float64(dayMs)*r.between(0, 2), &r)
	}
	if r.float() < edge {
		c.SeenSubs = -1
	} else {
		if m := milestone(c.Subs); m != c.Milestone {
			c.Milestone = m
			n += w.emitSubscribers(ci, at, c.SeenSubs, c.Subs)
		}
		c.SeenSubs = c.Subs
	}

	if r.chance(rateRename, dt) {
		old := c.Title
		for c.Title == old {
			c.Title = channelTitle(&r, edge)
		}
		c.encodeRef()
		n += w.emitChannel(schemas.TypeChannelRenamed, ci, at, "oldChannelTitle", old, "newChannelTitle", c.Title)
	}
	// A channel without avatar keeps none: the event needs two URLs.
	if c.Avatar != "" && r.chance(rateAvatar, dt) {
		old := c.Avatar
		c.Avatar = avatarURL(&r, c.PlatformID)
		c.encodeRef()
		n += w.emitChannel(schemas.TypeChannelAvatarChanged, ci, at, "oldAvatarUrl", old, "newAvatarUrl", c.Avatar)
	}
	return n
}

// pollVideo looks at a video at time at: counters (a stat sample), A/B
// tests, title, thumbnail and members-only changes.
func (w *World) pollVideo(vi int32, at int64) int {
	v := w.videos[vi]
	r := w.rngFor(kindVideo, uint64(vi), at, v.Polls)
	edge := w.edgeRate
	dt := at - v.LastPoll
	v.grow(&r, at)
	v.Hidden = 0
	if r.float() < edge {
		v.Hidden = uint8(1 + r.intn(7))
	}
	v.LastPoll = at
	v.Polls++
	v.ver++
	v.sample(at)
	found := find(&r, ageBand(at-v.PublishedAt), dt)
	n := 0

	if found == findMembers {
		v.MembersOnly = !v.MembersOnly
		n += w.emitMembersOnly(vi, at)
	}

	switch t := v.TitleTest; {
	case t != nil:
		t.Left--
		if t.Left > 0 {
			v.Title = pickOther(&r, t.Variants, v.Title) // the rotation
			break
		}
		v.Title = t.Variants[r.intn(len(t.Variants))]
		v.TitleTest = nil
		n += w.emitABTest(schemas.TypeTitleABTestConcluded, "titles", vi, at, t.Variants, "finalTitle", v.Title)
	case found == findTitleAB:
		t := &abTest{Variants: []string{v.Title}, Left: minABPolls + r.intn(extraABPolls)}
		for want := 2 + r.intn(maxABVariants-1); len(t.Variants) < want; {
			t.Variants = appendNew(t.Variants, videoTitle(&r, edge))
		}
		v.TitleTest = t
		n += w.emitABTest(schemas.TypeTitleABTest, "titles", vi, at, t.Variants, "", "")
	case found == findTitle:
		old := v.Title
		for v.Title == old {
			v.Title = videoTitle(&r, edge)
		}
		n += w.emitVideo(schemas.TypeTitleChanged, vi, at, "oldTitle", old, "newTitle", v.Title)
	}

	switch t := v.ThumbTest; {
	case t != nil:
		t.Left--
		if t.Left > 0 {
			v.Thumb = pickOther(&r, t.Variants, v.Thumb)
			break
		}
		v.Thumb = t.Variants[r.intn(len(t.Variants))]
		v.ThumbTest = nil
		n += w.emitABTest(schemas.TypeThumbnailABTestConcluded, "thumbnailUrls", vi, at, t.Variants, "finalThumbnailUrl", v.Thumb)
	case found == findThumbAB:
		t := &abTest{Variants: []string{v.Thumb}, Left: minABPolls + r.intn(extraABPolls)}
		for want := 2 + r.intn(maxABVariants-1); len(t.Variants) < want; {
			t.Variants = appendNew(t.Variants, thumbURL(&r, v.ID, edge))
		}
		v.ThumbTest = t
		n += w.emitABTest(schemas.TypeThumbnailABTest, "thumbnailUrls", vi, at, t.Variants, "", "")
	case found == findThumb:
		old := v.Thumb
		for v.Thumb == old {
			v.Thumb = thumbURL(&r, v.ID, edge)
		}
		n += w.emitVideo(schemas.TypeThumbnailChanged, vi, at, "oldThumbnailUrl", old, "newThumbnailUrl", v.Thumb)
	}
	return n
}

// appendNew appends s unless list holds it already.
func appendNew(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}
