package conformance

import (
	"sync"

	"github.com/tcmkit/tcmkit/suites/client"
)

// What the probes' oracles read of an answer is read once per answer:
// hundreds of probes judge the same few hundred answers, and decoding and
// validating them again for each would churn memory (a hostile target's
// bodies are decoded again whenever the client's budget of decoded
// documents evicts them).

type answerFacts struct {
	once      sync.Once
	errorBody bool
	page      walkPage
	pageOK    bool
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
	})
	return f
}
