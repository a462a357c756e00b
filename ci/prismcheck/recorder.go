package main

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"
)

// upstreamAnswer is what a simulator sent, as the recording proxy saw it.
type upstreamAnswer struct {
	Status      int
	ContentType string
	Body        []byte
}

// recorder is the reverse proxy between Prism and the simulators: it
// forwards each request to its run's simulator and keeps the answer.
type recorder struct {
	mu      sync.Mutex
	targets map[string]string                    // run -> simulator URL
	answers map[string]map[string]upstreamAnswer // run -> seq -> answer
	client  *http.Client
}

func newRecorder() *recorder {
	return &recorder{
		targets: map[string]string{},
		answers: map[string]map[string]upstreamAnswer{},
		client:  &http.Client{Timeout: 60 * time.Second},
	}
}

func (rec *recorder) serve() (string, func(), error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: rec, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(l)
	return "http://" + l.Addr().String(), func() { srv.Close() }, nil
}

func (rec *recorder) register(run, target string) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	rec.targets[run] = target
	rec.answers[run] = map[string]upstreamAnswer{}
}

func (rec *recorder) answer(run, seq string) (upstreamAnswer, bool) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	a, ok := rec.answers[run][seq]
	return a, ok
}

// hopHeaders are not forwarded by a proxy (RFC 9110, section 7.6.1).
var hopHeaders = []string{"Connection", "Keep-Alive", "Proxy-Connection", "Transfer-Encoding", "Te", "Trailer", "Upgrade", "Content-Length"}

func (rec *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	run, seq := r.Header.Get(headerRun), r.Header.Get(headerSeq)
	rec.mu.Lock()
	target, ok := rec.targets[run]
	rec.mu.Unlock()
	if !ok {
		http.Error(w, "prismcheck: unknown run "+run, http.StatusBadGateway)
		return
	}
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	req, err := http.NewRequestWithContext(r.Context(), r.Method, target+r.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	for k, v := range r.Header {
		if !slices.Contains(hopHeaders, http.CanonicalHeaderKey(k)) && k != headerRun && k != headerSeq {
			req.Header[k] = v
		}
	}
	resp, err := rec.client.Do(req)
	if err != nil {
		http.Error(w, "prismcheck: "+err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		http.Error(w, "prismcheck: "+err.Error(), http.StatusBadGateway)
		return
	}
	rec.mu.Lock()
	rec.answers[run][seq] = upstreamAnswer{Status: resp.StatusCode, ContentType: resp.Header.Get("Content-Type"), Body: got}
	rec.mu.Unlock()
	for k, v := range resp.Header {
		if !slices.Contains(hopHeaders, http.CanonicalHeaderKey(k)) {
			w.Header()[k] = v
		}
	}
	w.WriteHeader(resp.StatusCode)
	w.Write(got)
}
