package simulator

import (
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/tcmkit/tcmkit/simulator/world"
)

// ClientJudge judges the clients that talk to a server: it sees every
// exchange of the API, its verdicts and scenarios are served on the
// control API, and it starts again whenever the journal does (a clear, a
// reset, an import). Package simulator/clients gives one; Config.Clients
// turns it on.
type ClientJudge interface {
	// Bind hands the judge its server, once, from New: scenarios act
	// through it (RegenerateKey, AddFault, Advance).
	Bind(*Server)
	// Observe sees one exchange, after the Config.Observers.
	Observe(*Exchange)
	// Verdicts is GET /_control/clients, a JSON value. final judges as
	// if the run ended now (a walk still open is abandoned).
	Verdicts(final bool) any
	// Reset forgets every client, and starts the armed scenario again.
	Reset()
	// Scenarios is GET /_control/scenarios, a JSON value.
	Scenarios() any
	// StartScenario arms the named scenario in place of any other and
	// returns its state; an unknown name is an ErrNoScenario.
	StartScenario(name string) (any, error)
	// StopScenario disarms the scenario, if any.
	StopScenario()
}

// ErrNoScenario is what ClientJudge.StartScenario wraps for a name it
// does not know.
var ErrNoScenario = errors.New("no such scenario")

// KeySeen is a key found where the Authorization header does not carry
// it (Exchange.KeysSeen).
type KeySeen struct {
	Where   string // "path", "query", "body", "header" or "authorization"
	KeyID   string // 16 hex digits of its SHA-256, as Entry.KeyID
	KeyHint string // tcm_…abcd
}

// Redact replaces every key of the server's prefix in text by its hint:
// a judge passes what it quotes of a request through it.
func (x *Exchange) Redact(text string) string {
	if x.redact == nil {
		return text
	}
	return x.redact(text)
}

// maxKeysSeen bounds Exchange.KeysSeen.
const maxKeysSeen = 4

// keysSeen finds the keys of a request outside a well-formed
// Authorization header: in the path, the query (raw and decoded), the
// body, the other headers, and the Authorization header itself when it is
// not Bearer <key> (badAuth).
func (s *Server) keysSeen(r *http.Request, body []byte, badAuth bool) []KeySeen {
	var out []KeySeen
	add := func(where, text string) {
		if len(out) >= maxKeysSeen || !strings.Contains(text, s.keyMarker) {
			return
		}
		for _, k := range s.keyPattern.FindAllString(text, maxKeysSeen-len(out)) {
			h := hashKey(k)
			out = append(out, KeySeen{Where: where, KeyID: hex.EncodeToString(h[:8]), KeyHint: redact(k)})
		}
	}
	if badAuth {
		for _, v := range r.Header["Authorization"] {
			add("authorization", v)
		}
	}
	add("path", r.URL.Path)
	q := r.URL.RawQuery
	if dec, err := url.QueryUnescape(q); err == nil && dec != q {
		q = dec
	}
	add("query", q)
	add("body", string(body))
	out = s.hiddenKeys(out, "path", r.URL.Path)
	out = s.hiddenKeys(out, "query", r.URL.RawQuery)
	out = s.hiddenKeys(out, "body", string(body))
	for name, vs := range r.Header {
		if name == "Authorization" || name == "Cookie" {
			continue
		}
		for _, v := range vs {
			add("header", v)
		}
	}
	return out
}

// RedactKeys replaces every key of the server's prefix in text by its
// hint (tcm_…abcd): for what is written out of what clients sent.
func (s *Server) RedactKeys(text string) string { return s.redactKeys(text) }

// RateNow is the time rate-limit windows and Retry-After count on (see
// Exchange.RateTime).
func (s *Server) RateNow() time.Time { return s.clock.RateNow() }

// RegenerateKey gives an account a new key and revokes its old one at
// once, as POST /_control/accounts/{id}/key does.
func (s *Server) RegenerateKey(accountID string) (string, error) {
	s.control.Lock()
	defer s.control.Unlock()
	st := s.st.Load()
	if _, ok := st.world.Account(accountID); !ok {
		return "", world.ErrNoAccount
	}
	if st.keys.keyCount() >= MaxKeys {
		return "", errTooManyKeys
	}
	key := st.keys.Issue(accountID)
	s.log.Info("key regenerated; the previous key is revoked", "account", accountID, "key", redact(key))
	return key, nil
}

// AddFault injects a fault, as POST /_control/faults does, and returns
// it with its id.
func (s *Server) AddFault(spec FaultSpec) (FaultSpec, error) {
	if err := spec.check(); err != nil {
		return spec, fmt.Errorf("invalid fault: %w", err)
	}
	if len(s.faults.List()) >= MaxFaults {
		return spec, errTooManyFaults
	}
	spec = s.faults.Add(spec)
	s.log.Info("fault added", "fault", spec.ID, "operation", spec.Operation, "status", spec.Status)
	return spec, nil
}

func (s *Server) resetJudge() {
	if s.cfg.Clients != nil {
		s.cfg.Clients.Reset()
	}
}

// judgeOff answers a client route when no judge is configured.
func (s *Server) judgeOff(w http.ResponseWriter) bool {
	if s.cfg.Clients != nil {
		return false
	}
	WriteError(w, http.StatusNotFound, CodeNotFound, "client judging is off (cmd/simulator --no-client-judge; in Go, set Config.Clients, from package simulator/clients)", nil)
	return true
}

func (s *Server) ctlClients(w http.ResponseWriter, r *http.Request) {
	if s.judgeOff(w) {
		return
	}
	final := false
	if v := r.URL.Query().Get("final"); v != "" {
		if v != "true" && v != "false" {
			writeQueryError(w, []QueryProblem{{Parameter: "final", Value: excerpt(v), Rule: "must be true or false"}})
			return
		}
		final = v == "true"
	}
	writeJSON(w, http.StatusOK, s.cfg.Clients.Verdicts(final))
}

func (s *Server) ctlScenarios(w http.ResponseWriter, r *http.Request) {
	if s.judgeOff(w) {
		return
	}
	writeJSON(w, http.StatusOK, s.cfg.Clients.Scenarios())
}

func (s *Server) ctlStartScenario(w http.ResponseWriter, r *http.Request) {
	if s.judgeOff(w) {
		return
	}
	var b struct {
		Name string `json:"name"`
	}
	if !readControl(w, r, &b) {
		return
	}
	run, err := s.cfg.Clients.StartScenario(b.Name)
	switch {
	case errors.Is(err, ErrNoScenario):
		WriteError(w, http.StatusNotFound, CodeNotFound, err.Error(), map[string]any{"name": excerpt(b.Name)})
		return
	case err != nil:
		s.internalError(w, r, err)
		return
	}
	s.log.Info("scenario armed", "scenario", b.Name)
	writeJSON(w, http.StatusCreated, run)
}

func (s *Server) ctlStopScenario(w http.ResponseWriter, r *http.Request) {
	if s.judgeOff(w) {
		return
	}
	s.cfg.Clients.StopScenario()
	writeJSON(w, http.StatusOK, s.cfg.Clients.Scenarios())
}
