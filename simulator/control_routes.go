package simulator

import (
	"crypto/sha256"
	"crypto/subtle"
	_ "embed" // the control API's OpenAPI document
	"mime"
	"net"
	"net/http"
	"net/netip"
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
	h      func(*Server, *http.Request) answer
	// large: the body may be up to Config.MaxImportBytes (the server
	// closes the connection past it).
	large bool
}

func controlTable() []controlRoute {
	return []controlRoute{
		{Method: http.MethodGet, Path: "", About: "this list of the control routes", h: (*Server).ctlIndex},
		{Method: http.MethodGet, Path: "openapi.yaml", About: "the control API's OpenAPI document", h: (*Server).ctlOpenAPI},
		{Method: http.MethodGet, Path: "ui", About: "a page to watch the simulator: clock, accounts, journal, client verdicts, faults", h: (*Server).ctlUI},
		{Method: http.MethodGet, Path: "info", About: "the URLs, the seeded keys and the virtual time", h: (*Server).ctlInfo},
		{Method: http.MethodGet, Path: "accounts", About: "the accounts, keys redacted", h: (*Server).ctlAccounts},
		{Method: http.MethodPost, Path: "accounts", About: "create an account of a plan; the answer holds its key", h: (*Server).ctlCreateAccount},
		{Method: http.MethodPut, Path: "accounts/{id}/plan", About: "set an account's plan", h: (*Server).ctlSetPlan},
		{Method: http.MethodPost, Path: "accounts/{id}/key", About: "regenerate an account's key, revoking the old one", h: (*Server).ctlRegenerateKey},
		{Method: http.MethodGet, Path: "clock", About: "the virtual time, the clock's mode, whether the world is full", h: (*Server).ctlClock},
		{Method: http.MethodPost, Path: "clock/advance", About: "move the virtual clock forward; the polls that became due run", h: (*Server).ctlAdvance},
		{Method: http.MethodPost, Path: "poll", About: "poll every channel and video now", h: (*Server).ctlPoll},
		{Method: http.MethodGet, Path: "faults", About: "the named faults on (--fault), then the injected faults", h: (*Server).ctlFaults},
		{Method: http.MethodPost, Path: "faults", About: "inject a fault", h: (*Server).ctlAddFault},
		{Method: http.MethodDelete, Path: "faults", About: "remove every injected fault", h: (*Server).ctlClearFaults},
		{Method: http.MethodPut, Path: "edge-rate", About: "set how often generated data hits edge cases", h: (*Server).ctlEdgeRate},
		{Method: http.MethodGet, Path: "requests", About: "the request journal, filtered", h: (*Server).ctlRequests},
		{Method: http.MethodDelete, Path: "requests", About: "clear the request journal (the clients' verdicts stay)", h: (*Server).ctlClearRequests},
		{Method: http.MethodGet, Path: "clients", About: "each client's verdicts: per key, its requests, findings and a result per client requirement", h: (*Server).ctlClients},
		{Method: http.MethodDelete, Path: "clients", About: "forget every client's verdicts (the armed scenario starts again)", h: (*Server).ctlClearClients},
		{Method: http.MethodGet, Path: "scenarios", About: "the client scenarios, and the one armed", h: (*Server).ctlScenarios},
		{Method: http.MethodPost, Path: "scenarios", About: "arm a client scenario by name", h: (*Server).ctlStartScenario},
		{Method: http.MethodDelete, Path: "scenarios", About: "disarm the client scenario", h: (*Server).ctlStopScenario},
		{Method: http.MethodGet, Path: "fuzz", About: "what the fuzz schedule (--fuzz-seed) served so far, in words", h: (*Server).ctlFuzz},
		{Method: http.MethodPost, Path: "reset", About: "put the simulator back to its state at start", h: (*Server).ctlReset},
		{Method: http.MethodGet, Path: "world", About: "export the world, its accounts and key hashes", h: (*Server).ctlExport},
		{Method: http.MethodPut, Path: "world", About: "import an export", h: (*Server).ctlImport, large: true},
	}
}

// controlRoutes is the control API's handler: each route of controlTable
// behind controlGuard, a 405 for a known path asked with another method,
// a 404 for another path. Every answer goes out through writeAnswer.
func (s *Server) controlRoutes() http.Handler {
	mux := http.NewServeMux()
	byPath := map[string][]string{}
	var paths []string
	for _, rt := range controlTable() {
		p := ControlPrefix + rt.Path
		mux.Handle(rt.Method+" "+exact(p), s.controlGuard(func(w http.ResponseWriter, r *http.Request) answer {
			if rt.large {
				r.Body = http.MaxBytesReader(w, r.Body, s.cfg.MaxImportBytes)
			}
			return rt.h(s, r)
		}))
		if byPath[p] == nil {
			paths = append(paths, p)
		}
		byPath[p] = append(byPath[p], rt.Method)
	}
	for _, p := range paths {
		allow := methodNotAllowed(byPath[p]...)
		mux.Handle(exact(p), s.controlGuard(func(http.ResponseWriter, *http.Request) answer { return allow }))
	}
	// The banner's control URL, without its slash, leads to the list of
	// routes (a redirect says nothing the list does not).
	mux.HandleFunc(controlRoot, func(w http.ResponseWriter, r *http.Request) {
		to := ControlPrefix
		if r.URL.RawQuery != "" {
			to += "?" + r.URL.RawQuery
		}
		status := http.StatusPermanentRedirect // the method and body stay
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			status = http.StatusMovedPermanently
		}
		writeAnswer(w, jsonAnswer(status, map[string]string{"location": to}).with("Location", to))
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeAnswer(w, errorAnswer(http.StatusNotFound, CodeNotFound, "no such path; the API serves "+s.apiPaths, nil))
	})
	return mux
}

// controlRoot is ControlPrefix without its slash, as the banner prints it.
var controlRoot = strings.TrimSuffix(ControlPrefix, "/")

// exact makes a pattern that ends in / match only itself.
func exact(p string) string {
	if strings.HasSuffix(p, "/") {
		return p + "{$}"
	}
	return p
}

func (s *Server) ctlIndex(r *http.Request) answer {
	table := controlTable()
	routes := make([]controlRoute, len(table))
	for i, rt := range table {
		routes[i] = rt
		routes[i].Path = ControlPrefix + rt.Path
	}
	return jsonAnswer(http.StatusOK, map[string]any{"routes": routes, "openapi": ControlPrefix + "openapi.yaml"})
}

//go:embed controlapi.yaml
var controlOpenAPI []byte

func (s *Server) ctlOpenAPI(r *http.Request) answer {
	return answer{Status: http.StatusOK, Body: controlOpenAPI, ContentType: "application/yaml"}
}

// controlGuard admits a control request only from where an operator can
// be: a Host that is loopback or configured (DNS rebinding hands a page of
// another site this server under a name of its own), no Origin or an
// allowed one (a page of another site sends its own), no browser mark of
// another site, the token when one is set (X-Control-Token, or from a
// browser the password of Basic authentication), and JSON bodies only (a form
// or a text/plain POST, which a browser sends without asking first, is
// refused). Tokens are compared as hashes, in the same time for any
// length.
func (s *Server) controlGuard(h func(http.ResponseWriter, *http.Request) answer) http.Handler {
	want := sha256.Sum256([]byte(s.cfg.ControlToken))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeAnswer(w, s.admitControl(w, r, want, h))
	})
}

// admitControl is controlGuard's check; h answers an admitted request.
func (s *Server) admitControl(w http.ResponseWriter, r *http.Request, want [sha256.Size]byte, h func(http.ResponseWriter, *http.Request) answer) answer {
	if !s.controlHostAllowed(r.Host) {
		return errorAnswer(http.StatusForbidden, CodeForbiddenHost, "the control API answers only to a loopback Host (localhost, 127.0.0.1, [::1]) or to a name given with --control-host", map[string]any{"host": excerpt(s.redactKeys(r.Host))}) // a key sent as a Host is shown as its hint
	}
	if origin := r.Header.Get("Origin"); origin != "" {
		if !s.cors.listed(origin) && !sameOrigin(origin, r) {
			return errorAnswer(http.StatusForbidden, CodeForbiddenOrigin, "the control API refuses requests from web pages of other origins; list the page's origin with --cors to allow it", map[string]any{"origin": excerpt(origin)})
		}
		hd := w.Header()
		hd.Set("Access-Control-Allow-Origin", origin) // a listed origin, not the input as such
		hd.Add("Vary", "Origin")
		if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
			return preflightAnswer("GET, POST, PUT, DELETE", "Content-Type, "+controlTokenHeader)
		}
	} else if site := r.Header.Get("Sec-Fetch-Site"); site == "cross-site" || site == "same-site" {
		return errorAnswer(http.StatusForbidden, CodeForbiddenOrigin, "the control API refuses requests that a browser marks as coming from another site", nil)
	}
	// The page (GET /_control/ui) holds nothing but itself: it is served
	// without the token, and asks its user for it when its first call is
	// refused (a browser that sends the token as Basic's password needs
	// no asking). A token in the page's URL (http://any:TOKEN@host/…)
	// would leave the page unable to call anything: browsers refuse to
	// fetch from a URL that holds credentials.
	page := r.URL.Path == ControlPrefix+"ui" && (r.Method == http.MethodGet || r.Method == http.MethodHead)
	if s.cfg.ControlToken != "" && !page {
		given := r.Header.Get(controlTokenHeader)
		if _, password, ok := r.BasicAuth(); ok && given == "" {
			given = password // a browser's Basic, as some users give it
		}
		got := sha256.Sum256([]byte(given))
		if subtle.ConstantTimeCompare(want[:], got[:]) != 1 {
			s.tokenTries.failed(r.Context(), s.sleep)
			return errorAnswer(http.StatusUnauthorized, CodeControlToken, "the control API needs the header X-Control-Token with the configured token (the page GET /_control/ui asks for it; Basic with the token as the password works too)", nil)
		}
	}
	if r.ContentLength != 0 && r.Method != http.MethodGet && r.Method != http.MethodHead {
		if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != contentTypeJSON {
			return errorAnswer(http.StatusUnsupportedMediaType, CodeUnsupportedMedia, "a control request's body must be JSON, sent with Content-Type: application/json", nil)
		}
	}
	return h(w, r)
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
