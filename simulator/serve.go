package simulator

// serve.go is the path of one request, top to bottom:
//
//	serveRequest (the server's http.Handler)
//	  1. a call is made: the one value of the request (journal record,
//	     key, operation, account, status), passed explicitly from here on
//	  2. guard: clean paths only
//	  3. begin: the journal's record (API requests; not the control API's)
//	  4. route: apiRoutes (api.go) by path; the control API's own table
//	     and guard (control_routes.go) under ControlPrefix; 404 otherwise
//	  5. CORS (cors.go), API requests only
//	  6. the per-operation wrapper (serveOperation): injected faults, then
//	     Config.Layers, then the operation's handler
//	  7. the handler returns an answer; writeAnswer writes it (the one
//	     writer of every answer, success or error)
//	  8. end: the record completed and journaled, then the observers (the
//	     client judge among them)
//
// Where a new step goes:
//   - on every API request, whatever its path (a byte budget, say): in
//     serveRequest, between begin and the route;
//   - a step that changes or replaces the answer of an operation (a named
//     fault, a conforming draw, a fuzz schedule): a Layer (layer.go) in
//     Config.Layers, which buildOperation wraps around the route's
//     handler; it sees the request and the handler's answer as a value;
//   - a step that answers instead of the operation before anything else
//     sees the request (as an injected fault does): in serveOperation;
//   - a step that reads the finished exchange: an Observer
//     (Config.Observers), called from end.

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"path"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// call is one request while it is served: created once in serveRequest and
// passed to every step. It is also the writer the answer goes out
// through (meter), which counts what is written.
type call struct {
	meter
	r        *http.Request // the request as it arrived
	route    *apiRoute     // nil: not a path of the API
	rec      record        // the journal's record (rec.on: there is a journal or an observer)
	fault    int           // the injected fault that answered, if any
	breaks   string        // the requirement the answer breaks on purpose (Answer.Breaks)
	gather   *gatherConn   // the connection, when it gathers writes (Listener)
	injected *answer       // an injected fault's answer, for the named faults (apiRoute.faulted)
	// knownBody: the body is a plain list of the world's own video ids,
	// which hides no key (keysSeen does not search it).
	knownBody bool
}

// gatherOf is the connection of w, when w is a call's writer on a
// connection that gathers writes; nil otherwise.
func gatherOf(w http.ResponseWriter) *gatherConn {
	if c, ok := w.(*call); ok {
		return c.gather
	}
	return nil
}

// operation is the call's operation, "" for another path.
func (c *call) operation() Operation {
	if c.route == nil {
		return ""
	}
	return c.route.op
}

// knownKey is the key begin hashed, for authenticate, when r is still the
// request as it arrived (a layer may have changed it).
func (c *call) knownKey(r *http.Request) *hashedKey {
	if r != c.r || !c.rec.e.hasKey {
		return nil
	}
	return &c.rec.key
}

// serveRequest is the server's handler.
func (s *Server) serveRequest(rw http.ResponseWriter, r *http.Request) {
	c := &call{meter: meter{ResponseWriter: rw, ctx: r.Context(), status: http.StatusOK, date: s.dateNow}, r: r}
	c.gather, _ = r.Context().Value(gatherKey{}).(*gatherConn)
	control := strings.HasPrefix(r.URL.Path, ControlPrefix) || r.URL.Path == controlRoot
	if !control {
		c.route = s.api[r.URL.Path]
		s.begin(c, r)
		if c.rec.observe {
			s.observing.Add(1)
			c.rec.seq = s.order.arrive(&c.meter)
		}
		// Observers read feed pages (cursors, events); a tracked-videos
		// answer is large and read by none: not copied for them.
		c.keep = c.rec.observe && c.operation() == OpFeed
	}
	if s.log.Enabled(r.Context(), slog.LevelDebug) {
		start := time.Now()
		defer func() {
			s.log.Debug("request", s.requestAttrs(r), "status", c.status, "took", time.Since(start))
		}()
	}
	defer s.finish(c, r)
	c.Header()["Content-Type"] = jsonContentType
	if p := r.URL.Path; p == "" || p[0] != '/' || cleanPath(p) != p {
		s.write(c, c, errorAnswer(http.StatusNotFound, CodeNotFound, "no such path (paths must be clean: no //, . or ..)", nil))
		return
	}
	if control && !s.cfg.NoControl {
		s.controlMux.ServeHTTP(c, r)
		return
	}
	if !control {
		if a, answered := s.cors.apply(c.Header(), r); answered {
			s.write(c, c, a)
			return
		}
	}
	rt := c.route
	switch {
	case rt == nil || strings.Contains(r.URL.RawPath, "%2") && hasEncodedSlash(r.URL.RawPath):
		s.write(c, c, errorAnswer(http.StatusNotFound, CodeNotFound, "no such path; the API serves "+s.apiPaths, nil))
	case r.Method != rt.method && !(rt.method == http.MethodGet && r.Method == http.MethodHead):
		s.write(c, c, methodNotAllowed(rt.method))
	default:
		s.serveOperation(c, r)
	}
}

// hasEncodedSlash: a path with %2F is not a path of the API (as ServeMux
// matches paths segment by segment), though its decoded form is.
func hasEncodedSlash(raw string) bool {
	return strings.Contains(raw, "%2F") || strings.Contains(raw, "%2f")
}

// methodNotAllowed answers a known path asked with the wrong method.
func methodNotAllowed(allow ...string) answer {
	allowed := strings.Join(allow, ", ")
	if strings.Contains(allowed, http.MethodGet) {
		allowed += ", " + http.MethodHead
	}
	return errorAnswer(http.StatusMethodNotAllowed, CodeMethodNotAllowed, "this path accepts "+allowed, nil).with("Allow", allowed)
}

// serveOperation is the per-operation wrapper: an injected fault may
// answer instead of the operation; otherwise the operation's handler,
// under Config.Layers when there are some, answers.
func (s *Server) serveOperation(c *call, r *http.Request) {
	if s.faults.active() {
		if spec, ok := s.faults.Pick(c.route.op); ok {
			if a, answered := s.inject(c, r, spec); answered {
				if c.route.faulted != nil && !a.Drop {
					c.injected = &a
					a = c.route.faulted(r.WithContext(context.WithValue(r.Context(), callKey{}, c)))
				}
				s.write(c, c, a)
				return
			}
		}
	}
	s.write(c, c, s.answerOperation(c, r))
}

// answerOperation is the operation's answer: its handler's, or the
// outermost layer's, which finds the call in the request's context.
func (s *Server) answerOperation(c *call, r *http.Request) answer {
	rt := c.route
	if rt.layered == nil {
		return rt.h(s, c, r)
	}
	return rt.layered(r.WithContext(context.WithValue(r.Context(), callKey{}, c)))
}

// callKey is the context key of the call, for the handler under layers.
type callKey struct{}

// buildOperation builds a route's handler once, when the server is built:
// Config.Layers (first innermost) wrap the handler, as an Answerer that
// finds the call in the request's context.
func (s *Server) buildOperation(rt *apiRoute) {
	if len(s.cfg.Layers) == 0 {
		return
	}
	h := rt.h
	next := Answerer(func(r *http.Request) answer {
		a := h(s, r.Context().Value(callKey{}).(*call), r)
		a.flatten()    // a layer reads Body
		a.pooled = nil // a layer may keep the body: it goes back to no pool
		return a
	})
	for _, l := range s.cfg.Layers {
		next = l.Wrap(s, rt.op, next)
	}
	rt.layered = next
	// The named faults again, around an injected fault's answer. A
	// layer's state is made once per layer (mutants.Layer), not per Wrap:
	// both chains share it.
	injected := Answerer(func(r *http.Request) answer {
		a := *r.Context().Value(callKey{}).(*call).injected
		a.flatten()
		a.pooled = nil
		return a
	})
	faulted := false
	for _, l := range s.cfg.Layers {
		if l.Fault {
			injected, faulted = l.Wrap(s, rt.op, injected), true
		}
	}
	if faulted {
		rt.faulted = injected
	}
}

// inject applies an injected fault. It returns false if the request
// should still be served normally (a delay alone).
func (s *Server) inject(c *call, r *http.Request, spec FaultSpec) (answer, bool) {
	s.log.Info("injecting fault", "fault", spec.ID, s.requestAttrs(r))
	c.fault = spec.ID
	if spec.DelayMs > 0 {
		s.sleep(r.Context(), time.Duration(spec.DelayMs)*time.Millisecond)
	}
	switch {
	case spec.Drop:
		return answer{Drop: true}, true
	case spec.Malformed && spec.Status == 0:
		// The operation's own answer, cut in half.
		a := s.answerOperation(c, r)
		a.flatten()
		a.Body = a.Body[:len(a.Body)/2]
		return a, true
	case spec.Status == http.StatusTooManyRequests && !spec.Malformed:
		// The rate limit's own 429 (its code, message and Retry-After
		// form): a client that branches on it meets what a limit says.
		lim := s.st.Load().feed
		if c.route.op == OpVideos {
			lim = s.st.Load().videos
		}
		ra := int64(spec.retryAfter())
		return rateLimited(ra, lim.refusal(ra)), true
	case spec.Status != 0:
		a := errorAnswer(spec.Status, CodeInjected, fmt.Sprintf("fault %d injected through the control API: status %d", spec.ID, spec.Status), nil)
		a.Cause = "" // the journal names an injected fault by Exchange.Fault
		if spec.Status == http.StatusTooManyRequests || spec.Status == http.StatusServiceUnavailable {
			a = a.with("Retry-After", strconv.Itoa(spec.retryAfter()))
		}
		if spec.Malformed {
			a.Body = a.Body[:len(a.Body)/2]
		}
		return a, true
	}
	return answer{}, false
}

// write writes a to w on behalf of call c: when w is the call's own
// writer, the call notes the error's cause and keeps a shared body (or the
// body to observe) for the observers without copying it.
func (s *Server) write(c *call, w http.ResponseWriter, a answer) {
	if w == http.ResponseWriter(c) {
		if a.Cause != "" {
			c.errCode = a.Cause
		}
		c.breaks = a.Breaks
		if c.keep && c.kept == nil {
			a.flatten() // observers read the body
			// Bytes no one changes: kept as they are, not copied.
			kept := a.Observed
			if kept == nil && a.shared {
				kept = a.Body
			}
			if kept != nil {
				n := min(len(kept), maxObservedBody)
				c.kept, c.keep = kept[:n:n], false
			}
		}
	}
	// Date is the simulator's own time, the virtual clock: a recorder
	// (tcmkit record) reads the recording's time from it.
	w.Header()["Date"] = s.dateNow()
	writeAnswer(w, a)
}

// dateNow is the Date header's value now: the world's clock.
func (s *Server) dateNow() []string { return s.date.of(s.clock.Now()) }

// dateHeader is the Date header's value for the last second asked, formatted
// once a second rather than once an answer.
type dateHeader struct{ last atomic.Pointer[formattedDate] }

type formattedDate struct {
	sec int64
	v   []string // shared by the answers of that second: no one changes it
}

func (d *dateHeader) of(t time.Time) []string {
	sec := t.Unix()
	if f := d.last.Load(); f != nil && f.sec == sec {
		return f.v
	}
	f := &formattedDate{sec: sec, v: []string{t.UTC().Format(http.TimeFormat)}}
	d.last.Store(f)
	return f.v
}

// writeAnswer is the one writer of answers.
func writeAnswer(w http.ResponseWriter, a answer) {
	if a.stream != nil {
		a.stream(w)
		return
	}
	gc := gatherOf(w)
	if a.Cut || a.Chunked || gc == nil {
		a.flatten() // pieces go out gathered, or as one body
	}
	if a.Drop {
		if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
			_ = conn.Close()
		}
		// No answer: the journal says so (status 0). HTTP/2 or a
		// recorder: the stream is aborted.
		panic(http.ErrAbortHandler)
	}
	h := w.Header()
	for k, v := range a.Header {
		h[k] = v
	}
	switch a.ContentType {
	case "":
		h["Content-Type"] = jsonContentType
	case noBody:
		delete(h, "Content-Type")
	default:
		h.Set("Content-Type", a.ContentType)
	}
	if a.Chunked {
		delete(h, "Content-Length")
	} else if a.ContentType != noBody {
		n := len(a.Body)
		for _, p := range a.parts {
			n += len(p)
		}
		h["Content-Length"] = []string{strconv.Itoa(n)}
	}
	w.WriteHeader(a.Status)
	switch {
	case a.Cut:
		_, _ = w.Write(a.Body[:min(max(a.CutAt, 0), len(a.Body))])
		_ = http.NewResponseController(w).Flush()
		panic(http.ErrAbortHandler) // the connection closes: the answer stops short
	case a.Chunked:
		half := len(a.Body) / 2
		_, _ = w.Write(a.Body[:half])
		_ = http.NewResponseController(w).Flush()
		_, _ = w.Write(a.Body[half:])
	case a.parts != nil:
		writeGathered(w, gc, a.parts)
	case gc != nil && len(a.Body) >= passWhole:
		// The header and a large body in one writev, not two writes.
		gc.one[0] = a.Body
		writeGathered(w, gc, gc.one[:])
	case len(a.Body) > 0:
		_, _ = w.Write(a.Body)
	}
	if a.pooled != nil && a.parts == nil {
		*a.pooled = a.Body[:0]
	}
	if a.pooled != nil && cap(*a.pooled) <= maxPooledAnswer {
		answerBuffers.Put(a.pooled)
	}
	if a.pooledParts != nil {
		clear(*a.pooledParts) // no piece kept alive by the pool
		*a.pooledParts = (*a.pooledParts)[:0]
		partsPool.Put(a.pooledParts)
	}
}

// finish ends every request: a recovered panic becomes a 500 ErrorBody
// and an error in the log, and the record is completed and observed.
func (s *Server) finish(c *call, r *http.Request) {
	v := recover()
	if v != nil && v != http.ErrAbortHandler { // a dropped connection is on purpose
		s.log.Error("panic serving request", s.requestAttrs(r), "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
		if !c.wrote {
			s.write(c, c, errorAnswer(http.StatusInternalServerError, CodeInternal, "the simulator failed while serving this request; the failure is logged", nil))
		}
	}
	if c.rec.on {
		if v == http.ErrAbortHandler {
			c.status = 0 // no answer
		}
		s.end(c, r)
		if c.rec.observe {
			s.order.done(c.rec.seq)
			s.observing.Add(-1)
		}
	}
	if v == http.ErrAbortHandler {
		panic(v)
	}
}

// cleanPath is path.Clean that keeps a trailing slash, as ServeMux does.
func cleanPath(p string) string {
	np := path.Clean(p)
	if p[len(p)-1] == '/' && np != "/" {
		np += "/"
	}
	return np
}

// meter is the writer of a call: it remembers whether the header went out,
// so a panic after it does not write a second one, the status and the
// bytes, for the journal, and keeps the body for observers. Unwrap lets
// http.ResponseController reach the connection (for dropped-connection
// faults).
type meter struct {
	http.ResponseWriter
	ctx      context.Context // the request's: done when the client is gone
	date     func() []string // the Date header, for an answer that set none (the control API's)
	gone     bool            // the client was gone when the answer began
	began    time.Time       // when the answer began (its header went out)
	answered atomic.Bool     // began, for observeOrder (another goroutine reads it)
	wrote    bool
	status   int
	errCode  string // the ErrorBody's error
	n        int64  // body bytes written
	keep     bool   // keep the body for observers
	kept     []byte
}

// begin notes, once, whether the client was gone when the answer began;
// later (the answer sent, the connection closed) it no longer says
// anything about waiting.
func (w *meter) begin() {
	if !w.wrote {
		w.gone = w.ctx != nil && w.ctx.Err() != nil
		w.began = time.Now()
		w.answered.Store(true)
		// net/http would date an answer that has no Date (the control
		// API's) by this machine's clock: one clock only.
		if h := w.Header(); w.date != nil && h["Date"] == nil {
			h["Date"] = w.date()
		}
	}
}

func (w *meter) WriteHeader(code int) {
	w.begin()
	if !w.wrote {
		w.status = code
	}
	w.wrote = true
	w.ResponseWriter.WriteHeader(code)
}

func (w *meter) Write(b []byte) (int, error) {
	w.begin()
	w.wrote = true
	w.n += int64(len(b))
	if w.keep && len(w.kept) < maxObservedBody {
		if w.kept == nil {
			// The body at once, when its length is known: no copy to grow.
			n := len(b)
			if cl := w.Header()["Content-Length"]; len(cl) == 1 {
				if v, err := strconv.Atoi(cl[0]); err == nil && v > n {
					n = v
				}
			}
			w.kept = make([]byte, 0, min(n, maxObservedBody))
		}
		w.kept = append(w.kept, b[:min(len(b), maxObservedBody-len(w.kept))]...)
	}
	return w.ResponseWriter.Write(b)
}

func (w *meter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// record is the journal's view of one request while it is served.
type record struct {
	e        journaled
	key      hashedKey // when e.hasKey: never journaled, only handed to authenticate
	start    time.Time
	rateTime time.Time // for observers
	authErr  string    // for observers
	seq      uint64    // arrival order, for observeOrder
	tap      *bodyTap
	on       bool
	observe  bool
}

// begin starts the record of an API request, unless there is neither a
// journal nor an observer.
func (s *Server) begin(c *call, r *http.Request) {
	if s.journal == nil && len(s.observers) == 0 {
		return
	}
	rec := &c.rec
	rec.on, rec.observe = true, len(s.observers) > 0
	e := &rec.e
	s.arrive(e, &rec.start)
	e.Method = r.Method
	e.Operation = c.operation()
	// The header map is read by its canonical keys: no canonicalizing on
	// every request.
	if ct := r.Header["Content-Type"]; len(ct) > 0 {
		e.ContentType = s.contentTypes(ct)
	}
	auth := r.Header["Authorization"]
	if key, err := ParseBearer(auth, s.cfg.KeyPrefix); err == nil {
		h := hashKey(key)
		rec.key, e.hasKey = hashedKey{auth[0], h}, true
		copy(e.keyID[:], h[:8])
		e.Account = s.st.Load().keys.accountOf(h)
	} else if rec.observe {
		rec.authErr = err.Code
	}
	e.Path, e.Query, e.KeyInURL = s.journalURL(r.URL.Path, r.URL.RawQuery, s.issuedFeedQuery(c, r, e.Account))
	if rec.observe {
		rec.rateTime = s.clock.RateNow()
	}
	if r.Body != nil && r.Body != http.NoBody {
		tap := &bodyTap{ReadCloser: r.Body}
		if rec.observe {
			// Observers see the body as sent, whether or not the handler
			// reads it (a 401 or a 403 is answered before): read now, at
			// most MaxBodyBytes+1, and handed on to the handler.
			tap.kept, tap.err = io.ReadAll(io.LimitReader(r.Body, MaxBodyBytes+1))
			tap.unread, tap.read = tap.kept, int64(len(tap.kept))
		}
		rec.tap = tap
		r.Body = tap
	}
}

// end completes the record once the answer is written, journals it and
// hands the exchange to the observers.
func (s *Server) end(c *call, r *http.Request) {
	rec := &c.rec
	e := &rec.e
	e.Status, e.Error, e.ResponseBytes = c.status, c.errCode, c.n
	if ra := c.Header()["Retry-After"]; len(ra) > 0 {
		e.RetryAfter = ra[0]
	}
	if rec.tap != nil {
		e.RequestBytes = rec.tap.read
	}
	e.Micros = time.Since(rec.start).Microseconds()
	if s.journal != nil {
		s.journal.add(e)
	}
	if !rec.observe {
		return
	}
	x := &Exchange{Entry: e.view(s.cfg.KeyPrefix), RequestHeader: withoutSecrets(r.Header), ResponseHeader: c.Header(), ResponseBody: c.kept,
		RateTime: rec.rateTime, AuthProblem: rec.authErr, Fault: c.fault, Breaks: c.breaks, ClientGone: c.gone || (!c.wrote && r.Context().Err() != nil), Conn: r.RemoteAddr, redact: s.redactKeys}
	if c.gather != nil {
		x.Conn = "conn " + strconv.FormatUint(c.gather.id, 10)
	}
	if c.wrote {
		x.Answered = e.Time.Add(c.began.Sub(rec.start)) // on x.Time's clock
	}
	if rec.tap != nil {
		x.RequestBody = rec.tap.kept
	}
	x.KeysSeen = s.keysSeen(r, x.RequestBody, rec.authErr != "", !e.KeyInURL, c.knownBody)
	s.order.wait(rec.seq)
	for _, o := range s.observers {
		s.callObserver(o, x)
	}
}

// arrive gives a request its id and its arrival times at once, under one
// lock: ids follow arrival (Entry.Time) however many requests arrive
// together, with or without a journal (observers tell requests apart by
// id).
func (s *Server) arrive(e *journaled, start *time.Time) {
	s.arrival.Lock()
	defer s.arrival.Unlock()
	*start = time.Now()
	e.Time = start.UTC()
	e.VirtualTime = s.clock.Now().UnixMilli()
	if s.journal != nil {
		e.ID, e.gen = s.journal.nextID()
	} else {
		e.ID = s.exchanges.Add(1)
	}
}

// contentTypes is what the journal keeps of the Content-Type lines: each
// as sent (redacted before it is cut), one a line, at most maxContentTypes
// bytes in all: two lines are two, as a judge sees them.
func (s *Server) contentTypes(lines []string) string {
	if len(lines) == 1 {
		return excerpt(s.redactHeader(lines[0]))
	}
	var b strings.Builder
	for i, v := range lines {
		v = excerpt(s.redactHeader(v))
		if i > 0 && b.Len()+1+len(v) > maxContentTypes {
			b.WriteString("\n…")
			break
		}
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(v)
	}
	return b.String()
}

// maxContentTypes bounds the Content-Type lines an entry keeps.
const maxContentTypes = 256

// withoutSecrets is a request's header for observers: the same values,
// without Authorization and Cookie.
func withoutSecrets(h http.Header) http.Header {
	out := make(http.Header, len(h))
	for k, v := range h {
		if k != "Authorization" && k != "Cookie" {
			out[k] = v
		}
	}
	return out
}

func (s *Server) callObserver(o Observer, x *Exchange) {
	defer func() {
		if v := recover(); v != nil {
			s.log.Error("an observer panicked", "panic", fmt.Sprint(v), "request", x.ID)
		}
	}()
	o(x)
}

// bodyTap counts what the server reads of a request body; kept is what
// observers see of it, read before the handler: the handler reads unread
// (the part of kept it has not read), then the body.
type bodyTap struct {
	io.ReadCloser
	n      int64 // what the handler read
	read   int64 // what the server read off the connection (the read ahead too): Entry.RequestBytes
	kept   []byte
	unread []byte
	err    error // of the read of kept: the handler meets it again
}

func (b *bodyTap) Read(p []byte) (int, error) {
	if len(b.unread) > 0 {
		n := copy(p, b.unread)
		b.unread = b.unread[n:]
		b.n += int64(n)
		return n, nil
	}
	n, err := b.ReadCloser.Read(p)
	b.n += int64(n)
	b.read += int64(n)
	return n, err
}

// whole is the body read at once when the tap kept all of it (at most
// MaxBodyBytes, none of it read yet): kept itself, no copy.
func (b *bodyTap) whole() ([]byte, bool) {
	if b.kept == nil || b.err != nil || len(b.kept) > MaxBodyBytes || len(b.unread) != len(b.kept) {
		return nil, false
	}
	b.unread = nil
	b.n += int64(len(b.kept))
	return b.kept, true
}

// requestAttrs describe a request for the log: never its Authorization,
// and a key that a careless client put in the path or the query redacted.
func (s *Server) requestAttrs(r *http.Request) slog.Attr {
	p, q, _ := s.journalURL(r.URL.Path, r.URL.RawQuery, false)
	return slog.Group("request", "method", r.Method, "path", p, "query", q)
}
