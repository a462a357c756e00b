package main

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/schemas/jsondoc"
	"github.com/tcmkit/tcmkit/schemas/openapi"
)

// judge holds the document's compiled components.
type judge struct {
	doc   *openapi.Validator
	names map[schemas.Resource]string // resource -> component
}

// resourceOf is the schema an answer's body must validate against.
func resourceOf(operation string, status int) schemas.Resource {
	switch {
	case status >= 400:
		return schemas.ErrorBody
	case status != http.StatusOK:
		return ""
	case operation == "feed":
		return schemas.FeedPage
	case operation == "videos":
		return schemas.VideosResponse
	case operation == "health":
		return schemas.HealthBody
	}
	return ""
}

// evaluate judges every answer of a run and returns what is wrong.
func (j judge) evaluate(r *runResult) []string {
	who := "faultless run"
	if r.name != "" {
		who = "fault " + r.name
	}
	if r.err != nil {
		return []string{fmt.Sprintf("%s: %v", who, r.err)}
	}
	var fails []string
	fail := func(ex *exchange, format string, args ...any) {
		fails = append(fails, fmt.Sprintf("%s: %s %s (%s): %s", who, ex.Method, ex.Target, ex.Label, fmt.Sprintf(format, args...)))
	}
	for _, ex := range r.exchanges {
		if ex.Upstream == nil {
			// Prism answered by itself: the request was refused (our
			// requests are valid), or Prism could not be reached.
			if r.name == "" {
				fail(ex, "Prism answered %d by itself: %s", ex.Status, describe(ex.Violations))
			}
			continue
		}
		ex.Resource = resourceOf(ex.Operation, ex.Upstream.Status)
		if ex.Resource != "" {
			ex.ValidatorErr = schemas.ValidateJSON(ex.Resource, ex.Upstream.Body)
			if doc, err := jsondoc.Decode(ex.Upstream.Body); err != nil {
				ex.DocumentErr = err
			} else {
				ex.DocumentErr = j.doc.Validate(j.names[ex.Resource], doc)
			}
			if (ex.ValidatorErr == nil) != (ex.DocumentErr == nil) {
				fail(ex, "the validator and the document disagree on the %d body: validator %v; document %v", ex.Upstream.Status, ex.ValidatorErr, ex.DocumentErr)
			}
		}
		bodyFlag := slices.ContainsFunc(ex.Violations, violation.inBody)
		switch {
		case r.name == "" && ex.Flagged:
			fail(ex, "Prism flags the faultless simulator's %d answer: %s", ex.Upstream.Status, describe(ex.Violations))
		case r.name == "" && ex.ValidatorErr != nil:
			fail(ex, "the faultless simulator's %d body breaks the schema: %v", ex.Upstream.Status, ex.ValidatorErr)
		case ex.ValidatorErr != nil && !bodyFlag:
			fail(ex, "Prism does not flag a %d body that breaks the schema: %v", ex.Upstream.Status, firstLine(ex.ValidatorErr))
		case ex.ValidatorErr == nil && bodyFlag && isJSON(ex.Upstream.ContentType):
			// (Sent as another media type, the body is text to Prism, and
			// "must be object" follows from the media type.)
			fail(ex, "Prism flags a %d body that the validator accepts: %s", ex.Upstream.Status, describe(ex.Violations))
		}
	}
	if r.name == "" {
		fails = append(fails, j.coverage(r)...)
	}
	return fails
}

// coverage checks that the faultless run reached what it must show clean:
// each error status, and feed pages holding every event type.
func (j judge) coverage(r *runResult) []string {
	statuses := map[int]bool{}
	types := map[string]bool{}
	for _, ex := range r.exchanges {
		if ex.Upstream == nil {
			continue
		}
		statuses[ex.Upstream.Status] = true
		if ex.Upstream.Status == http.StatusOK && ex.Operation != "health" {
			doc, _ := jsondoc.Decode(ex.Upstream.Body)
			jsondoc.Walk(doc, func(ptr string, v any) {
				if jsondoc.Last(ptr) == "type" {
					if s, ok := v.(string); ok && slices.Contains(schemas.EventTypes, s) {
						types[s] = true
					}
				}
			})
		}
	}
	var fails []string
	for _, s := range []int{200, 400, 401, 403, 429, 500} {
		if !statuses[s] {
			fails = append(fails, fmt.Sprintf("faultless run: no answer with status %d was reached", s))
		}
	}
	for _, t := range schemas.EventTypes {
		if !types[t] {
			fails = append(fails, fmt.Sprintf("faultless run: no %s event was served (a longer --history in startSimulator?)", t))
		}
	}
	return fails
}

// isJSON reports whether a Content-Type is JSON (application/json or a
// +json type).
func isJSON(contentType string) bool {
	mt, _, _ := strings.Cut(contentType, ";")
	mt = strings.ToLower(strings.TrimSpace(mt))
	return mt == "application/json" || strings.HasSuffix(mt, "+json")
}

func describe(vs []violation) string {
	if len(vs) == 0 {
		return "(no details)"
	}
	v := vs[0]
	s := v.Message
	if len(v.Location) > 0 {
		s = strings.Join(v.Location, ".") + ": " + s
	}
	if len(vs) > 1 {
		s += fmt.Sprintf(" (and %d more)", len(vs)-1)
	}
	return s
}

func describeAll(vs []violation) string {
	var parts []string
	for _, v := range vs[:min(len(vs), 3)] {
		parts = append(parts, describe([]violation{v}))
	}
	if len(vs) > 3 {
		parts = append(parts, fmt.Sprintf("and %d more", len(vs)-3))
	}
	return strings.Join(parts, "; ")
}

func firstLine(err error) string {
	s := err.Error()
	lines := strings.Split(s, "\n")
	if len(lines) > 1 {
		return strings.TrimSpace(lines[1])
	}
	return s
}
