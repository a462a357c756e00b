package oracle

import (
	"slices"
	"testing"
	"time"

	"github.com/tcmkit/tcmkit/schemas/catalogue"
)

// On a real clock (a server others may share, Exclusive false) the rules
// that count a key's window judge only a key a sequence owns (Own): the
// facts the sequence knows (it waited for a fresh window, waited what
// Retry-After said, held the Pro key with room) stand in for Exclusive.

// newRealClockWorld is a test's oracle of a run on a real clock.
func newRealClockWorld() *world {
	w := newWorld()
	w.o.opt.Exclusive, w.o.opt.Frozen = false, nil
	return w
}

// owned is the exchanges sent while a sequence owns key, which it took
// with room for room more requests in its window.
func owned(key string, room int, xs ...ex) []ex {
	take := ex{do: func(w *world) {
		if w.released == nil {
			w.released = map[string]func(){}
		}
		w.released[key] = w.o.Own(key, room)
	}}
	return append([]ex{take}, xs...)
}

// release gives the key back.
func release(key string) ex { return ex{do: func(w *world) { w.released[key]() }} }

// atOnce is exchanges at one instant (a manual clock that did not move).
func atOnce(xs []ex) []ex {
	for i := range xs {
		xs[i].wait = 0
	}
	return xs
}

// fresh is one feed request of each key, then a window of nothing: the
// run knows the keys' windows from then on.
func fresh() []ex {
	return []ex{
		{req: feed("n=0", pro), status: 200, body: page("")},
		{req: feed("n=0", free), status: 200, body: page(""), wait: time.Second},
		{req: health(""), status: 200, body: `{"status":"ok"}`, wait: 62 * time.Second},
	}
}

var realClockBreaks = []struct {
	id   catalogue.ID
	name string
	xs   []ex
}{
	{catalogue.RateAllows20, "429 after 15 feed requests from a fresh window the sequence owns, the Pro key busy in that minute", slices.Concat(fresh(),
		burst(pro, 10),
		owned(free, 20, slices.Concat(burst(free, 15), []ex{{req: feed("limit=1", free), status: 429, header: retryAfter("40"), body: errBody}})...))},
	{catalogue.RateAllows20, "429 after 15 feed requests from a window made fresh 50 ms past a minute after 20 (the run's count, with its second of slack, holds 35)", slices.Concat(fresh(),
		atOnce(burst(free, 20)),
		owned(free, 20, slices.Concat(afterWait(atOnce(burst(free, 15)), time.Minute+50*time.Millisecond), []ex{{req: feed("limit=1", free), status: 429, header: retryAfter("40"), body: errBody}})...))},
	{catalogue.RateAllows20, "429 after 13 from a fresh window while the Pro key is throttled after 10 (a limiter that counts too much, not one across keys)", slices.Concat(fresh(),
		burst(pro, 10), []ex{{req: feed("limit=1", pro), status: 429, header: retryAfter("40"), body: errBody}},
		owned(free, 20, slices.Concat(burst(free, 13), []ex{{req: feed("limit=1", free), status: 429, header: retryAfter("40"), body: errBody}})...))},
	{catalogue.RateAllows20, "429 after 13 from a fresh window while the Pro key, which no sequence holds, is throttled after filling its window", slices.Concat(fresh(),
		burst(pro, 20), []ex{{req: feed("limit=1", pro), status: 429, header: retryAfter("40"), body: errBody}},
		owned(free, 20, slices.Concat(burst(free, 13), []ex{{req: feed("limit=1", free), status: 429, header: retryAfter("40"), body: errBody}})...))},
	{catalogue.RateRetryAfter, "429 to the first request after waiting what Retry-After said, nothing sent meanwhile", slices.Concat(fresh(),
		owned(free, 20, slices.Concat(burst(free, 20), []ex{
			{req: feed("limit=1", free), status: 429, header: retryAfter("5"), body: errBody},
			{req: feed("limit=2", free), status: 429, header: retryAfter("5"), body: errBody, wait: 5 * time.Second}})...))},
	{catalogue.RatePerKey, "the Pro key, owned with 5 requests in its minute, refused while the free key is throttled", slices.Concat(fresh(),
		burst(pro, 5),
		owned(free, 20, slices.Concat(burst(free, 20), []ex{{req: feed("limit=1", free), status: 429, header: retryAfter("40"), body: errBody}})...),
		owned(pro, 15, ex{req: feed("limit=1", pro), status: 429, header: retryAfter("40"), body: errBody}))},
	{catalogue.RatePerKey, "the Pro key's first request after waiting its own Retry-After, refused while the free key is throttled (a limiter across keys, not a Retry-After that said too little)", slices.Concat(fresh(),
		owned(pro, 20, slices.Concat(burst(pro, 20), []ex{{req: feed("limit=1", pro), status: 429, header: retryAfter("60"), body: errBody}, release(pro)})...),
		owned(free, 20, slices.Concat(afterWait(burst(free, 20), time.Minute), []ex{{req: feed("limit=1", free), status: 429, header: retryAfter("40"), body: errBody}})...),
		owned(pro, 20, ex{req: feed("limit=2", pro), status: 429, header: retryAfter("40"), body: errBody}))},
	{catalogue.RateLimit429, "21 admitted in 0.7 s from a window the sequence owns empty, then again from one a window and 3 s later: no fixed window turns over in both", slices.Concat(fresh(),
		owned(free, 20, overTheLimit(free)...), []ex{release(free), quiet(63 * time.Second)},
		owned(free, 20, overTheLimit(free)...))},
}

// overTheLimit is 20 feed requests at once, and a 21st 0.7 s later, all
// served: a burst past the limit, which only a fixed window that turned
// over in those 0.7 s explains.
func overTheLimit(key string) []ex {
	return slices.Concat(atOnce(burst(key, 20)), []ex{{req: feed("limit=1", key), status: 200, body: page(""), wait: 700 * time.Millisecond}})
}

// quiet is d of nothing but a health request of no key.
func quiet(d time.Duration) ex {
	return ex{req: health(""), status: 200, body: `{"status":"ok"}`, wait: d}
}

// A break of each rule on a real clock, on keys a sequence owns, is caught
// and blamed on its rule alone, naming the request; the same exchanges on
// keys no sequence owns are not judged (others may share their windows).
func TestOwnedKeysOnARealClock(t *testing.T) {
	for _, b := range realClockBreaks {
		t.Run(string(b.id)+"/"+b.name, func(t *testing.T) {
			last := brokenLast(t, newRealClockWorld(), b.id, b.xs)
			want := b.xs[len(b.xs)-1].req.String()
			for _, p := range last {
				if p.Requirement != b.id || p.Request != want || p.Actual == "" || len(p.Evidence) == 0 {
					t.Errorf("want %s alone on %s, with its value and evidence: %s", b.id, want, describe(last))
				}
			}
		})
		t.Run(string(b.id)+"/not owned/"+b.name, func(t *testing.T) {
			w := newRealClockWorld()
			for i, x := range b.xs {
				if x.do != nil {
					continue
				}
				if ps := w.judge(x); len(ps) > 0 {
					t.Fatalf("exchange %d breaks a rule on keys no sequence owns: %s", i, describe(ps))
				}
			}
		})
	}
}

// The evidence of RATE-PER-KEY is the other key's 429 that throttled it.
func TestPerKeyShowsTheOtherKeysThrottle(t *testing.T) {
	w := newRealClockWorld()
	b := realClockBreaks[5]
	var last []Problem
	for _, x := range b.xs {
		last = w.judge(x)
	}
	if len(last) != 1 || len(last[0].Evidence) != 2 || last[0].Evidence[1].Status != 429 || last[0].Evidence[1].Request.Auth != "Bearer "+free {
		t.Fatalf("want one problem with the free key's 429 as evidence: %s", describe(last))
	}
}

// Conforming limiters on a real clock, the keys owned: no rule fails.
var realClockConforming = []struct {
	name string
	xs   []ex
}{
	{"a sliding log: lockouts each after waiting its Retry-After, the Pro key served meanwhile", slices.Concat(fresh(),
		burst(pro, 5),
		owned(free, 20, slices.Concat(burst(free, 20), []ex{{req: feed("limit=1", free), status: 429, header: retryAfter("41"), body: errBody}})...),
		owned(pro, 15, ex{req: feed("limit=1", pro), status: 200, body: page("")}),
		[]ex{release(pro)},
		afterWait(halfSecondApart(free, 20), 41*time.Second),
		[]ex{{req: feed("limit=1", free), status: 429, header: retryAfter("51"), body: errBody}},
		afterWait(halfSecondApart(free, 20), 51*time.Second),
		[]ex{{req: feed("limit=1", free), status: 429, header: retryAfter("51"), body: errBody}})},
	{"a fixed window: 20 pass, then 429 until the minute turns", slices.Concat(fresh(),
		owned(free, 20, slices.Concat(halfSecondApart(free, 20), []ex{
			{req: feed("limit=1", free), status: 429, header: retryAfter("50"), body: errBody},
			{req: feed("limit=2", free), status: 200, body: page(""), wait: 50 * time.Second}})...))},
	{"the Pro key refused while the free key is throttled, its own minute full", slices.Concat(fresh(),
		burst(pro, 20),
		owned(free, 20, slices.Concat(burst(free, 20), []ex{{req: feed("limit=1", free), status: 429, header: retryAfter("40"), body: errBody}})...),
		owned(pro, 0, ex{req: feed("limit=1", pro), status: 429, header: retryAfter("40"), body: errBody}))},
	{"a key throttled at once in the run's first minute (what was sent before the run), owned with no room", owned(free, 0,
		ex{req: feed("limit=1", free), status: 429, header: retryAfter("30"), body: errBody})},
	{"a 429 long after the Retry-After of the 429 before, another request sent meanwhile", slices.Concat(fresh(),
		owned(free, 20, slices.Concat(burst(free, 20), []ex{
			{req: feed("limit=1", free), status: 429, header: retryAfter("5"), body: errBody},
			{req: feed("limit=2", free), status: 429, header: retryAfter("5"), body: errBody, wait: time.Second},
			{req: feed("limit=3", free), status: 200, body: page(""), wait: 50 * time.Second}})...))},
	{"a fixed window on the clock's minutes: 21 admitted across its turn, and again from an empty window two minutes later, across its turn again", slices.Concat(fresh(),
		owned(free, 20, overTheLimit(free)...), []ex{release(free), quiet(2*time.Minute - 700*time.Millisecond)},
		owned(free, 20, overTheLimit(free)...))},
	{"a bucket of 20 refilled over a minute: 20 at once, a 21st 3.5 s later", slices.Concat(fresh(),
		owned(free, 20, slices.Concat(atOnce(burst(free, 20)), []ex{{req: feed("limit=1", free), status: 200, body: page(""), wait: 3500 * time.Millisecond}})...))},
}

func TestConformingOwnedKeysOnARealClockPass(t *testing.T) {
	for _, c := range realClockConforming {
		t.Run(c.name, func(t *testing.T) { breaksNothing(t, newRealClockWorld(), c.xs) })
	}
}
