package client

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/tcmkit/tcmkit/schemas/jsondoc"
)

// maxSeen bounds the responses a spec's tally keeps for its evidence: the
// latest are kept.
const maxSeen = 512

// maxHeadersShown bounds the response headers of one evidence transcript.
const maxHeadersShown = 30

// Saw adds responses the current spec judges without sending them (pages
// of a walk another spec fetched), so that a failure can show them.
func (c *Client) Saw(ctx context.Context, resps ...*Response) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.recorder(ctx)
	for _, r := range resps {
		t.saw(r)
	}
}

// Seen returns the responses the current spec sent, reused or was shown,
// oldest first (the latest maxSeen).
func (c *Client) Seen() []*Response {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.current.seen)
}

func (t *tally) saw(r *Response) {
	if r == nil {
		return
	}
	if len(t.seen) == maxSeen {
		t.seen = slices.Delete(t.seen, 0, maxSeen/4)
	}
	t.seen = append(t.seen, r)
}

// Transcript is one exchange as a reader needs it to act: the request line,
// the request headers (keys redacted), the status, every response header
// and the body cut. Everything passes the redactor before it is cut.
func (c *Client) Transcript(resp *Response) string {
	var b strings.Builder
	req := resp.AsWritten()
	if resp.Rewritten != "" {
		fmt.Fprintf(&b, "# written %s\n", resp.Rewritten)
	}
	b.WriteString(framingNote(req.Framing))
	fmt.Fprintf(&b, "> %s %s\n", req.Method, c.url(req))
	if a := req.accept(); a != "" {
		fmt.Fprintf(&b, "> Accept: %s\n", c.redact(a))
	}
	if req.Auth != "" {
		fmt.Fprintf(&b, "> Authorization: %s\n", c.redact(req.Auth))
	}
	for _, f := range req.Header {
		fmt.Fprintf(&b, "> %s: %s\n", c.redact(f.Name), jsondoc.Excerpt(c.redact(f.Value), maxHeaderShown))
	}
	if req.Body != nil {
		if req.ContentType != "" {
			fmt.Fprintf(&b, "> Content-Type: %s\n", req.ContentType)
		}
		fmt.Fprintf(&b, ">\n> %s\n", excerpt(c.redact(string(req.Body)), len(req.Body), false))
	}
	fmt.Fprintf(&b, "< %d %s\n", resp.Status, http.StatusText(resp.Status))
	names := slices.Sorted(func(yield func(string) bool) {
		for k := range resp.Header {
			if !yield(k) {
				return
			}
		}
	})
	for i, h := range names {
		if i == maxHeadersShown {
			fmt.Fprintf(&b, "< … %d more headers\n", len(names)-i)
			break
		}
		for _, v := range resp.Header.Values(h) {
			fmt.Fprintf(&b, "< %s: %s\n", h, jsondoc.Excerpt(c.redact(v), maxHeaderShown))
		}
	}
	if resp.Size() > 0 {
		fmt.Fprintf(&b, "<\n< %s\n", resp.Excerpt())
	}
	if resp.Note != "" {
		fmt.Fprintf(&b, "# %s\n", resp.Note)
	}
	return b.String()
}

// Curl is a command that sends the request again, paste-ready: the
// Authorization value as KeyVar spells it (an environment variable, never
// the key), or redacted when KeyVar does not know it.
func (c *Client) Curl(req Request) string {
	var b strings.Builder
	fmt.Fprintf(&b, "curl -sS -i -X %s %s", req.Method, shellQuote(c.url(req)))
	if a := req.accept(); a != "" {
		fmt.Fprintf(&b, " -H %s", shellQuote("Accept: "+c.redact(a)))
	} else {
		b.WriteString(" -H 'Accept:'") // curl sends none
	}
	if req.Auth != "" {
		fmt.Fprintf(&b, ` -H "Authorization: %s"`, c.curlAuth(req.Auth))
	}
	for _, f := range req.Header {
		if strings.EqualFold(f.Name, "Authorization") {
			// a header line written otherwise (its name's case, whitespace
			// around the value) carries the key all the same
			fmt.Fprintf(&b, ` -H "%s: %s"`, f.Name, c.curlAuth(f.Value))
			continue
		}
		fmt.Fprintf(&b, " -H %s", shellQuote(c.redact(f.Name+": "+f.Value)))
	}
	if req.Body != nil {
		if req.ContentType != "" {
			fmt.Fprintf(&b, " -H %s", shellQuote("Content-Type: "+req.ContentType))
		}
		fmt.Fprintf(&b, " --data-raw %s", shellQuote(c.redact(string(req.Body))))
	}
	if f := curlFraming(req.Framing, c.url(req)); f != "" {
		b.WriteString(" " + f)
	}
	return b.String()
}

// curlAuth spells an Authorization value for a double-quoted shell word:
// the key as KeyVar names it, the whitespace around the value kept, or the
// value redacted when KeyVar does not know it.
func (c *Client) curlAuth(v string) string {
	trimmed := strings.Trim(v, " \t")
	lead := v[:strings.Index(v, trimmed)]
	if c.KeyVar != nil {
		if named := c.KeyVar(trimmed); named != "" {
			return lead + named + v[len(lead)+len(trimmed):]
		}
	}
	return strings.ReplaceAll(c.redact(v), `"`, `\"`) + ` (redacted: not an environment variable of the suite)`
}

func (c *Client) url(req Request) string {
	u := strings.TrimSuffix(c.BaseURL, "/") + req.Path
	if req.Query != "" {
		u += "?" + req.Query
	}
	return c.redact(u)
}

// shellQuote quotes s for a POSIX shell: in single quotes, a single quote inside closed, escaped and opened again.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
