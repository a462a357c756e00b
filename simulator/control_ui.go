package simulator

import (
	"crypto/sha256"
	_ "embed" // the page
	"encoding/base64"
	"net/http"
	"strings"
)

// The page that watches the simulator (GET /_control/ui): the clock with a
// button to advance it, the accounts with their keys redacted, the request
// journal filtered by key and status, each client's verdict with its
// findings and the requests they quote, the faults and the scenario. It is
// one file with its script and style inline, no build step and nothing
// fetched from elsewhere. It is served without the control token (it holds
// nothing but itself) and reads the control API's own routes, behind the
// guard: it asks its user for the token when a call is refused, keeps it
// for the tab (session storage) and sends it in X-Control-Token; a browser
// that sends it as Basic's password needs no asking (see admitControl).

//go:embed controlui.html
var controlUI []byte

// controlUIPolicy lets the page run its own inline script and style (by
// their hashes) and talk to its own origin, and nothing else: no other
// script, no frame around it, no form sent elsewhere.
var controlUIPolicy = func() string {
	hash := func(open, close string) string {
		page := string(controlUI)
		i := strings.Index(page, open)
		j := strings.Index(page, close)
		if i < 0 || j < i {
			panic("controlui.html: no " + open + " … " + close)
		}
		sum := sha256.Sum256([]byte(page[i+len(open) : j]))
		return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
	}
	return "default-src 'none'; script-src " + hash("<script>", "</script>") + "; style-src " + hash("<style>", "</style>") +
		"; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
}()

func (s *Server) ctlUI(r *http.Request) answer {
	return answer{Status: http.StatusOK, Body: controlUI, ContentType: "text/html; charset=utf-8"}.
		with("Content-Security-Policy", controlUIPolicy).
		with("X-Frame-Options", "DENY").
		with("Referrer-Policy", "no-referrer").
		with("Cache-Control", "no-store")
}
