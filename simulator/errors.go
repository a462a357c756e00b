package simulator

import (
	"encoding/json"
	"net/http"
	"strconv"
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

// WriteError answers with an ErrorBody. It never fails: if details cannot be
// encoded the body goes without them.
func WriteError(w http.ResponseWriter, status int, code, message string, details any) {
	if t, ok := w.(*trackingWriter); ok {
		t.errCode = code
	}
	message = cutText(message, maxErrorMessage) // an error may quote its input
	raw, err := json.Marshal(ErrorBody{Error: code, Message: message, Details: details})
	if err != nil {
		raw, _ = json.Marshal(ErrorBody{Error: code, Message: message})
	}
	writeRaw(w, status, raw)
}

// writeRaw answers with a body that is already JSON.
func writeRaw(w http.ResponseWriter, status int, raw []byte) {
	h := w.Header()
	h["Content-Type"] = jsonContentType
	h["Content-Length"] = []string{strconv.Itoa(len(raw))}
	w.WriteHeader(status)
	_, _ = w.Write(raw)
}

// writeJSON encodes v and answers with it.
func writeJSON(w http.ResponseWriter, status int, v any) {
	raw, err := json.Marshal(v)
	if err != nil {
		WriteError(w, http.StatusInternalServerError, CodeInternal, "the response could not be encoded", nil)
		return
	}
	writeRaw(w, status, raw)
}

// jsonContentType is shared so that setting the header does not allocate;
// net/http never writes to it.
var jsonContentType = []string{contentTypeJSON}

// writeRateLimited is the 429: Retry-After in whole seconds, never early.
func writeRateLimited(w http.ResponseWriter, retryAfter int64, message string) {
	w.Header().Set("Retry-After", strconv.FormatInt(retryAfter, 10))
	WriteError(w, http.StatusTooManyRequests, CodeRateLimited, message, map[string]any{"retryAfterSeconds": retryAfter})
}
