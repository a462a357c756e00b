package probegrid

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/onsi/ginkgo/v2"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/suites/client"
	"github.com/tcmkit/tcmkit/suites/pace"
	"github.com/tcmkit/tcmkit/suites/probe"
)

// The probes' request sequences are sent in lanes (pace.go), once the plan
// is made: the Pro key's, the free key's and one for the requests without
// a valid key, so that a key's wait for its window costs the others
// nothing. The specs judge in their own order, each waiting for the
// sequences of its probes. Within a lane a sequence holds its keys from
// its first request to its last, so a key's window is spent by one
// sequence at a time, as when the specs sent them one after the other.

// The lanes.
const (
	proLane     = "Pro key"
	freeLane    = "free key"
	unkeyedLane = "requests without a valid key"
)

// quietWait is the longest wait for a key's room that is not printed: at
// 20 a minute a key in steady use waits 3 s a request.
const quietWait = 5 * time.Second

// laneOf is the lane of a probe's sequence, and the keys it holds.
func (pr *prober) laneOf(p probe.Probe) (string, []string) {
	t := pr.keys()
	switch {
	case p.Oracle == probe.OracleRate && p.Shape == probe.AfterBurst:
		return freeLane, []string{pr.keyOf(p.Role)} // the other key only for a moment: rateSequence
	case p.Role == probe.Pro:
		return proLane, []string{t.Pro}
	case p.Role == probe.Free && p.Shape == probe.ReadByKey:
		return freeLane, []string{t.Free, t.Pro}
	case p.Role == probe.Free:
		return freeLane, []string{t.Free}
	case p.Shape == probe.CursorPage || p.Shape == probe.DeepPage || p.Shape == probe.ReadByKey:
		return proLane, []string{t.Pro} // the Pro key's pages or reads lead
	}
	return unkeyedLane, nil
}

// laneSeq is one sequence of a lane.
type laneSeq struct {
	p    probe.Probe
	r    *probeRun
	keys []string
}

// startLanes queues every distinct sequence the plan selected and starts
// the lanes. On a virtual clock the live-head sequences run first, here:
// they move the world, which no lane may see mid-sequence.
func (pr *prober) startLanes(ctx context.Context) {
	h := pr.h
	if sc, _ := ginkgo.GinkgoConfiguration(); sc.ParallelTotal > 1 {
		// Each process judges some of the specs: each sends their
		// sequences when they run, as before lanes (the Serial ones on
		// the last process).
		return
	}
	lanes := map[string][]laneSeq{}
	var prelude []laneSeq
	seen := map[string]bool{}
	pr.mu.Lock()
	for _, p := range pr.all {
		if !pr.plan.Selected[p.Name()] || seen[p.Request()] {
			continue
		}
		seen[p.Request()] = true
		r := pr.entryLocked(p)
		r.queued = true
		lane, keys := pr.laneOf(p)
		q := laneSeq{p: p, r: r, keys: keys}
		if p.Shape == probe.LiveHead {
			prelude = append(prelude, q)
			continue
		}
		lanes[lane] = append(lanes[lane], q)
	}
	pr.mu.Unlock()
	// The whole walks the oracles compare with are made first, as when
	// the specs ran one after the other: a feed that grows at its head
	// shows more in a walk made after a probe's than before it.
	pro, free := false, false
	for _, p := range pr.all {
		if pr.plan.Selected[p.Name()] && walkedBy(p) {
			pro = pro || p.Role != probe.Free || p.Oracle == probe.OracleTenant
			free = free || p.Role == probe.Free || p.Oracle == probe.OracleTenant
		}
	}
	if pro {
		h.Walk(ctx, probe.Pro)
	}
	if free {
		h.Walk(ctx, probe.Free)
	}
	for _, q := range prelude {
		pr.exec(client.WithScope(ctx, q.r.scope), q.p, q.r)
	}
	order := map[probe.Shape]int{}
	for i, sh := range probe.Shapes {
		order[sh] = i
	}
	// quick sends the explored requests beside the probes, within the
	// keys' room; thorough after them, so that they do not break into the
	// windows its lockouts need whole
	h.StartExplore()
	for _, name := range []string{freeLane, proLane, unkeyedLane} {
		seqs := lanes[name]
		// the lockouts first (they take a moment of the Pro key's window
		// while the Pro lane sends short sequences), the long walk last
		slices.SortStableFunc(seqs, func(a, b laneSeq) int {
			return cmp.Or(cmp.Compare(rank(a.p), rank(b.p)), cmp.Compare(order[a.p.Shape], order[b.p.Shape]))
		})
		if len(seqs) > 0 {
			h.Pace().Lane(h.RunContext(), name, func(ctx context.Context) { pr.runLane(ctx, name, seqs) })
		}
	}
}

// walkedBy reports whether a probe's oracle compares with a whole walk of
// the feed, or takes ids from it.
func walkedBy(p probe.Probe) bool {
	switch p.Oracle {
	case probe.OracleWalk, probe.OraclePageSize, probe.OracleTenant, probe.OracleLists:
		return true
	}
	return p.Oracle == probe.OracleRate && p.Shape == probe.BothOps
}

func rank(p probe.Probe) int {
	if p.Oracle == probe.OracleRate && p.Shape == probe.AfterBurst {
		return 0
	}
	return 1
}

// runLane sends the lane's sequences, each holding its keys.
func (pr *prober) runLane(ctx context.Context, name string, seqs []laneSeq) {
	key := map[string]string{proLane: pr.keys().Pro, freeLane: pr.keys().Free}[name]
	for len(seqs) > 0 {
		i := pr.pick(key, seqs)
		q := seqs[i]
		seqs = slices.Delete(seqs, i, i+1)
		release, err := pr.h.Pace().Hold(ctx, q.keys...)
		if err != nil {
			for _, q := range append(seqs, q) {
				q.r.once.Do(func() { q.r.blocked = "the run ended before the probe's requests were sent: " + err.Error() })
				q.r.finish()
			}
			return
		}
		pr.exec(client.WithScope(ctx, q.r.scope), q.p, q.r)
		release()
	}
}

// pick is the lane's next sequence: the one that can start first, by
// the room its key's windows have (the earliest in order among equals),
// so that a key's feed window is not left idle while tracked videos wait
// for theirs, nor the other way round; but one that needs a whole window
// (a lockout, a burst) as soon as the key's window is about as whole as
// it will be before the next request anyway: later, in a window another
// sequence has begun, it would wait that window out.
func (pr *prober) pick(key string, seqs []laneSeq) int {
	if key == "" {
		return 0
	}
	best, soonest := -1, time.Duration(0)
	whole, wholeIn := -1, time.Duration(0)
	for i, q := range seqs {
		d := pr.startsIn(key, q.p)
		switch {
		case wholeWindow(q.p):
			if whole < 0 || d < wholeIn {
				whole, wholeIn = i, d
			}
		case best < 0 || d < soonest:
			best, soonest = i, d
		}
	}
	switch {
	case best < 0:
		return whole
	case whole >= 0 && wholeIn <= soonest+wholeSlack:
		return whole
	}
	return best
}

// wholeSlack is how much longer than the next request a sequence that
// needs a whole window may wait for it.
const wholeSlack = 10 * time.Second

// wholeWindow reports whether a sequence spends a key's whole window at
// once.
func wholeWindow(p probe.Probe) bool {
	return p.Oracle == probe.OracleRate || p.Shape == probe.AfterBurst && !p.Role.Bad()
}

// startsIn is how long a sequence waits for its key's room before its
// first request, by what the suite sent on the key.
func (pr *prober) startsIn(key string, p probe.Probe) time.Duration {
	n := 1
	switch {
	case p.Oracle == probe.OracleRate:
		return pr.h.RoomIn(key, "", schemas.FeedRequestsPerMinute) // a fresh window
	case p.Shape == probe.AfterBurst && !p.Role.Bad():
		n = schemas.FeedRequestsPerMinute
	}
	var d time.Duration
	if spendsFeed(p) {
		d = pr.h.RoomIn(key, schemas.PathFeed, n)
	}
	if spendsVideos(p) {
		d = max(d, pr.h.RoomIn(key, schemas.PathVideos, n))
	}
	return d
}

// spendsFeed reports whether a sequence sends feed requests on a valid
// key that no spec sent before (a bad key's cursor pages follow pages of
// the Pro key's walk, which the suite made).
func spendsFeed(p probe.Probe) bool {
	if p.Role.Bad() {
		return p.Shape == probe.ReadByKey && p.Input.Op == probe.Feed
	}
	return p.Input.Op == probe.Feed || p.Oracle == probe.OracleRate || p.Shape == probe.BothOps
}

// spendsVideos reports whether a sequence sends tracked-videos requests
// on a valid key.
func spendsVideos(p probe.Probe) bool {
	if p.Role.Bad() {
		return p.Shape == probe.ReadByKey && p.Input.Op == probe.Videos
	}
	return p.Input.Op == probe.Videos || p.Shape == probe.BothOps
}

// exec sends a queued sequence, once, and lets the specs that wait for it
// go on.
func (pr *prober) exec(ctx context.Context, p probe.Probe, r *probeRun) {
	defer r.finish()
	r.once.Do(func() {
		defer func() {
			// a lane has no spec to fail: what went wrong blocks the probe
			if v := recover(); v != nil {
				r.blocked = pr.h.Redact(fmt.Sprintf("the suite could not send the probe's requests: %v", v))
			}
		}()
		pr.send(ctx, p, r)
	})
}

// pace waits, in a lane, until the request's key has room for n more
// requests of its path in its window, by what the suite sent on it: a
// lane spends a key's window without a 429 where it can.
func (pr *prober) pace(ctx context.Context, req client.Request, n int) error {
	if !pace.InLane(ctx) {
		return nil
	}
	key := ""
	for _, k := range []string{pr.keys().Pro, pr.keys().Free} {
		if k != "" && req.Auth == client.Bearer(k) {
			key = k
		}
	}
	if key == "" {
		return nil
	}
	return pr.waitRoom(ctx, key, req.Path, n, fmt.Sprintf("room in the window of the key of %s, for the probes", req))
}

// waitRoom waits until the key has room for n more requests of path ("":
// of any path) in its window, by what the suite sent on it.
func (pr *prober) waitRoom(ctx context.Context, key, path string, n int, why string) error {
	d := pr.h.RoomIn(key, path, n)
	if d <= 0 {
		return nil
	}
	if d < quietWait {
		return pr.h.Pace().Wait(ctx, d)
	}
	return pr.h.Wait(ctx, d, why)
}
