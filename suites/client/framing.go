package client

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
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

// roundTrip sends a request: through net/http, or for HTTP/1.0 on a
// connection of its own, to the same origin (the key goes nowhere else),
// bounded by the request's context (the client's Timeout).
func (c *Client) roundTrip(hreq *http.Request, f Framing) (*http.Response, error) {
	if !f.HTTP10 {
		return c.hc.Do(hreq)
	}
	return sendHTTP10(hreq)
}

// sendHTTP10 writes the request with an HTTP/1.0 request line on a new
// connection and reads one answer; the connection closes with the body.
func sendHTTP10(hreq *http.Request) (*http.Response, error) {
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
		conn, err = (&tls.Dialer{NetDialer: &d, Config: &tls.Config{ServerName: u.Hostname()}}).DialContext(ctx, "tcp", addr)
	case "http":
		conn, err = d.DialContext(ctx, "tcp", addr)
	default:
		return nil, fmt.Errorf("HTTP/1.0 over %q: only http and https", u.Scheme)
	}
	if err != nil {
		return nil, err
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	resp, err := exchange10(conn, hreq)
	if err != nil {
		stop()
		conn.Close()
		return nil, err
	}
	resp.Body = &connBody{ReadCloser: resp.Body, conn: conn, stop: stop}
	return resp, nil
}

// exchange10 writes the request and reads the answer's head.
func exchange10(conn net.Conn, hreq *http.Request) (*http.Response, error) {
	var body []byte
	if hreq.Body != nil {
		b, err := io.ReadAll(hreq.Body)
		if err != nil {
			return nil, err
		}
		body = b
	}
	w := bufio.NewWriter(conn)
	fmt.Fprintf(w, "%s %s HTTP/1.0\r\nHost: %s\r\n", hreq.Method, hreq.URL.RequestURI(), hreq.URL.Host)
	if err := hreq.Header.Write(w); err != nil {
		return nil, err
	}
	if hreq.Body != nil {
		fmt.Fprintf(w, "Content-Length: %d\r\n", len(body))
	}
	w.WriteString("\r\n")
	w.Write(body)
	if err := w.Flush(); err != nil {
		return nil, err
	}
	return http.ReadResponse(bufio.NewReaderSize(conn, maxHeaderBytes), hreq)
}

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
