package conformance

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/schemas/jsondoc"
	"github.com/tcmkit/tcmkit/suites/client"
)

// judged is a response and the resource its body must be.
type judged struct {
	resp *client.Response
	res  schemas.Resource
}

// finding is one broken rule in one response.
type finding struct {
	req  string // the request, named
	line string // pointer, rule and value
}

// violations validates one response and returns the schema's violations;
// a body that is not JSON is one violation at the root.
func violations(j judged) []schemas.Violation {
	if _, err := j.resp.JSON(); err != nil {
		return []schemas.Violation{{Keyword: "json", Rule: "the body is not valid JSON: " + err.Error()}}
	}
	err := j.resp.Validate(j.res)
	var se *schemas.Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &se):
		return se.Violations
	default:
		return []schemas.Violation{{Keyword: "schema", Rule: err.Error()}}
	}
}

// schemaFindings are the violations that keep passes, over every response.
func schemaFindings(js []judged, keep func(schemas.Violation) bool) []finding {
	var out []finding
	for _, j := range js {
		for _, v := range violations(j) {
			if keep(v) {
				out = append(out, finding{req: j.resp.Request.String(), line: v.String()})
			}
		}
	}
	return out
}

// about says whether a violation concerns one of the fields: at the field
// itself, or the field missing from its object.
func about(v schemas.Violation, fields ...string) bool {
	if slices.Contains(fields, jsondoc.Last(v.Pointer)) {
		return true
	}
	if v.Keyword == "required" {
		for _, f := range fields {
			if strings.Contains(v.Rule, "'"+f+"'") {
				return true
			}
		}
	}
	return false
}

var (
	countFields     = []string{"viewCount", "likeCount", "commentCount", "oldSubscriberCount", "newSubscriberCount"}
	uriFields       = []string{"thumbnailUrl", "currentThumbnailUrl", "oldThumbnailUrl", "newThumbnailUrl", "thumbnailUrls", "finalThumbnailUrl", "oldAvatarUrl", "newAvatarUrl"}
	timestampFields = []string{"createdAt", "publishedAt", "firstSeenAt"}
)

func inEvent(v schemas.Violation) bool { return strings.Contains(v.Pointer+"/", "/events/") }

func isTypeRule(v schemas.Violation) bool {
	return jsondoc.Last(v.Pointer) == "type" && inEvent(v) || v.Keyword == "required" && strings.Contains(v.Rule, "'type'")
}

func isVideoPresenceRule(v schemas.Violation) bool {
	if v.EventType == "" || !inEvent(v) {
		return false
	}
	if schemas.IsChannelLevel(v.EventType) {
		return jsondoc.Last(v.Pointer) == "video"
	}
	return v.Keyword == "required" && strings.Contains(v.Rule, "'video'")
}

func isCountRule(v schemas.Violation) bool { return about(v, countFields...) }

func isURIRule(v schemas.Violation) bool {
	if v.Keyword == "format" {
		return true
	}
	// an item of thumbnailUrls has a numeric last token
	return about(v, uriFields...) || strings.Contains(v.Pointer, "/thumbnailUrls/")
}

// Plausible bounds of an epoch-milliseconds timestamp: a value in seconds
// (about 1.7e9) falls below the floor, one in microseconds above the ceiling.
var epochFloor = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// timestampFindings checks every createdAt, publishedAt and firstSeenAt of
// the responses: an integer count of milliseconds between 2000-01-01 and a
// year after now.
func timestampFindings(js []judged, now time.Time) []finding {
	ceiling := now.AddDate(1, 0, 0)
	var out []finding
	for _, j := range js {
		doc, err := j.resp.JSON()
		if err != nil {
			continue // the schema specs report bodies that are not JSON
		}
		jsondoc.Walk(doc, func(ptr string, v any) {
			if !slices.Contains(timestampFields, jsondoc.Last(ptr)) {
				return
			}
			if why := implausible(v, ceiling); why != "" {
				out = append(out, finding{req: j.resp.Request.String(), line: fmt.Sprintf("%s: %s; got %s", ptr, why, jsondoc.Quote(v, schemas.MaxExcerpt))})
			}
		})
	}
	return out
}

func implausible(v any, ceiling time.Time) string {
	const rule = "want an integer count of Unix epoch milliseconds"
	num, ok := v.(json.Number)
	if !ok {
		if s, isStr := v.(string); isStr {
			if _, err := time.Parse(time.RFC3339Nano, s); err == nil {
				return rule + " (this is an ISO 8601 date string)"
			}
		}
		return rule
	}
	ms, err := num.Int64()
	if err != nil {
		return rule + " (not an integer)"
	}
	switch {
	case ms < epochFloor.UnixMilli() && ms >= epochFloor.Unix() && ms <= ceiling.Unix():
		return rule + " (this looks like seconds)"
	case ms < epochFloor.UnixMilli():
		return fmt.Sprintf("%s, not before %s", rule, epochFloor.Format(time.DateOnly))
	case ms > ceiling.UnixMilli():
		return fmt.Sprintf("%s, not after %s (a year from now; microseconds?)", rule, ceiling.Format(time.DateOnly))
	}
	return ""
}

// describeFindings renders findings for a failure message: the rule, then each
// request with its findings (at most max lines, the rest counted).
func describeFindings(rule string, fs []finding) string {
	const max = 25
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n%d finding(s):", rule, len(fs))
	last := ""
	for i, f := range fs {
		if i == max {
			fmt.Fprintf(&b, "\n  … and %d more", len(fs)-max)
			break
		}
		if f.req != last {
			fmt.Fprintf(&b, "\n  %s:", f.req)
			last = f.req
		}
		fmt.Fprintf(&b, "\n    %s", f.line)
	}
	return b.String()
}
