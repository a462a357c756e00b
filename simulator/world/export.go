package world

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/tcmkit/tcmkit/schemas"
)

// exportVersion is the version of the export format.
const exportVersion = 1

// snapshot is the export: the whole state. Events follow it as raw JSON.
type snapshot struct {
	Version  int            `json:"version"`
	Config   configState    `json:"config"`
	EdgeRate float64        `json:"edgeRate"`
	Now      int64          `json:"now"`
	Tick     int64          `json:"tick"`
	Channels []*channel     `json:"channels"`
	Videos   []*video       `json:"videos"`
	Accounts []accountState `json:"accounts"`
	// Events is filled on import only; Export streams them.
	Events []json.RawMessage `json:"events,omitempty"`
}

type configState struct {
	Seed      int64   `json:"seed"`
	Channels  int     `json:"channels"`
	HistoryMs int64   `json:"historyMs"`
	Start     int64   `json:"start"`
	EdgeRate  float64 `json:"edgeRate"`
}

type accountState struct {
	ID       string   `json:"id"`
	Plan     Plan     `json:"plan"`
	Channels []string `json:"channels"`
}

// Export writes the whole world as one JSON document: configuration, clock,
// schedule, channels, videos with their stat history, accounts, and every
// event as recorded. Import reads it back into a world that answers and
// evolves byte for byte like this one.
func (w *World) Export(out io.Writer) error { return w.ExportSized(out, nil) }

// ExportSized is Export with the exact size of the document told to sized
// before a byte is written: sized may refuse (its error is returned,
// nothing written) or say the size ahead (a Content-Length).
func (w *World) ExportSized(out io.Writer, sized func(n int64) error) error {
	return w.ExportCopy().WriteSized(out, sized)
}

// ExportCopy is the world at one moment, as an export shows it, written
// later without the world's lock: an export to a slow reader takes
// minutes, and the world must answer and poll meanwhile.
type ExportCopy struct{ w *World }

// ExportCopy copies what an export shows of the world now, under its lock:
// the channels, videos and accounts (a fraction of the world), not the
// event log, which it shares: a recorded event never changes, and the
// copy's ends (the events' heads, the chunks' lengths) are the log's now,
// so what is recorded later lies past them.
func (w *World) ExportCopy() ExportCopy {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.frozen.Load() {
		w.runUntil(w.now.Load())
	}
	c := &World{cfg: w.cfg, edgeRate: w.edgeRate}
	c.now.Store(w.now.Load())
	c.sched.tick = w.sched.tick
	c.channels = slices.Clone(w.channels) // nil stays nil, as the export writes it
	for i, ch := range c.channels {
		cc := *ch
		cc.Unknown = slices.Clone(ch.Unknown)
		c.channels[i] = &cc
	}
	c.videos = slices.Clone(w.videos)
	for i, v := range c.videos {
		c.videos[i] = v.clone()
	}
	c.accounts = slices.Clone(w.accounts)
	for i, a := range c.accounts {
		c.accounts[i] = &account{id: a.id, plan: a.plan, chans: slices.Clone(a.chans)}
	}
	c.log.heads = slices.Clip(w.log.heads)
	c.log.chunks = slices.Clone(w.log.chunks) // the last one's length moves as events are recorded
	return ExportCopy{c}
}

// WriteSized writes the copy as ExportSized does, a channel, a video and
// an event at a time, so memory stays bounded whatever the world's size.
func (e ExportCopy) WriteSized(out io.Writer, sized func(n int64) error) error {
	if sized != nil {
		var c counter
		if err := e.w.writeExport(&c); err != nil {
			return err
		}
		if err := sized(c.n); err != nil {
			return err
		}
	}
	return e.w.writeExport(out)
}

// counter counts what is written to it.
type counter struct{ n int64 }

func (c *counter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

// writeExport writes the snapshot's JSON (the bytes json.Marshal of a
// whole snapshot gives) piece by piece, then the events; w is an
// ExportCopy's, which nothing changes.
func (w *World) writeExport(out io.Writer) error {
	s := snapshot{
		Version: exportVersion,
		Config: configState{
			Seed: w.cfg.Seed, Channels: w.cfg.Channels, HistoryMs: w.cfg.History.Milliseconds(),
			Start: w.cfg.Start.UnixMilli(), EdgeRate: w.cfg.EdgeRate,
		},
		EdgeRate: w.edgeRate,
		Now:      w.now.Load(),
		Tick:     w.sched.tick,
	}
	for _, a := range w.accounts {
		pa := a.public(w)
		s.Accounts = append(s.Accounts, accountState{pa.ID, pa.Plan, pa.Channels})
	}
	head, err := json.Marshal(s) // channels and videos null: they follow one by one
	if err != nil {
		return fmt.Errorf("world: export: %w", err)
	}
	before, after, ok := bytes.Cut(head, []byte(`"channels":null,"videos":null,`))
	if !ok {
		return errors.New("world: export: the snapshot's layout changed")
	}
	bw := bufio.NewWriterSize(out, 1<<16)
	bw.Write(before)
	if err := writeList(bw, "channels", w.channels); err != nil {
		return err
	}
	if err := writeList(bw, "videos", w.videos); err != nil {
		return err
	}
	bw.Write(after[:len(after)-1]) // the accounts, without the closing brace
	bw.WriteString(`,"events":[`)
	for pos := range w.log.heads {
		if pos > 0 {
			bw.WriteByte(',')
		}
		bw.Write(w.log.raw(uint32(pos)))
	}
	bw.WriteString("]}\n")
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("world: export: %w", err)
	}
	return nil
}

// writeList writes "name":[...], as json.Marshal would (null when nil),
// one element at a time.
func writeList[T any](bw *bufio.Writer, name string, list []*T) error {
	bw.WriteString(`"` + name + `":`)
	if list == nil {
		bw.WriteString("null,")
		return nil
	}
	bw.WriteByte('[')
	for i, e := range list {
		if i > 0 {
			bw.WriteByte(',')
		}
		b, err := json.Marshal(e)
		if err != nil {
			return fmt.Errorf("world: export: %w", err)
		}
		bw.Write(b)
	}
	bw.WriteString("],")
	return nil
}

// eventHead is what Import reads of each event to index it.
type eventHead struct {
	CreatedAt *int64 `json:"createdAt"`
	Type      string `json:"type"`
	Channel   struct {
		ID string `json:"id"`
	} `json:"channel"`
	Video *struct {
		PlatformVideoID string `json:"platformVideoId"`
	} `json:"video"`
}

// Import reads a world written by Export. It trusts nothing it reads: an
// edited export is accepted only if what the world would serve from it
// validates (channel refs, video summaries, thumbnail variants, samples
// never negative, every event against the schema), so a big world takes a
// while: about 40 µs of CPU an event, spread over every core.
// Nothing but whitespace may follow the world.
func Import(r io.Reader) (*World, error) {
	w, rest, err := importFrom(r)
	if err == nil {
		err = onlySpace(rest)
	}
	if err != nil {
		return nil, fmt.Errorf("world: import: %w", err)
	}
	return w, nil
}

// importFrom reads the world at the start of r, and returns what follows.
func importFrom(r io.Reader) (*World, io.Reader, error) {
	dec := json.NewDecoder(r)
	var s snapshot
	if err := dec.Decode(&s); err != nil {
		return nil, nil, err
	}
	if err := s.importLimits(); err != nil {
		return nil, nil, err
	}
	w, err := fromSnapshot(&s)
	if err != nil {
		return nil, nil, err
	}
	return w, io.MultiReader(dec.Buffered(), r), nil
}

// fromSnapshot builds the world an export holds, checking each part in the
// order it is written: the clock, the channels, the videos, the events, the
// accounts.
func fromSnapshot(s *snapshot) (*World, error) {
	w, err := emptyFrom(s)
	if err != nil {
		return nil, err
	}
	chanBy, err := w.importChannels(s)
	if err != nil {
		return nil, err
	}
	if err := w.importVideos(s); err != nil {
		return nil, err
	}
	if err := w.importEvents(s.Events, chanBy); err != nil {
		return nil, err
	}
	if err := w.validateEvents(); err != nil {
		return nil, err
	}
	if err := w.importAccounts(s.Accounts, chanBy); err != nil {
		return nil, err
	}
	w.nextDue.Store(w.sched.tick * tickMs)
	w.internIDs()
	return w, nil
}

// emptyFrom makes the world of the export's version, config, edge rate and
// clock, with nothing in it yet.
func emptyFrom(s *snapshot) (*World, error) {
	if s.Version != exportVersion {
		return nil, fmt.Errorf("version %d, want %d", s.Version, exportVersion)
	}
	cfg, err := Config{
		Seed: s.Config.Seed, Channels: s.Config.Channels, History: time.Duration(s.Config.HistoryMs) * time.Millisecond,
		Start: time.UnixMilli(s.Config.Start), EdgeRate: s.Config.EdgeRate,
	}.normalize()
	if err != nil {
		return nil, err
	}
	if len(s.Channels) != cfg.Channels {
		return nil, fmt.Errorf("%d channels, config says %d", len(s.Channels), cfg.Channels)
	}
	if math.IsNaN(s.EdgeRate) || s.EdgeRate < 0 || s.EdgeRate > 1 {
		return nil, fmt.Errorf("edge rate %v out of 0..1", s.EdgeRate)
	}
	w := newEmpty(cfg)
	w.edgeRate = s.EdgeRate
	w.now.Store(s.Now)
	w.sched.tick = s.Tick
	if s.Tick > floorDiv(s.Now, tickMs)+1 {
		return nil, fmt.Errorf("tick %d is after now", s.Tick)
	}
	if s.Tick < floorDiv(s.Now, tickMs)-1 {
		// A schedule behind now would run every poll in between at the
		// first request (years of them, under the world's lock); an
		// export's is at most one poll interval behind.
		return nil, fmt.Errorf("tick %d is behind now (%d): want %d..%d, within a poll interval (%s) of now",
			s.Tick, s.Now, floorDiv(s.Now, tickMs)-1, floorDiv(s.Now, tickMs)+1, schemas.PollInterval)
	}
	return w, nil
}

// inRing says whether a poll at tick t fits the export's schedule ring.
func (s *snapshot) inRing(t int64) bool { return t >= s.Tick && t < s.Tick+ringSize }

// importChannels takes the export's channels and schedules their polls. It
// returns each channel's index by id, which events and accounts refer by.
func (w *World) importChannels(s *snapshot) (map[string]int32, error) {
	chanBy := make(map[string]int32, len(s.Channels))
	w.channels = s.Channels
	w.watchers = make([][]int32, len(s.Channels))
	for i, c := range s.Channels {
		switch {
		case c == nil || c.ID == "" || c.PlatformID == "":
			return nil, fmt.Errorf("channel %d: no id", i)
		case c.Offset >= uint32(tickMs) || !s.inRing(c.NextTick):
			return nil, fmt.Errorf("channel %s: schedule out of range", short(c.ID))
		}
		if _, dup := chanBy[c.ID]; dup {
			return nil, fmt.Errorf("channel %s: duplicate id", short(c.ID))
		}
		chanBy[c.ID] = int32(i)
		c.encodeRef()
		if c.Subs < 0 || c.SeenSubs < -1 {
			return nil, fmt.Errorf("channel %s: negative subscribers", short(c.ID))
		}
		if err := schemas.ValidateJSON(schemas.ChannelRef, c.ref); err != nil {
			return nil, fmt.Errorf("channel %s: %w", short(c.ID), err)
		}
		w.sched.push(c.NextTick, schedKey(c.Offset, uint32(i)|channelBit))
	}
	return chanBy, nil
}

// importVideos takes the export's videos, each of a channel already taken,
// and schedules their polls.
func (w *World) importVideos(s *snapshot) error {
	w.videos = s.Videos
	for i, v := range s.Videos {
		switch {
		case v == nil || v.ID == "":
			return fmt.Errorf("video %d: no id", i)
		case v.Channel < 0 || int(v.Channel) >= len(w.channels):
			return fmt.Errorf("video %s: no channel %d", short(v.ID), v.Channel)
		case v.Offset >= uint32(tickMs) || !s.inRing(v.NextTick):
			return fmt.Errorf("video %s: schedule out of range", short(v.ID))
		case !validTest(v.TitleTest) || !validTest(v.ThumbTest):
			return fmt.Errorf("video %s: broken A/B test", short(v.ID))
		}
		if err := w.checkVideo(v); err != nil {
			return fmt.Errorf("video %s: %w", short(v.ID), err)
		}
		if _, dup := w.videoByID[v.ID]; dup {
			return fmt.Errorf("video %s: duplicate id", short(v.ID))
		}
		w.videoByID[v.ID] = int32(i)
		w.sched.push(v.NextTick, schedKey(v.Offset, uint32(i)))
	}
	return nil
}

// importEvents adds the export's events to the log in their order, each of
// a known channel and video and none before the one it follows; the schema
// judges them afterwards (validateEvents), on every core.
func (w *World) importEvents(events []json.RawMessage, chanBy map[string]int32) error {
	for pos, raw := range events {
		var buf bytes.Buffer
		if err := json.Compact(&buf, raw); err != nil {
			return fmt.Errorf("event %d: %w", pos, err)
		}
		var eh eventHead
		if err := json.Unmarshal(buf.Bytes(), &eh); err != nil {
			return fmt.Errorf("event %d: %w", pos, err)
		}
		h := head{video: -1}
		typ, ok := typeIndex[eh.Type]
		ci, okc := chanBy[eh.Channel.ID]
		switch {
		case !ok:
			return fmt.Errorf("event %d: unknown type %q", pos, short(eh.Type))
		case !okc:
			return fmt.Errorf("event %d: unknown channel %q", pos, short(eh.Channel.ID))
		case eh.CreatedAt == nil || (pos > 0 && *eh.CreatedAt < w.last):
			return fmt.Errorf("event %d: createdAt missing or before the previous event's", pos)
		case !TimeInRange(*eh.CreatedAt):
			return timeError(fmt.Sprintf("event %d: createdAt", pos), *eh.CreatedAt)
		}
		h.typ, h.channel, h.createdAt = typ, ci, *eh.CreatedAt
		if !schemas.IsChannelLevel(eh.Type) {
			if eh.Video == nil {
				return fmt.Errorf("event %d: no video", pos)
			}
			vi, ok := w.videoByID[eh.Video.PlatformVideoID]
			if !ok || w.videos[vi].Channel != ci {
				return fmt.Errorf("event %d: unknown video %q of channel %q", pos, short(eh.Video.PlatformVideoID), short(eh.Channel.ID))
			}
			h.video = vi
			w.videos[vi].events = append(w.videos[vi].events, uint32(pos))
		}
		w.log.add(h, buf.Bytes())
		w.last = h.createdAt
	}
	return nil
}

// importAccounts adds the export's accounts, each with a known plan and
// the known channels it tracks.
func (w *World) importAccounts(accounts []accountState, chanBy map[string]int32) error {
	for _, as := range accounts {
		if as.ID == "" || w.accountBy[as.ID] != nil {
			return fmt.Errorf("account %q: empty or duplicate id", short(as.ID))
		}
		if as.Plan != Pro && as.Plan != Free {
			return fmt.Errorf("account %s: unknown plan %q", short(as.ID), short(string(as.Plan)))
		}
		var chans []int32
		for _, id := range as.Channels {
			ci, ok := chanBy[id]
			if !ok {
				return fmt.Errorf("account %s: unknown channel %q", short(as.ID), short(id))
			}
			chans = append(chans, ci)
		}
		if len(chans) == 0 {
			return fmt.Errorf("account %s: tracks no channel", short(as.ID))
		}
		w.addAccount(as.ID, as.Plan, chans)
	}
	return nil
}

func validTest(t *abTest) bool {
	return t == nil || (len(t.Variants) > 0 && t.Left > 0)
}

// checkVideo checks that an imported video makes valid documents now and
// that its polls will: its summary, its thumbnail variants, its samples.
func (w *World) checkVideo(v *video) error {
	if v.Views < 0 || v.Likes < 0 || v.Comments < 0 {
		return errors.New("negative counts")
	}
	b := appendStats([]byte{'{'}, v)
	b = appendKey(b, "channel", false)
	b = append(append(b, w.channels[v.Channel].ref...), '}')
	if err := schemas.ValidateJSON(schemas.VideoSummary, b); err != nil {
		return err
	}
	if v.ThumbTest != nil {
		for _, u := range v.ThumbTest.Variants {
			b = appendVideoRef(b[:0], &video{ID: v.ID, Title: v.Title, Thumb: u, PublishedAt: v.PublishedAt})
			if err := schemas.ValidateJSON(schemas.VideoRef, b[len(`,"video":`):]); err != nil {
				return fmt.Errorf("thumbnail variant: %w", err)
			}
		}
	}
	return checkSamples(v.Samples)
}

// validateEvents validates every event against the schema, on every core:
// the schema is the costly part of an import (about 50 µs an event).
func (w *World) validateEvents() error {
	n := len(w.log.heads)
	workers := min(runtime.GOMAXPROCS(0), max(1, n/256))
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for k := range workers {
		wg.Go(func() {
			for pos := k; pos < n; pos += workers {
				if err := schemas.ValidateJSON(schemas.Event, w.log.raw(uint32(pos))); err != nil {
					errs[k] = fmt.Errorf("event %d: %w", pos, err)
					return
				}
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}
