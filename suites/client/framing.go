package client

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"slices"
	"strings"
)

// frame sets what net/http writes of a framing: a chunked body and an
// absolute-form request-target. HTTP/1.0 net/http cannot write: roundTrip
// sends it itself.
func frame(hreq *http.Request, f Framing) {
	if f.Chunked && hreq.Body != nil {
		hreq.ContentLength = -1
		hreq.TransferEncoding = []string{"chunked"}
	}
	if f.Absolute {
		// url.URL.RequestURI writes an opaque "//host/path" as
		// scheme://host/path: the absolute-form, to the same origin
		hreq.URL.Opaque = "//" + hreq.URL.Host + hreq.URL.EscapedPath()
	}
}

// roundTrip sends a request: through net/http, or on a connection of
// its own when net/http cannot write it (HTTP/1.0; a field value with
// whitespace around it, which net/http trims), to the same origin (the
// key goes nowhere else), bounded by the request's context (the client's
// Timeout).
func (c *Client) roundTrip(hreq *http.Request, f Framing) (*http.Response, error) {
	if !f.HTTP10 && !paddedValue(hreq.Header) {
		return c.hc.Do(hreq)
	}
	var tc *tls.Config
	if tr, ok := c.hc.Transport.(*http.Transport); ok && tr.TLSClientConfig != nil {
		tc = tr.TLSClientConfig.Clone() // the run's own TLS settings (a CA of its own)
	}
	return sendRaw(hreq, f, tc)
}

// paddedValue reports a header value with whitespace around it.
func paddedValue(h http.Header) bool {
	for _, vs := range h {
		for _, v := range vs {
			if strings.Trim(v, " \t") != v {
				return true
			}
		}
	}
	return false
}

// sendRaw writes the request itself on a new connection and reads one
// answer; the connection closes with the body.
func sendRaw(hreq *http.Request, f Framing, tc *tls.Config) (*http.Response, error) {
	ctx := hreq.Context()
	u := hreq.URL
	addr := u.Host
	if u.Port() == "" {
		port := "80"
		if u.Scheme == "https" {
			port = "443"
		}
		addr = net.JoinHostPort(u.Hostname(), port)
	}
	var d net.Dialer
	var conn net.Conn
	var err error
	switch u.Scheme {
	case "https":
		if tc == nil {
			tc = &tls.Config{}
		}
		if tc.ServerName == "" {
			tc.ServerName = u.Hostname()
		}
		conn, err = (&tls.Dialer{NetDialer: &d, Config: tc}).DialContext(ctx, "tcp", addr)
	case "http":
		conn, err = d.DialContext(ctx, "tcp", addr)
	default:
		return nil, fmt.Errorf("a raw request over %q: only http and https", u.Scheme)
	}
	if err != nil {
		return nil, err
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	resp, err := exchangeRaw(conn, hreq, f)
	if err != nil {
		stop()
		conn.Close()
		return nil, err
	}
	resp.Body = &connBody{ReadCloser: resp.Body, conn: conn, stop: stop}
	return resp, nil
}

// exchangeRaw writes the request, its header lines as given (name case
// and whitespace kept), and reads the answer's head.
func exchangeRaw(conn net.Conn, hreq *http.Request, f Framing) (*http.Response, error) {
	var body []byte
	if hreq.Body != nil {
		b, err := io.ReadAll(hreq.Body)
		if err != nil {
			return nil, err
		}
		body = b
	}
	proto := "HTTP/1.1"
	if f.HTTP10 {
		proto = "HTTP/1.0"
	}
	w := bufio.NewWriter(conn)
	fmt.Fprintf(w, "%s %s %s\r\nHost: %s\r\n", hreq.Method, hreq.URL.RequestURI(), proto, hreq.URL.Host)
	for _, name := range slices.Sorted(maps.Keys(hreq.Header)) {
		for _, v := range hreq.Header[name] {
			if strings.ContainsAny(name+v, "\r\n") {
				return nil, fmt.Errorf("a header line with a line break")
			}
			fmt.Fprintf(w, "%s: %s\r\n", name, v)
		}
	}
	chunked := f.Chunked && !f.HTTP10 && hreq.Body != nil
	switch {
	case chunked:
		w.WriteString("Transfer-Encoding: chunked\r\n")
	case hreq.Body != nil:
		fmt.Fprintf(w, "Content-Length: %d\r\n", len(body))
	}
	if !f.HTTP10 {
		w.WriteString("Connection: close\r\n")
	}
	w.WriteString("\r\n")
	if chunked && len(body) > 0 {
		fmt.Fprintf(w, "%x\r\n%s\r\n", len(body), body)
	}
	if chunked {
		w.WriteString("0\r\n\r\n")
	} else {
		w.Write(body)
	}
	if err := w.Flush(); err != nil {
		return nil, err
	}
	resp, err := http.ReadResponse(bufio.NewReaderSize(conn, maxHeaderBytes), hreq)
	if err == nil && f.HTTP10 && slices.Contains(resp.TransferEncoding, "chunked") {
		// RFC 9112 §6.1: no Transfer-Encoding in an answer to a 1.0
		// request. A 1.0 recipient reads to the close: the chunks' framing
		// is its body, and the answer is judged by what it reads.
		resp.Body = &asChunked{r: resp.Body}
		resp.Header.Set("Transfer-Encoding", "chunked")
	}
	return resp, err
}

// asChunked gives back a decoded chunked body with its framing, as a
// recipient that does not know the coding reads it.
type asChunked struct {
	r    io.ReadCloser
	buf  []byte
	done bool
}

func (c *asChunked) Read(p []byte) (int, error) {
	for len(c.buf) == 0 {
		if c.done {
			return 0, io.EOF
		}
		chunk := make([]byte, 4096)
		n, err := c.r.Read(chunk)
		if n > 0 {
			c.buf = fmt.Appendf(nil, "%x\r\n%s\r\n", n, chunk[:n])
		}
		if err == io.EOF {
			c.buf, c.done = append(c.buf, "0\r\n\r\n"...), true
		} else if err != nil {
			return 0, err
		}
	}
	n := copy(p, c.buf)
	c.buf = c.buf[n:]
	return n, nil
}

func (c *asChunked) Close() error { return c.r.Close() }

// connBody closes the connection with the body.
type connBody struct {
	io.ReadCloser
	conn net.Conn
	stop func() bool
}

func (b *connBody) Close() error {
	b.stop()
	b.ReadCloser.Close()
	return b.conn.Close()
}

// framingNote is the transcript's line for a framing ("" for none).
func framingNote(f Framing) string {
	if s := f.String(); s != "" {
		return "# sent with " + s + "\n"
	}
	return ""
}

// curlFraming is what curl needs to send the same framing.
func curlFraming(f Framing, target string) string {
	var out []string
	if f.HTTP10 {
		out = append(out, "--http1.0")
	}
	if f.Chunked {
		out = append(out, "-H 'Transfer-Encoding: chunked'")
	}
	if f.Absolute {
		out = append(out, "--request-target "+shellQuote(target))
	}
	return strings.Join(out, " ")
}
