package variant

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/tcmkit/tcmkit/simulator"
)

// The ErrorBody of a draw: the server's cause (its code) spelled in the
// draw's vocabulary, with the draw's message and details.

// code spells the server's error code in the draw's vocabulary.
func (d Draw) code(status int, server string) string {
	words := strings.Split(server, "_")
	switch d.Vocabulary {
	case "upper":
		return strings.ToUpper(server)
	case "camel":
		for i := 1; i < len(words); i++ {
			words[i] = strings.ToUpper(words[i][:1]) + words[i][1:]
		}
		return strings.Join(words, "")
	case "kebab":
		return strings.Join(words, "-")
	case "reason":
		return http.StatusText(status)
	case "status":
		return fmt.Sprint(status)
	case "dotted":
		return area(status) + "." + server
	case "generic":
		if status >= 500 {
			return "server_error"
		}
		return "client_error"
	case "synonyms":
		return synonyms[status]
	case "uri":
		return "https://errors.tcm.example/" + strings.Join(words, "-")
	case "empty":
		return ""
	}
	return server
}

var synonyms = map[int]string{
	http.StatusBadRequest:          "bad_request",
	http.StatusUnauthorized:        "unauthorized",
	http.StatusForbidden:           "forbidden",
	http.StatusTooManyRequests:     "too_many_requests",
	http.StatusInternalServerError: "internal",
}

func area(status int) string {
	switch status {
	case http.StatusUnauthorized:
		return "auth"
	case http.StatusForbidden:
		return "plan"
	case http.StatusTooManyRequests:
		return "rate"
	case http.StatusBadRequest:
		return "request"
	}
	return "server"
}

// message is the draw's message for an error whose server message is m.
func (d Draw) message(status int, m string) string {
	switch d.Message {
	case "empty":
		return ""
	case "generic":
		return http.StatusText(status)
	case "long":
		return m + ". " + strings.Repeat("See the API documentation for what this error means and how to avoid it. ", 3)
	case "non-ascii":
		return "Ошибка — " + m + " (エラー)"
	}
	return m
}

// errorBody builds the ErrorBody a draw sends for an error of the server.
// params are the query parameters a feed 400 found invalid: whatever the
// style, its details name them (a must); other details may go.
func (d Draw) errorBody(status int, server, msg string, details any, params []string, reqID string) *object {
	o := &object{}
	o.set("error", d.code(status, server))
	o.set("message", d.message(status, msg))
	if v, ok := d.details(details, params); ok {
		o.set("details", v)
	}
	if d.ErrorExtras {
		o.set("status", number(status))
		o.set("requestId", reqID)
	}
	return o
}

// details is the details member in the draw's style; ok false leaves it out.
func (d Draw) details(server any, params []string) (any, bool) {
	if len(params) > 0 {
		params = slices.Compact(slices.Sorted(slices.Values(params)))
		switch d.Details {
		case "list", "minimal":
			list := make([]any, len(params))
			for i, p := range params {
				list[i] = p
			}
			return list, true
		case "map":
			o := &object{}
			for _, p := range params {
				o.set(p, "invalid value")
			}
			return o, true
		case "text":
			return "invalid query parameter(s): " + strings.Join(params, ", "), true
		}
		return toOrdered(server), server != nil
	}
	if d.Details == "null" {
		return nil, true
	}
	if server == nil {
		return nil, false
	}
	switch d.Details {
	case "minimal":
		return nil, false
	case "text":
		return "see message", true
	case "list", "map":
		return toOrdered(server), true
	}
	return toOrdered(server), true
}

// paramsOf reads which query parameters a feed 400 of the server names.
func paramsOf(details any) []string {
	o, _ := details.(*object)
	inv, _ := o.get("invalid")
	list, _ := inv.([]any)
	var out []string
	for _, p := range list {
		if s, ok := p.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// problemParams are the parameters of the server's query problems.
func problemParams(ps []simulator.QueryProblem) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Parameter
	}
	return out
}

// id spells one of the service's own ids (evt_…, ch_…) in the draw's
// style; the same id always the same way, two ids never alike.
func (d Draw) id(s string) string {
	prefix, rest, ok := strings.Cut(s, "_")
	if !ok {
		prefix, rest = "", s
	}
	switch d.IDs {
	case "bare":
		return rest
	case "upper":
		return strings.ToUpper(prefix) + "-" + strings.ToUpper(rest)
	case "uuid":
		sum := sha256.Sum256([]byte(s))
		h := hex.EncodeToString(sum[:16])
		return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
	}
	return s
}
