package simulator

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/simulator/world"
)

// ControlPrefix is where the control API lives, never on the API's paths.
const ControlPrefix = "/_control/"

// MaxAdvance bounds one clock advance, so that a typo does not make the
// world poll for hours of real time.
const MaxAdvance = 366 * 24 * time.Hour

// maxWorldBytes bounds an imported world.
const maxWorldBytes = 1 << 30

func (s *Server) controlRoutes(mux *http.ServeMux) {
	type route struct {
		method, path string
		h            http.HandlerFunc
	}
	byPath := map[string][]string{}
	for _, rt := range []route{
		{http.MethodGet, "info", s.ctlInfo},
		{http.MethodGet, "accounts", s.ctlAccounts},
		{http.MethodPost, "accounts", s.ctlCreateAccount},
		{http.MethodPut, "accounts/{id}/plan", s.ctlSetPlan},
		{http.MethodPost, "accounts/{id}/key", s.ctlRegenerateKey},
		{http.MethodGet, "clock", s.ctlClock},
		{http.MethodPost, "clock/advance", s.ctlAdvance},
		{http.MethodPost, "poll", s.ctlPoll},
		{http.MethodGet, "faults", s.ctlFaults},
		{http.MethodPost, "faults", s.ctlAddFault},
		{http.MethodDelete, "faults", s.ctlClearFaults},
		{http.MethodPut, "edge-rate", s.ctlEdgeRate},
		{http.MethodPost, "reset", s.ctlReset},
		{http.MethodGet, "world", s.ctlExport},
		{http.MethodPut, "world", s.ctlImport},
	} {
		p := ControlPrefix + rt.path
		mux.Handle(rt.method+" "+p, s.controlAuth(rt.h))
		byPath[p] = append(byPath[p], rt.method)
	}
	for p, methods := range byPath {
		mux.Handle(p, s.controlAuth(methodNotAllowed(methods...).ServeHTTP))
	}
}

// controlAuth checks X-Control-Token when a token is configured. Both sides
// are hashed first, so the comparison takes the same time for any length.
func (s *Server) controlAuth(h http.HandlerFunc) http.Handler {
	if s.cfg.ControlToken == "" {
		return h
	}
	want := sha256.Sum256([]byte(s.cfg.ControlToken))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := sha256.Sum256([]byte(r.Header.Get(controlTokenHeader)))
		if subtle.ConstantTimeCompare(want[:], got[:]) != 1 {
			WriteError(w, http.StatusUnauthorized, CodeControlToken, "the control API needs the header X-Control-Token with the configured token", nil)
			return
		}
		h(w, r)
	})
}

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
		WriteError(w, http.StatusBadRequest, CodeInvalidBody, `plan must be "pro" or "free"`, map[string]any{"plan": b.Plan})
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
	a := st.world.CreateAccount(plan)
	st.answers.Changed()
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
	st.answers.Changed()
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
	s.control.Lock()
	defer s.control.Unlock()
	st := s.st.Load()
	id := r.PathValue("id")
	if _, ok := st.world.Account(id); !ok {
		s.noAccount(w, r, world.ErrNoAccount)
		return
	}
	key := st.keys.Issue(id)
	s.log.Info("key regenerated; the previous key is revoked", "account", id, "key", redact(key))
	writeJSON(w, http.StatusOK, map[string]string{"key": key})
}

func (s *Server) ctlClock(w http.ResponseWriter, r *http.Request) {
	mode := "realtime"
	if s.clock.Manual() {
		mode = "manual"
	}
	writeJSON(w, http.StatusOK, map[string]any{"now": ms(s.clock.Now()), "mode": mode, "speed": s.clock.Speed()})
}

func (s *Server) ctlAdvance(w http.ResponseWriter, r *http.Request) {
	var b struct {
		Duration string `json:"duration"`
	}
	if !readControl(w, r, &b) {
		return
	}
	d, err := time.ParseDuration(b.Duration)
	if err != nil || d < 0 || d > MaxAdvance {
		WriteError(w, http.StatusBadRequest, CodeInvalidBody, fmt.Sprintf(`duration must be a Go duration from 0 to %s, such as "90s" or "15m"`, MaxAdvance), map[string]any{"duration": excerpt(b.Duration)})
		return
	}
	n := s.Advance(d)
	s.log.Info("clock advanced", "by", d, "events", n)
	writeJSON(w, http.StatusOK, map[string]any{"now": ms(s.clock.Now()), "events": n})
}

func (s *Server) ctlPoll(w http.ResponseWriter, r *http.Request) {
	st := s.st.Load()
	st.world.AdvanceTo(s.clock.Now())
	n := st.world.PollAll()
	st.answers.Changed()
	writeJSON(w, http.StatusOK, map[string]int{"events": n})
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
	if err := spec.check(); err != nil {
		WriteError(w, http.StatusBadRequest, CodeInvalidBody, "invalid fault: "+err.Error(), nil)
		return
	}
	spec = s.faults.Add(spec)
	s.log.Info("fault added", "fault", spec.ID, "operation", spec.Operation, "status", spec.Status)
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
	st.answers.Changed()
	writeJSON(w, http.StatusOK, map[string]float64{"rate": *b.Rate})
}

// Reset puts the server back to its state at New: the same world, the
// same seeded keys, the clock at the start, no faults, fresh budgets.
func (s *Server) Reset() error {
	s.control.Lock()
	defer s.control.Unlock()
	st, err := s.freshState()
	if err != nil {
		return err
	}
	s.clock.Set(s.cfg.Start)
	s.st.Store(st)
	s.faults.Clear()
	return nil
}

func (s *Server) ctlReset(w http.ResponseWriter, r *http.Request) {
	if err := s.Reset(); err != nil {
		s.internalError(w, r, err)
		return
	}
	s.log.Info("reset")
	writeJSON(w, http.StatusOK, map[string]int64{"now": ms(s.clock.Now())})
}

// exportFormat names the export's layout; an import of another is refused.
const exportFormat = "tcmkit-simulator/1"

// export is the JSON of GET/PUT /_control/world. Keys are kept as hashes
// only; the seeded keys are there whole, as /_control/info shows them.
type export struct {
	Format     string          `json:"format"`
	Now        int64           `json:"now"`
	KeyCounter uint64          `json:"keyCounter"`
	Seeded     Keys            `json:"seeded"`
	Keys       []exportedKey   `json:"keys"`
	World      json.RawMessage `json:"world,omitempty"`
}

// Export writes the world, its accounts and the key hashes as JSON.
func (s *Server) Export(w io.Writer) error {
	s.control.Lock()
	defer s.control.Unlock()
	st := s.st.Load()
	var wbuf bytes.Buffer
	if err := st.world.Export(&wbuf); err != nil {
		return fmt.Errorf("simulator: export world: %w", err)
	}
	counter, keys := st.keys.export()
	head, err := json.Marshal(export{Format: exportFormat, Now: ms(s.clock.Now()), KeyCounter: counter, Seeded: st.seeded, Keys: keys})
	if err != nil {
		return fmt.Errorf("simulator: export: %w", err)
	}
	// The world's JSON is spliced in as it is: encoding it again as a
	// RawMessage would rewrite its escapes, so an import would not give
	// back the same bytes.
	head = bytes.TrimSuffix(head, []byte("}"))
	for _, part := range [][]byte{head, []byte(`,"world":`), bytes.TrimSpace(wbuf.Bytes()), []byte("}\n")} {
		if _, err := w.Write(part); err != nil {
			return fmt.Errorf("simulator: export: %w", err)
		}
	}
	return nil
}

// Import replaces the world, accounts and keys with an export, and sets
// the clock to the export's time. Rate-limit budgets start fresh.
func (s *Server) Import(r io.Reader) error {
	var e export
	dec := json.NewDecoder(r)
	if err := dec.Decode(&e); err != nil {
		return fmt.Errorf("simulator: import: %w", err)
	}
	if e.Format != exportFormat {
		return fmt.Errorf("simulator: import: format %q, want %q", e.Format, exportFormat)
	}
	wd, err := world.Import(bytes.NewReader(e.World))
	if err != nil {
		return fmt.Errorf("simulator: import world: %w", err)
	}
	keys := newKeyring(s.cfg.KeyPrefix, s.cfg.Seed)
	if err := keys.load(e.KeyCounter, e.Keys); err != nil {
		return fmt.Errorf("simulator: import keys: %w", err)
	}
	for _, a := range wd.Accounts() {
		if keys.Hint(a.ID) == "" {
			return fmt.Errorf("simulator: import: account %q has no valid key", a.ID)
		}
	}
	st := &state{
		world: wd, keys: keys, seeded: e.Seeded,
		feed:   newLimiter(s.cfg.FeedLimit, schemas.RateWindow),
		videos: newLimiter(s.cfg.VideosLimit, schemas.RateWindow),
	}
	s.control.Lock()
	defer s.control.Unlock()
	s.clock.Set(time.UnixMilli(e.Now).UTC())
	s.st.Store(st)
	return nil
}

func (s *Server) ctlExport(w http.ResponseWriter, r *http.Request) {
	var buf bytes.Buffer
	if err := s.Export(&buf); err != nil {
		s.internalError(w, r, err)
		return
	}
	writeRaw(w, http.StatusOK, buf.Bytes())
}

func (s *Server) ctlImport(w http.ResponseWriter, r *http.Request) {
	if err := s.Import(io.LimitReader(r.Body, maxWorldBytes)); err != nil {
		WriteError(w, http.StatusBadRequest, CodeInvalidBody, err.Error(), nil)
		return
	}
	s.log.Info("world imported")
	writeJSON(w, http.StatusOK, map[string]int64{"now": ms(s.clock.Now())})
}
