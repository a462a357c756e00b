package oracle

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/schemas/catalogue"
	"github.com/tcmkit/tcmkit/schemas/jsondoc"
	"github.com/tcmkit/tcmkit/suites/client"
)

// ViolationRequirement is the one requirement a schema violation breaks:
// the narrowest rule that speaks of it (an event's type, its video, a
// timestamp, a count, a URI), else the event's schema for what lies inside
// an event, else the schema of the answer itself. So one wrong field
// fails one requirement.
func ViolationRequirement(res schemas.Resource, v schemas.Violation) catalogue.ID {
	switch {
	case isTypeRule(v):
		return catalogue.EventTypes
	case isVideoPresenceRule(v):
		return catalogue.EventChannelNoVideo
	case about(v, TimestampFields...):
		return catalogue.TimestampEpochMs
	case about(v, countFields...):
		return catalogue.CountNonnegOrNull
	case isURIRule(v):
		return catalogue.URIFormat
	case inEvent(v):
		return catalogue.EventSchema
	}
	return ResourceRequirement(res)
}

// ResourceRequirement is the requirement that an answer is the resource.
func ResourceRequirement(res schemas.Resource) catalogue.ID {
	switch res {
	case schemas.FeedPage:
		return catalogue.FeedPageSchema
	case schemas.VideosResponse:
		return catalogue.VideosEntrySchema
	case schemas.ErrorBody:
		return catalogue.ErrorBody
	case schemas.HealthBody:
		return catalogue.HealthOK
	}
	return ""
}

// Violations validates an answer against a resource: the schema's
// violations, or one at the root for a body that is not JSON.
func Violations(resp *client.Response, res schemas.Resource) []schemas.Violation {
	err := resp.Validate(res)
	var se *schemas.Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &se):
		return se.Violations
	}
	if _, jerr := resp.JSON(); jerr != nil {
		return []schemas.Violation{{Keyword: "json", Rule: "the body is not valid JSON: " + jerr.Error()}}
	}
	return []schemas.Violation{{Keyword: "schema", Rule: err.Error()}}
}

// violations is Violations, once for equal bodies: a run reads the same
// page many times (a first page asked by every probe of a key), and a
// body validates as it did the last time.
func (o *Oracle) violations(resp *client.Response, res schemas.Resource) []schemas.Violation {
	raw, err := resp.Bytes()
	if err != nil || len(raw) == 0 {
		return Violations(resp, res)
	}
	k := bodyKey{res: res, sum: sha256.Sum256(raw)}
	if vs, ok := o.valid[k]; ok {
		return vs
	}
	vs := Violations(resp, res)
	if len(o.valid) >= maxValidKept {
		clear(o.valid)
	}
	o.valid[k] = vs
	return vs
}

type bodyKey struct {
	res schemas.Resource
	sum [sha256.Size]byte
}

// maxValidKept bounds the bodies whose validation is kept.
const maxValidKept = 4096

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
	countFields = []string{"viewCount", "likeCount", "commentCount", "oldSubscriberCount", "newSubscriberCount"}
	uriFields   = []string{"thumbnailUrl", "currentThumbnailUrl", "oldThumbnailUrl", "newThumbnailUrl", "thumbnailUrls", "finalThumbnailUrl", "oldAvatarUrl", "newAvatarUrl"}
	// TimestampFields are the contract's timestamps.
	TimestampFields = []string{"createdAt", "publishedAt", "firstSeenAt"}
)

// inEvent reports a violation inside an event (under /events/N), not of
// the events array itself.
func inEvent(v schemas.Violation) bool { return eventPointer.MatchString(v.Pointer) }

var eventPointer = regexp.MustCompile(`/events/[0-9]+(/|$)`)

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

func isURIRule(v schemas.Violation) bool {
	if v.Keyword == "format" {
		return true
	}
	// an item of thumbnailUrls has a numeric last token
	return about(v, uriFields...) || strings.Contains(v.Pointer, "/thumbnailUrls/")
}

// EpochFloor is the earliest plausible epoch-milliseconds timestamp: a
// value in seconds (about 1.7e9) falls below it, one in microseconds above
// a year from now.
var EpochFloor = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// Implausible says why a timestamp's value is no count of epoch
// milliseconds between EpochFloor and ceiling; "" when it is one.
func Implausible(v any, ceiling time.Time) string {
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
	case ms < EpochFloor.UnixMilli() && ms >= EpochFloor.Unix() && ms <= ceiling.Unix():
		return rule + " (this looks like seconds)"
	case ms < EpochFloor.UnixMilli():
		return fmt.Sprintf("%s, not before %s", rule, EpochFloor.Format(time.DateOnly))
	case ms > ceiling.UnixMilli():
		return fmt.Sprintf("%s, not after %s (a year from now; microseconds?)", rule, ceiling.Format(time.DateOnly))
	}
	return ""
}

// Fields calls fn with every member of an object in doc whose name is one
// of names, and its pointer. Unlike jsondoc.Walk it makes no pointer for
// the other values: a hostile body may hold millions.
func Fields(doc any, names []string, fn func(ptr string, v any)) {
	var path []string
	var walk func(v any)
	walk = func(v any) {
		switch t := v.(type) {
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(t)) {
				path = append(path, k)
				if slices.Contains(names, k) {
					fn(jsondoc.Pointer(path...), t[k])
				}
				walk(t[k])
				path = path[:len(path)-1]
			}
		case []any:
			for i, x := range t {
				switch x.(type) {
				case map[string]any, []any:
					path = append(path, strconv.Itoa(i))
					walk(x)
					path = path[:len(path)-1]
				}
			}
		}
	}
	walk(doc)
}
