package explore

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/schemas/catalogue"
	"github.com/tcmkit/tcmkit/suites/client"
)

// Carrying transformations on the suite's own requests: a spec's request,
// written in a form a statement of the standards reads as the same
// request, means what it meant, so the contract oracle demands the same
// answer of it (it judges the request as asked, whose class the written
// form shares) and the spec's own assertions hold as they would. A server
// that reads the form otherwise answers another request than the one
// asked, and the rule that answer breaks fails, the form named beside it.
// It costs no request: in real time, where quick has no room in the Pro
// key's window for the equivalence family's packs, the specs' requests
// carry the transformations instead.
//
// Each request carries one transformation, so that a failure names the
// one that exposed it. Which one is drawn from the seed and the request as
// asked (not the order requests go in, which lanes running side by side
// change): the same seed, the same written request; its transcript and
// curl line show it as written.

// Carrier writes the suite's own requests with a valid key (the feed,
// tracked videos) and health without a key in a form the standards read
// as the same request, once started.
type Carrier struct {
	seed   uint64
	roles  map[string]string // "Bearer <key>" → the key's role
	on     atomic.Bool
	ledger map[string]string // transformation → its ledger statement

	mu      sync.Mutex
	carried map[[2]string]bool // {base, transformation}
}

// NewCarrier carries transformations for a seed on the requests of the
// keys given by role ("pro", "free"; an empty key is none).
func NewCarrier(seed uint64, keys map[string]string) *Carrier {
	c := &Carrier{seed: seed, roles: map[string]string{}, carried: map[[2]string]bool{}, ledger: map[string]string{}}
	for role, k := range keys {
		if k != "" {
			c.roles[client.Bearer(k)] = role
		}
	}
	if l, err := catalogue.LoadLedger(); err == nil {
		for _, st := range l.Statements {
			for _, t := range st.Transformations {
				c.ledger[t] = st.ID
			}
		}
	}
	return c
}

// Start lets the carrier write requests from now on: the preflight's are
// sent as asked, so that a server that reads a form otherwise fails a
// rule, and does not look like a wrong key.
func (c *Carrier) Start() { c.on.Store(true) }

// carriedScope names the explorer's own requests: they are forms already.
const carriedScope = "explored requests"

// Carries reports whether a transformation may go on a spec's request:
// one whose answer the standards let differ is not carried (a chunked body
// may be refused with 411, which no spec expects).
func Carries(t Transformation) bool { return t.Name != "chunked-body" }

// Rewrite is a client.Client's Rewrite: the request written with one
// transformation, and what that is ("" when it is sent as asked).
func (c *Carrier) Rewrite(ctx context.Context, req client.Request) (client.Request, string) {
	if c == nil || !c.on.Load() || strings.HasPrefix(client.ScopeOf(ctx), carriedScope) {
		return req, ""
	}
	b, role, d, ts := c.candidates(req)
	if len(ts) == 0 {
		return req, ""
	}
	t := ts[c.draw(req, role)%uint64(len(ts))]
	t.apply(d)
	c.mu.Lock()
	c.carried[[2]string{string(b), t.Name}] = true
	c.mu.Unlock()
	return d.request(), c.says(t)
}

// candidates are the transformations a request may carry, of its base,
// and the request as a draft for one of them (none when it is not an
// instance of a base).
func (c *Carrier) candidates(req client.Request) (Base, string, *draft, []Transformation) {
	b, role, ok := c.baseOf(req)
	if !ok {
		return "", "", nil, nil
	}
	d, ok := draftOf(req)
	if !ok {
		return "", "", nil, nil
	}
	var ts []Transformation
	for _, t := range TransformationsOf(b) {
		if Carries(t) && (!strings.HasPrefix(t.Group, "query") || d.pairs != nil) {
			ts = append(ts, t)
		}
	}
	return b, role, d, ts
}

// Forms are the request written under each transformation it may carry,
// by name: whichever the seed draws, the request sent is one of them.
func (c *Carrier) Forms(req client.Request) map[string]client.Request {
	_, _, _, ts := c.candidates(req)
	out := make(map[string]client.Request, len(ts))
	for _, t := range ts {
		d, _ := draftOf(req) // a draft each: a transformation writes into it
		t.apply(d)
		out[t.Name] = d.request()
	}
	return out
}

// says names a transformation for a transcript and a failure.
func (c *Carrier) says(t Transformation) string {
	st := t.Statement
	if id := c.ledger[t.Name]; id != "" {
		st += ", ledger " + id
	}
	return fmt.Sprintf("as %s (%s: %s): the standards read it as the request asked, whose answer the contract demands", t.Name, st, t.Text)
}

// draw is the request's number for the seed: the request as asked, its
// key by role, so that another run's keys draw the same.
func (c *Carrier) draw(req client.Request, role string) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d\x00%s\x00%s\x00%s\x00%s\x00", c.seed, role, req.Method, req.Path, req.Query)
	h.Write(req.Body)
	return h.Sum64()
}

// Outcomes are the transformations carried so far, each reached on its
// base.
func (c *Carrier) Outcomes() []Outcome {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []Outcome
	for _, b := range Bases {
		for _, t := range TransformationsOf(b) {
			if c.carried[[2]string{string(b), t.Name}] {
				out = append(out, Outcome{Base: b, Transformation: t, Reached: true, Carried: true})
			}
		}
	}
	return out
}

// baseOf is the plain request a spec's request is an instance of: as the
// contract writes it (the default Accept, no other header line, the usual
// framing), a valid key's feed or tracked videos, or health without a
// key, with a JSON body a transformation can write otherwise.
func (c *Carrier) baseOf(req client.Request) (Base, string, bool) {
	if len(req.Header) > 0 || req.Framing != (client.Framing{}) || req.Accept != "" {
		return "", "", false
	}
	role := c.roles[req.Auth]
	switch {
	case req.Method == "GET" && req.Path == schemas.PathFeed && req.Body == nil && role != "":
		return BaseFeed, role, true
	case req.Method == "POST" && req.Path == schemas.PathVideos && role != "" && rewritable(req):
		return BaseVideos, role, true
	case req.Method == "POST" && req.Path == schemas.PathHealth && req.Auth == "" && rewritable(req):
		return BaseHealth, "", true
	}
	return "", "", false
}

// rewritable: a JSON body sent as JSON, of no escape (a string the body
// escapes is written again exactly only if it holds no lone surrogate:
// bodies that escape are the specs' own forms, left alone) and no query.
func rewritable(req client.Request) bool {
	return req.ContentType == "application/json" && req.Query == "" && utf8.Valid(req.Body) && json.Valid(req.Body) &&
		!bytes.HasPrefix(req.Body, bom) && !bytes.ContainsRune(req.Body, '\\')
}

var bom = []byte("\xef\xbb\xbf")

// draftOf is a request as a draft that transformations write: its header
// lines in the order the plain draft has them, its query's pairs (nil when
// the query is not plain name=value pairs of the feed's parameters), its
// body as JSON to write again.
func draftOf(req client.Request) (*draft, bool) {
	d := &draft{method: req.Method, path: req.Path, header: []client.Field{{Name: "Accept", Value: "application/json"}}}
	if req.Auth != "" {
		d.add("Authorization", req.Auth)
	}
	if req.Body != nil {
		d.add("Content-Type", req.ContentType)
		d.body = &jsonBody{raw: req.Body}
	}
	if req.Query == "" {
		return d, true
	}
	for _, p := range strings.Split(req.Query, "&") {
		name, value, ok := strings.Cut(p, "=")
		if !ok || name != "limit" && name != "cursor" || strings.ContainsAny(p, ";+") {
			d.pairs, d.rawQuery = nil, req.Query
			return d, true
		}
		d.pairs = append(d.pairs, [2]string{name, value})
	}
	return d, true
}

// rewriteJSON writes a JSON text again, token by token (duplicate members
// and numbers as written kept): whitespace around every structural
// character, member names or string values in escapes, as asked.
func rewriteJSON(raw []byte, spaced, escapeNames, escapeValues bool) (string, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	type level struct {
		object bool
		n      int // values (and names) written in it
	}
	var stack []level
	var b strings.Builder
	structural := func(s string) {
		if spaced {
			s = " \n\t" + s + "\r\n "
		}
		b.WriteString(s)
	}
	for {
		t, err := dec.Token()
		if err == io.EOF {
			return b.String(), len(stack) == 0
		}
		if err != nil {
			return "", false
		}
		if d, ok := t.(json.Delim); ok && (d == '}' || d == ']') {
			stack = stack[:len(stack)-1]
			structural(string(d))
			continue
		}
		name := false
		if len(stack) > 0 {
			l := &stack[len(stack)-1]
			switch {
			case l.object && l.n%2 == 1:
				structural(":")
			case l.n > 0:
				structural(",")
			}
			name = l.object && l.n%2 == 0
			l.n++
		}
		switch v := t.(type) {
		case json.Delim:
			stack = append(stack, level{object: v == '{'})
			structural(string(v))
		case string:
			b.WriteString(jsonString(v, name && escapeNames || !name && escapeValues))
		case json.Number:
			b.WriteString(v.String())
		case bool:
			fmt.Fprint(&b, v)
		case nil:
			b.WriteString("null")
		}
	}
}
