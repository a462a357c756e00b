package simulator

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Injected faults (control API, POST /_control/faults) make the simulator
// fail the way a real server sometimes does: an error status, a delay, a
// malformed body, a dropped connection. They break no rule of the contract
// beyond what a real outage does. (Named faults that break one requirement
// on purpose live in package simulator/mutants, as Layers: Config.Layers.)

// MaxFaultDelay bounds an injected delay (real time).
const MaxFaultDelay = 30 * time.Second

// FaultSpec is an injected fault, as the control API takes and lists it.
type FaultSpec struct {
	ID          int     `json:"id"`
	Operation   string  `json:"operation"`             // feed, videos, health or *
	Status      int     `json:"status,omitempty"`      // 400..599; 0: the real status
	DelayMs     int     `json:"delayMs,omitempty"`     // real delay before answering, ≤ MaxFaultDelay
	Malformed   bool    `json:"malformed,omitempty"`   // the body is cut in half: not JSON
	Drop        bool    `json:"drop,omitempty"`        // the connection is closed without an answer
	Count       int     `json:"count,omitempty"`       // fires this many more times (0: no bound)
	Probability float64 `json:"probability,omitempty"` // fires with this probability (0: always)
	// RetryAfter is the Retry-After seconds of a 429 or 503: nil (left
	// out) is 1; 0 is sent as 0, as the schema allows.
	RetryAfter *int `json:"retryAfter,omitempty"`
	// Named is a named fault given at start (a Layer of Config.Layers), listed
	// only: it is on for the whole run and cannot be injected or removed.
	Named string `json:"named,omitempty"`
}

func (f *FaultSpec) check() error {
	if op := Operation(f.Operation); op != "*" && !isOperation(op) {
		return fmt.Errorf("operation must be feed, videos, health or *, got %q", f.Operation)
	}
	switch {
	case f.Named != "":
		return fmt.Errorf("named faults are given at start (--fault), not injected")
	case f.Status != 0 && (f.Status < 400 || f.Status > 599):
		return fmt.Errorf("status must be an error status 400..599, got %d", f.Status)
	case f.DelayMs < 0 || time.Duration(f.DelayMs)*time.Millisecond > MaxFaultDelay:
		return fmt.Errorf("delayMs must be within 0..%d", MaxFaultDelay.Milliseconds())
	case f.Count < 0:
		return fmt.Errorf("count must not be negative")
	case !(f.Probability >= 0 && f.Probability <= 1):
		return fmt.Errorf("probability must be within 0..1")
	case f.RetryAfter != nil && *f.RetryAfter < 0:
		return fmt.Errorf("retryAfter must not be negative")
	case f.Status == 0 && f.DelayMs == 0 && !f.Malformed && !f.Drop:
		return fmt.Errorf("a fault needs an effect: status, delayMs, malformed or drop")
	case f.Count == 0 && f.Probability == 0:
		return fmt.Errorf("a fault needs count (the next N requests) or probability (0..1), or both")
	}
	return nil
}

// faultSet holds the injected faults; a seeded RNG decides the probable ones.
type faultSet struct {
	mu     sync.Mutex
	seed   int64
	rng    *rand.Rand
	list   []FaultSpec
	nextID int
	any    atomic.Bool // len(list) > 0, read without the lock on the hot path
}

func newFaultSet(seed int64) *faultSet {
	f := &faultSet{seed: seed}
	f.Clear()
	return f
}

func (f *faultSet) Add(spec FaultSpec) FaultSpec {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nextID++
	spec.ID = f.nextID
	f.list = append(f.list, spec)
	f.any.Store(true)
	return spec
}

func (f *faultSet) List() []FaultSpec {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.list)
}

// Clear removes every fault and reseeds the RNG, so a run is reproducible
// from a clean slate.
func (f *faultSet) Clear() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.list = nil
	f.any.Store(false)
	f.rng = rand.New(rand.NewPCG(uint64(f.seed), 0xfa17))
}

// Pick returns the first fault that fires for a request of op, and uses
// up one of its count.
func (f *faultSet) Pick(op Operation) (FaultSpec, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range f.list {
		spec := &f.list[i]
		if spec.Operation != string(op) && spec.Operation != "*" {
			continue
		}
		if spec.Probability > 0 && f.rng.Float64() >= spec.Probability {
			continue
		}
		fired := *spec
		if spec.Count > 0 {
			spec.Count--
			if spec.Count == 0 {
				f.list = slices.Delete(f.list, i, i+1)
				f.any.Store(len(f.list) > 0)
			}
		}
		return fired, true
	}
	return FaultSpec{}, false
}

// retryAfter is the fault's Retry-After in seconds.
func (f *FaultSpec) retryAfter() int {
	if f.RetryAfter == nil {
		return 1
	}
	return *f.RetryAfter
}

func (f *faultSet) active() bool { return f.any.Load() }
