package record

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/tcmkit/tcmkit/schemas/outfile"
	"github.com/tcmkit/tcmkit/simulator"
	"github.com/tcmkit/tcmkit/simulator/world"
)

// unknowns is what no recording holds, and what this one does not.
func (ru *run) unknowns() []string {
	u := []string{
		"subscriber counts between milestones: a channel's count is known from its last subscriber_change only",
		"channels the accounts track that never appeared in a feed",
		"stat samples the API did not serve: before the Pro history window, and between those it served",
		"counters of videos no tracked-videos entry showed (a free account's channels): served as null",
		"account ids and plans beyond Pro and free: the accounts are acc_1 (Pro) and acc_2 (free)",
	}
	if ru.r.FreeKey == "" {
		u = append(u, "the free account's tracking (no --free-key): it tracks the Pro account's channels")
	}
	if ru.p.Bounded != "" {
		u = append(u, "events older than the last page read, and videos not asked for: "+ru.p.Bounded+" stopped the recording")
	}
	return u
}

// write builds the world from what was seen and writes the recording.
func (ru *run) write(ctx context.Context) (simulator.Recording, int64, error) {
	p := ru.p
	if p.Bounded != "" && ru.events() == 0 && len(p.Entries) == 0 {
		return simulator.Recording{}, 0, fmt.Errorf("nothing was recorded: %s stopped the recording before the first answer was kept; raise it", ru.boundSaid())
	}
	o := world.Observed{Now: p.Now, MaxEvents: max(ru.bound(ru.r.MaxEvents, DefaultMaxEvents), 0)}
	kept, dropped := unclash(p.Walks)
	var lists [][]json.RawMessage
	for i, w := range p.Walks {
		l := raws(kept[i])
		slices.Reverse(l) // oldest first
		lists = append(lists, l)
		acc := world.Account{ID: "acc_" + strconv.Itoa(len(o.Accounts)+1), Plan: w.Plan, Channels: channelsOf(w.Events)}
		o.Accounts = append(o.Accounts, acc)
	}
	for _, en := range p.Entries {
		var e struct {
			Video struct {
				Channel struct {
					ID string `json:"id"`
				} `json:"channel"`
			} `json:"video"`
		}
		if json.Unmarshal([]byte(en), &e) == nil && !slices.Contains(o.Accounts[0].Channels, e.Video.Channel.ID) {
			o.Accounts[0].Channels = append(o.Accounts[0].Channels, e.Video.Channel.ID)
		}
	}
	if len(p.Walks) == 1 {
		o.Accounts = append(o.Accounts, world.Account{ID: "acc_2", Plan: world.Free, Channels: o.Accounts[0].Channels})
	}
	o.Events = merge(lists...)
	o.Entries = raws(p.Entries)
	reshaped := 0
	for _, raw := range o.Events {
		if _, changed, err := world.CanonicalEvent(raw); err == nil && changed {
			reshaped++
		}
	}
	wd, err := world.Recorded(o)
	if err != nil {
		return simulator.Recording{}, 0, err
	}
	st := wd.Stats()
	rec := simulator.Recording{
		Origin: p.Origin, RecordedAt: wd.Now().UnixMilli(), Requests: p.Requests, Events: st.Events, Videos: st.Videos,
		Complete: p.Bounded == "" && len(dropped) == 0, Bounded: p.Bounded, Dropped: droppedSaid(dropped),
		Reshaped: reshaped, Unknown: ru.unknowns(), Shape: simulator.RecordingShape,
	}
	var sb strings.Builder
	if err := writeRecording(&sb, wd, &rec); err != nil {
		return rec, 0, err
	}
	// What the user named is written, not replaced: a file whole or not at
	// all, a link followed, a FIFO or a device written through.
	if err := outfile.Write(ctx, ru.r.Out, []byte(sb.String()), 0o644); err != nil {
		return rec, 0, err
	}
	os.Remove(ru.r.Out + ".partial")
	return rec, int64(sb.Len()), nil
}

// boundSaid names the bound that stopped the recording, with its value.
func (ru *run) boundSaid() string {
	r := ru.r
	switch ru.p.Bounded {
	case "--max-events":
		return fmt.Sprintf("--max-events %d", ru.bound(r.MaxEvents, DefaultMaxEvents))
	case "--max-requests":
		return fmt.Sprintf("--max-requests %d", ru.bound(r.MaxRequests, DefaultMaxRequests))
	case "--max-bytes":
		return fmt.Sprintf("--max-bytes %d (the answers kept, in bytes; the first was larger)", cmp.Or(r.MaxBytes, DefaultMaxBytes))
	case "--max-total-wait":
		return fmt.Sprintf("--max-total-wait %s (what the server's waits may add up to)", cmp.Or(r.MaxTotalWait, DefaultMaxTotalWait))
	}
	return ru.p.Bounded
}

// clash is an event a feed showed with the id of an event it or another
// feed showed before, and other content: the contract's EVENT-ID-UNIQUE
// broken. No world holds two events of one id: the later one is dropped.
type clash struct {
	plan world.Plan
	at   int // its place in its feed, from 1 (newest first)
	id   string
}

// unclash returns each walk's events without the clashes, and the
// clashes, in the order the feeds showed them (the Pro feed first). An
// event shown again with the same content (by both feeds, or twice) is
// kept: merge makes one of it.
func unclash(walks []*walk) ([][]string, []clash) {
	sums := map[string]uint64{}
	kept := make([][]string, len(walks))
	var dropped []clash
	for i, w := range walks {
		for j, raw := range w.Events {
			canon, _, err := world.CanonicalEvent([]byte(raw))
			if err != nil { // checked as it came: world.Recorded names it
				kept[i] = append(kept[i], raw)
				continue
			}
			var e struct {
				ID string `json:"id"`
			}
			_ = json.Unmarshal(canon, &e)
			h := fnv.New64a()
			h.Write(canon)
			sum := h.Sum64()
			if first, seen := sums[e.ID]; seen && first != sum {
				dropped = append(dropped, clash{w.Plan, j + 1, e.ID})
				continue
			}
			sums[e.ID] = sum
			kept[i] = append(kept[i], raw)
		}
	}
	return kept, dropped
}

// maxDroppedNamed bounds the dropped events a recording names one by one.
const maxDroppedNamed = 20

// droppedSaid is what the recording says of the events it dropped.
func droppedSaid(dropped []clash) []string {
	if len(dropped) == 0 {
		return nil
	}
	out := []string{fmt.Sprintf("%d events the server showed are not in the recording: each has the id of an event shown before, with other content (EVENT-ID-UNIQUE), and no world holds two events of one id", len(dropped))}
	for i, d := range dropped {
		if i == maxDroppedNamed {
			out = append(out, fmt.Sprintf("and %d more", len(dropped)-i))
			break
		}
		out = append(out, fmt.Sprintf("the %s feed's event %d, id %s", d.plan, d.at, quoteID(d.id)))
	}
	return out
}

// writeRecording writes the simulator's import format (GET /_control/world)
// with no key: the world last, as the import wants it.
func writeRecording(w io.Writer, wd *world.World, rec *simulator.Recording) error {
	head, err := json.Marshal(struct {
		Format     string               `json:"format"`
		Now        int64                `json:"now"`
		KeyCounter uint64               `json:"keyCounter"`
		Seeded     simulator.Keys       `json:"seeded"` // empty: no key is stored
		Keys       []struct{}           `json:"keys"`
		Recording  *simulator.Recording `json:"recording"`
	}{simulator.ExportFormat, rec.RecordedAt, 0, simulator.Keys{}, []struct{}{}, rec})
	if err != nil {
		return err
	}
	if _, err := io.WriteString(w, strings.TrimSuffix(string(head), "}")+`,"world":`); err != nil {
		return err
	}
	if err := wd.Export(w); err != nil {
		return err
	}
	_, err = io.WriteString(w, "}\n")
	return err
}

func raws(ss []string) []json.RawMessage {
	out := make([]json.RawMessage, len(ss))
	for i, s := range ss {
		out[i] = json.RawMessage(s)
	}
	return out
}

// channelsOf lists the channel ids events show, in order first seen.
func channelsOf(events []string) []string {
	var ids []string
	for _, raw := range events {
		var e struct {
			Channel struct {
				ID string `json:"id"`
			} `json:"channel"`
		}
		if json.Unmarshal([]byte(raw), &e) == nil && e.Channel.ID != "" && !slices.Contains(ids, e.Channel.ID) {
			ids = append(ids, e.Channel.ID)
		}
	}
	return ids
}

// merge merges feeds (each oldest first) into one order that keeps each
// feed's: an event two feeds share is one event, and of two events only
// one feed shows, the older goes first.
func merge(lists ...[]json.RawMessage) []json.RawMessage {
	type ev struct {
		id  string
		at  int64
		raw json.RawMessage
	}
	parse := func(l []json.RawMessage) []ev {
		out := make([]ev, 0, len(l))
		for _, raw := range l {
			var e struct {
				ID        string `json:"id"`
				CreatedAt int64  `json:"createdAt"`
			}
			_ = json.Unmarshal(raw, &e)
			out = append(out, ev{e.ID, e.CreatedAt, raw})
		}
		return out
	}
	var out []ev
	for _, l := range lists {
		b := parse(l)
		inOut, inB := map[string]bool{}, map[string]bool{}
		for _, e := range out {
			inOut[e.id] = true
		}
		for _, e := range b {
			inB[e.id] = true
		}
		var m []ev
		done := map[string]bool{}
		take := func(e ev) {
			if !done[e.id] {
				done[e.id] = true
				m = append(m, e)
			}
		}
		i, j := 0, 0
		for i < len(out) || j < len(b) {
			switch {
			case j == len(b):
				take(out[i])
				i++
			case i == len(out):
				take(b[j])
				j++
			case out[i].id == b[j].id:
				take(out[i])
				i, j = i+1, j+1
			case inB[out[i].id] && !inOut[b[j].id]:
				take(b[j]) // b's own event comes before the shared one
				j++
			case inOut[b[j].id] && !inB[out[i].id]:
				take(out[i])
				i++
			case b[j].at < out[i].at:
				take(b[j])
				j++
			default:
				take(out[i])
				i++
			}
		}
		out = m
	}
	raw := make([]json.RawMessage, len(out))
	for i, e := range out {
		raw[i] = e.raw
	}
	return raw
}
