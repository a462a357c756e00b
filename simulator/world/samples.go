package world

import (
	"encoding/binary"
	"errors"
	"math"
)

// A video's stat history is a byte stream of records, each a delta from the
// one before (the first from zero): time (varint), hidden flags (byte),
// views, likes, comments (varints). About 8 bytes a sample instead of 40.

// sample records the counters observed at `at`, unless a sample of the same
// clock hour is kept already.
func (v *video) sample(at int64) {
	h := floorDiv(at, hourMs)
	if h == v.SHour {
		return
	}
	v.SHour = h
	b := binary.AppendVarint(v.Samples, at-v.ST)
	b = append(b, v.Hidden)
	b = binary.AppendVarint(b, v.Views-v.SV)
	b = binary.AppendVarint(b, v.Likes-v.SL)
	b = binary.AppendVarint(b, v.Comments-v.SC)
	v.Samples = b
	v.ST, v.SV, v.SL, v.SC = at, v.Views, v.Likes, v.Comments
}

var errSamples = errors.New("world: corrupt stat samples")

// hourlyFor is how far back from now samples are served at their full
// (hourly) resolution; older ones are served one a day.
const hourlyFor = 48 * hourMs

// appendSamples appends the JSON array of the samples taken at or after
// from, oldest first: all of those taken at or after hourlyAfter, and before
// it the first of each UTC day. It also returns how far from and
// hourlyAfter may grow (by the same amount, as now does) before the array
// changes: the oldest sample served and the oldest served hourly stop
// being so one ms after they are reached.
func appendSamples(b []byte, stream []byte, from, hourlyAfter int64) (_ []byte, slack int64, err error) {
	b = append(b, '[')
	first := true
	slack = math.MaxInt64
	lastDay := int64(math.MinInt64)
	var t, views, likes, comments int64
	hourly := false
	for len(stream) > 0 {
		var d [3]int64
		dt, n := binary.Varint(stream)
		if n <= 0 || len(stream) < n+1 {
			return b, 0, errSamples
		}
		hidden := stream[n]
		stream = stream[n+1:]
		for i := range 3 {
			d[i], n = binary.Varint(stream)
			if n <= 0 {
				return b, 0, errSamples
			}
			stream = stream[n:]
		}
		t += dt
		views += d[0]
		likes += d[1]
		comments += d[2]
		if t < from {
			continue
		}
		if first {
			slack = min(slack, t-from)
		}
		if t < hourlyAfter {
			day := floorDiv(t, dayMs)
			if day == lastDay {
				continue
			}
			lastDay = day
		} else if !hourly {
			hourly = true
			slack = min(slack, t-hourlyAfter)
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = appendKey(append(b, '{'), "viewCount", true)
		b = appendCount(b, views, hidden&hideViews != 0)
		b = appendKey(b, "likeCount", false)
		b = appendCount(b, likes, hidden&hideLikes != 0)
		b = appendKey(b, "commentCount", false)
		b = appendCount(b, comments, hidden&hideComments != 0)
		b = appendKey(b, "createdAt", false)
		b = appendInt(b, t)
		b = append(b, '}')
	}
	return append(b, ']'), slack, nil
}

// checkSamples checks that a stream decodes and that its counters are never
// negative.
func checkSamples(stream []byte) error {
	var views, likes, comments int64
	for len(stream) > 0 {
		var d [4]int64
		n := 0
		for i := range d {
			d[i], n = binary.Varint(stream)
			if n <= 0 || (i == 0 && len(stream) < n+1) {
				return errSamples
			}
			stream = stream[n:]
			if i == 0 {
				stream = stream[1:] // the hidden flags
			}
		}
		views += d[1]
		likes += d[2]
		comments += d[3]
		if views < 0 || likes < 0 || comments < 0 {
			return errSamples
		}
	}
	return nil
}
