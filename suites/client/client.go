// Package client is the suite's one HTTP client for the target: it honours
// 429 and Retry-After (bounded retries, a visible line while it waits),
// counts requests per spec and in total, keeps track of how often each key
// was used in the current rate window, and records a transcript of every
// exchange for the report. It never writes an API key: the transcript and
// the waiting lines pass through the redactor given to it.
//
// Whatever the target does, the client stays safe and bounded: it follows
// no redirect (keys go nowhere but the target's origin), reads at most
// MaxBody bytes of a body, gives each exchange at most Timeout, waits at
// most MaxWait for a Retry-After it can read and not at all for one it
// cannot, keeps bodies in memory only up to a budget (the rest on disk
// until Close), and validates large documents piece by piece with a bound
// on the violations kept.
package client

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
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
	// Header holds more request header lines, sent as they are and in
	// order (a name may repeat): the ways of HTTP's grammar to carry a key
	// or a media type that the explored requests try.
	Header []Field
	// Accept is the Accept header's value; "" sends application/json and
	// NoAccept sends none.
	Accept string
	// Framing is how the message is written where HTTP's grammar allows
	// several ways to write the same request (the zero value: HTTP/1.1, a
	// Content-Length, the origin-form target).
	Framing Framing
}

// Framing is a way of writing a request message that HTTP/1.1 reads as
// the same request (RFC 9112): the explored equivalences send it.
type Framing struct {
	// HTTP10 writes the request line with HTTP/1.0 (RFC 9112 §2.3: a
	// server reads a 1.0 request of the same major version).
	HTTP10 bool
	// Chunked sends the body in the chunked transfer coding, without a
	// Content-Length (RFC 9112 §7.1); not with HTTP10.
	Chunked bool
	// Absolute writes the request-target in absolute-form,
	// http://host/path?query (RFC 9112 §3.2.2: a server MUST accept it).
	Absolute bool
}

// String names the framing for a transcript ("" for the usual one).
func (f Framing) String() string {
	var out []string
	if f.HTTP10 {
		out = append(out, "HTTP/1.0")
	}
	if f.Chunked {
		out = append(out, "a chunked body")
	}
	if f.Absolute {
		out = append(out, "an absolute-form request-target")
	}
	return strings.Join(out, ", ")
}

// Field is one request header line.
type Field struct{ Name, Value string }

// NoAccept as a Request's Accept sends no Accept header.
const NoAccept = "-"

// accept is the Accept header a request sends ("" for none).
func (r Request) accept() string {
	switch r.Accept {
	case "":
		return "application/json"
	case NoAccept:
		return ""
	}
	return r.Accept
}

// Values are the values of a request header the request sends, in order:
// Authorization, Content-Type and Accept as the fields above set them, and
// the lines of Header.
func (r Request) Values(name string) []string {
	var out []string
	switch http.CanonicalHeaderKey(name) {
	case "Authorization":
		if r.Auth != "" {
			out = append(out, r.Auth)
		}
	case "Content-Type":
		if r.Body != nil && r.ContentType != "" {
			out = append(out, r.ContentType)
		}
	case "Accept":
		if a := r.accept(); a != "" {
			out = append(out, a)
		}
	}
	for _, f := range r.Header {
		if strings.EqualFold(f.Name, name) {
			out = append(out, f.Value)
		}
	}
	return out
}

// Get returns a GET request for path with an encoded query.
func Get(path string, query url.Values, auth string) Request {
	return Request{Method: http.MethodGet, Path: path, Query: query.Encode(), Auth: auth}
}

// PostJSON returns a POST of a JSON body (sent verbatim).
func PostJSON(path string, body string, auth string) Request {
	return Request{Method: http.MethodPost, Path: path, Body: []byte(body), ContentType: "application/json", Auth: auth}
}

// keyUse is the Authorization a request spends a key's window under, as
// Bearer <key> however it is written (the scheme's case, whitespace, a
// header name in another case): what the target counts. "" when it is no
// single bearer token.
func (r Request) keyUse() string {
	vals := r.Values("Authorization")
	if len(vals) != 1 {
		return r.Auth
	}
	scheme, rest, ok := strings.Cut(strings.Trim(vals[0], " \t"), " ")
	tok := strings.Trim(rest, " \t")
	if !ok || !strings.EqualFold(scheme, "Bearer") || tok == "" || strings.ContainsAny(tok, " \t") {
		return vals[0]
	}
	return Bearer(tok)
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
	h := sha256.New()
	h.Write([]byte(r.Auth))
	for _, f := range r.Header {
		fmt.Fprintf(h, "\x00%s: %s", f.Name, f.Value)
	}
	return fmt.Sprintf("%s %s?%s %x %s %q %q %v", r.Method, r.Path, r.Query, h.Sum(nil)[:8], r.ContentType, r.Body, r.Accept, r.Framing)
}

// Defaults of a Client.
const (
	DefaultMaxRetries = 3
	DefaultTimeout    = 30 * time.Second
	DefaultMaxBody    = 4 << 20
	// DefaultKeepInMemory is how many bytes of bodies the client keeps in
	// memory; the bodies beyond go to temporary files until Close.
	DefaultKeepInMemory = 64 << 20
	// DefaultDecodedBudget bounds the decoded documents kept for reuse, in
	// estimated bytes; the least recently used are decoded again when needed.
	DefaultDecodedBudget = 64 << 20
	// DefaultMaxDecode is the largest body decoded as JSON: far more than
	// any answer of this API (a page of 200 long events is about 1 MiB),
	// and a decoded document takes ten to twenty times its body.
	DefaultMaxDecode = 32 << 20
	// maxHeaderBytes bounds the response headers the client reads.
	maxHeaderBytes = 64 << 10
)

// Client sends requests to one target. Set the exported fields before the
// first request; the methods are safe for concurrent use. Close removes
// what it kept on disk.
type Client struct {
	// BaseURL is the target, such as http://127.0.0.1:8080 (no trailing slash needed).
	BaseURL string
	// HTTP sends the requests; nil uses a client of the client's own. Either
	// way redirects are not followed.
	HTTP *http.Client
	// Clock waits for rate windows; nil uses the wall clock.
	Clock Clock
	// Now is the time a key's use is recorded at (RecentUses); nil is the
	// wall clock. A suite on a virtual clock records on the time its waits
	// let pass, so that what it sent leaves a key's window as it waits.
	Now func() time.Time
	// Gate, when set, is called before each exchange and what it returns
	// when the exchange is over: a suite that sends from several
	// goroutines holds an exchange back while one must run alone.
	Gate func(ctx context.Context) (done func())
	// MaxRetries bounds the retries after a 429 (0 uses DefaultMaxRetries).
	MaxRetries int
	// MaxWait bounds one wait for the rate limit; a longer Retry-After is
	// not honoured and the 429 is returned (0 uses two rate windows).
	MaxWait time.Duration
	// Timeout bounds one exchange, from sending to the end of the body (0
	// uses DefaultTimeout).
	Timeout time.Duration
	// MaxBody bounds the bytes read of one body (0 uses DefaultMaxBody); a
	// larger body is an error of the exchange.
	MaxBody int64
	// Flags names, in the errors of a timeout and of a body too large, the
	// settings that change those bounds; nil names the suite's
	// (--request-timeout, --max-body). A program whose user has no such
	// setting (tcmkit record) gives an empty Flags: none is named.
	Flags *Flags
	// KeepInMemory and DecodedBudget bound what the client keeps, and
	// MaxDecode the largest body it decodes (0 uses the defaults above).
	KeepInMemory, DecodedBudget, MaxDecode int64
	// Redact is applied to everything the client writes; nil writes as is.
	Redact func(string) string
	// Log receives the "waiting N s for the rate limit" lines; nil discards them.
	Log io.Writer
	// KeyVar spells an Authorization value for a shell (Bearer
	// $TCM_PRO_KEY), for the curl lines of evidence; "" when it does not
	// know the key (the line then shows it redacted).
	KeyVar func(auth string) string
	// Observe, when set, sees every exchange that gave an answer, once,
	// as it comes (not the answers Cached hands out again): the suite's
	// contract oracle judges each one.
	Observe func(ctx context.Context, resp *Response)
	// Sending, when set, is told of every request as it is sent, with its
	// number: what was sent before an answer came, in the order the target
	// saw it, answered or not yet.
	Sending func(req Request, seq int)
	// Rewrite, when set, may write a request in another form that the
	// standards read as the same request (the explorer's transformations
	// carried on the suite's own requests): it returns the request as
	// written and what it did, "" for nothing. The response keeps the
	// request as asked (everything that reads a request reads it) and
	// the one written (its transcript and curl line show it).
	Rewrite func(ctx context.Context, req Request) (Request, string)

	once   sync.Once
	hc     *http.Client
	bodies *store

	mu      sync.Mutex
	total   int
	current tally                  // the current spec's
	scopes  map[string]*tally      // work done ahead of time, by scope
	uses    map[string][]time.Time // Authorization value → send times, wall clock
	cache   map[string]*cacheEntry
	handed  map[string]string // a feed page's nextCursor → the Authorization it was first handed to
}

type cacheEntry struct {
	once sync.Once
	resp *Response
	err  error
}

func (c *Client) init() {
	c.once.Do(func() {
		if c.HTTP != nil {
			hc := *c.HTTP
			c.hc = &hc
		} else {
			tr := http.DefaultTransport.(*http.Transport).Clone()
			tr.MaxResponseHeaderBytes = maxHeaderBytes
			c.hc = &http.Client{Transport: tr}
		}
		// A conforming answer is never a redirect, and following one would
		// send the key wherever the target says.
		c.hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
		c.bodies = &store{keep: orDefault(c.KeepInMemory, DefaultKeepInMemory), budget: orDefault(c.DecodedBudget, DefaultDecodedBudget), decode: orDefault(c.MaxDecode, DefaultMaxDecode)}
	})
}

func orDefault[T int | int64 | time.Duration](v, def T) T {
	if v > 0 {
		return v
	}
	return def
}

// Close removes the bodies the client kept on disk. Responses it returned
// keep their decoded documents but lose the spilled bodies.
func (c *Client) Close() error {
	c.init()
	return c.bodies.close()
}

func (c *Client) clock() Clock {
	if c.Clock != nil {
		return c.Clock
	}
	return WallClock{}
}

func (c *Client) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

func (c *Client) redact(s string) string {
	if c.Redact == nil {
		return s
	}
	return c.Redact(s)
}

// Send sends the request once and returns whatever the target answered,
// 429 included: the rate-limit specs need to see every answer. An exchange
// that gives no answer to judge (no connection, no complete answer within
// Timeout, a redirect, a body over MaxBody or cut short) is an *Error.
func (c *Client) Send(ctx context.Context, req Request) (*Response, error) {
	c.init()
	wire, form := req, ""
	if c.Rewrite != nil {
		wire, form = c.Rewrite(ctx, req)
	}
	hreq, err := c.httpRequest(ctx, wire)
	if err != nil {
		return nil, &Error{Request: req, Err: err}
	}
	timeout := orDefault(c.Timeout, DefaultTimeout)
	rctx, cancel := context.WithTimeoutCause(ctx, timeout, errTimeout)
	defer cancel()
	hreq = hreq.WithContext(rctx)
	if c.Gate != nil {
		defer c.Gate(ctx)()
	}
	start := time.Now()
	sent := c.now()
	seq := c.note(ctx, req.keyUse(), req.Path, sent)
	if c.Sending != nil {
		c.Sending(req, seq)
	}
	hresp, err := c.roundTrip(hreq, wire.Framing)
	if err != nil {
		err = c.failed(ctx, rctx, req, err, timeout, nil, 0)
		c.record(ctx, wire, nil, time.Since(start), err)
		return nil, err
	}
	defer hresp.Body.Close()
	resp := &Response{Request: req, Status: hresp.StatusCode, Header: hresp.Header, Attempts: 1, Seq: seq, Sent: sent, redact: c.redact, store: c.bodies}
	if form != "" {
		resp.Written, resp.Rewritten = &wire, form
	}
	if loc, ok := redirected(hresp); ok {
		err := &Error{Request: req, Err: &RedirectError{Status: hresp.StatusCode, Location: loc}}
		c.record(ctx, wire, resp, time.Since(start), err)
		return nil, err
	}
	raw, err := c.readBody(hresp)
	if err != nil {
		err = c.failed(ctx, rctx, req, err, timeout, resp, len(raw))
		resp.Body = raw
		c.record(ctx, wire, resp, time.Since(start), err)
		return nil, err
	}
	c.bodies.put(resp, raw)
	c.noteCursor(req, resp.Status, raw)
	c.record(ctx, wire, resp, time.Since(start), nil)
	if c.Observe != nil {
		c.Observe(ctx, resp)
	}
	return resp, nil
}

// httpRequest is the request net/http sends (its context is set later).
func (c *Client) httpRequest(ctx context.Context, req Request) (*http.Request, error) {
	target, err := url.Parse(strings.TrimSuffix(c.BaseURL, "/") + req.Path)
	if err != nil {
		return nil, err
	}
	target.RawQuery = req.Query
	var body io.Reader
	if req.Body != nil {
		body = bytes.NewReader(req.Body)
	}
	hreq, err := http.NewRequestWithContext(ctx, req.Method, target.String(), body)
	if err != nil {
		return nil, err
	}
	if req.Auth != "" {
		hreq.Header.Set("Authorization", req.Auth)
	}
	if req.Body != nil && req.ContentType != "" {
		hreq.Header.Set("Content-Type", req.ContentType)
	}
	if a := req.accept(); a != "" {
		hreq.Header.Set("Accept", a)
	}
	for _, f := range req.Header {
		// as given: a name may repeat, and its case is kept
		hreq.Header[f.Name] = append(hreq.Header[f.Name], f.Value)
	}
	frame(hreq, req.Framing)
	return hreq, nil
}

// readBody reads a body whole, at most MaxBody bytes of it.
func (c *Client) readBody(hresp *http.Response) ([]byte, error) {
	limit := orDefault(c.MaxBody, DefaultMaxBody)
	if hresp.ContentLength > limit {
		return nil, &BodyTooLargeError{Limit: limit, Declared: hresp.ContentLength}
	}
	var buf bytes.Buffer
	if hresp.ContentLength > 0 {
		buf.Grow(int(hresp.ContentLength))
	}
	n, err := io.Copy(&buf, io.LimitReader(hresp.Body, limit+1))
	switch {
	case n > limit:
		return nil, &BodyTooLargeError{Limit: limit}
	case err != nil:
		return buf.Bytes(), err
	}
	return buf.Bytes(), nil
}

// Do sends the request and, on 429, waits what Retry-After says and sends
// it again, at most MaxRetries times. It returns the last response. A 429
// whose Retry-After is missing, unreadable or longer than MaxWait is
// returned at once, with a Note that says why it was not retried.
func (c *Client) Do(ctx context.Context, req Request) (*Response, error) {
	retries := orDefault(c.MaxRetries, DefaultMaxRetries)
	maxWait := orDefault(c.MaxWait, 2*schemas.RateWindow)
	honoured := false // a Retry-After was waited for, whole
	for attempt := 1; ; attempt++ {
		resp, err := c.Send(ctx, req)
		if err != nil {
			return nil, err
		}
		resp.Attempts = attempt
		if resp.Status != http.StatusTooManyRequests {
			return resp, nil
		}
		if attempt > retries {
			resp.Note = fmt.Sprintf("not retried: still 429 after %d attempts", attempt)
			return resp, nil
		}
		v := resp.Header.Get("Retry-After")
		wait, err := ParseRetryAfter(v, ServerTime(resp.Header, time.Now()))
		reason := "Retry-After " + strconv.Quote(v)
		switch {
		case err != nil:
			// Waiting for an answer that does not say how long would be a
			// guess; the Retry-After rule is broken, and the spec says so.
			resp.Note = fmt.Sprintf("not retried: %v (rule: a 429 carries Retry-After, delta-seconds or an HTTP-date)", err)
		case attempt > 1 && wait < schemas.RateWindow:
			// Waiting what it said did not help: a whole window does.
			wait, reason = schemas.RateWindow, reason+", which proved too short"
		}
		if err == nil && honoured && (attempt > 2 || wait > maxWait) {
			// It said when it would release, was given that (and a whole
			// window more, when the longest wait allows it), and did not:
			// no wait will help, and every request of the key would now
			// fail for the same reason.
			return nil, &Error{Request: req, Err: &NotReleasedError{RetryAfter: v, Attempts: attempt}}
		}
		if resp.Note == "" && wait > maxWait {
			resp.Note = fmt.Sprintf("not retried: %s asks for %s, more than the longest wait allowed (--max-wait=%s)", reason, Human(wait), maxWait)
		}
		if resp.Note != "" {
			c.logf(ctx, "%s: 429 %s\n", req, resp.Note)
			return resp, nil
		}
		honoured = true
		c.logf(ctx, "waiting %s for the rate limit on %s (%s)%s\n", Seconds(wait), req, reason, Note(c.clock()))
		if err := Countdown(ctx, c.clock(), wait, c.countdownLog()); err != nil {
			return nil, &Error{Request: req, Err: fmt.Errorf("waiting for the rate limit: %w", err)}
		}
	}
}

// countdownLog is where a wait says how long is left: the log, redacted.
func (c *Client) countdownLog() io.Writer {
	if c.Log == nil {
		return nil
	}
	return writerFunc(func(p []byte) (int, error) {
		_, err := io.WriteString(c.Log, c.redact(string(p)))
		return len(p), err
	})
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// Seconds prints a wait the way people read it: "3 s", "1.5 s".
func Seconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + " s"
}

// Cached returns the response to an equal request sent earlier by any spec,
// or sends it now (with Do). Fetch once, check many: specs that judge the
// same exchange from different angles share it, and none depends on another
// having run first. An exchange that failed is kept as well (every spec that
// needs it fails alike, and a hostile target is not asked again), unless the
// caller's context ended before it finished.
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
		if fresh && ctx.Err() != nil {
			c.mu.Lock()
			delete(c.cache, k)
			c.mu.Unlock()
		}
		if !fresh {
			block := c.redact(fmt.Sprintf("=== %s\n# the failed exchange of an earlier spec, not sent again: %v\n\n", req, e.err))
			c.mu.Lock()
			c.recorder(ctx).script.WriteString(block)
			c.mu.Unlock()
		}
		return nil, e.err
	}
	if fresh {
		return e.resp, nil
	}
	reused := e.resp.reuse()
	block := c.redact(c.block(reused.AsWritten(), reused, 0, nil))
	c.mu.Lock()
	t := c.recorder(ctx)
	t.script.WriteString(block)
	t.saw(reused)
	c.mu.Unlock()
	return reused, nil
}

// note counts one request and remembers when its key was used; it
// returns the request's number in the run.
func (c *Client) note(ctx context.Context, auth, path string, at time.Time) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.total++
	c.recorder(ctx).n++
	if auth == "" {
		return c.total
	}
	if c.uses == nil {
		c.uses = map[string][]time.Time{}
	}
	c.uses[auth] = append(c.uses[auth], at)
	c.uses[auth+"\x00"+path] = append(c.uses[auth+"\x00"+path], at)
	return c.total
}

// RecentUses returns when the key was sent within the last window, oldest
// first, by this client's wall clock.
func (c *Client) RecentUses(key string, window time.Duration) []time.Time {
	return c.recent(Bearer(key), window)
}

// RecentUsesOf is RecentUses for the requests of one path (one
// operation): whether the operations share a limit is open.
func (c *Client) RecentUsesOf(key, path string, window time.Duration) []time.Time {
	return c.recent(Bearer(key)+"\x00"+path, window)
}

func (c *Client) recent(name string, window time.Duration) []time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	cut := c.now().Add(-window)
	all := c.uses[name]
	i, _ := slices.BinarySearchFunc(all, cut, func(t, cut time.Time) int { return t.Compare(cut) })
	return slices.Clone(all[i:])
}

// Forget drops what the client remembers of a key's use, after the target's
// clock was moved past a whole window.
func (c *Client) Forget(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for name := range c.uses {
		if name == Bearer(key) || strings.HasPrefix(name, Bearer(key)+"\x00") {
			delete(c.uses, name)
		}
	}
}

// Total is the number of requests sent so far.
func (c *Client) Total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.total
}

// Flags are the settings of a program that change the client's bounds.
type Flags struct {
	Timeout string // such as "--request-timeout"; "": none
	MaxBody string // such as "--max-body"; "": none
}

// suiteFlags are the conformance suite's.
var suiteFlags = Flags{Timeout: "--request-timeout", MaxBody: "--max-body"}

func (c *Client) flags() Flags {
	if c.Flags == nil {
		return suiteFlags
	}
	return *c.Flags
}

// redirected reports a redirect and its Location ("(none)" when absent).
// 304 Not Modified is no redirect, but no answer of this API either: it is
// judged like any other status.
func redirected(hresp *http.Response) (string, bool) {
	if hresp.StatusCode < 300 || hresp.StatusCode > 399 || hresp.StatusCode == http.StatusNotModified {
		return "", false
	}
	loc := hresp.Header.Get("Location")
	if loc == "" {
		loc = "(no Location header)"
	}
	return loc, true
}

// failed explains why an exchange gave no answer: the request timeout, the
// caller's context, or the transport's error.
func (c *Client) failed(ctx, rctx context.Context, req Request, err error, timeout time.Duration, resp *Response, got int) error {
	var tl *BodyTooLargeError
	switch {
	case errors.As(err, &tl):
		tl.Status, tl.Flag = resp.Status, c.flags().MaxBody
		return &Error{Request: req, Err: tl}
	case ctx.Err() != nil:
		return &Error{Request: req, Err: fmt.Errorf("the run stopped waiting for the answer: %w", context.Cause(ctx))}
	case errors.Is(context.Cause(rctx), errTimeout):
		return &Error{Request: req, Err: &TimeoutError{Timeout: timeout, Status: statusOf(resp), Received: got, Flag: c.flags().Timeout}}
	case resp != nil:
		return &Error{Request: req, Err: &CutError{Status: resp.Status, Received: got, Declared: resp.Header.Get("Content-Length"), Err: err}}
	}
	return &Error{Request: req, Err: err}
}

func statusOf(resp *Response) int {
	if resp == nil {
		return 0
	}
	return resp.Status
}
