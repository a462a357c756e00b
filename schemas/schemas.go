// Package schemas is the machine-readable contract of the Tracked-Channel
// Monitoring API: one JSON Schema (draft 2020-12) per resource, compiled once
// with format assertions on, and the contract's numbers named once.
//
// The simulator validates requests with these schemas and the suite judges
// responses with them, so both read a rule of the spec from the same place.
// The schemas of the OpenAPI document openapi.yaml are generated from the
// same files (package schemas/openapi; go generate ./schemas).
package schemas

//go:generate go run gen_openapi.go

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/tcmkit/tcmkit/schemas/jsondoc"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// Resource names one schema file of this package.
type Resource string

// The resources of the contract, one schema file each.
const (
	ChannelRef     Resource = "channel-ref.json"
	VideoStats     Resource = "video-stats.json"
	VideoSummary   Resource = "video-summary.json"
	VideoRef       Resource = "video-ref.json"
	Event          Resource = "event.json"
	StatSample     Resource = "stat-sample.json"
	VideoEntry     Resource = "video-entry.json"
	FeedPage       Resource = "feed-page.json"
	ErrorBody      Resource = "error-body.json"
	HealthBody     Resource = "health-body.json"
	VideosRequest  Resource = "videos-request.json"
	VideosResponse Resource = "videos-response.json"
)

// Resources lists every resource, in the order of the spec.
var Resources = []Resource{
	ChannelRef, VideoStats, VideoSummary, VideoRef, Event, StatSample,
	VideoEntry, FeedPage, ErrorBody, HealthBody, VideosRequest, VideosResponse,
}

// BaseURI is the prefix of every schema's $id.
const BaseURI = "https://tcmkit.dev/schemas/"

//go:embed *.json openapi.yaml
var files embed.FS

// FS holds the schema files and the OpenAPI document, as shipped.
func FS() fs.FS { return files }

var (
	compileOnce sync.Once
	compiled    map[Resource]*jsonschema.Schema
	compileErr  error
)

func compileAll() {
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	c.RegisterFormat(&jsonschema.Format{Name: "uri", Validate: validURI})
	names, err := fs.Glob(files, "*.json")
	if err != nil {
		compileErr = err
		return
	}
	for _, name := range names {
		raw, err := files.ReadFile(name)
		if err != nil {
			compileErr = err
			return
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		if err != nil {
			compileErr = fmt.Errorf("schemas: %s: %w", name, err)
			return
		}
		if err := c.AddResource(BaseURI+name, doc); err != nil {
			compileErr = fmt.Errorf("schemas: %s: %w", name, err)
			return
		}
	}
	compiled = make(map[Resource]*jsonschema.Schema, len(Resources))
	for _, r := range Resources {
		s, err := c.Compile(BaseURI + string(r))
		if err != nil {
			compileErr = fmt.Errorf("schemas: compile %s: %w", r, err)
			return
		}
		compiled[r] = s
	}
}

// validURI is RFC 3986's URI, stricter than net/url (which takes a space
// or a non-ASCII character in a path): an absolute URI of unreserved,
// reserved and percent-encoded characters only.
func validURI(v any) error {
	s, ok := v.(string)
	if !ok {
		return nil // the type is another keyword's
	}
	u, err := url.Parse(s)
	if err != nil {
		return err
	}
	if u.Scheme == "" {
		return errors.New("relative url")
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', strings.IndexByte("-._~:/?#[]@!$&'()*+,;=", c) >= 0:
		case c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			i += 2
		default:
			return fmt.Errorf("%q at byte %d is not allowed in a URI (RFC 3986: percent-encode it)", rune(c), i)
		}
	}
	return nil
}

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

func schema(r Resource) (*jsonschema.Schema, error) {
	compileOnce.Do(compileAll)
	if compileErr != nil {
		return nil, compileErr
	}
	s, ok := compiled[r]
	if !ok {
		return nil, fmt.Errorf("schemas: unknown resource %q", r)
	}
	return s, nil
}

// Validate checks a decoded JSON document (as jsondoc.Decode makes it)
// against a resource. It returns nil, a *Error listing
// every violation, or an error if the schemas themselves are broken.
func Validate(r Resource, doc any) error {
	s, err := schema(r)
	if err != nil {
		return err
	}
	err = s.Validate(doc)
	if err == nil {
		return nil
	}
	ve, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return err
	}
	return &Error{Resource: r, Violations: violations(ve, doc)}
}

// ValidateJSON decodes raw JSON and validates it. Numbers are kept exact.
func ValidateJSON(r Resource, raw []byte) error {
	doc, err := jsondoc.Decode(raw)
	if err != nil {
		return &Error{Resource: r, Violations: []Violation{{Pointer: "", Keyword: "json", Rule: "the body is not valid JSON: " + err.Error()}}}
	}
	return Validate(r, doc)
}

// Violation is one broken rule: where in the instance, which keyword, what
// rule, and the value found there.
type Violation struct {
	// Pointer is the JSON pointer (RFC 6901) of the offending value; "" is the root.
	Pointer string `json:"pointer"`
	// Keyword is the schema keyword that failed, such as "required" or "format".
	Keyword string `json:"keyword"`
	// EventType names the event type whose definition the rule belongs to, if any.
	EventType string `json:"eventType,omitempty"`
	// Rule says what was expected, in the validator's words.
	Rule string `json:"rule"`
	// Value is the offending value, JSON-encoded and shortened.
	Value string `json:"value"`
}

func (v Violation) String() string {
	ptr := v.Pointer
	if ptr == "" {
		ptr = "/"
	}
	rule := v.Rule
	if v.EventType != "" {
		rule += " (required by " + v.EventType + ")"
	}
	return fmt.Sprintf("%s: %s [%s]; got %s", ptr, rule, v.Keyword, v.Value)
}

// Error is a document that does not validate against a resource.
type Error struct {
	Resource   Resource
	Violations []Violation
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "does not validate as %s:", strings.TrimSuffix(string(e.Resource), ".json"))
	for _, v := range e.Violations {
		b.WriteString("\n  ")
		b.WriteString(v.String())
	}
	return b.String()
}

// HasViolation reports whether some violation is at pointer with keyword.
func (e *Error) HasViolation(pointer, keyword string) bool {
	return slices.ContainsFunc(e.Violations, func(v Violation) bool {
		return v.Pointer == pointer && v.Keyword == keyword
	})
}

var english = message.NewPrinter(language.English)

// violations flattens the error tree to its leaves, which are the rules that
// actually failed; the inner nodes only say "allOf failed" or "then failed".
func violations(ve *jsonschema.ValidationError, doc any) []Violation {
	var out []Violation
	var walk func(e *jsonschema.ValidationError, typ string)
	walk = func(e *jsonschema.ValidationError, typ string) {
		// A keyword reached through a $ref (a URI, a count) sits in another
		// file; the type's definition is one of its ancestors.
		if t := eventType(e.SchemaURL); t != "" {
			typ = t
		}
		if len(e.Causes) > 0 {
			for _, c := range e.Causes {
				walk(c, typ)
			}
			return
		}
		ptr := jsondoc.Pointer(e.InstanceLocation...)
		kw := ""
		if kp := e.ErrorKind.KeywordPath(); len(kp) > 0 {
			kw = kp[len(kp)-1]
		} else {
			// Some kinds (Not, FalseSchema) leave their path empty; their
			// Go type names the keyword: *kind.Not is "not".
			t := fmt.Sprintf("%T", e.ErrorKind)
			kw = strings.ToLower(t[strings.LastIndexByte(t, '.')+1:])
		}
		out = append(out, Violation{
			Pointer:   ptr,
			Keyword:   kw,
			EventType: typ,
			Rule:      e.ErrorKind.LocalizedString(english),
			Value:     jsondoc.Quote(valueAt(doc, ptr), MaxExcerpt),
		})
	}
	walk(ve, "")
	if len(out) == 0 {
		out = append(out, Violation{Keyword: "schema", Rule: ve.Error(), Value: jsondoc.Quote(doc, MaxExcerpt)})
	}
	slices.SortStableFunc(out, func(a, b Violation) int { return jsondoc.ComparePointers(a.Pointer, b.Pointer) })
	return slices.CompactFunc(out, func(a, b Violation) bool { return a == b })
}

// eventType reads the type name out of a location such as
// ".../event.json#/$defs/title_changed/required".
func eventType(schemaURL string) string {
	_, frag, ok := strings.Cut(schemaURL, string(Event)+"#/$defs/")
	if !ok {
		return ""
	}
	name, _, _ := strings.Cut(frag, "/")
	return name
}

// MaxExcerpt bounds a value quoted in a violation, so a failure message
// stays readable when a whole page is wrong.
const MaxExcerpt = 120

// valueAt is the value a violation is about; a missing one is null.
func valueAt(doc any, ptr string) any {
	v, _ := jsondoc.Get(doc, ptr)
	return v
}
