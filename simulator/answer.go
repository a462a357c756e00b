package simulator

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/tcmkit/tcmkit/schemas/jsondoc"
)

// ErrorBody is the ErrorBody resource, as the simulator writes it.
type ErrorBody struct {
	Error   string `json:"error"`
	Message string `json:"message"`
	Details any    `json:"details,omitempty"`
}

// The error codes the simulator puts in ErrorBody.error. The spec leaves
// the values open; these are stable, snake_case and name the cause.
const (
	CodeMissingKey       = "missing_api_key"
	CodeMalformedKey     = "malformed_api_key"
	CodeUnknownKey       = "invalid_api_key"
	CodeRevokedKey       = "revoked_api_key"
	CodeNotFound         = "not_found"
	CodeMethodNotAllowed = "method_not_allowed"
	CodeInvalidQuery     = "invalid_query"
	CodeInvalidBody      = "invalid_body"
	CodeProRequired      = "pro_plan_required"
	CodeRateLimited      = "rate_limited"
	CodeInternal         = "internal_error"
	CodeUnavailable      = "service_unavailable"
	CodeInjected         = "injected_fault"
	CodeControlToken     = "invalid_control_token"
	CodeForbiddenHost    = "host_not_allowed"
	CodeForbiddenOrigin  = "origin_not_allowed"
	CodeUnsupportedMedia = "unsupported_media_type"
	CodeLimitReached     = "limit_reached"
	CodeWorldFull        = "world_full"
	CodeTooLarge         = "too_large"
	CodeBusy             = "busy"
)

const contentTypeJSON = "application/json"

// answer is what a handler returns: every answer of the API and of the
// control API, success or error, is one, and writeAnswer (serve.go) is
// the one place that writes it.
type answer struct {
	status int
	body   []byte // JSON unless contentType says otherwise
	code   string // ErrorBody.error of an error answer, for the journal
	// header holds header fields beyond Content-Type and Content-Length
	// (Retry-After, WWW-Authenticate, Allow, ...); nil for none.
	header http.Header
	// contentType is the body's type: "" for JSON, noBody for an answer
	// without a body or Content-Type (a 204).
	contentType string
	// shared: no one changes body (a cached answer), so observers read
	// these bytes themselves rather than a copy.
	shared bool
	// pooled is the pool buffer body was built in; it goes back to the
	// pool once the answer is written.
	pooled *[]byte
	// drop closes the connection without an answer (an injected fault).
	drop bool
	// stream writes the whole answer itself, head and body, for a body too
	// large to hold (the world's export); the fields above are unused.
	stream func(http.ResponseWriter)
}

// noBody is answer.contentType for an answer without body or Content-Type.
const noBody = "-"

// rawAnswer answers with a body that is already JSON.
func rawAnswer(status int, raw []byte) answer { return answer{status: status, body: raw} }

// errorAnswer answers with an ErrorBody. It never fails: if details cannot
// be encoded the body goes without them.
func errorAnswer(status int, code, message string, details any) answer {
	message = cutText(message, maxErrorMessage) // an error may quote its input
	raw, err := json.Marshal(ErrorBody{Error: code, Message: message, Details: details})
	if err != nil {
		raw, _ = json.Marshal(ErrorBody{Error: code, Message: message})
	}
	return answer{status: status, body: raw, code: code}
}

// jsonAnswer encodes v and answers with it.
func jsonAnswer(status int, v any) answer {
	raw, err := json.Marshal(v)
	if err != nil {
		return errorAnswer(http.StatusInternalServerError, CodeInternal, "the response could not be encoded", nil)
	}
	return rawAnswer(status, raw)
}

// with adds a header field to the answer.
func (a answer) with(name, value string) answer {
	if a.header == nil {
		a.header = http.Header{}
	}
	a.header.Set(name, value)
	return a
}

// rateLimited is the 429: Retry-After in whole seconds, never early.
func rateLimited(retryAfter int64, message string) answer {
	return errorAnswer(http.StatusTooManyRequests, CodeRateLimited, message, map[string]any{"retryAfterSeconds": retryAfter}).
		with("Retry-After", strconv.FormatInt(retryAfter, 10))
}

// QueryProblem is one invalid query parameter, as the 400's details list it.
type QueryProblem struct {
	Parameter string `json:"parameter"`
	Value     string `json:"value"`
	Rule      string `json:"rule"`
}

// queryError is the feed's 400: details names the invalid parameters
// ({"invalid":["limit"],"problems":[...]}).
func queryError(problems []QueryProblem) answer {
	var names []string
	for _, p := range problems {
		if !containsString(names, p.Parameter) {
			names = append(names, p.Parameter)
		}
	}
	details := map[string]any{"invalid": names, "problems": problems}
	if listed, omitted := capViolations(problems); omitted > 0 {
		names, _ = capViolations(names)
		details = map[string]any{"invalid": names, "problems": listed, "problemsOmitted": omitted}
	}
	return errorAnswer(http.StatusBadRequest, CodeInvalidQuery, "invalid query parameter: "+strings.Join(names, ", "), details)
}

func containsString(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// excerpt shortens a value quoted back to the client and keeps it valid
// UTF-8; it goes into a JSON body only, never into a header.
func excerpt(v string) string { return jsondoc.Excerpt(v, 64) }

// WriteError answers with an ErrorBody, for middleware (Config.Middleware)
// that answers a request itself.
func WriteError(w http.ResponseWriter, status int, code, message string, details any) {
	writeAnswer(w, errorAnswer(status, code, message, details))
}

// Answered tells the journal and the observers what middleware that
// answers in its own words means, before it writes: the cause of an error
// (a Code constant: Exchange.Error holds it, whatever the body spells), and
// the body before it was encoded for the wire (gzip, say: observers read
// it), if it differs from what is written. Call it with the writer the
// middleware was given; other writers are left alone.
func Answered(w http.ResponseWriter, code string, body []byte) {
	c, ok := w.(*call)
	if !ok {
		return
	}
	if code != "" {
		c.errCode = code
	}
	if body != nil && c.keep && c.kept == nil {
		n := min(len(body), maxObservedBody)
		c.kept, c.keep = body[:n:n], false
	}
}

// jsonContentType is shared so that setting the header does not allocate;
// net/http never writes to it.
var jsonContentType = []string{contentTypeJSON}
