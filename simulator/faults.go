package simulator

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Two kinds of faults:
//
//   - Injected faults (control API, POST /_control/faults) make the
//     simulator fail the way a real server sometimes does: an error status,
//     a delay, a malformed body, a dropped connection. They break no rule
//     of the contract beyond what a real outage does.
//   - Named faults (Config.Faults, RegisterFault) break one requirement of
//     the contract on purpose, so that a conformance suite can be shown to
//     catch it. They are middleware around one operation's handler.

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
	RetryAfter  int     `json:"retryAfter,omitempty"`  // Retry-After seconds on 429/503 (default 1)
}

func (f *FaultSpec) check() error {
	switch f.Operation {
	case opFeed, opVideos, opHealth, "*":
	default:
		return fmt.Errorf("operation must be feed, videos, health or *, got %q", f.Operation)
	}
	switch {
	case f.Status != 0 && (f.Status < 400 || f.Status > 599):
		return fmt.Errorf("status must be an error status 400..599, got %d", f.Status)
	case f.DelayMs < 0 || time.Duration(f.DelayMs)*time.Millisecond > MaxFaultDelay:
		return fmt.Errorf("delayMs must be within 0..%d", MaxFaultDelay.Milliseconds())
	case f.Count < 0:
		return fmt.Errorf("count must not be negative")
	case !(f.Probability >= 0 && f.Probability <= 1):
		return fmt.Errorf("probability must be within 0..1")
	case f.RetryAfter < 0:
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
func (f *faultSet) Pick(op string) (FaultSpec, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range f.list {
		spec := &f.list[i]
		if spec.Operation != op && spec.Operation != "*" {
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

func (f *faultSet) active() bool { return f.any.Load() }

// operation wraps the handler of one operation with its named faults and
// the injected ones.
func (s *Server) operation(op string, h http.Handler) http.Handler {
	for _, name := range s.cfg.Faults {
		nf, _ := lookupFault(name)
		h = nf.Wrap(op, h)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.faults.active() {
			if spec, ok := s.faults.Pick(op); ok && s.inject(w, r, spec, h) {
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}

// inject applies a fault. It returns false if the request should still be
// served normally (a delay alone).
func (s *Server) inject(w http.ResponseWriter, r *http.Request, spec FaultSpec, next http.Handler) bool {
	s.log.Info("injecting fault", "fault", spec.ID, requestAttrs(r))
	if spec.DelayMs > 0 {
		s.sleep(r.Context(), time.Duration(spec.DelayMs)*time.Millisecond)
	}
	switch {
	case spec.Drop:
		conn, _, err := http.NewResponseController(w).Hijack()
		if err != nil {
			// HTTP/2 or a recorder: abort the stream instead.
			panic(http.ErrAbortHandler)
		}
		_ = conn.Close()
		return true
	case spec.Malformed && spec.Status == 0:
		rec := &recorder{header: http.Header{}, status: http.StatusOK}
		next.ServeHTTP(rec, r)
		copyHeader(w.Header(), rec.header)
		body := rec.body.Bytes()
		writeRaw(w, rec.status, body[:len(body)/2])
		return true
	case spec.Status != 0:
		if spec.Status == http.StatusTooManyRequests || spec.Status == http.StatusServiceUnavailable {
			w.Header().Set("Retry-After", strconv.Itoa(max(spec.RetryAfter, 1)))
		}
		raw := mustJSON(errorBody{Error: codeInjected, Message: fmt.Sprintf("fault %d injected through the control API: status %d", spec.ID, spec.Status)})
		if spec.Malformed {
			raw = raw[:len(raw)/2]
		}
		writeRaw(w, spec.Status, raw)
		return true
	}
	return false
}

// NamedFault breaks one requirement of the contract on purpose. A file of
// this package registers each one from init with RegisterFault; Config.Faults
// (and the binary's --faults) turn them on by name.
type NamedFault struct {
	Name        string
	Description string
	// Wrap returns the handler of operation op (feed, videos, health) with
	// the fault in it, or next unchanged if the fault does not touch op.
	Wrap func(op string, next http.Handler) http.Handler
}

var (
	namedMu     sync.RWMutex
	namedFaults = map[string]NamedFault{}
)

// RegisterFault makes a named fault available. It panics on a duplicate or
// incomplete fault: registration happens in init, where that is a bug.
func RegisterFault(f NamedFault) {
	if f.Name == "" || f.Wrap == nil {
		panic("simulator: a named fault needs a name and Wrap")
	}
	namedMu.Lock()
	defer namedMu.Unlock()
	if _, dup := namedFaults[f.Name]; dup {
		panic("simulator: fault registered twice: " + f.Name)
	}
	namedFaults[f.Name] = f
}

func lookupFault(name string) (NamedFault, bool) {
	namedMu.RLock()
	defer namedMu.RUnlock()
	f, ok := namedFaults[name]
	return f, ok
}

// FaultNames lists the registered named faults, sorted.
func FaultNames() []string {
	namedMu.RLock()
	defer namedMu.RUnlock()
	names := make([]string, 0, len(namedFaults))
	for n := range namedFaults {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Rewrite is the building block of most named faults: it serves the
// request with next into a buffer, lets edit change the status, the header
// and the body, and sends the result.
func Rewrite(next http.Handler, edit func(r *http.Request, status int, header http.Header, body []byte) (int, []byte)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &recorder{header: http.Header{}, status: http.StatusOK}
		next.ServeHTTP(rec, r)
		status, body := edit(r, rec.status, rec.header, rec.body.Bytes())
		copyHeader(w.Header(), rec.header)
		writeRaw(w, status, body)
	})
}

// recorder is a minimal in-memory ResponseWriter.
type recorder struct {
	header http.Header
	status int
	wrote  bool
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) WriteHeader(code int) {
	if !r.wrote {
		r.status, r.wrote = code, true
	}
}
func (r *recorder) Write(b []byte) (int, error) {
	r.wrote = true
	return r.body.Write(b)
}

func copyHeader(dst, src http.Header) {
	for k, v := range src {
		if k == "Content-Length" {
			continue
		}
		dst[k] = v
	}
}

func mustJSON(v any) []byte {
	raw, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return raw
}

// FaultDescription returns what a registered named fault does, or "".
func FaultDescription(name string) string {
	f, _ := lookupFault(name)
	return f.Description
}
