// Package client is the suite's one HTTP client for the target: it honours
// 429 and Retry-After (bounded retries, a visible line while it waits),
// counts requests per spec and in total, keeps track of how often each key
// was used in the current rate window, and records a transcript of every
// exchange for the report. It never writes an API key: the transcript and
// the waiting lines pass through the redactor given to it.
package client

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/schemas/jsondoc"
)

// Request is one request the suite sends. It is a value, so equal requests
// can share one response (see Client.Cached).
type Request struct {
	Method string
	Path   string
	// Query is sent as is (already encoded), so that malformed values such
	// as limit=1.5 or limit=%zz reach the target unchanged.
	Query string
	// Auth is the whole Authorization header value; "" sends none.
	Auth string
	// Body is sent with ContentType when not nil.
	Body        []byte
	ContentType string
}

// Get returns a GET request for path with an encoded query.
func Get(path string, query url.Values, auth string) Request {
	return Request{Method: http.MethodGet, Path: path, Query: query.Encode(), Auth: auth}
}

// PostJSON returns a POST of a JSON body (sent verbatim).
func PostJSON(path string, body string, auth string) Request {
	return Request{Method: http.MethodPost, Path: path, Body: []byte(body), ContentType: "application/json", Auth: auth}
}

// Bearer is the Authorization value that carries key.
func Bearer(key string) string { return "Bearer " + key }

// String names the request in failure messages: method, path and query.
func (r Request) String() string {
	s := r.Method + " " + r.Path
	if r.Query != "" {
		s += "?" + r.Query
	}
	return s
}

// key identifies a request for the cache; the Authorization value is hashed
// so that keys are not kept in yet another map.
func (r Request) key() string {
	h := sha256.Sum256([]byte(r.Auth))
	return fmt.Sprintf("%s %s?%s %x %s %q", r.Method, r.Path, r.Query, h[:8], r.ContentType, r.Body)
}

// Response is a finished exchange: the body is read once, whole.
type Response struct {
	Request Request
	Status  int
	Header  http.Header
	Body    []byte
	// Attempts is how many times the request was sent (more than one after 429s).
	Attempts int
	// Reused is set on a response handed out again by Cached.
	Reused bool

	redact func(string) string // the client's, for Excerpt

	// read is shared by a response and its reuses: the body is decoded,
	// and validated against a resource, once.
	read *reading
}

// reading is what was learnt from a body.
type reading struct {
	once sync.Once
	doc  any
	err  error

	mu    sync.Mutex
	valid map[schemas.Resource]error
}

func (r *Response) reading() *reading {
	if r.read == nil {
		r.read = &reading{}
	}
	return r.read
}

// JSON decodes the body the way schemas.Validate expects it; decoded once.
func (r *Response) JSON() (any, error) {
	rd := r.reading()
	rd.once.Do(func() { rd.doc, rd.err = jsondoc.Decode(r.Body) })
	return rd.doc, rd.err
}

// Validate validates the body against a resource, once per resource: nil,
// a *schemas.Error, or the error of a body that is not JSON.
func (r *Response) Validate(res schemas.Resource) error {
	doc, err := r.JSON()
	if err != nil {
		return err
	}
	rd := r.reading()
	rd.mu.Lock()
	defer rd.mu.Unlock()
	if verr, ok := rd.valid[res]; ok {
		return verr
	}
	if rd.valid == nil {
		rd.valid = map[schemas.Resource]error{}
	}
	verr := schemas.Validate(res, doc)
	rd.valid[res] = verr
	return verr
}

// String names the exchange: request and status.
func (r *Response) String() string {
	return fmt.Sprintf("%s → %d", r.Request, r.Status)
}

// MaxExcerpt bounds the body shown in messages and transcripts.
const MaxExcerpt = 600

// Excerpt is the start of the body, for messages: keys are redacted
// before it is cut, so no part of one survives the cut.
func (r *Response) Excerpt() string {
	s := string(r.Body)
	if r.redact != nil {
		s = r.redact(s)
	}
	return excerpt(s, len(r.Body))
}

// excerpt is the start of a (redacted) body, and the body's size when it
// was cut.
func excerpt(s string, size int) string {
	cut := jsondoc.Excerpt(s, MaxExcerpt)
	if len(s) > MaxExcerpt {
		cut += fmt.Sprintf(" (%d bytes)", size)
	}
	return cut
}

// Defaults of a Client.
const (
	DefaultMaxRetries = 3
	DefaultTimeout    = 30 * time.Second
)

// Client sends requests to one target. Set the exported fields before the
// first request; the methods are safe for concurrent use.
type Client struct {
	// BaseURL is the target, such as http://127.0.0.1:8080 (no trailing slash needed).
	BaseURL string
	// HTTP sends the requests; nil uses a client with DefaultTimeout.
	HTTP *http.Client
	// Clock waits for rate windows; nil uses the wall clock.
	Clock Clock
	// MaxRetries bounds the retries after a 429 (0 uses DefaultMaxRetries).
	MaxRetries int
	// MaxWait bounds one wait for the rate limit; a longer Retry-After is
	// not honoured and the 429 is returned (0 uses two rate windows).
	MaxWait time.Duration
	// Redact is applied to everything the client writes; nil writes as is.
	Redact func(string) string
	// Log receives the "waiting N s for the rate limit" lines; nil discards them.
	Log io.Writer

	mu      sync.Mutex
	total   int
	current tally                  // the current spec's
	scopes  map[string]*tally      // work done ahead of time, by scope
	uses    map[string][]time.Time // Authorization value → send times, wall clock
	cache   map[string]*cacheEntry
}

// tally counts and records the requests of one spec or scope.
type tally struct {
	n      int
	script strings.Builder
}

type cacheEntry struct {
	once sync.Once
	resp *Response
	err  error
}

func (c *Client) httpClient() *http.Client {
	if c.HTTP != nil {
		return c.HTTP
	}
	return &http.Client{Timeout: DefaultTimeout}
}

func (c *Client) clock() Clock {
	if c.Clock != nil {
		return c.Clock
	}
	return WallClock{}
}

func (c *Client) redact(s string) string {
	if c.Redact == nil {
		return s
	}
	return c.Redact(s)
}

// Send sends the request once and returns whatever the target answered,
// 429 included: the rate-limit specs need to see every answer.
func (c *Client) Send(ctx context.Context, req Request) (*Response, error) {
	target, err := url.Parse(strings.TrimSuffix(c.BaseURL, "/") + req.Path)
	if err != nil {
		return nil, fmt.Errorf("client: %s: %w", req, err)
	}
	target.RawQuery = req.Query
	var body io.Reader
	if req.Body != nil {
		body = bytes.NewReader(req.Body)
	}
	hreq, err := http.NewRequestWithContext(ctx, req.Method, target.String(), body)
	if err != nil {
		return nil, fmt.Errorf("client: %s: %w", req, err)
	}
	if req.Auth != "" {
		hreq.Header.Set("Authorization", req.Auth)
	}
	if req.Body != nil && req.ContentType != "" {
		hreq.Header.Set("Content-Type", req.ContentType)
	}
	hreq.Header.Set("Accept", "application/json")
	start := time.Now()
	c.note(ctx, req.Auth, start)
	hresp, err := c.httpClient().Do(hreq)
	if err != nil {
		c.record(ctx, req, nil, time.Since(start), err)
		return nil, fmt.Errorf("client: %s: %w", req, err)
	}
	defer hresp.Body.Close()
	raw, err := io.ReadAll(hresp.Body)
	resp := &Response{Request: req, Status: hresp.StatusCode, Header: hresp.Header, Body: raw, Attempts: 1, redact: c.redact}
	c.record(ctx, req, resp, time.Since(start), err)
	if err != nil {
		return nil, fmt.Errorf("client: %s: reading the body: %w", req, err)
	}
	return resp, nil
}

// Do sends the request and, on 429, waits what Retry-After says (or one
// rate window when it says nothing usable) and sends it again, at most
// MaxRetries times. It returns the last response.
func (c *Client) Do(ctx context.Context, req Request) (*Response, error) {
	retries := c.MaxRetries
	if retries <= 0 {
		retries = DefaultMaxRetries
	}
	maxWait := c.MaxWait
	if maxWait <= 0 {
		maxWait = 2 * schemas.RateWindow
	}
	for attempt := 1; ; attempt++ {
		resp, err := c.Send(ctx, req)
		if err != nil {
			return nil, err
		}
		resp.Attempts = attempt
		if resp.Status != http.StatusTooManyRequests || attempt > retries {
			return resp, nil
		}
		wait, err := ParseRetryAfter(resp.Header.Get("Retry-After"), ServerTime(resp.Header, time.Now()))
		reason := "Retry-After " + strconv.Quote(resp.Header.Get("Retry-After"))
		switch {
		case err != nil:
			// A good client still backs off when the header is missing or
			// unreadable; the rate-limit specs judge the header itself.
			wait, reason = schemas.RateWindow, err.Error()
		case attempt > 1 && wait < schemas.RateWindow:
			// Waiting what it said did not help: a whole window does.
			wait, reason = schemas.RateWindow, reason+", which proved too short"
		}
		if wait > maxWait {
			c.logf(ctx, "not waiting %s for the rate limit on %s (%s): more than the %s allowed\n", wait, req, reason, maxWait)
			return resp, nil
		}
		c.logf(ctx, "waiting %s for the rate limit on %s (%s)%s\n", Seconds(wait), req, reason, Note(c.clock()))
		if err := c.clock().Wait(ctx, wait); err != nil {
			return nil, fmt.Errorf("client: waiting for the rate limit: %w", err)
		}
	}
}

// Seconds prints a wait the way people read it: "3 s", "1.5 s".
func Seconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + " s"
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

// Cached returns the response to an equal request sent earlier by any spec,
// or sends it now (with Do). Fetch once, check many: specs that judge the
// same exchange from different angles share it, and none depends on another
// having run first. A request that failed to send is not cached.
func (c *Client) Cached(ctx context.Context, req Request) (*Response, error) {
	c.mu.Lock()
	if c.cache == nil {
		c.cache = map[string]*cacheEntry{}
	}
	k := req.key()
	e, ok := c.cache[k]
	if !ok {
		e = &cacheEntry{}
		c.cache[k] = e
	}
	c.mu.Unlock()
	fresh := false
	e.once.Do(func() {
		fresh = true
		e.resp, e.err = c.Do(ctx, req)
	})
	if e.err != nil {
		c.mu.Lock()
		delete(c.cache, k)
		c.mu.Unlock()
		return nil, e.err
	}
	if fresh {
		return e.resp, nil
	}
	reused := &Response{Request: e.resp.Request, Status: e.resp.Status, Header: e.resp.Header,
		Body: e.resp.Body, Attempts: e.resp.Attempts, Reused: true, redact: c.redact, read: e.resp.reading()}
	c.mu.Lock()
	c.recorder(ctx).script.WriteString(c.block(req, reused, 0, nil))
	c.mu.Unlock()
	return reused, nil
}

// note counts one request and remembers when its key was used.
func (c *Client) note(ctx context.Context, auth string, at time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.total++
	c.recorder(ctx).n++
	if auth == "" {
		return
	}
	if c.uses == nil {
		c.uses = map[string][]time.Time{}
	}
	c.uses[auth] = append(c.uses[auth], at)
}

// RecentUses returns when the key was sent within the last window, oldest
// first, by this client's wall clock.
func (c *Client) RecentUses(key string, window time.Duration) []time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	cut := time.Now().Add(-window)
	all := c.uses[Bearer(key)]
	i, _ := slices.BinarySearchFunc(all, cut, func(t, cut time.Time) int { return t.Compare(cut) })
	return slices.Clone(all[i:])
}

// Forget drops what the client remembers of a key's use, after the target's
// clock was moved past a whole window.
func (c *Client) Forget(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.uses, Bearer(key))
}

// Total is the number of requests sent so far.
func (c *Client) Total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.total
}

// Take returns the number of requests sent and the transcript (redacted)
// since the last Take, and starts afresh. The suite takes them after each
// spec, so they belong to that spec (its BeforeAll included).
func (c *Client) Take() (int, string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n, s := c.current.n, c.current.script.String()
	c.current = tally{}
	return n, c.redact(s)
}

// headersOfInterest are the response headers worth a line in a transcript.
var headersOfInterest = []string{"Content-Type", "Retry-After", "Date", "Location", "WWW-Authenticate"}

func (c *Client) record(ctx context.Context, req Request, resp *Response, took time.Duration, err error) {
	s := c.block(req, resp, took, err)
	c.mu.Lock()
	c.recorder(ctx).script.WriteString(s)
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
	if t.script.Len() > 0 {
		fmt.Fprintf(&c.current.script, "# %s: fetched ahead of time, while the suite waited for a rate window\n%s", name, t.script.String())
	}
}

// block is one exchange of a transcript: what was sent, what came back.
// Bodies are redacted before they are cut; the rest when it is taken.
func (c *Client) block(req Request, resp *Response, took time.Duration, err error) string {
	var b strings.Builder
	fmt.Fprintf(&b, "=== %s\n", req)
	if resp != nil && resp.Reused {
		b.WriteString("# the response of an earlier spec, reused (fetch once, check many)\n")
	}
	if req.Auth != "" {
		fmt.Fprintf(&b, "> Authorization: %s\n", req.Auth)
	} else {
		b.WriteString("> (no Authorization header)\n")
	}
	if req.Body != nil {
		if req.ContentType != "" {
			fmt.Fprintf(&b, "> Content-Type: %s\n", req.ContentType)
		}
		fmt.Fprintf(&b, "> %s\n", excerpt(c.redact(string(req.Body)), len(req.Body)))
	}
	switch {
	case resp == nil:
		fmt.Fprintf(&b, "< no response after %s: %v\n", took.Round(time.Millisecond), err)
	default:
		fmt.Fprintf(&b, "< %d %s", resp.Status, http.StatusText(resp.Status))
		if !resp.Reused {
			fmt.Fprintf(&b, " (%s)", took.Round(time.Millisecond))
		}
		b.WriteString("\n")
		for _, h := range headersOfInterest {
			for _, v := range resp.Header.Values(h) {
				fmt.Fprintf(&b, "< %s: %s\n", h, v)
			}
		}
		fmt.Fprintf(&b, "< %s\n", resp.Excerpt())
		if err != nil {
			fmt.Fprintf(&b, "< (body cut short: %v)\n", err)
		}
	}
	b.WriteString("\n")
	return b.String()
}
