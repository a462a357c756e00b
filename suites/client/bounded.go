package client

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/schemas/jsondoc"
)

// Bounds of one validation. The validator builds an error tree of about a
// kilobyte per failed value, so a document of a few MiB that fails
// everywhere would take gigabytes at once: a large document is validated
// in pieces of at most validateChunk values, and validation stops once
// MaxViolations were found.
const (
	validateChunk = 20_000
	// MaxViolations is the most violations kept of one document.
	MaxViolations = 1000
)

// validateBounded validates doc against res like schemas.Validate, with
// the bounds above, and quotes every value redacted before it is cut.
func validateBounded(res schemas.Resource, doc any, redact func(string) string) error {
	vs := &violationSet{}
	if err := vs.validate(res, doc, func(p string) (string, bool) { return p, true }); err != nil {
		return err
	}
	if len(vs.out) == 0 {
		return nil
	}
	slices.SortStableFunc(vs.out, func(a, b schemas.Violation) int { return jsondoc.ComparePointers(a.Pointer, b.Pointer) })
	for i := range vs.out {
		v := &vs.out[i]
		if v.Keyword == "limit" {
			continue
		}
		if val, ok := jsondoc.Get(doc, v.Pointer); ok {
			s := string(jsondoc.Encode(val))
			if redact != nil {
				s = redact(s)
			}
			v.Value = jsondoc.Excerpt(s, schemas.MaxExcerpt)
		}
	}
	return &schemas.Error{Resource: res, Violations: vs.out}
}

// violationSet gathers violations up to MaxViolations.
type violationSet struct {
	out     []schemas.Violation
	stopped bool
}

// validate validates doc, or pieces of it when it is large. fix maps a
// pointer of doc to the pointer in the whole document, and says whether
// the violation is kept (a piece repeats what lies outside the array it
// splits; only the first piece keeps that).
func (vs *violationSet) validate(res schemas.Resource, doc any, fix func(string) (string, bool)) error {
	if vs.stopped {
		return nil
	}
	path, items := largestArray(doc)
	if len(items) < 2 || count(doc, validateChunk+1) <= validateChunk {
		err := schemas.Validate(res, doc)
		var se *schemas.Error
		if err != nil && !errors.As(err, &se) {
			return err
		}
		if se != nil {
			vs.add(se.Violations, fix)
		}
		return nil
	}
	per := max(1, len(items)*validateChunk/count(doc, -1))
	for from := 0; from < len(items) && !vs.stopped; from += per {
		to := min(from+per, len(items))
		piece := replaced(doc, jsondoc.Tokens(path), items[from:to])
		first := from == 0
		err := vs.validate(res, piece, func(p string) (string, bool) {
			shifted, inside := shift(p, path, from)
			if !inside && !first {
				return "", false
			}
			return fix(shifted)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func (vs *violationSet) add(found []schemas.Violation, fix func(string) (string, bool)) {
	for _, v := range found {
		p, keep := fix(v.Pointer)
		if !keep {
			continue
		}
		if len(vs.out) == MaxViolations {
			vs.stopped = true
			vs.out = append(vs.out, schemas.Violation{Pointer: p, Keyword: "limit",
				Rule: fmt.Sprintf("validation stopped after %d violations; the rest of the body was not validated (bounded memory)", MaxViolations)})
			return
		}
		v.Pointer = p
		vs.out = append(vs.out, v)
	}
}

// count counts the values of a document (objects, arrays and scalars),
// stopping once it passes limit (no limit when negative).
func count(doc any, limit int) int {
	n := 0
	var walk func(v any) bool
	walk = func(v any) bool {
		n++
		if limit >= 0 && n > limit {
			return false
		}
		switch t := v.(type) {
		case map[string]any:
			for _, x := range t {
				if !walk(x) {
					return false
				}
			}
		case []any:
			for _, x := range t {
				if !walk(x) {
					return false
				}
			}
		}
		return true
	}
	walk(doc)
	return n
}

// largestArray finds the array with the most items, and its pointer
// (built only for the best so far: a document may hold millions of values).
func largestArray(doc any) (string, []any) {
	var best []any
	var bestPath []string
	var path []string
	var walk func(v any)
	walk = func(v any) {
		switch t := v.(type) {
		case map[string]any:
			for k, x := range t {
				path = append(path, k)
				walk(x)
				path = path[:len(path)-1]
			}
		case []any:
			if len(t) > len(best) {
				best, bestPath = t, slices.Clone(path)
			}
			for i, x := range t {
				if _, ok := x.(map[string]any); !ok {
					if _, ok := x.([]any); !ok {
						continue // a scalar holds no array
					}
				}
				path = append(path, strconv.Itoa(i))
				walk(x)
				path = path[:len(path)-1]
			}
		}
	}
	walk(doc)
	return jsondoc.Pointer(bestPath...), best
}

// replaced is doc with the value at the pointer's tokens replaced by v; the
// objects and arrays on the way are copied, the rest shared.
func replaced(doc any, tokens []string, v any) any {
	if len(tokens) == 0 {
		return v
	}
	switch t := doc.(type) {
	case map[string]any:
		c := make(map[string]any, len(t))
		for k, x := range t {
			c[k] = x
		}
		c[tokens[0]] = replaced(t[tokens[0]], tokens[1:], v)
		return c
	case []any:
		i, _ := strconv.Atoi(tokens[0])
		c := slices.Clone(t)
		c[i] = replaced(t[i], tokens[1:], v)
		return c
	}
	return doc
}

// shift maps a pointer into a piece of the array at path that starts at
// item from back to the whole array; inside says whether it lies in the
// array's items.
func shift(p, path string, from int) (string, bool) {
	rest, ok := strings.CutPrefix(p, path+"/")
	if !ok {
		return p, false
	}
	idx, tail, _ := strings.Cut(rest, "/")
	i, err := strconv.Atoi(idx)
	if err != nil {
		return p, false
	}
	out := path + "/" + strconv.Itoa(i+from)
	if tail != "" {
		out += "/" + tail
	}
	return out, true
}
