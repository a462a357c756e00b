package client

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// rawTarget answers every request with a small JSON 200 and hands the
// bytes of each request head and body it read to got.
func rawTarget(t *testing.T) (string, <-chan string) {
	t.Helper()
	return answeringTarget(t, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}")
}

// answeringTarget answers every request with the bytes of answer and
// hands the bytes of each request head and body it read to got.
func answeringTarget(t *testing.T, answer string) (string, <-chan string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	got := make(chan string, 8)
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				conn.SetDeadline(time.Now().Add(5 * time.Second))
				// the bytes as they came, and a request read from them
				var raw strings.Builder
				req, err := http.ReadRequest(bufio.NewReader(io.TeeReader(conn, &raw)))
				if err == nil {
					io.ReadAll(req.Body)
				}
				select {
				case got <- raw.String():
				default:
				}
				io.WriteString(conn, answer)
			}()
		}
	}()
	return "http://" + ln.Addr().String(), got
}

// Each framing reaches the target as written: an HTTP/1.0 request line,
// a chunked body, an absolute-form target, header names in the case the
// request gave them and values with the whitespace around them.
func TestFramingIsSentAsAsked(t *testing.T) {
	base, got := rawTarget(t)
	c := &Client{BaseURL: base, Timeout: 5 * time.Second}
	defer c.Close()
	cases := []struct {
		name string
		req  Request
		want []string
	}{
		{"HTTP/1.0", Request{Method: "GET", Path: "/api/public-feed", Query: "limit=1", Framing: Framing{HTTP10: true}, Header: []Field{{"authorization", "Bearer k"}}},
			[]string{"GET /api/public-feed?limit=1 HTTP/1.0\r\n", "\r\nauthorization: Bearer k\r\n"}},
		{"HTTP/1.0 with a body", Request{Method: "POST", Path: "/api/public/videos", Body: []byte(`{"videoIds":["a"]}`), ContentType: "application/json", Framing: Framing{HTTP10: true}},
			[]string{"POST /api/public/videos HTTP/1.0\r\n", "Content-Length: 18\r\n", `{"videoIds":["a"]}`}},
		{"chunked", Request{Method: "POST", Path: "/api/public/videos", Body: []byte(`{"videoIds":["a"]}`), ContentType: "application/json", Framing: Framing{Chunked: true}},
			[]string{"POST /api/public/videos HTTP/1.1\r\n", "Transfer-Encoding: chunked\r\n", `{"videoIds":["a"]}`}},
		{"whitespace around a value, a chunked body on a connection of its own", Request{Method: "POST", Path: "/api/public/health", Body: []byte(`{}`), Header: []Field{{"content-TYPE", " application/json\t"}}, Framing: Framing{Chunked: true}},
			[]string{"POST /api/public/health HTTP/1.1\r\n", "\r\ncontent-TYPE:  application/json\t\r\n", "Transfer-Encoding: chunked\r\n", "2\r\n{}\r\n0\r\n\r\n"}},
		{"absolute-form", Request{Method: "GET", Path: "/api/public-feed", Query: "limit=2", Framing: Framing{Absolute: true}},
			[]string{"GET " + base + "/api/public-feed?limit=2 HTTP/1.1\r\n"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := c.Send(context.Background(), tc.req)
			if err != nil {
				t.Fatal(err)
			}
			if resp.Status != 200 || string(resp.Body) != "{}" {
				t.Errorf("answer %d %q", resp.Status, resp.Body)
			}
			sent := <-got
			for _, w := range tc.want {
				if !strings.Contains(sent, w) {
					t.Errorf("sent %q, want it to hold %q", sent, w)
				}
			}
			if tc.req.Framing.Chunked && strings.Contains(sent, "Content-Length") {
				t.Errorf("a chunked body with a Content-Length: %q", sent)
			}
		})
	}
}

// An HTTP/1.0 exchange is bounded by the client's Timeout.
func TestHTTP10IsBounded(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		conn, err := ln.Accept()
		if err == nil {
			defer conn.Close()
			time.Sleep(3 * time.Second) // never answers in time
		}
	}()
	c := &Client{BaseURL: "http://" + ln.Addr().String(), Timeout: 300 * time.Millisecond}
	defer c.Close()
	start := time.Now()
	_, err = c.Send(context.Background(), Request{Method: "GET", Path: "/", Framing: Framing{HTTP10: true}})
	if err == nil || time.Since(start) > 2*time.Second {
		t.Errorf("err %v after %s, want a timeout within the bound", err, time.Since(start))
	}
}

// A key's window counts its requests however the Authorization is written.
func TestKeyUseCountsEveryFormOfTheKey(t *testing.T) {
	base, got := rawTarget(t)
	c := &Client{BaseURL: base, Timeout: 5 * time.Second}
	defer c.Close()
	for _, r := range []Request{
		{Method: "GET", Path: "/p", Auth: "Bearer tcm_k"},
		{Method: "GET", Path: "/p", Auth: "bearer tcm_k"},
		{Method: "GET", Path: "/p", Header: []Field{{"authorization", " BEARER tcm_k "}}},
		{Method: "GET", Path: "/p", Auth: "Token tcm_k"},
	} {
		if _, err := c.Send(context.Background(), r); err != nil {
			t.Fatal(err)
		}
		<-got
	}
	if n := len(c.RecentUses("tcm_k", time.Minute)); n != 3 {
		t.Errorf("%d uses of the key counted, want 3 (Token is no use of it)", n)
	}
}

// Over TLS, a request written on a connection of its own uses the run's
// TLS settings (here the test server's own CA).
func TestRawRequestOverTLS(t *testing.T) {
	var got string
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Proto + " " + r.Header.Get("Authorization")
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, "{}")
	}))
	defer srv.Close()
	c := &Client{BaseURL: srv.URL, HTTP: srv.Client(), Timeout: 5 * time.Second}
	defer c.Close()
	resp, err := c.Send(context.Background(), Request{Method: "GET", Path: "/", Framing: Framing{HTTP10: true}, Header: []Field{{"Authorization", " Bearer k "}}})
	if err != nil || resp.Status != 200 {
		t.Fatalf("%v %v", resp, err)
	}
	if got != "HTTP/1.0 Bearer k" {
		t.Errorf("the server read %q", got)
	}
}

// An answer to an HTTP/1.0 request in the chunked coding (RFC 9112 §6.1
// forbids it) is read as a 1.0 recipient reads it, framing and all; the
// same answer to an HTTP/1.1 request is its JSON.
func TestChunkedAnswerToHTTP10IsReadAsIs(t *testing.T) {
	target, _ := answeringTarget(t, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n2\r\n{}\r\n0\r\n\r\n")
	c := &Client{BaseURL: target}
	defer c.Close()
	for _, tc := range []struct {
		framing Framing
		body    string
	}{{Framing{HTTP10: true}, "2\r\n{}\r\n0\r\n\r\n"}, {Framing{Absolute: true}, "{}"}} {
		resp, err := c.Send(context.Background(), Request{Method: "GET", Path: "/api/public-feed", Framing: tc.framing})
		if err != nil {
			t.Fatal(err)
		}
		if string(resp.Body) != tc.body {
			t.Errorf("%v: body %q, want %q", tc.framing, resp.Body, tc.body)
		}
	}
}

// An Authorization header line written otherwise (lower-case name,
// whitespace around the value) comes out of the curl line as the key's
// variable, like the contract's form, and never as the key.
func TestCurlNamesTheKeyOfAnyAuthorizationLine(t *testing.T) {
	const key = "tcm_CURLCURLCURLCURLCURL1234"
	c := &Client{BaseURL: "http://127.0.0.1:1", KeyVar: func(auth string) string {
		if scheme, token, ok := strings.Cut(auth, " "); ok && token == key {
			return scheme + " $TCM_PRO_KEY"
		}
		return ""
	}}
	curl := c.Curl(Request{Method: "GET", Path: "/api/public-feed", Header: []Field{{Name: "authorization", Value: "  bearer " + key + " "}}})
	if !strings.Contains(curl, `-H "authorization:   bearer $TCM_PRO_KEY "`) || strings.Contains(curl, key) {
		t.Errorf("curl line: %s", curl)
	}
}
