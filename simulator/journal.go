package simulator

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tcmkit/tcmkit/schemas"
)

// Entry is one request to the API (the control API is not journaled) as
// the journal keeps it and GET /_control/requests shows it. Nothing in it
// holds a key: a key shows as its hint (tcm_…abcd) and a key id, and a key
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
	KeyHint       string `json:"keyHint,omitempty"`
	KeyID         string `json:"keyId,omitempty"`
	Account       string `json:"account,omitempty"`  // the account the key belongs or belonged to
	KeyInURL      bool   `json:"keyInUrl,omitempty"` // a key, or a piece of one, was found (and redacted) in the path or query
	ContentType   string `json:"contentType,omitempty"`
	RequestBytes  int64  `json:"requestBytes"`  // of the body, as far as the server read it
	ResponseBytes int64  `json:"responseBytes"` // of the answer's body
	Micros        int64  `json:"micros"`        // real time taken to answer
}

// Exchange is what an Observer sees of one request to the API, once it is
// answered. It is the observer's to keep, but its headers and bodies are
// shared with the server: an observer reads them and changes none, and
// copies what it keeps of them (the observer of every request would
// otherwise copy every header of every request).
type Exchange struct {
	Entry
	// RequestHeader is the request's header without Authorization and
	// Cookie (the key is Entry.KeyID and Entry.KeyHint).
	RequestHeader http.Header
	// RequestBody is the body as the client sent it, at most
	// MaxBodyBytes + 1 bytes, whether or not the handler read it.
	RequestBody []byte
	// ResponseHeader and ResponseBody are the answer (the body of a feed
	// answer only, up to maxObservedBody bytes).
	ResponseHeader http.Header
	ResponseBody   []byte
	// RateTime is when the request arrived on the clock that rate-limit
	// windows and Retry-After count on (virtual time with a manual clock,
	// real time plus the clock's advances in realtime mode): a judge of
	// Retry-After compares two requests' RateTime.
	RateTime time.Time
	// AuthProblem is why the Authorization header carries no well-formed
	// Bearer key (missing_api_key, malformed_api_key); "" when it does.
	AuthProblem string
	// KeysSeen are the keys found where the Authorization header does not
	// carry them: in the path, the query (also percent-encoded), the body,
	// another header, or an Authorization header that is not Bearer <key>.
	// Each is named by its id and hint, never whole.
	KeysSeen []KeySeen
	// Fault is the id of the injected fault that shaped the answer, 0 if
	// none did.
	Fault int
	// ClientGone is true when the client closed the connection before the
	// answer was done (it gave up waiting).
	ClientGone bool

	redact func(string) string
}

// Observer sees every exchange of the API, in the request's goroutine,
// after the answer was written (Config.Observers). A judge of a client's
// behaviour is one: Entry.KeyID tells whose request it is, the virtual
// and real times tell when, the bodies tell what was asked and given.
type Observer func(*Exchange)

// maxObservedBody bounds the answer body an Exchange carries.
const maxObservedBody = 4 << 20

// journaled is an Entry as the ring keeps it: the key's id and the tail
// of its hint as bytes, made into strings only when the entry is shown,
// so that recording a request allocates nothing.
type journaled struct {
	Entry
	keyID   [8]byte
	keyTail [4]byte
	hasKey  bool
}

// view fills in the key's hint and id.
func (j *journaled) view(prefix string) Entry {
	e := j.Entry
	if j.hasKey {
		e.KeyHint = prefix + "_…" + string(j.keyTail[:])
		e.KeyID = hex.EncodeToString(j.keyID[:])
	}
	return e
}

// journal is a ring of the last entries.
type journal struct {
	prefix  string
	mu      sync.Mutex
	ring    []journaled
	next    int    // where the next entry goes
	count   int    // entries held
	lastID  uint64 // id of the newest entry
	dropped uint64 // entries pushed out since the last clear
	bytes   int    // what the entries held cost (keepBudget)
}

func newJournal(size int, prefix string) *journal {
	if size <= 0 {
		return nil
	}
	return &journal{ring: make([]journaled, size), prefix: prefix}
}

func (j *journal) add(e *journaled) {
	j.mu.Lock()
	j.lastID++
	e.ID = j.lastID
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
}

// entryFilter is the query of GET /_control/requests.
type entryFilter struct {
	keySuffix, account, path, method string
	op                               Operation
	status, statusClass              int // statusClass 4 matches 4xx
	since, until                     int64
	hasSince, hasUntil               bool
	after                            uint64
	limit                            int
}

func (f *entryFilter) match(e *journaled) bool {
	switch {
	case f.keySuffix != "" && (!e.hasKey || !strings.HasSuffix(string(e.keyTail[:]), f.keySuffix)),
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
	if k := q.Get("key"); k != "" {
		// The hint form (tcm_…abcd) or its last characters: never more of
		// a key than a hint shows.
		if _, tail, ok := strings.Cut(k, "…"); ok {
			k = tail
		}
		if len(k) > 4 {
			bad("key", "at most the last 4 characters of a key (or its hint, tcm_…abcd): a key is a secret")
		}
		f.keySuffix = k
	}
	f.account, f.path, f.method = q.Get("account"), q.Get("path"), strings.ToUpper(q.Get("method"))
	if op := q.Get("operation"); op != "" {
		f.op = Operation(op)
		if f.op != OpFeed && f.op != OpVideos && f.op != OpHealth {
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

// list returns the matching entries, oldest first (the newest f.limit of
// them when a limit is set), how many matched, and how many entries were
// pushed out of the ring since the last clear.
func (j *journal) list(f entryFilter) (out []Entry, matched int, dropped uint64) {
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
	if f.limit > 0 && len(out) > f.limit {
		out = out[len(out)-f.limit:]
	}
	return out, matched, j.dropped
}

func (s *Server) ctlRequests(w http.ResponseWriter, r *http.Request) {
	if s.journal == nil {
		WriteError(w, http.StatusNotFound, CodeNotFound, "the journal is off (--journal-size 0)", nil)
		return
	}
	f, problems := parseEntryFilter(r.URL.Query())
	if len(problems) > 0 {
		writeQueryError(w, problems)
		return
	}
	list, matched, dropped := s.journal.list(f)
	writeJSON(w, http.StatusOK, map[string]any{"requests": list, "matched": matched, "capacity": len(s.journal.ring), "dropped": dropped})
}

func (s *Server) ctlClearRequests(w http.ResponseWriter, r *http.Request) {
	s.journal.Clear()
	s.resetJudge()
	writeJSON(w, http.StatusOK, map[string]any{"requests": []Entry{}, "matched": 0})
}

// record is the journal's view of one request while it is served; it
// lives in the request's trackingWriter.
type record struct {
	e        journaled
	key      hashedKey // when e.hasKey: never journaled, only handed to authenticate
	start    time.Time
	rateTime time.Time // for observers
	authErr  string    // for observers
	tap      *bodyTap
	on       bool
	observe  bool
}

// begin starts the record of an API request, unless there is neither a
// journal nor an observer.
func (s *Server) begin(rec *record, r *http.Request) {
	if s.journal == nil && len(s.observers) == 0 {
		return
	}
	rec.on, rec.start, rec.observe = true, time.Now(), len(s.observers) > 0
	e := &rec.e
	e.Time = rec.start.UTC()
	e.VirtualTime = s.clock.Now().UnixMilli()
	e.Method = r.Method
	e.Path, e.Query, e.KeyInURL = s.journalURL(r.URL.Path, r.URL.RawQuery)
	e.Operation = operationOf(r.URL.Path)
	// The header map is read by its canonical keys: no canonicalizing on
	// every request.
	if ct := r.Header["Content-Type"]; len(ct) > 0 {
		e.ContentType = excerpt(s.redactKeys(ct[0])) // redacted before it is cut
	}
	auth := r.Header["Authorization"]
	if key, err := ParseBearer(auth, s.cfg.KeyPrefix); err == nil {
		h := hashKey(key)
		rec.key, e.hasKey = hashedKey{auth[0], h}, true
		copy(e.keyID[:], h[:8])
		copy(e.keyTail[:], key[len(key)-4:])
		e.Account = s.st.Load().keys.accountOf(h)
	} else if rec.observe {
		rec.authErr = err.Code
	}
	if rec.observe {
		rec.rateTime = s.clock.RateNow()
	}
	if r.Body != nil && r.Body != http.NoBody {
		tap := &bodyTap{ReadCloser: r.Body}
		if rec.observe {
			// Observers see the body as sent, whether or not the handler
			// reads it (a 401 or a 403 is answered before): read now, at
			// most MaxBodyBytes+1, and handed on to the handler.
			body := r.Body
			tap.kept, _ = io.ReadAll(io.LimitReader(body, MaxBodyBytes+1))
			tap.ReadCloser = readCloser{io.MultiReader(bytes.NewReader(tap.kept), body), body}
		}
		rec.tap = tap
		r.Body = tap
	}
}

// end completes the record once the answer is written.
func (s *Server) end(rec *record, w *trackingWriter, r *http.Request) {
	e := &rec.e
	e.Status, e.Error, e.ResponseBytes = w.status, w.errCode, w.n
	if ra := w.Header()["Retry-After"]; len(ra) > 0 {
		e.RetryAfter = ra[0]
	}
	if rec.tap != nil {
		e.RequestBytes = rec.tap.n
	}
	e.Micros = time.Since(rec.start).Microseconds()
	if s.journal != nil {
		s.journal.add(e)
	} else if rec.observe {
		e.ID = s.exchanges.Add(1) // without a journal, observers still tell requests apart
	}
	if !rec.observe {
		return
	}
	x := &Exchange{Entry: e.view(s.cfg.KeyPrefix), RequestHeader: withoutSecrets(r.Header), ResponseHeader: w.Header(), ResponseBody: w.kept,
		RateTime: rec.rateTime, AuthProblem: rec.authErr, Fault: w.fault, ClientGone: r.Context().Err() != nil, redact: s.redactKeys}
	if rec.tap != nil {
		x.RequestBody = rec.tap.kept
	}
	x.KeysSeen = s.keysSeen(r, x.RequestBody, rec.authErr != "")
	for _, o := range s.observers {
		s.callObserver(o, x)
	}
}

// withoutSecrets is a request's header for observers: the same values,
// without Authorization and Cookie.
func withoutSecrets(h http.Header) http.Header {
	out := make(http.Header, len(h))
	for k, v := range h {
		if k != "Authorization" && k != "Cookie" {
			out[k] = v
		}
	}
	return out
}

func (s *Server) callObserver(o Observer, x *Exchange) {
	defer func() {
		if v := recover(); v != nil {
			s.log.Error("an observer panicked", "panic", fmt.Sprint(v), "request", x.ID)
		}
	}()
	o(x)
}

// operationOf names the operation of an API path, "" for another path.
func operationOf(path string) Operation {
	switch path {
	case schemas.PathFeed:
		return OpFeed
	case schemas.PathVideos:
		return OpVideos
	case schemas.PathHealth:
		return OpHealth
	}
	return ""
}

// bodyTap counts what the server reads of a request body; kept is what
// observers see of it.
type bodyTap struct {
	io.ReadCloser
	n    int64
	kept []byte
}

func (b *bodyTap) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n += int64(n)
	return n, err
}

type readCloser struct {
	io.Reader
	io.Closer
}
