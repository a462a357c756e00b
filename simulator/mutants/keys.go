package mutants

import (
	"net/http"
	"strings"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/schemas/jsondoc"
	"github.com/tcmkit/tcmkit/simulator"
)

// The mutants of the health check, the keys, the Pro gate and the error
// bodies.

func healthDegraded(_ *http.Request, doc any) bool {
	obj, ok := doc.(map[string]any)
	if ok {
		obj["status"] = "degraded"
	}
	return ok
}

var healthUnavailable = editStatus(http.StatusOK, func(a *answer) {
	a.setError(http.StatusServiceUnavailable, simulator.CodeUnavailable, "the service is unavailable", nil)
})

// acceptKey serves requests whose only fault is the key (the server's 401
// of this code) as if an account that tracks nothing had made them.
func acceptKey(code string) func() serveFunc {
	return stateless(func(x *exchange) *answer {
		a := x.serve()
		if refused(x, a, code) {
			return anonymous(x)
		}
		return a
	})
}

// refused reports whether the server refused the request with 401 and
// code. A key the server calls malformed counts as malformed only when the
// catalogue does too (AUTH-MALFORMED: an empty token, another scheme, no
// <prefix>_): the simulator also calls a key of the right prefix but the
// wrong length or letters malformed, which the catalogue calls a
// well-formed key of no account (AUTH-UNKNOWN's), and a fault that broke
// both would blame two requirements.
func refused(x *exchange, a *answer, code string) bool {
	if a.Status != http.StatusUnauthorized || a.code() != code {
		return false
	}
	if code != simulator.CodeMalformedKey || x.srv == nil {
		return true
	}
	prefix, _, _ := strings.Cut(x.srv.Seeded().Pro, "_")
	scheme, token, _ := strings.Cut(strings.TrimSpace(x.auth()), " ")
	token = strings.TrimSpace(token)
	return len(x.r.Header.Values("Authorization")) > 1 || !strings.EqualFold(scheme, "Bearer") || token == "" || !strings.HasPrefix(token, prefix+"_")
}

// anonymous is the answer to an account that tracks nothing: an empty feed,
// every requested video missing (a bad body still gets its 400).
func anonymous(x *exchange) *answer {
	if x.r.URL.Path != schemas.PathVideos {
		return jsonOK(map[string]any{"events": []any{}, "nextCursor": nil})
	}
	ids, bad := simulator.ParseVideosRequest(x.r.Header, x.raw)
	if bad != nil {
		a := &answer{}
		a.setError(http.StatusBadRequest, simulator.CodeInvalidBody, bad.Message, bad.Details)
		return a
	}
	return jsonOK(map[string]any{"videos": []any{}, "missingVideoIds": dedupe(ids)})
}

func dedupe(ids []string) []string {
	out := []string{}
	seen := map[string]bool{}
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

var rejectValidKey = editStatus(http.StatusOK, func(a *answer) {
	a.setHeader("WWW-Authenticate", `Bearer realm="api"`)
	a.setError(http.StatusUnauthorized, simulator.CodeUnknownKey, "the API key is not valid", nil)
})

var noProGate = stateless(func(x *exchange) *answer {
	a := x.serve()
	if a.Status == http.StatusForbidden && a.code() == simulator.CodeProRequired {
		return anonymous(x)
	}
	return a
})

// ignoreAuthScheme serves a request refused for its scheme again as Bearer.
var ignoreAuthScheme = stateless(func(x *exchange) *answer {
	a := x.serve()
	scheme, token, found := strings.Cut(strings.TrimSpace(x.auth()), " ")
	if a.Status == http.StatusUnauthorized && found && !strings.EqualFold(scheme, "Bearer") {
		return x.serveAs(x.withAuth("Bearer "+strings.TrimSpace(token)), x.raw)
	}
	return a
})

func notErrorBody(a *answer) {
	a.setJSON(a.Status, map[string]any{"code": a.Status, "reason": strings.ToLower(http.StatusText(a.Status))})
}

func dropMessage(a *answer) {
	if doc := a.doc(); jsondoc.Delete(doc, "/message") {
		a.Body = jsondoc.Encode(doc)
	}
}
