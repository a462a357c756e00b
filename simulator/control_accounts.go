package simulator

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/tcmkit/tcmkit/simulator/world"
)

// ControlPrefix is where the control API lives, never on the API's paths.
const ControlPrefix = "/_control/"

// readControl decodes a small JSON control body into v; unknown fields are
// an error, so a misspelt field is not silently ignored.
// ok is false with the 400 to answer when the body is not v.
func readControl(r *http.Request, v any) (refused answer, ok bool) {
	raw, err := io.ReadAll(io.LimitReader(r.Body, MaxBodyBytes+1))
	if err != nil || len(raw) > MaxBodyBytes {
		return errorAnswer(http.StatusBadRequest, CodeInvalidBody, fmt.Sprintf("the body must be JSON of at most %d bytes", MaxBodyBytes), nil), false
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		msg := "the body is not the expected JSON: " + err.Error()
		if strings.HasPrefix(err.Error(), "json: unknown field ") {
			msg += "; the fields are " + strings.Join(jsonFields(v), ", ")
		}
		return errorAnswer(http.StatusBadRequest, CodeInvalidBody, msg, nil), false
	}
	if dec.More() {
		return errorAnswer(http.StatusBadRequest, CodeInvalidBody, "the body has data after the JSON value", nil), false
	}
	return answer{}, true
}

// jsonFields are the JSON names of the fields of the struct v points to,
// quoted: what a control body may hold.
func jsonFields(v any) []string {
	t := reflect.TypeOf(v)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil
	}
	var names []string
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		names = append(names, strconv.Quote(name))
	}
	return names
}

func ms(t time.Time) int64 { return t.UnixMilli() }

// Info is what GET /_control/info and the binary's --info-file say.
type Info struct {
	URL        string `json:"url"`
	ControlURL string `json:"controlUrl"`
	ProKey     string `json:"proKey"`
	FreeKey    string `json:"freeKey"`
	RevokedKey string `json:"revokedKey"`
	Now        int64  `json:"now,omitempty"`
	// NamedFaults are the named faults on (Config.Layers): the
	// simulator breaks the contract on purpose.
	NamedFaults []string `json:"namedFaults,omitempty"`
	// Keys are the seeded keys (pro, free, revoked: those of them there
	// are), each with what the API does with it now and its hint, the form
	// the journal shows it in and filters on.
	Keys []KeyRole `json:"keys"`
	// Recording is where a recorded world came from (tcmkit record), and
	// in what shape it is served.
	Recording *Recording `json:"recording,omitempty"`
	// Frozen: the world polls no more (Config.Frozen): time passes,
	// nothing new happens.
	Frozen bool `json:"frozen,omitempty"`
}

// KeyRole is a key of the served world and what the API does with it
// now: its role, its account and its hint.
type KeyRole struct {
	// Role is "pro" or "free" for a valid key of an account of that plan,
	// "revoked" for a key the API answers 401 revoked_api_key, "unknown"
	// for one it does not hold (401 unknown_api_key).
	Role    string `json:"role"`
	Account string `json:"account,omitempty"`
	// Hint is the key's hint (tcm_…#3f9a): the journal's keyHint, and its
	// key filter (GET /_control/requests?key=3f9a).
	Hint string `json:"hint"`
	// Key is the key whole: in GET /_control/info only.
	Key string `json:"key,omitempty"`
}

// The roles of KeyRole.Role.
const (
	RolePro     = "pro"
	RoleFree    = "free"
	RoleRevoked = "revoked"
	RoleUnknown = "unknown"
)

// roleOf is what st's API does with key now.
func roleOf(st *state, key string) KeyRole {
	r := KeyRole{Role: RoleUnknown, Hint: hint(key), Key: key}
	st.keys.mu.RLock()
	e, ok := st.keys.byHash[hashKey(key)]
	st.keys.mu.RUnlock()
	if !ok {
		return r
	}
	r.Account, r.Role = e.Account, RoleRevoked
	if !e.Revoked {
		r.Role = RoleFree
		if p, _ := st.world.PlanOf(e.Account); p == world.Pro {
			r.Role = RolePro
		}
	}
	return r
}

// ValidKeys are the keys valid now, one per account in the order of the
// accounts, each with its role and hint (never whole).
func (s *Server) ValidKeys() []KeyRole {
	st := s.st.Load()
	out := []KeyRole{}
	for _, a := range st.world.Accounts() {
		if h := st.keys.Hint(a.ID); h != "" {
			role := RoleFree
			if a.Plan == world.Pro {
				role = RolePro
			}
			out = append(out, KeyRole{Role: role, Account: a.ID, Hint: h})
		}
	}
	return out
}

// Info describes the server at base URL base (such as http://127.0.0.1:8080).
func (s *Server) Info(base string) Info {
	st := s.st.Load()
	k := st.seeded
	base = strings.TrimRight(base, "/")
	info := Info{URL: base, ProKey: k.Pro, FreeKey: k.Free, RevokedKey: k.Revoked, NamedFaults: namedFaults(s.cfg.Layers), Recording: st.recording, Frozen: s.cfg.Frozen, Keys: []KeyRole{}}
	for _, key := range []string{k.Pro, k.Free, k.Revoked} {
		if key != "" {
			info.Keys = append(info.Keys, roleOf(st, key))
		}
	}
	if !s.cfg.NoControl {
		info.ControlURL = base + strings.TrimSuffix(ControlPrefix, "/")
	}
	return info
}

func (s *Server) ctlInfo(r *http.Request) answer {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	info := s.Info(scheme + "://" + r.Host)
	info.Now = ms(s.clock.Now())
	return jsonAnswer(http.StatusOK, info)
}

// controlTokenHeader carries Config.ControlToken.
const controlTokenHeader = "X-Control-Token"

// view is an account as the control API shows it: the key redacted.
func view(st *state, a world.Account) Account {
	ch := a.Channels
	if ch == nil {
		ch = []string{}
	}
	return Account{ID: a.ID, Plan: string(a.Plan), KeyHint: st.keys.Hint(a.ID), Channels: ch}
}

func (s *Server) ctlAccounts(r *http.Request) answer {
	st := s.st.Load()
	as := st.world.Accounts()
	out := make([]Account, len(as))
	for i, a := range as {
		out[i] = view(st, a)
	}
	return jsonAnswer(http.StatusOK, out)
}

type planBody struct {
	Plan string `json:"plan"`
}

func readPlan(r *http.Request) (world.Plan, answer, bool) {
	var b planBody
	if a, ok := readControl(r, &b); !ok {
		return "", a, false
	}
	if p := world.Plan(b.Plan); p != world.Pro && p != world.Free {
		return "", errorAnswer(http.StatusBadRequest, CodeInvalidBody, `plan must be "pro" or "free"`, map[string]any{"plan": excerpt(b.Plan)}), false
	}
	return world.Plan(b.Plan), answer{}, true
}

func (s *Server) ctlCreateAccount(r *http.Request) answer {
	plan, refused, ok := readPlan(r)
	if !ok {
		return refused
	}
	s.control.Lock()
	defer s.control.Unlock()
	st := s.st.Load()
	if n := len(st.world.Accounts()); n >= s.cfg.MaxAccounts {
		return errorAnswer(http.StatusConflict, CodeLimitReached, fmt.Sprintf("the simulator holds %d accounts, its limit (--max-accounts); reset it or raise the limit", n), nil)
	}
	if st.keys.keyCount() >= MaxKeys {
		a, _ := limitAnswer(errTooManyKeys)
		return a
	}
	a := st.world.CreateAccount(plan)
	st.changed()
	key := st.keys.Issue(a.ID)
	v := view(st, a)
	v.KeyHint, v.Key = "", key
	s.log.Info("account created", "account", a.ID, "plan", plan, "key", hint(key))
	return jsonAnswer(http.StatusCreated, v)
}

func (s *Server) ctlSetPlan(r *http.Request) answer {
	plan, refused, ok := readPlan(r)
	if !ok {
		return refused
	}
	s.control.Lock()
	defer s.control.Unlock()
	st := s.st.Load()
	a, err := st.world.SetPlan(r.PathValue("id"), plan)
	st.changed()
	if err != nil {
		return s.noAccount(r, err)
	}
	s.log.Info("plan set", "account", a.ID, "plan", plan)
	return jsonAnswer(http.StatusOK, view(st, a))
}

func (s *Server) noAccount(r *http.Request, err error) answer {
	if errors.Is(err, world.ErrNoAccount) {
		// The id goes into the JSON body only, never into a header.
		return errorAnswer(http.StatusNotFound, CodeNotFound, "no such account", map[string]any{"id": excerpt(r.PathValue("id"))})
	}
	return s.internalError(r, err)
}

func (s *Server) ctlRegenerateKey(r *http.Request) answer {
	key, err := s.RegenerateKey(r.PathValue("id"))
	if a, ok := limitAnswer(err); ok {
		return a
	}
	if err != nil {
		return s.noAccount(r, err)
	}
	return jsonAnswer(http.StatusOK, map[string]string{"key": key})
}

func (s *Server) ctlFaults(r *http.Request) answer {
	return jsonAnswer(http.StatusOK, s.faultList())
}

// faultList is the named faults, on for the whole run, then the injected.
func (s *Server) faultList() []FaultSpec {
	list := []FaultSpec{}
	for _, name := range namedFaults(s.cfg.Layers) {
		list = append(list, FaultSpec{Operation: "*", Named: name})
	}
	return append(list, s.faults.List()...)
}

func (s *Server) ctlAddFault(r *http.Request) answer {
	var spec FaultSpec
	if a, ok := readControl(r, &spec); !ok {
		return a
	}
	spec, err := s.AddFault(spec)
	if a, ok := limitAnswer(err); ok {
		return a
	}
	if err != nil {
		return errorAnswer(http.StatusBadRequest, CodeInvalidBody, err.Error(), nil)
	}
	return jsonAnswer(http.StatusCreated, spec)
}

func (s *Server) ctlClearFaults(r *http.Request) answer {
	s.faults.Clear()
	return jsonAnswer(http.StatusOK, s.faultList()) // the named faults stay
}

func (s *Server) ctlEdgeRate(r *http.Request) answer {
	var b struct {
		Rate *float64 `json:"rate"`
	}
	if a, ok := readControl(r, &b); !ok {
		return a
	}
	if b.Rate == nil || !(*b.Rate >= 0 && *b.Rate <= 1) {
		return errorAnswer(http.StatusBadRequest, CodeInvalidBody, "rate must be a number within 0..1", nil)
	}
	st := s.st.Load()
	st.world.SetEdgeRate(*b.Rate)
	st.changed()
	return jsonAnswer(http.StatusOK, map[string]float64{"rate": *b.Rate})
}
