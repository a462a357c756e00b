package simulator

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/tcmkit/tcmkit/simulator/world"
)

// ControlPrefix is where the control API lives, never on the API's paths.
const ControlPrefix = "/_control/"

// readControl decodes a small JSON control body into v; unknown fields are
// an error, so a misspelt field is not silently ignored.
func readControl(w http.ResponseWriter, r *http.Request, v any) bool {
	raw, err := io.ReadAll(io.LimitReader(r.Body, MaxBodyBytes+1))
	if err != nil || len(raw) > MaxBodyBytes {
		WriteError(w, http.StatusBadRequest, CodeInvalidBody, fmt.Sprintf("the body must be JSON of at most %d bytes", MaxBodyBytes), nil)
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		WriteError(w, http.StatusBadRequest, CodeInvalidBody, "the body is not the expected JSON: "+err.Error(), nil)
		return false
	}
	if dec.More() {
		WriteError(w, http.StatusBadRequest, CodeInvalidBody, "the body has data after the JSON value", nil)
		return false
	}
	return true
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
}

// Info describes the server at base URL base (such as http://127.0.0.1:8080).
func (s *Server) Info(base string) Info {
	k := s.Seeded()
	base = strings.TrimRight(base, "/")
	info := Info{URL: base, ProKey: k.Pro, FreeKey: k.Free, RevokedKey: k.Revoked}
	if !s.cfg.NoControl {
		info.ControlURL = base + strings.TrimSuffix(ControlPrefix, "/")
	}
	return info
}

func (s *Server) ctlInfo(w http.ResponseWriter, r *http.Request) {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	info := s.Info(scheme + "://" + r.Host)
	info.Now = ms(s.clock.Now())
	writeJSON(w, http.StatusOK, info)
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

func (s *Server) ctlAccounts(w http.ResponseWriter, r *http.Request) {
	st := s.st.Load()
	as := st.world.Accounts()
	out := make([]Account, len(as))
	for i, a := range as {
		out[i] = view(st, a)
	}
	writeJSON(w, http.StatusOK, out)
}

type planBody struct {
	Plan string `json:"plan"`
}

func readPlan(w http.ResponseWriter, r *http.Request) (world.Plan, bool) {
	var b planBody
	if !readControl(w, r, &b) {
		return "", false
	}
	if p := world.Plan(b.Plan); p != world.Pro && p != world.Free {
		WriteError(w, http.StatusBadRequest, CodeInvalidBody, `plan must be "pro" or "free"`, map[string]any{"plan": excerpt(b.Plan)})
		return "", false
	}
	return world.Plan(b.Plan), true
}

func (s *Server) ctlCreateAccount(w http.ResponseWriter, r *http.Request) {
	plan, ok := readPlan(w, r)
	if !ok {
		return
	}
	s.control.Lock()
	defer s.control.Unlock()
	st := s.st.Load()
	if n := len(st.world.Accounts()); n >= s.cfg.MaxAccounts {
		WriteError(w, http.StatusConflict, CodeLimitReached, fmt.Sprintf("the simulator holds %d accounts, its limit (--max-accounts); reset it or raise the limit", n), nil)
		return
	}
	if st.keys.keyCount() >= MaxKeys {
		writeLimit(w, errTooManyKeys)
		return
	}
	a := st.world.CreateAccount(plan)
	st.changed()
	key := st.keys.Issue(a.ID)
	v := view(st, a)
	v.KeyHint, v.Key = "", key
	s.log.Info("account created", "account", a.ID, "plan", plan, "key", redact(key))
	writeJSON(w, http.StatusCreated, v)
}

func (s *Server) ctlSetPlan(w http.ResponseWriter, r *http.Request) {
	plan, ok := readPlan(w, r)
	if !ok {
		return
	}
	s.control.Lock()
	defer s.control.Unlock()
	st := s.st.Load()
	a, err := st.world.SetPlan(r.PathValue("id"), plan)
	st.changed()
	if err != nil {
		s.noAccount(w, r, err)
		return
	}
	s.log.Info("plan set", "account", a.ID, "plan", plan)
	writeJSON(w, http.StatusOK, view(st, a))
}

func (s *Server) noAccount(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, world.ErrNoAccount) {
		// The id goes into the JSON body only, never into a header.
		WriteError(w, http.StatusNotFound, CodeNotFound, "no such account", map[string]any{"id": excerpt(r.PathValue("id"))})
		return
	}
	s.internalError(w, r, err)
}

func (s *Server) ctlRegenerateKey(w http.ResponseWriter, r *http.Request) {
	key, err := s.RegenerateKey(r.PathValue("id"))
	if writeLimit(w, err) {
		return
	}
	if err != nil {
		s.noAccount(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"key": key})
}

func (s *Server) ctlFaults(w http.ResponseWriter, r *http.Request) {
	list := s.faults.List()
	if list == nil {
		list = []FaultSpec{}
	}
	writeJSON(w, http.StatusOK, list)
}

func (s *Server) ctlAddFault(w http.ResponseWriter, r *http.Request) {
	var spec FaultSpec
	if !readControl(w, r, &spec) {
		return
	}
	spec, err := s.AddFault(spec)
	if writeLimit(w, err) {
		return
	}
	if err != nil {
		WriteError(w, http.StatusBadRequest, CodeInvalidBody, err.Error(), nil)
		return
	}
	writeJSON(w, http.StatusCreated, spec)
}

func (s *Server) ctlClearFaults(w http.ResponseWriter, r *http.Request) {
	s.faults.Clear()
	writeJSON(w, http.StatusOK, []FaultSpec{})
}

func (s *Server) ctlEdgeRate(w http.ResponseWriter, r *http.Request) {
	var b struct {
		Rate *float64 `json:"rate"`
	}
	if !readControl(w, r, &b) {
		return
	}
	if b.Rate == nil || !(*b.Rate >= 0 && *b.Rate <= 1) {
		WriteError(w, http.StatusBadRequest, CodeInvalidBody, "rate must be a number within 0..1", nil)
		return
	}
	st := s.st.Load()
	st.world.SetEdgeRate(*b.Rate)
	st.changed()
	writeJSON(w, http.StatusOK, map[string]float64{"rate": *b.Rate})
}
