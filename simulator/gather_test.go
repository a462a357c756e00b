package simulator

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/tcmkit/tcmkit/schemas"
)

// A realtime tracked-videos answer sent over a Listener's connection (its
// pieces gathered into one writev) is byte for byte the answer copied into
// one body, with its Content-Length, and the connection serves the next
// requests (feed pages, another set) in step.
func TestGatheredVideosAnswerIsTheAnswer(t *testing.T) {
	s := newServer(t, Config{Seed: 1, Channels: 6, History: 30 * 24 * time.Hour})
	s.realtimeVideos = true // the answer built in pieces on a manual clock
	key := s.Seeded().Pro
	page := decodePage(t, s.serve(t, feedReq(key, "limit=200")))
	var ids []string
	for _, e := range page.Events {
		if e.Video != nil && len(ids) < schemas.MaxVideoIDs-2 {
			ids = append(ids, e.Video.PlatformVideoID)
		}
	}
	if len(ids) < 10 {
		t.Fatalf("%d video ids in the first page, want 10 or more", len(ids))
	}
	ids = append(ids, "not-a-video", ids[0])
	body, _ := json.Marshal(map[string][]string{"videoIds": ids})

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := s.HTTPServer()
	go func() { _ = hs.Serve(Listener(ln)) }()
	t.Cleanup(func() { _ = hs.Close() })
	base := "http://" + ln.Addr().String()
	client := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 1}} // one connection, reused
	defer client.CloseIdleConnections()
	do := func(method, target string, body []byte) (*http.Response, []byte) {
		t.Helper()
		r, _ := http.NewRequest(method, base+target, bytes.NewReader(body))
		r.Header.Set("Authorization", "Bearer "+key)
		r.Header.Set("Content-Type", "application/json")
		res, err := client.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		got, err := io.ReadAll(res.Body)
		if err != nil {
			t.Fatal(err)
		}
		return res, got
	}
	for round := range 3 { // entries built, then cached
		res, got := do(http.MethodPost, schemas.PathVideos, body)
		want := s.serve(t, videosReq(key, string(body)))
		if res.StatusCode != http.StatusOK || want.status != http.StatusOK {
			t.Fatalf("round %d: status %d over the connection, %d in-process", round, res.StatusCode, want.status)
		}
		if !bytes.Equal(got, want.body) {
			t.Fatalf("round %d: %d bytes over the connection, %d in-process; they differ from byte %d", round, len(got), len(want.body), firstDiff(got, want.body))
		}
		if cl := res.Header.Get("Content-Length"); cl != strconv.Itoa(len(got)) || len(res.TransferEncoding) > 0 {
			t.Errorf("round %d: Content-Length %q, Transfer-Encoding %v for %d bytes", round, cl, res.TransferEncoding, len(got))
		}
		// A feed page, a body larger than net/http's buffers: gathered with
		// its header.
		res, got = do(http.MethodGet, schemas.PathFeed+"?limit=50", nil)
		want = s.serve(t, feedReq(key, "limit=50"))
		if res.StatusCode != http.StatusOK || !bytes.Equal(got, want.body) || len(got) < passWhole {
			t.Fatalf("round %d: the feed after a gathered answer: %d, %d bytes, want %d: %.60s", round, res.StatusCode, len(got), len(want.body), got)
		}
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// What a gathering connection holds back is sent in order, in one go:
// the ends of the answer's pieces as they are, any other write (a buffer
// net/http reuses, whatever its size) as it was when written.
func TestGatherConnCopiesWhatIsNotAPiece(t *testing.T) {
	client, server := net.Pipe()
	defer client.Close()
	gc := &gatherConn{Conn: server}
	piece := bytes.Repeat([]byte("entry."), 3000)
	buf := make([]byte, 16<<10) // larger than net/http's buffers today
	var want bytes.Buffer
	gc.gather([][]byte{piece})
	for i, p := range [][]byte{buf, piece[100:], buf[:10]} {
		if &p[0] == &buf[0] {
			for j := range p {
				p[j] = byte('a' + i)
			}
		}
		want.Write(p)
		if n, err := gc.Write(p); n != len(p) || err != nil {
			t.Fatalf("write %d: %d, %v", i, n, err)
		}
		clear(buf) // reused, as net/http reuses its buffers
	}
	got := make(chan []byte)
	go func() { b, _ := io.ReadAll(client); got <- b }()
	if err := gc.send(); err != nil {
		t.Fatal(err)
	}
	_ = server.Close()
	if b := <-got; !bytes.Equal(b, want.Bytes()) {
		t.Fatalf("sent %d bytes, want %d; they differ from byte %d", len(b), want.Len(), firstDiff(b, want.Bytes()))
	}
	if len(gc.bufs) != 0 || gc.gathering {
		t.Error("the connection still holds writes after send")
	}
}

// A large piece passes net/http's buffers whole: what they held before it
// (the header, a small piece) is flushed first, so that no part of a large
// piece is copied to fill them.
func TestLargePiecesAreNotCopied(t *testing.T) {
	client, server := net.Pipe()
	defer client.Close()
	gc := &gatherConn{Conn: server}
	big := bytes.Repeat([]byte("entry."), 3000)
	parts := [][]byte{[]byte(`{"videos":[`), big, big[1:], []byte(`],"missingVideoIds":[]}`)}
	held := make(chan int, 1)
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := 0
		for _, p := range parts {
			n += len(p)
		}
		w.Header().Set("Content-Length", strconv.Itoa(n))
		gc.gather(parts)
		writeGathered(w, gc, parts)
		held <- cap(gc.own)
	})}
	go func() { _ = hs.Serve(&oneConnListener{c: gc}) }()
	defer hs.Close()
	go func() { _, _ = client.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n")) }()
	res, err := http.ReadResponse(bufio.NewReader(client), nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(io.LimitReader(res.Body, res.ContentLength))
	if err != nil || !bytes.Equal(got, bytes.Join(parts, nil)) {
		t.Fatalf("the answer differs (%v): %d bytes", err, len(got))
	}
	if n := <-held; n >= 2<<10 {
		t.Errorf("the connection copied %d bytes of writes: a large piece was cut to fill net/http's buffers", n)
	}
}

// oneConnListener hands out one connection, then waits until closed.
type oneConnListener struct {
	c    net.Conn
	once sync.Once
	done chan struct{}
}

func (l *oneConnListener) Accept() (net.Conn, error) {
	l.once.Do(func() { l.done = make(chan struct{}) })
	if c := l.c; c != nil {
		l.c = nil
		return c, nil
	}
	<-l.done
	return nil, net.ErrClosed
}

func (l *oneConnListener) Close() error {
	l.once.Do(func() { l.done = make(chan struct{}) })
	select {
	case <-l.done:
	default:
		close(l.done)
	}
	return nil
}

func (l *oneConnListener) Addr() net.Addr { return &net.TCPAddr{} }

// The tap hands the handler the body it kept for the observers, without a
// copy, only when it kept all of it, read without error, and none of it
// was read yet; it counts what the handler reads either way.
func TestTapHandsOnTheWholeBody(t *testing.T) {
	body := []byte(`{"videoIds":["a"]}`)
	tap := &bodyTap{ReadCloser: io.NopCloser(bytes.NewReader(nil)), kept: body, unread: body}
	if got, ok := tap.whole(); !ok || &got[0] != &body[0] || tap.n != int64(len(body)) {
		t.Errorf("whole: %q %v, n %d", got, ok, tap.n)
	}
	if _, ok := tap.whole(); ok {
		t.Error("the body handed on twice")
	}
	partial := &bodyTap{ReadCloser: io.NopCloser(bytes.NewReader(nil)), kept: body, unread: body, err: io.ErrUnexpectedEOF}
	if _, ok := partial.whole(); ok {
		t.Error("a body whose read failed handed on as whole")
	}
	read := &bodyTap{ReadCloser: io.NopCloser(bytes.NewReader([]byte("rest"))), kept: body, unread: body}
	p := make([]byte, 4)
	if n, _ := read.Read(p); n != 4 {
		t.Fatalf("read %d", n)
	}
	if _, ok := read.whole(); ok {
		t.Error("a body partly read handed on as whole")
	}
	rest, _ := io.ReadAll(read)
	if string(p)+string(rest) != string(body)+"rest" || read.n != int64(len(body)+4) {
		t.Errorf("read %q, counted %d", string(p)+string(rest), read.n)
	}
}
