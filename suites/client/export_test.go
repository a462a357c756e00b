package client

import "github.com/tcmkit/tcmkit/schemas"

// ValidationWork validates doc as Response.Validate does and returns how
// many values were handed to the validator, contexts of pieces included,
// and the most at once.
func ValidationWork(res schemas.Resource, doc any) (values, largest int) {
	vs := &violationSet{}
	vs.validate(res, doc, func(p string) (string, bool) { return p, true })
	return vs.validated, vs.largest
}

// ValidateChunk is how many values a piece holds at most.
const ValidateChunk = validateChunk

// CountValues counts the values of a document.
func CountValues(doc any) int { return count(doc, -1) }
