package simulator

import (
	"cmp"
	"encoding/hex"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tcmkit/tcmkit/schemas/redact"
)

// Entry is one request to the API (the control API is not journaled) as
// the journal keeps it and GET /_control/requests shows it. Nothing in it
// holds a key: a key shows as its hint (tcm_…#3f9a) and a key id, and a key
// that a client put in the path or the query is redacted there.
type Entry struct {
	ID          uint64    `json:"id"`          // 1, 2, ... in arrival order; a reset starts again at 1
	Time        time.Time `json:"time"`        // real time the request arrived
	VirtualTime int64     `json:"virtualTime"` // virtual time it arrived, epoch ms
	Method      string    `json:"method"`
	Path        string    `json:"path"`            // keys redacted
	Query       string    `json:"query,omitempty"` // as sent, keys redacted
	Operation   Operation `json:"operation,omitempty"`
	Status      int       `json:"status"`
	Error       string    `json:"error,omitempty"`      // the answer's ErrorBody.error
	RetryAfter  string    `json:"retryAfter,omitempty"` // the answer's Retry-After
	// KeyHint and KeyID name the well-formed key of the Authorization
	// header: its redacted form, and 16 hex digits of its SHA-256, which
	// tell keys apart without revealing anything of one.
	KeyHint  string `json:"keyHint,omitempty"`
	KeyID    string `json:"keyId,omitempty"`
	Account  string `json:"account,omitempty"`  // the account the key belongs or belonged to
	KeyInURL bool   `json:"keyInUrl,omitempty"` // a key, or a piece of one, was found (and redacted) in the path or query
	// ContentType is the request's Content-Type lines as sent, redacted,
	// one a line ("\n" between two), each cut at 64 bytes, 256 in all.
	ContentType string `json:"contentType,omitempty"`
	// RequestBytes is of the body, as far as the server read it: for a
	// handler, or for the observers (the client judge reads every body,
	// also of a request refused before its handler reads it).
	RequestBytes  int64 `json:"requestBytes"`
	ResponseBytes int64 `json:"responseBytes"` // of the answer's body
	Micros        int64 `json:"micros"`        // real time taken to answer
}

// journaled is an Entry as the ring keeps it: the key's id as bytes, made
// into its hint and id only when the entry is shown, so that recording a
// request allocates nothing.
type journaled struct {
	Entry
	keyID  [8]byte // the first bytes of the key's SHA-256
	hasKey bool
	gen    uint64 // the journal's generation when the id was given
}

// view fills in the key's hint and id.
func (j *journaled) view(prefix string) Entry {
	e := j.Entry
	if j.hasKey {
		e.KeyHint = redact.HashForm(prefix+"_", j.keyID[:])
		e.KeyID = hex.EncodeToString(j.keyID[:])
	}
	return e
}

// journal is a ring of the last entries.
type journal struct {
	prefix string
	mu     sync.Mutex
	ring   []journaled
	next   int    // where the next entry goes
	count  int    // entries held
	lastID uint64 // the last id given (on arrival: nextID)
	gen    uint64 // Clear's count: a request that arrived before a clear is not kept after it
	// answering holds the ids given to requests not yet answered (settled).
	answering map[uint64]struct{}
	dropped   uint64 // entries pushed out since the last clear
	bytes     int    // what the entries held cost (keepBudget)
}

func newJournal(size int, prefix string) *journal {
	if size <= 0 {
		return nil
	}
	return &journal{ring: make([]journaled, size), prefix: prefix}
}

// nextID is the id of a request that arrives now, and the generation it
// belongs to. Ids are given on arrival, entries added once answered: the
// ring holds them in the order they were answered, list in id order.
func (j *journal) nextID() (uint64, uint64) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.lastID++
	if j.answering == nil {
		j.answering = map[uint64]struct{}{}
	}
	j.answering[j.lastID] = struct{}{}
	return j.lastID, j.gen
}

// settled is the id up to which every request that arrived is listed
// (none of them is still being answered): a follower asks again after it,
// and misses no request answered late.
func (j *journal) settled() uint64 {
	low := j.lastID + 1
	for id := range j.answering {
		low = min(low, id)
	}
	return low - 1
}

func (j *journal) add(e *journaled) {
	j.mu.Lock()
	delete(j.answering, e.ID)
	if e.gen != j.gen { // it arrived before a clear
		j.mu.Unlock()
		return
	}
	if j.count == len(j.ring) {
		j.dropped++
		j.bytes -= j.ring[j.next].cost()
	} else {
		j.count++
	}
	j.ring[j.next] = *e
	j.bytes += e.cost()
	j.next = (j.next + 1) % len(j.ring)
	j.keepBudget()
	j.mu.Unlock()
}

// Clear empties the journal; ids start again at 1.
func (j *journal) Clear() {
	if j == nil {
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	clear(j.ring)
	j.next, j.count, j.lastID, j.dropped, j.bytes = 0, 0, 0, 0, 0
	j.gen++
	clear(j.answering)
}

// entryFilter is the query of GET /_control/requests.
type entryFilter struct {
	keyDigits, account, path, method string
	op                               Operation
	status, statusClass              int // statusClass 4 matches 4xx
	since, until                     int64
	hasSince, hasUntil               bool
	after                            uint64
	limit                            int
}

func (f *entryFilter) match(e *journaled) bool {
	switch {
	case f.keyDigits != "" && (!e.hasKey || !strings.HasPrefix(hex.EncodeToString(e.keyID[:2]), f.keyDigits)),
		f.account != "" && e.Account != f.account,
		f.path != "" && e.Path != f.path,
		f.method != "" && e.Method != f.method,
		f.op != "" && e.Operation != f.op,
		f.status != 0 && e.Status != f.status,
		f.statusClass != 0 && e.Status/100 != f.statusClass,
		f.hasSince && e.VirtualTime < f.since,
		f.hasUntil && e.VirtualTime >= f.until,
		e.ID <= f.after:
		return false
	}
	return true
}

// journalFilters are the query parameters of GET /_control/requests (the
// control API's OpenAPI document lists them too).
var journalFilters = []string{"key", "account", "operation", "method", "path", "status", "since", "until", "after", "limit"}

// parseEntryFilter reads the filter; every problem is named.
func parseEntryFilter(q url.Values) (entryFilter, []QueryProblem) {
	var f entryFilter
	var problems []QueryProblem
	bad := func(name, rule string) {
		problems = append(problems, QueryProblem{Parameter: name, Value: excerpt(q.Get(name)), Rule: rule})
	}
	integer := func(name string, dst *int64) bool {
		v := q.Get(name)
		if v == "" {
			return false
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			bad(name, "must be an integer")
			return false
		}
		*dst = n
		return true
	}
	// A parameter the journal does not know is named, not ignored: a
	// filter mistyped (keySuffix, state) would list every entry.
	for name := range q {
		if !slices.Contains(journalFilters, name) {
			bad(name, "no filter of the journal; they are "+strings.Join(journalFilters, ", "))
		}
	}
	if k := q.Get("key"); k != "" {
		// The hint (tcm_…#3f9a) or its digits: what a hint shows, the
		// first hex digits of the key's SHA-256, never a piece of a key.
		if _, tail, ok := strings.Cut(k, "…"); ok {
			k = tail
		}
		k = strings.ToLower(strings.TrimPrefix(k, "#"))
		if len(k) > 4 || strings.Trim(k, "0123456789abcdef") != "" {
			bad("key", "a key's hint (tcm_…#3f9a) or its digits (3f9a), as keyHint shows: a key is a secret")
		}
		f.keyDigits = k
	}
	f.account, f.path, f.method = q.Get("account"), q.Get("path"), strings.ToUpper(q.Get("method"))
	if op := q.Get("operation"); op != "" {
		f.op = Operation(op)
		if !isOperation(f.op) {
			bad("operation", "must be feed, videos or health")
		}
	}
	if st := q.Get("status"); st != "" {
		if len(st) == 3 && st[1:] == "xx" && st[0] >= '1' && st[0] <= '5' {
			f.statusClass = int(st[0] - '0')
		} else if n, err := strconv.Atoi(st); err == nil && n >= 100 && n <= 599 {
			f.status = n
		} else {
			bad("status", "must be a status (429) or a class (4xx)")
		}
	}
	f.hasSince = integer("since", &f.since)
	f.hasUntil = integer("until", &f.until)
	var after, limit int64
	if integer("after", &after) {
		f.after = uint64(max(after, 0))
	}
	if integer("limit", &limit) {
		if limit < 1 {
			bad("limit", "must be at least 1")
		}
		f.limit = int(limit)
	}
	return f, problems
}

// list returns the matching entries in arrival order (the newest f.limit of
// them when a limit is set), how many matched, how many entries were
// pushed out of the ring since the last clear, and the settled id.
func (j *journal) list(f entryFilter) (out []Entry, matched int, dropped, settled uint64) {
	j.mu.Lock()
	defer j.mu.Unlock()
	out = []Entry{}
	start := (j.next - j.count + len(j.ring)) % len(j.ring)
	for i := range j.count {
		e := &j.ring[(start+i)%len(j.ring)]
		if f.match(e) {
			matched++
			out = append(out, e.view(j.prefix))
		}
	}
	// In arrival order: a request answered late was added late.
	slices.SortFunc(out, func(a, b Entry) int { return cmp.Compare(a.ID, b.ID) })
	if f.limit > 0 && len(out) > f.limit {
		out = out[len(out)-f.limit:]
	}
	return out, matched, j.dropped, j.settled()
}
