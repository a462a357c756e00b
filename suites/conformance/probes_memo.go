package conformance

import (
	"sync"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/suites/client"
)

// What the probes' oracles read of an answer is read once per answer:
// hundreds of probes judge the same few hundred answers, and decoding and
// validating them again for each would churn memory (a hostile target's
// bodies are decoded again whenever the client's budget of decoded
// documents evicts them). Bounded: at most maxMemoViolations violations
// are kept of an answer, more than a failure lists.

const maxMemoViolations = 200

type answerFacts struct {
	once       sync.Once
	errorBody  bool
	page       walkPage
	pageOK     bool
	violations map[schemas.Resource][]schemas.Violation
	mu         sync.Mutex
}

// factsMemo maps an answer to what its oracles read of it.
type factsMemo struct{ m sync.Map } // *client.Response → *answerFacts

func (fm *factsMemo) of(resp *client.Response) *answerFacts {
	v, _ := fm.m.LoadOrStore(resp, &answerFacts{})
	f := v.(*answerFacts)
	f.once.Do(func() {
		f.errorBody = resp.Status >= 400 && isErrorBody(resp)
		if resp.Status == 200 {
			f.page, f.pageOK = probePage(resp)
		}
		f.violations = map[schemas.Resource][]schemas.Violation{}
	})
	return f
}

// violationsOf are an answer's violations of a resource's schema, memoized.
func (fm *factsMemo) violationsOf(j judged) []schemas.Violation {
	f := fm.of(j.resp)
	f.mu.Lock()
	defer f.mu.Unlock()
	vs, ok := f.violations[j.res]
	if !ok {
		vs = violations(j)
		if len(vs) > maxMemoViolations {
			vs = vs[:maxMemoViolations]
		}
		f.violations[j.res] = vs
	}
	return vs
}

// findings are the memoized violations that keep passes, as findings.
func (fm *factsMemo) findings(js []judged, keep func(schemas.Violation) bool) []finding {
	var out []finding
	for _, j := range js {
		for _, v := range fm.violationsOf(j) {
			if keep(v) {
				out = append(out, schemaFinding(j.resp.Request.String(), j.res, v))
			}
		}
	}
	return out
}
