package simulator

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// rawRequest writes raw bytes to addr and returns what comes back until
// the server closes the connection or goes quiet.
func rawRequest(t *testing.T, addr, raw string) string {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(conn, raw); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return "no answer: " + err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	var b strings.Builder
	b.WriteString(resp.Proto + " " + resp.Status + "\n")
	_ = resp.Header.Write(&b)
	b.WriteString("\n")
	b.Write(body)
	return b.String()
}

// TestNetHTTPAnswersBeforeHandler pins the list in HTTPServer's doc: these
// malformed requests are answered by net/http itself (text/plain, never
// reaching the handler), and everything else malformed gets an ErrorBody.
func TestNetHTTPAnswersBeforeHandler(t *testing.T) {
	s := newServer(t, Config{Seed: 1})
	reached := false
	h := s.Handler()
	srv := httptest.NewUnstartedServer(nil)
	srv.Config = s.HTTPServer()
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached = true
		h.ServeHTTP(w, r)
	})
	srv.Start()
	defer srv.Close()
	addr := srv.Listener.Addr().String()
	byNetHTTP := []struct{ name, raw, status string }{
		{"malformed request line", "GARBAGE\r\n\r\n", "400"},
		{"no Host in HTTP/1.1", "GET /api/public-feed HTTP/1.1\r\n\r\n", "400"},
		{"malformed Host", "GET / HTTP/1.1\r\nHost: a b\r\n\r\n", "400"},
		{"invalid header name", "GET / HTTP/1.1\r\nHost: x\r\nBad Name: 1\r\n\r\n", "400"},
		{"invalid header value", "GET / HTTP/1.1\r\nHost: x\r\nX: a\x00b\r\n\r\n", "400"},
		{"two Content-Lengths", "POST /api/public/health HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n{}", "400"},
		{"Content-Length not a number", "POST /api/public/health HTTP/1.1\r\nHost: x\r\nContent-Length: x\r\n\r\n", "400"},
		{"unparsable URI", "GET %zz HTTP/1.1\r\nHost: x\r\n\r\n", "400"},
		{"header too large", "GET / HTTP/1.1\r\nHost: x\r\nX: " + strings.Repeat("a", MaxHeaderBytes+8192) + "\r\n\r\n", "431"},
		{"unknown transfer encoding", "POST /api/public/health HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n", "501"},
		{"HTTP/2.0 request line", "GET / HTTP/2.0\r\nHost: x\r\n\r\n", "505"},
		{"unknown expectation", "POST /api/public/health HTTP/1.1\r\nHost: x\r\nExpect: magic\r\nContent-Length: 2\r\n\r\n{}", "417"},
	}
	for _, tc := range byNetHTTP {
		t.Run("net/http: "+tc.name, func(t *testing.T) {
			reached = false
			got := rawRequest(t, addr, tc.raw)
			if !strings.HasPrefix(got, "HTTP/1.1 "+tc.status) {
				t.Fatalf("want %s from net/http, got %q", tc.status, got)
			}
			if reached {
				t.Errorf("the handler was reached: this one is ours to answer with an ErrorBody")
			}
			if strings.Contains(got, "application/json") {
				t.Errorf("net/http answered JSON? %q", got)
			}
		})
	}
	ours := []struct{ name, raw string }{
		{"OPTIONS *", "OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n"},
		{"CONNECT", "CONNECT 127.0.0.1:1 HTTP/1.1\r\nHost: 127.0.0.1:1\r\n\r\n"},
		{"absolute URI", "GET http://elsewhere.example/api/public-feed HTTP/1.1\r\nHost: x\r\n\r\n"},
		{"unknown method", "BREW /api/public-feed HTTP/1.1\r\nHost: x\r\n\r\n"},
		{"HTTP/1.0 without Host", "GET /nope HTTP/1.0\r\n\r\n"},
		{"unclean path", "GET /api/../api/public-feed HTTP/1.1\r\nHost: x\r\n\r\n"},
		{"semicolon in query", "GET /api/public-feed?limit=1;cursor=x HTTP/1.1\r\nHost: x\r\n\r\n"},
		{"chunked body that breaks off", "POST /api/public/videos HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Type: application/json\r\nAuthorization: Bearer " + s.Seeded().Pro + "\r\n\r\nzz\r\n"},
	}
	for _, tc := range ours {
		t.Run("ours: "+tc.name, func(t *testing.T) {
			got := rawRequest(t, addr, tc.raw)
			if !strings.Contains(got, "Content-Type: application/json") || !strings.Contains(got, `"error":"`) {
				t.Errorf("want an ErrorBody, got %q", got)
			}
		})
	}
}
