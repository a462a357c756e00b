package simulator

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
)

// corsPolicy is Config.CORSOrigins: which web pages may call the API from
// a browser. The spec says nothing of browsers; answering their preflights
// is tolerance where it is silent, and off unless asked for.
type corsPolicy struct {
	any     bool            // "*" was listed
	origins map[string]bool // listed origins, exactly
}

func newCORSPolicy(origins []string) corsPolicy {
	p := corsPolicy{origins: map[string]bool{}}
	for _, o := range origins {
		if o == "*" {
			p.any = true
			continue
		}
		p.origins[strings.TrimSuffix(o, "/")] = true
	}
	return p
}

// checkOrigin accepts "*" or scheme://host[:port] with nothing after it.
func checkOrigin(o string) error {
	if o == "*" {
		return nil
	}
	u, err := url.Parse(strings.TrimSuffix(o, "/"))
	switch {
	case err != nil:
		return err
	case u.Scheme != "http" && u.Scheme != "https":
		return errors.New(`want "*" or scheme://host[:port], such as http://localhost:5173`)
	case u.Host == "" || u.User != nil || u.Path != "" || u.RawQuery != "" || u.Fragment != "":
		return errors.New(`want "*" or scheme://host[:port] and nothing more, such as http://localhost:5173`)
	}
	return nil
}

// listed: the origin is named in the list ("*" does not count).
func (p corsPolicy) listed(origin string) bool { return p.origins[origin] }

func (p corsPolicy) on() bool { return p.any || len(p.origins) > 0 }

// apiCORSHeaders and the preflight's: a page may send Authorization and
// Content-Type, and read Retry-After (a 429) and WWW-Authenticate (a 401).
const (
	corsAllowMethods  = "GET, POST"
	corsAllowHeaders  = "Authorization, Content-Type"
	corsExposeHeaders = "Retry-After, WWW-Authenticate"
	corsMaxAge        = "600"
)

// apply handles CORS for a request to the API. It sets the headers of an
// allowed origin on h, the answer's header, and answers a preflight
// itself (it returns the answer and true then): 204 for an allowed
// origin, 403 for another. A preflight is OPTIONS with Origin and
// Access-Control-Request-Method.
func (p corsPolicy) apply(h http.Header, r *http.Request) (answer, bool) {
	origin := r.Header.Get("Origin")
	preflight := r.Method == http.MethodOptions && origin != "" && r.Header.Get("Access-Control-Request-Method") != ""
	if p.on() && !p.any {
		// The answer depends on the Origin: a cache must not hand one
		// origin's answer to another.
		h["Vary"] = append(h["Vary"], "Origin")
	}
	if origin == "" || !p.on() {
		if preflight {
			return errorAnswer(http.StatusForbidden, CodeForbiddenOrigin, "cross-origin requests are off: start the simulator with --cors ORIGIN (or TCM_SIM_CORS) to let a web page of that origin call the API", nil), true
		}
		return answer{}, false
	}
	allowed := p.any || p.origins[origin]
	if allowed {
		if p.any {
			h.Set("Access-Control-Allow-Origin", "*")
		} else {
			h.Set("Access-Control-Allow-Origin", origin) // a listed origin
		}
		h.Set("Access-Control-Expose-Headers", corsExposeHeaders)
	}
	if !preflight {
		return answer{}, false
	}
	if !allowed {
		return errorAnswer(http.StatusForbidden, CodeForbiddenOrigin, "this origin may not call the API from a browser: list it with --cors ORIGIN (or TCM_SIM_CORS)", map[string]any{"origin": excerpt(origin)}), true
	}
	return preflightAnswer(corsAllowMethods, corsAllowHeaders), true
}

// preflightAnswer is the 204 to an allowed preflight (the API's and the
// control API's).
func preflightAnswer(methods, headers string) answer {
	return answer{Status: http.StatusNoContent, ContentType: noBody, Header: http.Header{
		"Access-Control-Allow-Methods": {methods},
		"Access-Control-Allow-Headers": {headers},
		"Access-Control-Max-Age":       {corsMaxAge},
	}}
}
