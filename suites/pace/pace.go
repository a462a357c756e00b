// Package pace is the one way a conformance run lets time pass for rate
// windows: in lanes, one per key, on the wall clock or a target's manual
// clock.
package pace

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tcmkit/tcmkit/suites/client"
)

// A Pacer is the one way the suite lets time pass for rate windows. The
// rate limit counts per key, so the probes' request sequences run in lanes,
// one per valid key (and one for the requests without a valid key): one
// key's lockout waits while another key's probes are sent. A lane holds
// the keys a sequence sends on (hold), so that no two sequences share a
// key's window, and a sequence that must not be interleaved with any other
// request (a URL read by one key and asked for at once by another) runs
// alone (alone).
//
// In real time a wait sleeps. On a virtual clock (a tcmkit simulator's
// manual clock) the lanes' waits are events of a discrete simulation: the
// clock moves only when every lane waits, to the earliest time one of them
// waits for, so that it moves by what the run would wait in real time,
// not by the sum of the lanes' waits, and never while a lane sends.

// inLane marks the context of a lane's work.
type inLane struct{}

// InLane reports whether ctx is a lane's work (Lane).
func InLane(ctx context.Context) bool { return ctx.Value(inLane{}) != nil }

// aloneCtx marks the context of a sequence that runs alone.
type aloneCtx struct{}

type Pacer struct {
	inner   client.Clock // the target's clock
	virtual bool
	log     io.Writer       // where a real wait counts down
	ctx     context.Context // the run's: a virtual clock's moves are made with it

	mu     sync.Mutex
	cond   *sync.Cond
	base   time.Time
	waited time.Duration // time let pass for rate windows
	moved  time.Duration // time the world was moved by (virtual only)
	lanes  int           // lanes under way
	active int           // of them, those neither waiting nor blocked
	sleep  []*sleeper
	idlers []*func() bool // what each blocked lane waits for
	held   map[string]bool
	claims []*claim
	// sending counts the exchanges under way; solo is set while a
	// sequence runs alone, wantSolo while one waits to.
	sending        int
	solo, wantSolo bool
	err            error // a virtual clock that could not be moved
	wg             sync.WaitGroup
}

type sleeper struct {
	until time.Duration
	woken bool
}

type claim struct {
	keys    []string
	granted bool
}

func New(ctx context.Context, inner client.Clock, log io.Writer) *Pacer {
	v, ok := inner.(interface{ Virtual() bool })
	p := &Pacer{inner: inner, virtual: ok && v.Virtual(), log: log, ctx: ctx, base: time.Now(), held: map[string]bool{}}
	p.cond = sync.NewCond(&p.mu)
	return p
}

// Virtual reports whether waiting takes no real time.
func (p *Pacer) Virtual() bool { return p.virtual }

// Now is the target's time.
func (p *Pacer) Now(ctx context.Context) (time.Time, error) { return p.inner.Now(ctx) }

// now is the time the suite records its requests at: the wall clock, or
// on a virtual clock the time its waits let pass (the world's moves left
// out, so that a key's window is never thought emptier than it is).
func (p *Pacer) ClientTime() time.Time {
	if !p.virtual {
		return time.Now()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.base.Add(p.waited)
}

// targetNow is the target's time as the run moved it: on a virtual clock
// every wait and move since the run began (the contract oracle compares
// times of exchanges, never reads them against a calendar); else the wall
// clock.
func (p *Pacer) TargetTime() time.Time {
	if !p.virtual {
		return time.Now()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.base.Add(p.waited + p.moved)
}

// Waited is the time the run let pass for rate windows: on a virtual
// clock what it moved the clock by for them (its moves of the world apart).
func (p *Pacer) Waited() (waited, moved time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.waited, p.moved
}

// Wait lets d pass, for a rate window.
func (p *Pacer) Wait(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	if !p.virtual {
		return client.Countdown(ctx, p.inner, d, laneLog(ctx, p.log))
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if ctx.Value(inLane{}) == nil || p.lanes == 0 {
		if err := p.inner.Wait(ctx, d); err != nil {
			return err
		}
		p.waited += d
		p.settle() // lanes whose time came meanwhile go on
		return nil
	}
	sl := &sleeper{until: p.waited + d}
	p.sleep = append(p.sleep, sl)
	p.active--
	p.settle()
	if !p.block(ctx, func() bool { return sl.woken }) {
		p.sleep = slices.DeleteFunc(p.sleep, func(x *sleeper) bool { return x == sl })
		p.active++
		return p.stopped(ctx)
	}
	return nil
}

// laneLog is log, whose lines say which lane waits: lanes count down at
// once.
func laneLog(ctx context.Context, log io.Writer) io.Writer {
	name, _ := ctx.Value(inLane{}).(string)
	if name == "" || log == nil {
		return log
	}
	return writerFunc(func(b []byte) (int, error) {
		line := strings.TrimSuffix(string(b), "\n")
		if _, err := fmt.Fprintf(log, "%s (lane of the %s)\n", line, name); err != nil {
			return 0, err
		}
		return len(b), nil
	})
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }

// move moves the world (a virtual clock) by d: new events, not a wait.
func (p *Pacer) move(ctx context.Context, d time.Duration) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.inner.Wait(ctx, d); err != nil {
		return err
	}
	p.moved += d
	return nil
}

// world is the target's clock for moving the world: its waits are moves.
type world struct{ p *Pacer }

// World is the clock that moves the target's world (its events), apart
// from the waits for rate windows: Waited counts its moves apart.
func (p *Pacer) World() client.Clock { return world{p} }

func (w world) Wait(ctx context.Context, d time.Duration) error { return w.p.move(ctx, d) }
func (w world) Now(ctx context.Context) (time.Time, error)      { return w.p.inner.Now(ctx) }
func (w world) Virtual() bool                                   { return w.p.virtual }

// block waits (p.mu held) until done reports true, the context ends or
// the virtual clock fails; it reports whether done.
func (p *Pacer) block(ctx context.Context, done func() bool) bool {
	stop := context.AfterFunc(ctx, func() {
		p.mu.Lock()
		p.cond.Broadcast()
		p.mu.Unlock()
	})
	defer stop()
	for !done() && p.err == nil && ctx.Err() == nil {
		p.cond.Wait()
	}
	return done()
}

func (p *Pacer) stopped(ctx context.Context) error {
	if p.err != nil {
		return p.err
	}
	return ctx.Err()
}

// settle moves a virtual clock (p.mu held) while every lane waits: to the
// earliest time one waits for, waking those whose time came.
func (p *Pacer) settle() {
	for p.active == 0 && len(p.sleep) > 0 && p.err == nil && !p.ready() {
		next := p.sleep[0].until
		for _, sl := range p.sleep {
			next = min(next, sl.until)
		}
		if d := next - p.waited; d > 0 {
			if err := p.inner.Wait(p.ctx, d); err != nil {
				p.err = err
				break
			}
			p.waited = next
		}
		p.sleep = slices.DeleteFunc(p.sleep, func(sl *sleeper) bool {
			if sl.until <= p.waited {
				sl.woken = true
				p.active++
			}
			return sl.woken
		})
	}
	p.cond.Broadcast()
}

// ready reports whether a blocked lane may go on: the clock waits for it.
func (p *Pacer) ready() bool {
	return slices.ContainsFunc(p.idlers, func(until *func() bool) bool { return (*until)() })
}

// idle blocks a lane (p.mu held) until until reports true, for something
// other than the clock: a virtual clock may move meanwhile, unless until
// is already true.
func (p *Pacer) idle(ctx context.Context, until func() bool) bool {
	if ctx.Value(inLane{}) == nil || until() {
		return p.block(ctx, until)
	}
	p.idlers = append(p.idlers, &until)
	p.active--
	p.settle()
	ok := p.block(ctx, until)
	p.idlers = slices.DeleteFunc(p.idlers, func(x *func() bool) bool { return x == &until })
	p.active++
	return ok
}

// lane runs work in its own goroutine, as a lane.
func (p *Pacer) Lane(ctx context.Context, name string, work func(context.Context)) {
	p.mu.Lock()
	p.lanes++
	p.active++
	p.mu.Unlock()
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		defer func() {
			p.mu.Lock()
			p.lanes--
			p.active--
			p.settle()
			p.mu.Unlock()
		}()
		work(context.WithValue(ctx, inLane{}, name))
	}()
}

// hold takes the keys for a sequence, waiting while another lane holds
// one of them; release gives them back. Claims are granted in order.
func (p *Pacer) Hold(ctx context.Context, keys ...string) (release func(), err error) {
	keys = slices.DeleteFunc(slices.Clone(keys), func(k string) bool { return k == "" })
	p.mu.Lock()
	defer p.mu.Unlock()
	c := &claim{keys: keys}
	p.claims = append(p.claims, c)
	p.grant()
	if !c.granted {
		if !p.idle(ctx, func() bool { return c.granted }) {
			p.claims = slices.DeleteFunc(p.claims, func(x *claim) bool { return x == c })
			if c.granted {
				p.free(c)
			}
			return nil, p.stopped(ctx)
		}
	}
	return func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.free(c)
	}, nil
}

// grant hands the keys to the claims waiting for them, in order: a claim
// waits while an earlier one waits for one of its keys.
func (p *Pacer) grant() {
	wanted := map[string]bool{}
	for i := 0; i < len(p.claims); {
		c := p.claims[i]
		if !slices.ContainsFunc(c.keys, func(k string) bool { return p.held[k] || wanted[k] }) {
			for _, k := range c.keys {
				p.held[k] = true
			}
			c.granted = true
			p.claims = slices.Delete(p.claims, i, i+1)
			continue
		}
		for _, k := range c.keys {
			wanted[k] = true
		}
		i++
	}
	p.cond.Broadcast()
}

func (p *Pacer) free(c *claim) {
	for _, k := range c.keys {
		delete(p.held, k)
	}
	p.grant()
}

// exchange is the client's gate around each exchange: none starts while
// a sequence runs alone, but that sequence's own.
func (p *Pacer) Exchange(ctx context.Context) func() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if ctx.Value(aloneCtx{}) != nil {
		return func() {}
	}
	p.idle(ctx, func() bool { return !p.solo && !p.wantSolo })
	p.sending++
	return func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.sending--
		p.cond.Broadcast()
	}
}

// alone runs f with no other exchange under way meanwhile (the lanes'
// next exchanges wait): for a sequence whose requests must follow each
// other at the target with nothing between them. f should not wait.
func (p *Pacer) Alone(ctx context.Context, f func(context.Context)) {
	p.mu.Lock()
	for p.solo || p.wantSolo {
		if !p.idle(ctx, func() bool { return !p.solo && !p.wantSolo }) {
			p.mu.Unlock()
			return
		}
	}
	p.wantSolo = true
	ok := p.idle(ctx, func() bool { return p.sending == 0 })
	p.wantSolo = false
	p.solo = ok
	p.cond.Broadcast()
	p.mu.Unlock()
	if !ok {
		return
	}
	defer func() {
		p.mu.Lock()
		p.solo = false
		p.cond.Broadcast()
		p.mu.Unlock()
	}()
	f(context.WithValue(ctx, aloneCtx{}, true))
}

// drain waits until every lane is done, or ctx ends.
func (p *Pacer) Drain(ctx context.Context) error {
	done := make(chan struct{})
	go func() {
		p.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
