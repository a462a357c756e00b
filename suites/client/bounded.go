package client

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/schemas/jsondoc"
)

// Bounds of one validation. The validator builds an error tree of about a
// kilobyte per failed value, so a document of a few MiB that fails
// everywhere would take gigabytes at once: a document of more than
// validateChunk values is validated in pieces of about that many, and
// validation stops once MaxViolations were found.
const (
	validateChunk = 20_000
	// MaxViolations is the most violations kept of one document.
	MaxViolations = 1000
	// cutMin: an array is split off the rest only when its items after the
	// first hold this many values, so that a document holds at most
	// 1/cutMin as many pieces as values.
	cutMin = 256
	// maxContextMembers: arrays under an object of more members are not
	// split off (see pieceContext).
	maxContextMembers = 64
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
	// validated counts the values handed to the validator, pieces'
	// contexts included: the work, which stays linear in the document;
	// largest is the most handed to it at once.
	validated, largest int
}

// validate validates doc, in pieces when it is large: first its skeleton
// (every array of many items cut to its first), then the items cut off,
// in runs of about validateChunk values, each in a context that holds its
// ancestors and their scalar members only. Every value is validated once, with the
// schema it meets in the whole document, so the violations are those of
// validating it whole. (Splitting the largest array and keeping the rest
// whole, as this once did, validated the rest again for every piece: 20
// VideoEntries of a few hundred stat samples each took minutes.)
//
// This holds because the contract's schemas judge an array item by itself
// and by its ancestors' scalars (an event's type selects its definition),
// never by its siblings: no schema of a response has minItems, maxItems,
// uniqueItems or contains (TestSchemasJudgeItemsAlone). fix maps a pointer
// of doc to the pointer in the whole document, and says whether the
// violation is kept (a piece keeps only those inside its items).
func (vs *violationSet) validate(res schemas.Resource, doc any, fix func(string) (string, bool)) error {
	if vs.stopped {
		return nil
	}
	if count(doc, validateChunk+1) <= validateChunk {
		return vs.whole(res, doc, fix)
	}
	skel, cuts := skeleton(doc)
	if err := vs.whole(res, skel, fix); err != nil || len(cuts) == 0 {
		return err
	}
	for _, c := range cuts {
		whole := jsondoc.Pointer(c.path...)
		ctx, slot, at := pieceContext(doc, c.path)
		for from := 0; from < len(c.items) && !vs.stopped; {
			to, n := from, 0
			for to < len(c.items) {
				size := count(c.items[to], validateChunk)
				if to > from && n+size > validateChunk {
					break
				}
				n += size
				to++
			}
			*slot = c.items[from:to]
			shift := c.first + from
			err := vs.validate(res, ctx(), func(p string) (string, bool) {
				i, tail, inside := itemOf(p, at)
				if !inside {
					return "", false
				}
				return fix(whole + "/" + strconv.Itoa(i+shift) + tail)
			})
			if err != nil {
				return err
			}
			from = to
		}
	}
	return nil
}

// whole validates doc at once.
func (vs *violationSet) whole(res schemas.Resource, doc any, fix func(string) (string, bool)) error {
	n := count(doc, -1)
	vs.validated, vs.largest = vs.validated+n, max(vs.largest, n)
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

// cut is the items of the array at path from its first-th item on, cut
// off a skeleton.
type cut struct {
	path  []string
	first int
	items []any
}

// skeleton is doc with every array that is not under a large object (see
// pieceContext) and whose items after the first hold cutMin values or more
// cut to its first item, and what was cut. The arrays inside the items cut
// are left whole: a piece that is still too large is split again.
func skeleton(doc any) (any, []cut) {
	var cuts []cut
	var path []string
	var walk func(v any, splittable bool) any
	walk = func(v any, splittable bool) any {
		switch t := v.(type) {
		case map[string]any:
			splittable = splittable && len(t) <= maxContextMembers
			c := make(map[string]any, len(t))
			for k, x := range t {
				path = append(path, k)
				c[k] = walk(x, splittable)
				path = path[:len(path)-1]
			}
			return c
		case []any:
			if len(t) == 0 || !splittable {
				return t
			}
			c := []any{nil}
			if len(t) > 1 && count(t[1:], cutMin) < cutMin {
				c = slices.Clone(t) // few values after the first item: kept
			} else if len(t) > 1 {
				cuts = append(cuts, cut{path: slices.Clone(path), first: 1, items: t[1:]})
			}
			path = append(path, "0")
			c[0] = walk(t[0], splittable) // it may be large
			path = path[:len(path)-1]
			return c
		}
		return v
	}
	return walk(doc, true), cuts
}

// pieceContext makes the documents that validate a piece of the array at
// path: its ancestors, each object with its scalar members only (an
// event's type decides which definition its members meet) and each array
// with the one item on the path, which becomes its item 0. build builds
// one with the items last put in *slot; at is the array's pointer in it.
// Ancestors have at most maxContextMembers members (skeleton cuts nothing
// under larger ones), so a context is small.
func pieceContext(doc any, path []string) (build func() any, slot *[]any, at string) {
	slot = new([]any)
	var of func(v any, rest []string) func() any
	of = func(v any, rest []string) func() any {
		if len(rest) == 0 {
			return func() any { return *slot }
		}
		switch t := v.(type) {
		case map[string]any:
			scalars := map[string]any{}
			for k, x := range t {
				switch x.(type) {
				case map[string]any, []any:
				default:
					scalars[k] = x
				}
			}
			key, inner := rest[0], of(t[rest[0]], rest[1:])
			return func() any {
				c := maps.Clone(scalars)
				c[key] = inner()
				return c
			}
		case []any:
			i, _ := strconv.Atoi(rest[0])
			inner := of(t[i], rest[1:])
			return func() any { return []any{inner()} }
		}
		return func() any { return v } // not reached: path leads through objects and arrays
	}
	tokens := slices.Clone(path)
	for i := range tokens {
		if _, isArray := valueAtTokens(doc, path[:i]).([]any); isArray {
			tokens[i] = "0"
		}
	}
	return of(doc, path), slot, jsondoc.Pointer(tokens...)
}

// valueAtTokens is the value at a path of doc.
func valueAtTokens(doc any, tokens []string) any {
	for _, tok := range tokens {
		switch t := doc.(type) {
		case map[string]any:
			doc = t[tok]
		case []any:
			i, _ := strconv.Atoi(tok)
			doc = t[i]
		}
	}
	return doc
}

// itemOf reads a pointer inside the array at pointer at: the item's index
// and the rest of the pointer; inside is false for a pointer elsewhere.
func itemOf(p, at string) (i int, tail string, inside bool) {
	rest, ok := strings.CutPrefix(p, at+"/")
	if !ok {
		return 0, "", false
	}
	idx, tail, _ := strings.Cut(rest, "/")
	i, err := strconv.Atoi(idx)
	if err != nil {
		return 0, "", false
	}
	if tail != "" {
		tail = "/" + tail
	}
	return i, tail, true
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
