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

// Answer is the answer of one request, as a value: every handler of the
// API and of the control API returns one, a Layer (layer.go) changes one,
// and writeAnswer (serve.go) is the one place that writes it.
type Answer struct {
	Status int
	// Body is JSON unless ContentType says otherwise. It may be bytes the
	// server keeps (a cached answer): a Layer that changes it builds new
	// ones, never writes into these.
	Body []byte
	// Cause is the cause of an error answer, a Code constant (the
	// ErrorBody's error as the simulator spells it): the journal's
	// Exchange.Error and the client judge read it, whatever the body says.
	Cause string
	// Header holds header fields beyond Content-Type and Content-Length
	// (Retry-After, WWW-Authenticate, Allow, ...); nil for none.
	Header http.Header
	// ContentType is the body's type: "" for JSON, NoBody for an answer
	// without a body or Content-Type (a 204).
	ContentType string
	// Observed is the body the observers (the client judge) read when it
	// is not Body: Body gzipped, say. Nil: Body.
	Observed []byte
	// Chunked sends Body in two writes, flushed between, without
	// Content-Length.
	Chunked bool
	// Drop closes the connection without an answer; Cut closes it after
	// the header (Content-Length the whole Body's) and Body[:CutAt].
	Drop, Cut bool
	CutAt     int
	// Breaks names the requirement of the catalogue the answer breaks on
	// purpose (a fuzz schedule's), "" for none: observers see it
	// (Exchange.Breaks), and the client judge lets a client leave a walk
	// the server broke.
	Breaks string

	// shared: no one changes body (a cached answer), so observers read
	// these bytes themselves rather than a copy.
	shared bool
	// pooled is the pool buffer body was built in; it goes back to the
	// pool once the answer is written.
	pooled *[]byte
	// parts, when not nil, is the body in pieces that Body does not hold
	// (cached entries of a tracked-videos answer, not copied into one
	// buffer), sent in one writev (gather.go); whatever reads the body
	// (a Layer, a fault that cuts it, another connection) calls flatten
	// first. pooledParts is its pool slice.
	parts       [][]byte
	pooledParts *[][]byte
	// stream writes the whole answer itself, head and body, for a body too
	// large to hold (the world's export); the fields above are unused.
	stream func(http.ResponseWriter)
}

// answer is the package's short name of Answer.
type answer = Answer

// NoBody is Answer.ContentType for an answer without body or Content-Type.
const NoBody = noBody

const noBody = "-"

// rawAnswer answers with a body that is already JSON.
func rawAnswer(status int, raw []byte) answer { return answer{Status: status, Body: raw} }

// ErrorAnswer is an answer with an ErrorBody whose error is code (its
// Cause), for a Layer that answers in the simulator's words.
func ErrorAnswer(status int, code, message string, details any) Answer {
	return errorAnswer(status, code, message, details)
}

// JSONAnswer is an answer with v encoded as JSON, for a Layer or a control
// route of one.
func JSONAnswer(status int, v any) Answer { return jsonAnswer(status, v) }

// errorAnswer answers with an ErrorBody. It never fails: if details cannot
// be encoded the body goes without them.
func errorAnswer(status int, code, message string, details any) answer {
	message = cutText(message, maxErrorMessage) // an error may quote its input
	raw, err := json.Marshal(ErrorBody{Error: code, Message: message, Details: details})
	if err != nil {
		raw, _ = json.Marshal(ErrorBody{Error: code, Message: message})
	}
	return answer{Status: status, Body: raw, Cause: code}
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
	if a.Header == nil {
		a.Header = http.Header{}
	}
	a.Header.Set(name, value)
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

// jsonContentType is shared so that setting the header does not allocate;
// net/http never writes to it.
var jsonContentType = []string{contentTypeJSON}

// flatten makes an answer in pieces one Body, for whatever reads or cuts
// the body. The pieces' pool buffers are left to the collector: a Layer
// may keep the body.
func (a *answer) flatten() {
	if a.parts == nil {
		return
	}
	n := 0
	for _, p := range a.parts {
		n += len(p)
	}
	body := make([]byte, 0, n)
	for _, p := range a.parts {
		body = append(body, p...)
	}
	a.Body, a.parts, a.pooled, a.pooledParts = body, nil, nil, nil
}
