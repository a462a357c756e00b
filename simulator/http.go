package simulator

import (
	"fmt"
	"log/slog"
	"net/http"
	"path"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/tcmkit/tcmkit/schemas"
)

// Operation names one operation of the API, as middleware, fault
// injection and the logs name it.
type Operation string

// The operations.
const (
	OpFeed   Operation = "feed"
	OpVideos Operation = "videos"
	OpHealth Operation = "health"
)

// Middleware wraps the handler of one operation (Config.Middleware). It is
// called once per operation when the server is built, so state it keeps in
// its closure belongs to one server and one operation. It sees requests
// before the server authenticates them; ParseFeedQuery, ParseBearer and
// ParseVideosRequest read a request as the server will.
type Middleware func(op Operation, next http.Handler) http.Handler

// routes builds the handler. Every answer, 404 and 405 included, is JSON;
// the method-less patterns give 405 (with Allow) for a known path, "/"
// gives 404 for everything else.
func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	api := []struct {
		method, path string
		op           Operation
		h            http.HandlerFunc
	}{
		{http.MethodGet, schemas.PathFeed, OpFeed, s.feed},
		{http.MethodPost, schemas.PathVideos, OpVideos, s.videos},
		{http.MethodPost, schemas.PathHealth, OpHealth, s.health},
	}
	for _, a := range api {
		mux.Handle(a.method+" "+a.path, s.operation(a.op, a.h))
		mux.Handle(a.path, methodNotAllowed(a.method))
	}
	if !s.cfg.NoControl {
		s.controlRoutes(mux)
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		WriteError(w, http.StatusNotFound, CodeNotFound, "no such path; the API serves "+schemas.PathFeed+", "+schemas.PathVideos+" and "+schemas.PathHealth, nil)
	})
	return s.guard(mux)
}

// methodNotAllowed answers a known path asked with the wrong method.
func methodNotAllowed(allow ...string) http.Handler {
	allowed := strings.Join(allow, ", ")
	if strings.Contains(allowed, http.MethodGet) {
		allowed += ", " + http.MethodHead
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", allowed)
		WriteError(w, http.StatusMethodNotAllowed, CodeMethodNotAllowed, "this path accepts "+allowed, nil)
	})
}

// guard wraps everything: JSON Content-Type by default, no redirects for
// unclean paths (ServeMux would answer them with HTML), CORS for the API,
// the journal and the observers, and a recovered panic becomes a 500
// ErrorBody and an error in the log.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		w := &trackingWriter{ResponseWriter: rw, status: http.StatusOK}
		control := strings.HasPrefix(r.URL.Path, ControlPrefix)
		rec := &w.rec
		if !control {
			s.begin(rec, r)
			// Observers read feed pages (cursors, events); a tracked-videos
			// answer is large and read by none: not copied for them.
			w.keep = rec.observe && rec.e.Operation == OpFeed
		}
		if s.log.Enabled(r.Context(), slog.LevelDebug) {
			start := time.Now()
			defer func() {
				s.log.Debug("request", s.requestAttrs(r), "status", w.status, "took", time.Since(start))
			}()
		}
		defer func() {
			v := recover()
			if v != nil && v != http.ErrAbortHandler { // a dropped connection is on purpose
				s.log.Error("panic serving request", s.requestAttrs(r), "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
				if !w.wrote {
					WriteError(w, http.StatusInternalServerError, CodeInternal, "the simulator failed while serving this request; the failure is logged", nil)
				}
			}
			if rec.on {
				if v == http.ErrAbortHandler {
					w.status = 0 // no answer
				}
				s.end(rec, w, r)
			}
			if v == http.ErrAbortHandler {
				panic(v)
			}
		}()
		w.Header()["Content-Type"] = jsonContentType
		if p := r.URL.Path; p == "" || p[0] != '/' || cleanPath(p) != p {
			WriteError(w, http.StatusNotFound, CodeNotFound, "no such path (paths must be clean: no //, . or ..)", nil)
			return
		}
		if !control && s.cors.apply(w, r) {
			return
		}
		next.ServeHTTP(w, r)
	})
}

// cleanPath is path.Clean that keeps a trailing slash, as ServeMux does.
func cleanPath(p string) string {
	np := path.Clean(p)
	if p[len(p)-1] == '/' && np != "/" {
		np += "/"
	}
	return np
}

// trackingWriter remembers whether the header went out, so a panic after
// it does not write a second one, and the status, for the log. Unwrap lets
// http.ResponseController reach the connection (for dropped-connection
// faults).
type trackingWriter struct {
	http.ResponseWriter
	wrote   bool
	status  int
	errCode string // the ErrorBody's error, noted by WriteError
	n       int64  // body bytes written
	keep    bool   // keep the body for observers
	kept    []byte
	fault   int    // the injected fault that answered, if any
	rec     record // the journal's record of an API request
}

func (w *trackingWriter) WriteHeader(code int) {
	if !w.wrote {
		w.status = code
	}
	w.wrote = true
	w.ResponseWriter.WriteHeader(code)
}

func (w *trackingWriter) Write(b []byte) (int, error) {
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

func (w *trackingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// writeKept answers 200 with a body that no one will change (a kept
// answer): observers get the bytes themselves, not a copy.
func writeKept(w http.ResponseWriter, body []byte) {
	if t, ok := w.(*trackingWriter); ok && t.keep && t.kept == nil {
		n := min(len(body), maxObservedBody)
		t.kept, t.keep = body[:n:n], false
	}
	writeRaw(w, http.StatusOK, body)
}

// requestAttrs describe a request for the log: never its Authorization,
// and a key that a careless client put in the path or the query redacted.
func (s *Server) requestAttrs(r *http.Request) slog.Attr {
	p, q, _ := s.journalURL(r.URL.Path, r.URL.RawQuery)
	return slog.Group("request", "method", r.Method, "path", p, "query", q)
}
