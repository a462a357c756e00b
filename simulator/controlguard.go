package simulator

import (
	"crypto/sha256"
	"crypto/subtle"
	_ "embed" // the control API's OpenAPI document
	"mime"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"
)

// MaxAdvance bounds one clock advance, so that a typo does not make the
// world poll for hours of real time.
const MaxAdvance = 366 * 24 * time.Hour

// controlRoute is one route of the control API. controlTable is the one
// list of them: the mux, GET /_control/ and the test that holds the
// control API's OpenAPI document (controlapi.yaml) to it all read it.
type controlRoute struct {
	Method string `json:"method"`
	Path   string `json:"path"`
	About  string `json:"about"`
	h      func(*Server, http.ResponseWriter, *http.Request)
}

func controlTable() []controlRoute {
	return []controlRoute{
		{http.MethodGet, "", "this list of the control routes", (*Server).ctlIndex},
		{http.MethodGet, "openapi.yaml", "the control API's OpenAPI document", (*Server).ctlOpenAPI},
		{http.MethodGet, "info", "the URLs, the seeded keys and the virtual time", (*Server).ctlInfo},
		{http.MethodGet, "accounts", "the accounts, keys redacted", (*Server).ctlAccounts},
		{http.MethodPost, "accounts", "create an account of a plan; the answer holds its key", (*Server).ctlCreateAccount},
		{http.MethodPut, "accounts/{id}/plan", "set an account's plan", (*Server).ctlSetPlan},
		{http.MethodPost, "accounts/{id}/key", "regenerate an account's key, revoking the old one", (*Server).ctlRegenerateKey},
		{http.MethodGet, "clock", "the virtual time, the clock's mode, whether the world is full", (*Server).ctlClock},
		{http.MethodPost, "clock/advance", "move the virtual clock forward; the polls that became due run", (*Server).ctlAdvance},
		{http.MethodPost, "poll", "poll every channel and video now", (*Server).ctlPoll},
		{http.MethodGet, "faults", "the injected faults", (*Server).ctlFaults},
		{http.MethodPost, "faults", "inject a fault", (*Server).ctlAddFault},
		{http.MethodDelete, "faults", "remove every injected fault", (*Server).ctlClearFaults},
		{http.MethodPut, "edge-rate", "set how often generated data hits edge cases", (*Server).ctlEdgeRate},
		{http.MethodGet, "requests", "the request journal, filtered", (*Server).ctlRequests},
		{http.MethodDelete, "requests", "clear the request journal (and the clients' verdicts)", (*Server).ctlClearRequests},
		{http.MethodGet, "clients", "each client's verdicts: per key, its requests, findings and a result per client requirement", (*Server).ctlClients},
		{http.MethodGet, "scenarios", "the client scenarios, and the one armed", (*Server).ctlScenarios},
		{http.MethodPost, "scenarios", "arm a client scenario by name", (*Server).ctlStartScenario},
		{http.MethodDelete, "scenarios", "disarm the client scenario", (*Server).ctlStopScenario},
		{http.MethodGet, "fuzz", "what the fuzz schedule (--fuzz-seed) served so far, in words", (*Server).ctlFuzz},
		{http.MethodPost, "reset", "put the simulator back to its state at start", (*Server).ctlReset},
		{http.MethodGet, "world", "export the world, its accounts and key hashes", (*Server).ctlExport},
		{http.MethodPut, "world", "import an export", (*Server).ctlImport},
	}
}

func (s *Server) controlRoutes(mux *http.ServeMux) {
	byPath := map[string][]string{}
	var paths []string
	for _, rt := range controlTable() {
		p := ControlPrefix + rt.Path
		h := rt.h
		mux.Handle(rt.Method+" "+exact(p), s.controlGuard(func(w http.ResponseWriter, r *http.Request) { h(s, w, r) }))
		if byPath[p] == nil {
			paths = append(paths, p)
		}
		byPath[p] = append(byPath[p], rt.Method)
	}
	for _, p := range paths {
		mux.Handle(exact(p), s.controlGuard(methodNotAllowed(byPath[p]...).ServeHTTP))
	}
}

// exact makes a pattern that ends in / match only itself.
func exact(p string) string {
	if strings.HasSuffix(p, "/") {
		return p + "{$}"
	}
	return p
}

func (s *Server) ctlIndex(w http.ResponseWriter, r *http.Request) {
	table := controlTable()
	routes := make([]controlRoute, len(table))
	for i, rt := range table {
		routes[i] = rt
		routes[i].Path = ControlPrefix + rt.Path
	}
	writeJSON(w, http.StatusOK, map[string]any{"routes": routes, "openapi": ControlPrefix + "openapi.yaml"})
}

//go:embed controlapi.yaml
var controlOpenAPI []byte

func (s *Server) ctlOpenAPI(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Type", "application/yaml")
	h.Set("Content-Length", strconv.Itoa(len(controlOpenAPI)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(controlOpenAPI)
}

// controlGuard admits a control request only from where an operator can
// be: a Host that is loopback or configured (DNS rebinding hands a page of
// another site this server under a name of its own), no Origin or an
// allowed one (a page of another site sends its own), no browser mark of
// another site, the token when one is set, and JSON bodies only (a form
// or a text/plain POST, which a browser sends without asking first, is
// refused). Tokens are compared as hashes, in the same time for any
// length.
func (s *Server) controlGuard(h http.HandlerFunc) http.Handler {
	want := sha256.Sum256([]byte(s.cfg.ControlToken))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.controlHostAllowed(r.Host) {
			WriteError(w, http.StatusForbidden, CodeForbiddenHost, "the control API answers only to a loopback Host (localhost, 127.0.0.1, [::1]) or to a name given with --control-host", map[string]any{"host": excerpt(r.Host)})
			return
		}
		if origin := r.Header.Get("Origin"); origin != "" {
			if !s.cors.listed(origin) && !sameOrigin(origin, r) {
				WriteError(w, http.StatusForbidden, CodeForbiddenOrigin, "the control API refuses requests from web pages of other origins; list the page's origin with --cors to allow it", map[string]any{"origin": excerpt(origin)})
				return
			}
			hd := w.Header()
			hd.Set("Access-Control-Allow-Origin", origin) // a listed origin, not the input as such
			hd.Add("Vary", "Origin")
			if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
				hd.Set("Access-Control-Allow-Methods", "GET, POST, PUT, DELETE")
				hd.Set("Access-Control-Allow-Headers", "Content-Type, "+controlTokenHeader)
				hd.Set("Access-Control-Max-Age", "600")
				delete(hd, "Content-Type")
				w.WriteHeader(http.StatusNoContent)
				return
			}
		} else if site := r.Header.Get("Sec-Fetch-Site"); site == "cross-site" || site == "same-site" {
			WriteError(w, http.StatusForbidden, CodeForbiddenOrigin, "the control API refuses requests that a browser marks as coming from another site", nil)
			return
		}
		if s.cfg.ControlToken != "" {
			got := sha256.Sum256([]byte(r.Header.Get(controlTokenHeader)))
			if subtle.ConstantTimeCompare(want[:], got[:]) != 1 {
				WriteError(w, http.StatusUnauthorized, CodeControlToken, "the control API needs the header X-Control-Token with the configured token", nil)
				return
			}
		}
		if r.ContentLength != 0 && r.Method != http.MethodGet && r.Method != http.MethodHead {
			if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != contentTypeJSON {
				WriteError(w, http.StatusUnsupportedMediaType, CodeUnsupportedMedia, "a control request's body must be JSON, sent with Content-Type: application/json", nil)
				return
			}
		}
		h(w, r)
	})
}

// controlHostAllowed: loopback names and addresses, and Config.ControlHosts.
func (s *Server) controlHostAllowed(host string) bool {
	name := hostName(host)
	if name == "localhost" || strings.HasSuffix(name, ".localhost") {
		return true
	}
	if ip, err := netip.ParseAddr(name); err == nil && ip.Unmap().IsLoopback() {
		return true
	}
	for _, h := range s.cfg.ControlHosts {
		if h == "*" || hostName(h) == name {
			return true
		}
	}
	return false
}

// hostName is a host without its port and brackets, in lower case.
func hostName(host string) string {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	return strings.ToLower(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"))
}

// sameOrigin: a page served from the simulator's own origin (a reverse
// proxy may put one beside it).
func sameOrigin(origin string, r *http.Request) bool {
	scheme := "http://"
	if r.TLS != nil {
		scheme = "https://"
	}
	return origin == scheme+r.Host
}
