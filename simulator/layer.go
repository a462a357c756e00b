package simulator

import (
	"context"
	"net/http"
	"slices"
)

type uncountedKey struct{}

// Uncounted marks a request that a layer lets past the rate limit (a
// named fault's throttled request let through): the server answers it as
// if its key had room, and does not count it. A fault that breaks the
// limit so serves the page asked for, not a stale one, and breaks no rule
// of pages besides.
func Uncounted(r *http.Request) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), uncountedKey{}, true))
}

func uncounted(r *http.Request) bool { return r.Context().Value(uncountedKey{}) != nil }

// Answerer answers one request of an operation with a value. A Layer's
// next is one: it may be called more than once, with variants of the
// request (another query, body or key), and its answers are values to
// change, keep or drop; nothing is written until the server writes the
// one the outermost layer returns.
type Answerer func(r *http.Request) Answer

// Layer changes the answers of the API's operations: a named fault that
// breaks one requirement (package simulator/mutants), a conforming draw
// (package simulator/variant), a fuzz schedule (package simulator/fuzz).
// Config.Layers installs them, first innermost, and they are the one way
// anything outside the server changes what it answers. A layer sees a
// request before the server authenticates it; ParseFeedQuery, ParseBearer
// and ParseVideosRequest read a request as the server will.
type Layer struct {
	// Name names the layer where it is installed: the named fault's name,
	// "conforming draw 7", "fuzz seed 3".
	Name string
	// Fault: the layer is a named fault, listed by GET /_control/info and
	// GET /_control/faults.
	Fault bool
	// Wrap wraps the answerer of one operation. The server calls it once
	// per operation when it is built and hands itself over (its clocks and
	// keys, RateNow, Advance, RegenerateKey), so what Wrap keeps in its
	// closure belongs to one server and one operation.
	Wrap func(s *Server, op Operation, next Answerer) Answerer
	// Served, if set, is what GET /_control/fuzz serves: what the layer
	// served so far, in words (a fuzz schedule's story).
	Served func() Answer
}

// namedFaults are the names of the layers that are named faults.
func namedFaults(layers []Layer) []string {
	var names []string
	for _, l := range layers {
		if l.Fault {
			names = append(names, l.Name)
		}
	}
	return names
}

// served is the layer that tells what it served, if any.
func served(layers []Layer) func() Answer {
	i := slices.IndexFunc(layers, func(l Layer) bool { return l.Served != nil })
	if i < 0 {
		return nil
	}
	return layers[i].Served
}
