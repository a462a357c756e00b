package world

import (
	"fmt"
	"slices"
)

// Videos returns the whole JSON 200 body of the tracked-videos operation for
// an account: a VideoEntry per distinct id (request order) that names a video
// of a channel the account tracks, the other distinct ids in missingVideoIds.
// The caller has validated ids against the request schema and the plan.
func (w *World) Videos(accountID string, ids []string) ([]byte, error) {
	return w.AppendVideos(nil, accountID, ids)
}

// AppendVideos is Videos appending to dst, for a server that reuses its
// buffers. On error dst is returned as it was.
func (w *World) AppendVideos(dst []byte, accountID string, ids []string) ([]byte, error) {
	w.mu.RLock()
	defer w.mu.RUnlock()
	a, ok := w.accountBy[accountID]
	if !ok {
		return dst, fmt.Errorf("%w: %q", ErrNoAccount, accountID)
	}
	windowDays := a.plan.WindowDays()
	now := w.now.Load()
	from := now - int64(windowDays)*dayMs

	// Size the answer up front: one allocation, no copying as it grows.
	size := 64
	for _, id := range ids {
		size += len(id) + 8
		if vi, ok := w.videoByID[id]; ok {
			v := w.videos[vi]
			size += 1024 + len(v.ID) + len(v.Title) + len(v.Thumb) + sampleJSONPerByte*len(v.Samples)
			for _, pos := range v.events {
				size += int(w.log.heads[pos].n) + 1
			}
		}
	}
	var missing []string
	b := slices.Grow(dst, size)
	b = append(b, `{"videos":[`...)
	first := true
	for i, id := range ids {
		if slices.Contains(ids[:i], id) {
			continue
		}
		vi, ok := w.videoByID[id]
		if !ok || !a.tracks[w.videos[vi].Channel] {
			missing = append(missing, id)
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		var err error
		if b, err = w.appendEntry(b, w.videos[vi], a.plan, windowDays, from, now-hourlyFor); err != nil {
			return dst, fmt.Errorf("world: video %q: %w", id, err)
		}
	}
	b = append(b, `],"missingVideoIds":`...)
	b = appendStrings(b, missing)
	return append(b, '}'), nil
}

// sampleJSONPerByte estimates the JSON bytes of a sample per byte of its
// record (about 90 for 8 or 9); thinning makes it an upper bound in practice.
const sampleJSONPerByte = 10

func (w *World) appendEntry(b []byte, v *video, p Plan, windowDays int, from, hourlyAfter int64) ([]byte, error) {
	b = appendKey(append(b, '{'), "video", true)
	b = appendStats(append(b, '{'), v)
	b = appendKey(b, "channel", false)
	b = append(b, w.channels[v.Channel].ref...)
	b = append(b, '}')
	b = appendKey(b, "firstSeenAt", false)
	b = appendInt(b, v.FirstSeenAt)
	b = appendKey(b, "historyWindowDays", false)
	b = appendInt(b, int64(windowDays))
	b = appendKey(b, "isGraphLocked", false)
	b = appendBool(b, p != Pro || v.FirstSeenAt < from)
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
	b, err := appendSamples(b, v.Samples, from, hourlyAfter)
	if err != nil {
		return b, err
	}
	return append(b, '}'), nil
}
