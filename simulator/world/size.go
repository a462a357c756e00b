package world

// EventBytes is the bytes of the JSON of every event recorded: about what
// a cache of every page of one account's feed holds (the simulator sizes
// its cache of pages after cursors by it).
func (w *World) EventBytes() int64 {
	w.mu.RLock()
	defer w.mu.RUnlock()
	return w.logBytes()
}

// logBytes is EventBytes; caller holds w.mu.
func (w *World) logBytes() int64 {
	var n int64
	for _, c := range w.log.chunks {
		n += int64(len(c))
	}
	return n
}

// entryBudget bounds the bytes of all cached VideoEntry documents: room
// for about every video's entry (the log's bytes for their events, and
// entrySampleBytes a video for the rest), and entryCacheBudget at least.
// A fixed 64 MB held a fifth of the entries of a world of 525 days, and
// random sets of 20 ids then built about half their entries afresh.
// Caller holds w.mu.
func (w *World) entryBudget() int64 {
	return max(entryCacheBudget, w.logBytes()+entrySampleBytes*int64(len(w.videos)))
}

// entrySampleBytes is about the bytes of a VideoEntry besides its events:
// the summary and some 80 stat samples.
const entrySampleBytes = 8 << 10
