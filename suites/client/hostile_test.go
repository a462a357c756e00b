package client_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/schemas/redact"
	"github.com/tcmkit/tcmkit/suites/client"
)

// A target that redirects elsewhere gets its redirect reported, naming the
// Location, and the other listener never sees a request, let alone a key.
func TestRedirectsAreNotFollowed(t *testing.T) {
	var caught atomic.Int32
	catcher := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { caught.Add(1) }))
	defer catcher.Close()
	for _, code := range []int{301, 302, 303, 307, 308} {
		target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, catcher.URL+r.URL.Path, code)
		}))
		for _, hc := range []*http.Client{nil, {}} { // the client's own, and one given to it
			c := &client.Client{BaseURL: target.URL, HTTP: hc, Redact: redact.New(key).String}
			_, err := c.Send(context.Background(), client.Get("/api/public-feed", nil, client.Bearer(key)))
			var re *client.RedirectError
			if !errors.As(err, &re) || re.Status != code || !strings.Contains(err.Error(), catcher.URL) || !strings.HasPrefix(err.Error(), "GET /api/public-feed: ") {
				t.Errorf("%d: error %v, want a RedirectError naming the request and the Location", code, err)
			}
			if _, script := c.Take(); !strings.Contains(script, "< Location: "+catcher.URL) {
				t.Errorf("the transcript does not show the Location:\n%s", script)
			}
		}
		target.Close()
	}
	if caught.Load() != 0 {
		t.Errorf("the other listener got %d requests", caught.Load())
	}
}

// A body over MaxBody is an error of the exchange, whether Content-Length
// announces it or not, and the client stops reading.
func TestBodyLimit(t *testing.T) {
	var sent atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("announce") != "" {
			w.Header().Set("Content-Length", "2000000000")
		}
		chunk := bytes.Repeat([]byte("x"), 64<<10)
		for range 1 << 14 { // 1 GiB, if anyone read it
			n, err := w.Write(chunk)
			sent.Add(int64(n))
			if err != nil {
				return
			}
		}
	}))
	defer srv.Close()
	c := &client.Client{BaseURL: srv.URL, MaxBody: 1 << 20}
	for _, q := range []string{"", "announce=1"} {
		_, err := c.Send(context.Background(), client.Request{Method: "GET", Path: "/big", Query: q})
		var tl *client.BodyTooLargeError
		if !errors.As(err, &tl) || !strings.Contains(err.Error(), "1 MiB (--max-body)") {
			t.Errorf("%q: error %v, want a BodyTooLargeError", q, err)
		}
	}
	srv.CloseClientConnections()
	if sent.Load() > 64<<20 {
		t.Errorf("the server wrote %d bytes: the client read on", sent.Load())
	}
}

// A target that drips its body, or never answers, is given Timeout, and
// the error names the request and what came.
func TestRequestTimeout(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/silent" {
			<-r.Context().Done()
			return
		}
		w.Write([]byte(`{"events":[`))
		w.(http.Flusher).Flush()
		for {
			select {
			case <-r.Context().Done():
				return
			case <-time.After(20 * time.Millisecond):
				w.Write([]byte(" "))
				w.(http.Flusher).Flush()
			}
		}
	}))
	defer srv.Close()
	c := &client.Client{BaseURL: srv.URL, Timeout: 200 * time.Millisecond}
	for path, want := range map[string]string{
		"/drip":   "GET /drip: no complete answer within 200ms (--request-timeout): status 200 came, then",
		"/silent": "GET /silent: no answer within 200ms (--request-timeout): no response headers came",
	} {
		start := time.Now()
		_, err := c.Send(context.Background(), client.Request{Method: "GET", Path: path})
		var te *client.TimeoutError
		if !errors.As(err, &te) || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: %v, want %q…", path, err, want)
		}
		if took := time.Since(start); took > 5*time.Second {
			t.Errorf("%s took %s", path, took)
		}
	}
}

// A connection cut mid-body is an error that says how much came.
func TestCutMidBody(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			buf := make([]byte, 4096)
			conn.Read(buf)
			fmt.Fprintf(conn, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 5000\r\n\r\n{\"events\":[")
			conn.Close()
		}
	}()
	c := &client.Client{BaseURL: "http://" + ln.Addr().String()}
	_, err = c.Send(context.Background(), client.Request{Method: "GET", Path: "/api/public-feed"})
	var ce *client.CutError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "broke off after 11 B of the 5000") {
		t.Errorf("error %v, want a CutError", err)
	}
}

// Bodies past the memory budget go to disk and still read the same; Close
// removes them. Documents past the decoded budget are decoded again.
func TestBodiesBeyondTheBudgetGoToDisk(t *testing.T) {
	page := `{"events":[],"nextCursor":"` + strings.Repeat("c", 3000) + `"}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(page)) }))
	defer srv.Close()
	c := &client.Client{BaseURL: srv.URL, KeepInMemory: 5000, DecodedBudget: 5000}
	var resps []*client.Response
	for i := range 4 {
		resp, err := c.Send(context.Background(), client.Request{Method: "GET", Path: fmt.Sprint("/p", i)})
		if err != nil {
			t.Fatal(err)
		}
		resps = append(resps, resp)
	}
	if resps[0].Body == nil || resps[3].Body != nil {
		t.Errorf("the first body should stay in memory, the last go to disk")
	}
	for _, resp := range resps {
		raw, err := resp.Bytes()
		if err != nil || string(raw) != page || resp.Size() != len(page) {
			t.Fatalf("Bytes = %d bytes, %v", len(raw), err)
		}
		for range 2 {
			if err := resp.Validate(schemas.FeedPage); err != nil {
				t.Fatal(err)
			}
			if doc, err := resp.JSON(); err != nil || doc == nil {
				t.Fatalf("JSON: %v", err)
			}
		}
		if ex := resp.Excerpt(); !strings.HasPrefix(ex, `{"events":[]`) || !strings.HasSuffix(ex, fmt.Sprintf("(%d bytes)", len(page))) {
			t.Errorf("Excerpt = %q", ex)
		}
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := resps[3].Bytes(); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("after Close a spilled body still reads: %v", err)
	}
}

// TestErrorsNameTheCallersFlags: a timeout names the setting of the
// program that has one (the suite's --request-timeout by default), and
// none for a program that has none.
func TestErrorsNameTheCallersFlags(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	}))
	defer srv.Close()
	for _, tc := range []struct {
		flags *client.Flags
		want  string
	}{{nil, "no answer within 100ms (--request-timeout)"}, {&client.Flags{}, "no answer within 100ms: no response headers came"}} {
		c := &client.Client{BaseURL: srv.URL, Timeout: 100 * time.Millisecond, Flags: tc.flags}
		_, err := c.Send(t.Context(), client.Get("/x", nil, ""))
		c.Close()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("flags %v: %v, want %q", tc.flags, err, tc.want)
		}
	}
}
