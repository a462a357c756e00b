package explore

// Outcome is what one transformation met in a run.
type Outcome struct {
	Base           Base
	Transformation Transformation
	// Reached: it went into a request whose answer was compared with the
	// plain request's.
	Reached bool
	// Differs says how the answer to a request of it alone differed from
	// the plain one's ("" when it did not); the oracle judges whether the
	// contract allows it (a chunked body may be refused with 411).
	Differs string
	// Left says why it was not reached ("" when it was).
	Left string
	// Carried: it was reached on a request of the suite's own, whose
	// answer the oracle judged by the request's class (Carrier).
	Carried bool
}

// Try sends the base rewritten by a set of transformations and says how
// its answer differs from the plain request's ("" when it does not), or,
// in notSent, why it sent nothing.
type Try func(set []Transformation) (differs, notSent string)

// Isolate sends a set of transformations in one request and, when the
// answer differs from the plain one's, splits the set in two and sends
// each half, until each difference is blamed on one transformation (group
// testing): a set whose answer is the plain one's costs one request, a
// single culprit among n about 2·log2(n) more.
func Isolate(b Base, set []Transformation, try Try) []Outcome {
	if len(set) == 0 {
		return nil
	}
	differs, notSent := try(set)
	switch {
	case notSent != "":
		out := make([]Outcome, len(set))
		for i, t := range set {
			out[i] = Outcome{Base: b, Transformation: t, Left: notSent}
		}
		return out
	case differs == "":
		out := make([]Outcome, len(set))
		for i, t := range set {
			out[i] = Outcome{Base: b, Transformation: t, Reached: true}
		}
		return out
	case len(set) == 1:
		return []Outcome{{Base: b, Transformation: set[0], Reached: true, Differs: differs}}
	}
	h := len(set) / 2
	return append(Isolate(b, set[:h], try), Isolate(b, set[h:], try)...)
}
