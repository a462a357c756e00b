// Package fuzz turns a fuzz input or a seed into a schedule of what the
// simulator serves a client, reproducibly: a world at the contract's
// edges, contract-level trouble on chosen requests, and, only when asked,
// answers that break the contract, so that a client's defences can be
// tested. A Schedule is a layer around the API's operations
// (simulator.Config.Layers) and tells in words what it served
// (GET /_control/fuzz), request by request.
//
// The same input and the same requests give the same answers: a step
// fires on the request with a given number (counted over the API's
// operations, in arrival order), and everything it does is drawn from the
// input. A client that sends its requests one at a time is served the
// same on every run; concurrent requests are numbered as they arrive.
//
// # What the input decides
//
// The lead step (its first byte): trouble on the feed from one of the
// first four requests, any kind of step, or none (0). The world (World): its seed, 2 to 8 channels, a history of nothing (an
// empty feed until the clock moves) to 30 days, the edge rate (emoji,
// combining marks and right-to-left titles, 12- to 32-character ids, null
// counts, avatars missing), a cap on the feed (a walk sees its newest 0,
// 1, 50, 200 or 201 events: the empty feed, a last page of one, a full last
// page), createdAt rounded down to the minute or the hour (ties across
// pages), and
// counts served as 0, null or 2^53-1.
//
// Steps in the contract (Trouble): a 429 with a truthful Retry-After (the
// key is refused until it has passed), a 5xx outage, a slow answer (the clock moves
// while it is answered), a body cut short (the connection closes), a
// connection dropped, the key regenerated during a walk (the client's key
// is revoked: 401), events arriving at the head of the feed during a walk.
// A 429, a 5xx, a cut or a drop comes only to a key whose last answer on
// that operation was a success, so that a client that retries with
// backoff meets a bounded run of errors (an outage ends after at least
// three requests and four seconds of the clock, at most 50 requests).
//
// Steps that break the contract (Broken, with Options.Break): a page out
// of order, a page longer than asked, an event repeated across pages, a
// cursor cycle, an unknown event type, a wrong Content-Type, truncated
// JSON, a nextCursor on the last page. Each names the requirement of the
// catalogue it breaks.
//
// A Schedule only serves, and says what it served: every answer that
// breaks the contract names the requirement it breaks (Answer.Breaks), and
// the client judge (package simulator/clients) judges the client, a tight
// loop after errors (CLIENT-BACKOFF) and a cursor cycle followed round and
// round (CLIENT-CURSOR-CYCLE) among the rest.
package fuzz

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/tcmkit/tcmkit/schemas/catalogue"
	"github.com/tcmkit/tcmkit/simulator"
)

// Options select what a plan may serve.
type Options struct {
	// Break lets the plan serve answers that break the contract.
	Break bool
	// Realtime keeps waits short: the simulator runs on the real clock
	// (Config.Speed > 0), so a slow answer or a Retry-After is waited for.
	Realtime bool
}

// Kind is a kind of step.
type Kind string

// The steps within the contract.
const (
	Throttle   Kind = "throttle"        // 429 with a truthful Retry-After
	ServerErr  Kind = "server-error"    // 5xx for a while
	Slow       Kind = "slow"            // the answer takes time on the clock
	Cut        Kind = "cut-body"        // the body stops short, the connection closes
	Drop       Kind = "dropped"         // the connection closes without an answer
	Regenerate Kind = "key-regenerated" // the key is regenerated during a walk
	HeadEvents Kind = "events-at-head"  // new events arrive during a walk
)

// The steps that break the contract (Options.Break).
const (
	OutOfOrder  Kind = "out-of-order"
	LongPage    Kind = "page-longer-than-asked"
	Repeated    Kind = "event-repeated"
	Cycle       Kind = "cursor-cycle"
	UnknownType Kind = "unknown-event-type"
	WrongType   Kind = "wrong-content-type"
	Truncated   Kind = "truncated-json"
	CursorAtEnd Kind = "cursor-on-last-page"
)

// Trouble lists the steps within the contract, Broken those that break it.
var (
	Trouble = []Kind{Throttle, ServerErr, Slow, Cut, Drop, Regenerate, HeadEvents}
	Broken  = []Kind{OutOfOrder, LongPage, Repeated, Cycle, UnknownType, WrongType, Truncated, CursorAtEnd}
)

// Breaks is the requirement of the catalogue each breaking step breaks.
var Breaks = map[Kind]catalogue.ID{
	OutOfOrder:  catalogue.FeedOrder,
	LongPage:    catalogue.FeedLimit,
	Repeated:    catalogue.FeedCursorWalk,
	Cycle:       catalogue.FeedCursorEnd,
	UnknownType: catalogue.EventTypes,
	WrongType:   catalogue.ContentTypeJSON,
	Truncated:   catalogue.FeedPageSchema,
	CursorAtEnd: catalogue.FeedCursorEnd,
}

// World is the world a plan serves.
type World struct {
	Seed     int64
	Channels int
	History  time.Duration
	EdgeRate float64
	// FeedCap, when 0 or more, is how many events a walk of the feed
	// sees: its newest FeedCap (-1: all).
	FeedCap int
	// Ties rounds every event's createdAt down to a multiple of it (a
	// minute or an hour; 0: not at all), so that events share it.
	Ties time.Duration
	// EdgeCounts serves about half the counts as 0, null or 2^53-1.
	EdgeCounts bool
}

// Step is one thing served once: on the first request numbered At or
// later that it applies to.
type Step struct {
	At   int
	Kind Kind
	// Op is the operation of Throttle, ServerErr, Slow, Cut and Drop
	// (the others act on the feed).
	Op simulator.Operation
	// Param is what the kind takes: Retry-After seconds, a status, a
	// duration in milliseconds, a fraction in percent, an index.
	Param int
}

// Plan is everything an input decides.
type Plan struct {
	Input []byte // what it was made from
	Seed  int64  // the seed it was made from (FromSeed), 0 otherwise
	Opts  Options
	World World
	Steps []Step
}

// MaxSteps bounds the steps of a plan.
const MaxSteps = 12

// SeedInputLen is how many bytes of input a seed stands for.
const SeedInputLen = 40

// FromSeed is the plan of seed n: the plan of a 0 (no lead step) and
// SeedInputLen bytes drawn from n.
func FromSeed(n int64, o Options) Plan {
	r := rand.New(rand.NewPCG(uint64(n), 0x66757a7a))
	b := make([]byte, 1+SeedInputLen)
	for i := 1; i < len(b); i += 8 {
		binary.LittleEndian.PutUint64(b[i:], r.Uint64())
	}
	p := FromBytes(b, o)
	p.Seed = n
	return p
}

// tape reads an input a byte at a time, zeros once it is used up.
type tape struct {
	b []byte
	i int
}

func (t *tape) byte() int {
	if t.i >= len(t.b) {
		return 0
	}
	t.i++
	return int(t.b[t.i-1])
}

func (t *tape) left() bool { return t.i < len(t.b) }

func pick[T any](t *tape, list ...T) T { return list[t.byte()%len(list)] }

// FromBytes decodes an input into a plan. Every input is a plan: the
// first byte is the lead step (0: none), the next seven make the world,
// each next four a step.
//
// The lead step is trouble on the feed from one of the first four
// requests, kind, request and parameter from that one byte: a fuzzer that changes one byte of a calm
// input reaches any kind of trouble at once, instead of having to grow
// the input by a whole step and land it on a request the client makes.
func FromBytes(data []byte, o Options) Plan {
	t := &tape{b: data}
	p := Plan{Input: append([]byte(nil), data...), Opts: o}
	kinds := Trouble
	if o.Break {
		kinds = append(append([]Kind(nil), Trouble...), Broken...)
	}
	lead := t.byte()
	w := &p.World
	w.Seed = int64(t.byte()<<8 | t.byte())
	w.Channels = 2 + t.byte()%7
	w.History = pick(t, time.Millisecond, 24*time.Hour, 3*24*time.Hour, 10*24*time.Hour, 10*24*time.Hour, 30*24*time.Hour)
	w.EdgeRate = pick(t, 0, 0.05, 0.3, 1)
	w.FeedCap = pick(t, -1, -1, -1, -1, 0, 1, 50, 200, 201)
	flags := t.byte()
	w.EdgeCounts = flags&2 != 0
	switch {
	case flags&4 != 0:
		w.Ties = time.Hour
	case flags&1 != 0:
		w.Ties = time.Minute
	}
	if lead > 0 {
		// The rest of the byte: the request (1 to 4, so that a step on a
		// page reaches past the first page too) and the parameter.
		q := (lead - 1) / len(kinds)
		s := Step{At: 1 + q%4, Kind: kinds[(lead-1)%len(kinds)], Op: simulator.OpFeed}
		s.Param = s.param(q/4, o)
		p.Steps = append(p.Steps, s)
	}
	at := 1
	for t.left() && len(p.Steps) < MaxSteps {
		at += t.byte() % 3
		s := Step{At: at, Kind: pick(t, kinds...), Op: pick(t, simulator.OpFeed, simulator.OpFeed, simulator.OpVideos)}
		s.Param = s.param(t.byte(), o)
		p.Steps = append(p.Steps, s)
	}
	return p
}

// param turns a byte into the step's parameter.
func (s Step) param(b int, o Options) int {
	one := func(list ...int) int { return list[b%len(list)] }
	switch s.Kind {
	case Throttle:
		if o.Realtime {
			return one(0, 1, 2)
		}
		return one(0, 1, 2, 5, 30, 60, 3600)
	case ServerErr:
		if s.Op == simulator.OpVideos {
			return one(500, 500, 502, 503)
		}
		return one(500, 502, 503, 504)
	case Slow:
		if o.Realtime {
			return one(100, 500, 1500)
		}
		return one(1000, 5000, 25_000, 120_000)
	case HeadEvents:
		return one(15, 60, 360, 1440) // minutes
	case Cut, Truncated:
		return one(0, 25, 50, 90) // percent of the body sent
	}
	return b
}

// Configure sets the world of the plan in cfg and puts a fresh Schedule
// of it around the operations (outermost) and on GET /_control/fuzz.
func (p Plan) Configure(cfg *simulator.Config) *Schedule {
	cfg.Seed, cfg.Channels, cfg.History, cfg.EdgeRate = p.World.Seed, p.World.Channels, p.World.History, p.World.EdgeRate
	s := New(p)
	cfg.Layers = append(cfg.Layers, s.Layer())
	return s
}

// String describes the plan in words.
func (p Plan) String() string {
	var b strings.Builder
	if p.Seed != 0 {
		fmt.Fprintf(&b, "fuzz seed %d", p.Seed)
	} else {
		fmt.Fprintf(&b, "fuzz input %x", p.Input)
	}
	if p.Opts.Break {
		b.WriteString(" (answers that break the contract on)")
	}
	b.WriteString("\n  world: " + p.World.String())
	for _, s := range p.Steps {
		b.WriteString("\n  from request " + fmt.Sprint(s.At) + ": " + s.String())
	}
	return b.String()
}

func (w World) String() string {
	parts := []string{fmt.Sprintf("seed %d, %d channels, history %s, edge rate %g", w.Seed, w.Channels, w.History, w.EdgeRate)}
	switch {
	case w.FeedCap == 0:
		parts = append(parts, "an empty feed")
	case w.FeedCap > 0:
		parts = append(parts, fmt.Sprintf("a walk sees the newest %d events", w.FeedCap))
	}
	if w.Ties > 0 {
		parts = append(parts, fmt.Sprintf("createdAt rounded down to the %s (ties)", map[time.Duration]string{time.Minute: "minute", time.Hour: "hour"}[w.Ties]))
	}
	if w.EdgeCounts {
		parts = append(parts, "counts at their edges (0, null, 2^53-1)")
	}
	return strings.Join(parts, ", ")
}

// String describes the step in words.
func (s Step) String() string {
	switch s.Kind {
	case Throttle:
		return fmt.Sprintf("429 on %s with Retry-After: %d, the key refused until then", opName(s.Op), s.Param)
	case ServerErr:
		return fmt.Sprintf("%d on %s for a while", s.Param, opName(s.Op))
	case Slow:
		return fmt.Sprintf("a slow answer on %s: it takes %s", opName(s.Op), time.Duration(s.Param)*time.Millisecond)
	case Cut:
		return fmt.Sprintf("an answer on %s cut after %d%% of its body", opName(s.Op), s.Param)
	case Drop:
		return fmt.Sprintf("a request to %s whose connection is closed without an answer", opName(s.Op))
	case Regenerate:
		return "the key regenerated during a walk (the client's key revoked)"
	case HeadEvents:
		return fmt.Sprintf("the clock moved %s during a walk: new events at the head", time.Duration(s.Param)*time.Minute)
	case Truncated:
		return fmt.Sprintf("a feed page cut to %d%% of its JSON (breaks %s)", s.Param, Breaks[s.Kind])
	}
	return fmt.Sprintf("%s (breaks %s)", s.Kind, Breaks[s.Kind])
}

func opName(op simulator.Operation) string {
	if op == simulator.OpVideos {
		return "tracked videos"
	}
	return "the " + string(op)
}
