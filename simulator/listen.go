package simulator

import (
	"io"
	"log"
	"log/slog"
	"net/http"
	"time"
)

// Timeouts and bounds of HTTPServer.
const (
	// MaxHeaderBytes bounds a request's header (net/http allows 4 KiB
	// more before it answers 431).
	MaxHeaderBytes = 64 << 10
	// ShutdownGrace is how long in-flight requests may take after a
	// shutdown begins; it is longer than the longest injected delay.
	ShutdownGrace = MaxFaultDelay + 5*time.Second
)

// HTTPServer is the http.Server to serve s with, as cmd/simulator does:
// bounded header size and read times, no answer of net/http's own to
// OPTIONS * (the handler answers it with an ErrorBody), and net/http's
// error log through the key redactor at warn level.
//
// # What net/http answers before any handler
//
// Every answer the handler gives is JSON, errors an ErrorBody. A few
// malformed requests never reach it: the Go HTTP server refuses them while
// it reads the request, answers itself with Content-Type text/plain and
// Connection: close, and offers no hook to answer otherwise
// (TestNetHTTPAnswersBeforeHandler pins the list):
//
//   - 400 "Bad Request" (and a reason: "missing required Host header",
//     "malformed Host header", "invalid header name", "invalid header
//     value"): an unparsable request line or URI, an HTTP/1.1 request
//     without Host, a header line that is not a header, a Content-Length
//     that is not a number or two that differ, Content-Length with
//     Transfer-Encoding: chunked; and a plain HTTP request sent to the
//     TLS port (--tls-cert): "client sent an HTTP request to an HTTPS
//     server".
//   - 431 "Request Header Fields Too Large": a header of more than
//     MaxHeaderBytes (plus net/http's 4 KiB of slack).
//   - 501 "Unsupported transfer encoding": a Transfer-Encoding other than
//     chunked (or identity).
//   - 505 "unsupported protocol version": a request line that is not
//     HTTP/1.x (HTTP/2 comes in its own preface, over TLS).
//   - 417 with no body: an Expect header other than 100-continue.
//   - no answer at all: a client that sends its header slower than
//     ReadHeaderTimeout or its body slower than ReadTimeout, a TLS
//     handshake that fails, a connection closed half-way.
//
// That is acceptable: none of these is a request of the contract that was
// answered wrongly; each is a broken HTTP message, refused at the HTTP
// layer with a correct status before the server knows which operation, key
// or body it would be, and nothing of it is echoed back (net/http does not
// quote the offending header or encoding). A client library never sends
// them; only hand-written bytes do.
func (s *Server) HTTPServer() *http.Server {
	return &http.Server{
		Handler:                      s.Handler(),
		ReadHeaderTimeout:            10 * time.Second,
		ReadTimeout:                  time.Minute,
		WriteTimeout:                 ShutdownGrace + 10*time.Second,
		IdleTimeout:                  2 * time.Minute,
		MaxHeaderBytes:               MaxHeaderBytes,
		DisableGeneralOptionsHandler: true,
		ConnContext:                  connContext,
		ErrorLog:                     log.New(&redactingWriter{s: s, w: slog.NewLogLogger(s.log.Handler(), slog.LevelWarn).Writer()}, "", 0),
	}
}

// redactingWriter redacts keys in what net/http logs, where output is
// written rather than where each message is made.
type redactingWriter struct {
	s *Server
	w io.Writer
}

func (r *redactingWriter) Write(p []byte) (int, error) {
	if _, err := r.w.Write([]byte(r.s.redactKeys(string(p)))); err != nil {
		return 0, err
	}
	return len(p), nil
}
