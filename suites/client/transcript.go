package client

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/tcmkit/tcmkit/schemas/jsondoc"
)

// MaxTranscript bounds the transcript a spec keeps, in bytes: the end is
// kept, where the failing request usually is.
const MaxTranscript = 64 << 10

// maxHeaderShown bounds one header value in a transcript.
const maxHeaderShown = 200

// tally counts and records the requests of one spec or scope.
type tally struct {
	n      int
	script strings.Builder
	seen   []*Response // what the spec judged, for the evidence of a failure
}

func (c *Client) logf(ctx context.Context, format string, args ...any) {
	line := c.redact(fmt.Sprintf(format, args...))
	c.mu.Lock()
	c.recorder(ctx).script.WriteString("# " + line)
	c.mu.Unlock()
	if c.Log != nil {
		io.WriteString(c.Log, line)
	}
}

// Take returns the number of requests sent and the transcript (redacted,
// its end at most MaxTranscript bytes) since the last Take, and starts
// afresh. The suite takes them after each spec, so they belong to that spec
// (its BeforeAll included).
func (c *Client) Take() (int, string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n, s := c.current.n, c.redact(c.current.script.String())
	c.current = tally{}
	if len(s) > MaxTranscript {
		cut := len(s) - MaxTranscript
		if i := strings.IndexByte(s[cut:], '\n'); i >= 0 {
			cut += i + 1
		}
		s = fmt.Sprintf("# … %d earlier bytes of the transcript left out\n", cut) + jsondoc.Excerpt(s[cut:], len(s))
	}
	return n, s
}

// headersOfInterest are the response headers worth a line in a transcript.
var headersOfInterest = []string{"Content-Type", "Content-Length", "Retry-After", "Date", "Location", "WWW-Authenticate"}

// record adds an exchange to the transcript, redacted before it is stored
// (and again when it is taken, for keys learnt meanwhile).
func (c *Client) record(ctx context.Context, req Request, resp *Response, took time.Duration, err error) {
	s := c.redact(c.block(req, resp, took, err))
	c.mu.Lock()
	t := c.recorder(ctx)
	t.script.WriteString(s)
	if err == nil {
		t.saw(resp)
	}
	c.mu.Unlock()
}

// recorder is where a request made with ctx is counted: the current spec,
// or the scope of work done ahead of time (see WithScope). Call with c.mu held.
func (c *Client) recorder(ctx context.Context) *tally {
	name, _ := ctx.Value(scopeKey{}).(string)
	if name == "" {
		return &c.current
	}
	if c.scopes == nil {
		c.scopes = map[string]*tally{}
	}
	t := c.scopes[name]
	if t == nil {
		t = &tally{}
		c.scopes[name] = t
	}
	return t
}

type scopeKey struct{}

// WithScope marks requests made with the returned context as work done
// ahead of time under a name (such as a feed walk fetched while the suite
// waits for a rate window): they are counted and recorded apart, and go to
// the spec that first uses them, by Claim.
func WithScope(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, scopeKey{}, name)
}

// ScopeOf is the name of the scope of ctx ("" for none: the current
// spec's).
func ScopeOf(ctx context.Context) string {
	name, _ := ctx.Value(scopeKey{}).(string)
	return name
}

// Claim moves the requests and transcript of a scope to the current spec.
func (c *Client) Claim(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.scopes[name]
	if t == nil {
		return
	}
	delete(c.scopes, name)
	c.current.n += t.n
	for _, r := range t.seen {
		c.current.saw(r)
	}
	if t.script.Len() > 0 {
		fmt.Fprintf(&c.current.script, "# %s: fetched ahead of time, while the suite waited for a rate window\n%s", name, t.script.String())
	}
}

// block is one exchange of a transcript: what was sent, what came back.
// Bodies and header values are redacted before they are cut; the rest when
// it is taken.
func (c *Client) block(req Request, resp *Response, took time.Duration, err error) string {
	var b strings.Builder
	fmt.Fprintf(&b, "=== %s\n", req)
	b.WriteString(framingNote(req.Framing))
	if resp != nil && resp.Rewritten != "" {
		fmt.Fprintf(&b, "# written %s\n", resp.Rewritten)
	}
	if resp != nil && resp.Reused {
		b.WriteString("# the response of an earlier spec, reused (fetch once, check many)\n")
	}
	if req.Auth != "" {
		fmt.Fprintf(&b, "> Authorization: %s\n", req.Auth)
	} else {
		b.WriteString("> (no Authorization header)\n")
	}
	for _, f := range req.Header {
		fmt.Fprintf(&b, "> %s: %s\n", f.Name, jsondoc.Excerpt(c.redact(f.Value), maxHeaderShown))
	}
	switch req.Accept {
	case "": // the default, application/json: every plain request's
	case NoAccept:
		b.WriteString("> (no Accept header)\n")
	default:
		fmt.Fprintf(&b, "> Accept: %s\n", req.Accept)
	}
	if req.Body != nil {
		if req.ContentType != "" {
			fmt.Fprintf(&b, "> Content-Type: %s\n", req.ContentType)
		}
		fmt.Fprintf(&b, "> %s\n", excerpt(c.redact(string(req.Body)), len(req.Body), false))
	}
	if resp == nil {
		fmt.Fprintf(&b, "< no response after %s: %v\n\n", took.Round(time.Millisecond), err)
		return b.String()
	}
	fmt.Fprintf(&b, "< %d %s", resp.Status, http.StatusText(resp.Status))
	if !resp.Reused {
		fmt.Fprintf(&b, " (%s)", took.Round(time.Millisecond))
	}
	b.WriteString("\n")
	for _, h := range headersOfInterest {
		for _, v := range resp.Header.Values(h) {
			fmt.Fprintf(&b, "< %s: %s\n", h, jsondoc.Excerpt(c.redact(v), maxHeaderShown))
		}
	}
	if resp.Size() > 0 {
		fmt.Fprintf(&b, "< %s\n", resp.Excerpt())
	}
	if err != nil {
		fmt.Fprintf(&b, "< (no answer to judge: %v)\n", err)
	}
	if resp.Note != "" {
		fmt.Fprintf(&b, "# %s\n", resp.Note)
	}
	b.WriteString("\n")
	return b.String()
}
