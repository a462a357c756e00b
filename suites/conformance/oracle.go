package conformance

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"

	"github.com/tcmkit/tcmkit/schemas/catalogue"
	"github.com/tcmkit/tcmkit/suites/client"
	"github.com/tcmkit/tcmkit/suites/oracle"
	"github.com/tcmkit/tcmkit/suites/probe"
)

// Every exchange of the run goes through the contract oracle (package
// oracle) as it comes: specs, probes, walks, lockouts and the preflight.
// What it finds fails the spec that sent or read the exchange, once, at
// the spec's end, each problem blaming its own requirement; what no spec
// read fails the run's last spec. Specs state what their scenario expects
// beyond the contract's rules; the rules themselves live in the oracle.

// ledger keeps the oracle's problems until a spec reports them.
type ledger struct {
	mu    sync.Mutex
	found []*logged
	bySeq map[int][]*logged
}

type logged struct {
	p        oracle.Problem
	reported bool
}

// judged hands an answer to the oracle and keeps what it finds.
func (s *Session) judged(or *oracle.Oracle, resp *client.Response) {
	s.keep(resp, or.Judge(resp))
}

// keep keeps the oracle's problems of an exchange.
func (s *Session) keep(resp *client.Response, ps []oracle.Problem) {
	if len(ps) == 0 {
		return
	}
	l := &s.ledger
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.bySeq == nil {
		l.bySeq = map[int][]*logged{}
	}
	for _, p := range ps {
		e := &logged{p: p}
		l.found = append(l.found, e)
		l.bySeq[resp.Seq] = append(l.bySeq[resp.Seq], e)
	}
}

// take returns the problems not yet reported of the exchanges (of all of
// them when resps is nil) that blame one of ids (any requirement when ids
// is nil), and marks them reported.
func (l *ledger) take(resps []*client.Response, ids []string) []oracle.Problem {
	l.mu.Lock()
	defer l.mu.Unlock()
	var es []*logged
	if resps == nil {
		es = l.found
	} else {
		var seqs []int
		for _, r := range resps {
			if r != nil && !slices.Contains(seqs, r.Seq) {
				seqs = append(seqs, r.Seq)
			}
		}
		slices.Sort(seqs)
		for _, seq := range seqs {
			es = append(es, l.bySeq[seq]...)
		}
	}
	var out []oracle.Problem
	for _, e := range es {
		if e.reported || ids != nil && !slices.Contains(ids, string(e.p.Requirement)) {
			continue
		}
		e.reported = true
		out = append(out, e.p)
	}
	return out
}

// of returns the oracle's problems of one exchange, reported or not.
func (l *ledger) of(resp *client.Response) []oracle.Problem {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []oracle.Problem
	for _, e := range l.bySeq[resp.Seq] {
		out = append(out, e.p)
	}
	return out
}

// oracleFailure fails the current spec with the oracle's problems of the
// exchanges it saw that blame one of ids (nil: any), if any.
func (s *Session) oracleFailure(resps []*client.Response, ids []string) {
	ginkgo.GinkgoHelper()
	ps := s.ledger.take(resps, ids)
	if len(ps) == 0 {
		return
	}
	s.failOracle(ps)
}

// failOracle fails the current spec with oracle problems and their
// evidence.
func (s *Session) failOracle(ps []oracle.Problem) {
	ginkgo.GinkgoHelper()
	problems := make([]Problem, 0, min(len(ps), maxProblems))
	var evidence []*client.Response
	lines := make([]string, 0, len(ps))
	for _, p := range ps {
		line := fmt.Sprintf("%s: %s", p.Requirement, p.Request)
		if p.Pointer != "" {
			line += " " + p.Pointer
		}
		line += fmt.Sprintf(": want %s; got %s", p.Expected, p.Actual)
		lines = append(lines, line)
		if len(problems) < maxProblems {
			problems = append(problems, Problem{Requirement: string(p.Requirement), Request: p.Request, Pointer: p.Pointer, Expected: p.Expected, Actual: p.Actual})
		}
		for _, r := range p.Evidence {
			if !slices.ContainsFunc(evidence, func(x *client.Response) bool { return x.Seq == r.Seq }) {
				evidence = append(evidence, r)
			}
		}
	}
	msg := fmt.Sprintf("the contract oracle: %d problem(s) in the answers this spec saw (%s)\n%s",
		len(ps), strings.Join(blamed(ps), ", "), listProblems(lines, "  "))
	s.record(msg, problems, evidence)
	ginkgo.Fail(s.Redactor().String(msg))
}

// blamed lists the requirements problems blame, once each.
func blamed(ps []oracle.Problem) []string {
	var out []string
	for _, p := range ps {
		if !slices.Contains(out, string(p.Requirement)) {
			out = append(out, string(p.Requirement))
		}
	}
	return out
}

// oracleKeys are the keys the oracle knows, by role.
func (t Target) oracleKeys() oracle.Keys {
	k := oracle.Keys{Prefix: t.KeyPrefix(), Invented: func(id string) bool { return strings.HasPrefix(id, "~") || probe.Invented(id) }}
	add := func(list *[]string, key string) {
		if key != "" && !slices.Contains(*list, key) {
			*list = append(*list, key)
		}
	}
	add(&k.Pro, t.Pro)
	add(&k.Free, t.Free)
	add(&k.Revoked, t.Revoked)
	for _, key := range []string{t.Burst, t.Other} {
		if key != t.Free && key != t.Revoked {
			add(&k.Pro, key) // the rate-limit specs' own accounts are Pro accounts
		}
	}
	return k
}

// oracleSpecs is the run's last spec: what the oracle found that no spec
// of the problem's requirement reported (in an answer none of them read).
func (s *suite) oracleSpecs() {
	ginkgo.It("finds no break of the contract in the answers of the whole run", ginkgo.Label(oracleLabel), func(ctx ginkgo.SpecContext) {
		if s.c == nil {
			ginkgo.Skip("no request was sent")
		}
		s.oracleFailure(nil, nil)
	})
}

// oracleLabel marks the oracle's own spec.
const oracleLabel = "oracle"

// oracleAfter fails a spec, at its end, with what the oracle found in the
// exchanges it sent or read that blames its requirements: a reader finds a
// break under its rule; the run's last spec reports the rest. A spec of no
// requirement (an explored request) reports all it saw.
// A spec that ends after the run's deadline passed is stopped as the
// run's: it may have passed on what it could not wait for.
func (s *suite) oracleAfter(context.Context) {
	s.stopIfEnded()
	s.oracleOwn()
}

// oracleOwn fails the current spec with the oracle's problems of its
// requirements in the exchanges it saw, if any.
func (s *Session) oracleOwn() {
	ginkgo.GinkgoHelper()
	if s.c == nil {
		return
	}
	sr := ginkgo.CurrentSpecReport()
	if !sr.LeafNodeType.Is(types.NodeTypeIt) || slices.Contains(sr.Labels(), oracleLabel) || sr.State.Is(types.SpecStateSkipped) {
		// a spec already skipped cannot fail any more (Ginkgo keeps its
		// first state): its problems are left to one that can
		return
	}
	var ids []string
	for _, l := range sr.Labels() {
		if catalogue.IsID(l) {
			ids = append(ids, l)
		}
	}
	s.oracleFailure(s.c.Seen(), ids)
}
