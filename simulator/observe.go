package simulator

import (
	"errors"
	"net/http"
	"sync"
	"time"
)

// ClientJudge judges the clients that talk to a server: it sees every
// exchange of the API, its verdicts and scenarios are served on the
// control API, and it starts again on DELETE /_control/clients, a reset
// and an import (not when the journal is cleared). Config.Clients makes
// it, once, from New, which hands it the server (its scenarios act through
// RegenerateKey, AddFault, Advance), as it hands itself to a Layer's Wrap.
// Package simulator/clients gives one.
type ClientJudge interface {
	// Observe sees one exchange, after the Config.Observers.
	Observe(*Exchange)
	// Verdicts answers GET /_control/clients. final judges as if the run
	// ended now (a walk still open is abandoned).
	Verdicts(final bool) Answer
	// Reset forgets every client, and starts the armed scenario again.
	Reset()
	// Scenarios answers GET /_control/scenarios.
	Scenarios() Answer
	// StartScenario arms the named scenario in place of any other and
	// answers with its state; an unknown name is an ErrNoScenario.
	StartScenario(name string) (Answer, error)
	// StopScenario disarms the scenario, if any.
	StopScenario()
}

// ErrNoScenario is what ClientJudge.StartScenario wraps for a name it
// does not know.
var ErrNoScenario = errors.New("no such scenario")

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
	// Answered is when the answer began to go out (Entry.Time's clock;
	// zero when none did). A client has its answer after Answered, not
	// after Time + Micros: a body larger than net/http's buffers is on the
	// wire before the handler returns, and Micros also counts the time
	// the server takes to end the request, which on a loaded machine may
	// be after the client's next request arrived.
	Answered time.Time
	// AuthProblem is why the Authorization header carries no well-formed
	// Bearer key (missing_api_key, malformed_api_key); "" when it does.
	AuthProblem string
	// KeysSeen are the keys found where the Authorization header does not
	// carry them: in any part of the request target (path, query, the
	// userinfo of an absolute URL, the host), the body, another header, or
	// an Authorization header that is not Bearer <key> (Basic: decoded).
	// Each is named by its id and hint, never whole.
	KeysSeen []KeySeen
	// Fault is the id of the injected fault that shaped the answer, 0 if
	// none did.
	Fault int
	// Breaks is the requirement of the catalogue the answer broke on
	// purpose (Answer.Breaks: a fuzz schedule's), "" if none.
	Breaks string
	// ClientGone is true when the client closed the connection before the
	// answer was done (it gave up waiting).
	ClientGone bool
	// Conn names the connection the request came on: requests of one
	// connection come from one client. On HTTPServer's listener it is the
	// connection's number ("conn 12"); elsewhere the client's address
	// (ip:port), which a later connection may reuse, and which a test that
	// calls the handler without a connection gives every request alike.
	Conn string

	redact func(string) string
}

// Observer sees every exchange of the API, in the request's goroutine,
// after the answer was written (Config.Observers), in the order the
// requests arrived (observeOrder) unless they overlapped. A judge of a client's
// behaviour is one: Entry.KeyID tells whose request it is, the virtual
// and real times tell when, the bodies tell what was asked and given.
type Observer func(*Exchange)

// maxObservedBody bounds the answer body an Exchange carries.
const maxObservedBody = 4 << 20

// KeySeen is a key found where the Authorization header does not carry
// it (Exchange.KeysSeen).
type KeySeen struct {
	// Where: "path", "query", "userinfo" or "host" (parts of the request
	// target), "body", "header", "cookie", "referer", or "authorization"
	// (a header that is not Bearer <key>, such as Basic).
	Where   string
	KeyID   string // 16 hex digits of its SHA-256, as Entry.KeyID; "" for a piece of a key
	KeyHint string // tcm_…#3f9a
	Account string // the account whose key it is (valid or revoked), "" if none
}

// Redact replaces every key of the server's prefix in text by its hint:
// a judge passes what it quotes of a request through it.
func (x *Exchange) Redact(text string) string {
	if x.redact == nil {
		return text
	}
	return x.redact(text)
}

// Settle waits, at most max, until every API request that has begun has
// been handed to the observers. Observers see an exchange once its answer
// is written, so a quick client may have sent its next requests, and even
// ended its run, before they saw one of its pages: a final verdict waits
// for them. It reports whether they all were.
func (s *Server) Settle(max time.Duration) bool {
	deadline := time.Now().Add(max)
	for s.observing.Load() > 0 {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(200 * time.Microsecond)
	}
	return true
}

// observeOrder hands answered requests to the observers in the order they
// arrived. Observers run once the answer is written, and a client has its
// answer, and may send its next request, before the server ends the one
// it answered: on a loaded machine a sequential client's next request was
// observed before the one it followed (a walk's second page before its
// first), and a judge of what a client did next saw it out of order. An
// exchange waits for the ones that arrived before it and are answered but
// not yet observed; not for those still being served (slow answers), which
// no sequential client can follow.
type observeOrder struct {
	mu     sync.Mutex
	next   uint64
	flight map[uint64]*meter // begun, not yet observed
}

// maxOrderWait bounds the wait for an earlier exchange's observers (a
// moment, unless one of them hangs).
const maxOrderWait = time.Second

func (o *observeOrder) arrive(m *meter) uint64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.flight == nil {
		o.flight = map[uint64]*meter{}
	}
	o.next++
	o.flight[o.next] = m
	return o.next
}

// wait returns once no exchange that arrived before seq is answered and
// not yet observed (or after maxOrderWait).
func (o *observeOrder) wait(seq uint64) {
	deadline := time.Now().Add(maxOrderWait)
	for o.earlier(seq) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Microsecond)
	}
}

func (o *observeOrder) earlier(seq uint64) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	for s, m := range o.flight {
		if s < seq && m.answered.Load() {
			return true
		}
	}
	return false
}

// done: seq's observers ran (or it had none to run).
func (o *observeOrder) done(seq uint64) {
	o.mu.Lock()
	delete(o.flight, seq)
	o.mu.Unlock()
}
