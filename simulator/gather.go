package simulator

import (
	"context"
	"io"
	"net"
	"net/http"
	"sync/atomic"
)

// A realtime tracked-videos answer is 20 cached VideoEntry documents,
// about 300 KB drawn from a working set far larger than the CPU's caches.
// Copied into one buffer and written, its bytes are read from memory
// twice; written one piece at a time, each write is a system call, a TCP
// segment and a wake-up of the client, dearer than the copy (issue 27:
// 22 writes an answer instead of 2 cost a third more CPU). Over a
// connection of Listener the pieces go out in one writev that the kernel
// copies from where they are: writeAnswer gathers what net/http writes of
// the answer (gather) and sends it at once (send).

// Listener wraps ln, a plain TCP listener that HTTPServer serves, so that
// tracked-videos answers go out in one writev of their pieces, and a large
// body (a feed page) in one writev with its header (under TLS they are
// copied into one buffer, as over any other connection).
func Listener(ln net.Listener) net.Listener { return gatherListener{ln} }

type gatherListener struct{ net.Listener }

func (l gatherListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &gatherConn{Conn: c, id: connCount.Add(1)}, nil
}

// connCount numbers the connections accepted (Exchange.Conn).
var connCount atomic.Uint64

// gatherConn is a connection that can hold back what is written to it
// and send it in one writev. Only the goroutine serving the connection's
// current request writes to it.
type gatherConn struct {
	net.Conn
	id        uint64 // its number, for observers (Exchange.Conn)
	gathering bool
	pieces    [][]byte    // the answer's pieces, which stay as they are until send
	next      int         // the first of pieces that may still be written
	bufs      net.Buffers // what was written while gathering, in order
	own       []byte      // copies of the other writes (net/http's buffers, which it reuses)
	one       [1][]byte   // the pieces of an answer of one body
}

// gatherKey is the context key of a request's gatherConn (HTTPServer's
// ConnContext).
type gatherKey struct{}

func connContext(ctx context.Context, c net.Conn) context.Context {
	if gc, ok := c.(*gatherConn); ok {
		return context.WithValue(ctx, gatherKey{}, gc)
	}
	return ctx
}

// gather holds back what is written from now until send; pieces are the
// answer's, which net/http passes on (the end of one, past what it
// buffered) and which are kept as they are.
func (c *gatherConn) gather(pieces [][]byte) { c.gathering, c.pieces, c.next = true, pieces, 0 }

// send writes what was held back, in one writev.
func (c *gatherConn) send() error {
	c.gathering = false
	if len(c.bufs) == 0 {
		return nil
	}
	bufs := c.bufs // WriteTo consumes its copy
	_, err := bufs.WriteTo(c.Conn)
	clear(c.bufs) // no piece kept alive
	clear(c.one[:])
	c.bufs, c.own, c.pieces = c.bufs[:0], c.own[:0], nil
	return err
}

func (c *gatherConn) Write(p []byte) (int, error) {
	if !c.gathering {
		return c.Conn.Write(p)
	}
	if c.isPiece(p) {
		c.bufs = append(c.bufs, p)
		return len(p), nil
	}
	start := len(c.own)
	c.own = append(c.own, p...) // a grown own leaves earlier pieces where they were
	c.bufs = append(c.bufs, c.own[start:len(c.own):len(c.own)])
	return len(p), nil
}

// isPiece: p is the end of one of the answer's pieces (net/http passes a
// write on, past what it buffered); anything else is copied, whatever the
// size of net/http's buffers.
func (c *gatherConn) isPiece(p []byte) bool {
	if len(p) == 0 {
		return false
	}
	for k := c.next; k < len(c.pieces); k++ {
		q := c.pieces[k]
		if len(p) <= len(q) && &p[len(p)-1] == &q[len(q)-1] {
			c.next = k + 1
			return true
		}
	}
	return false
}

// ReadFrom keeps net/http's sendfile path (response.ReadFrom asks the
// connection for it).
func (c *gatherConn) ReadFrom(r io.Reader) (int64, error) {
	if err := c.send(); err != nil {
		return 0, err
	}
	return io.Copy(c.Conn, r)
}

// CloseWrite keeps net/http's half-close before it closes a connection.
func (c *gatherConn) CloseWrite() error {
	_ = c.send()
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// writeGathered writes the pieces of an answer through w (net/http
// counts them, and writes the header before them) and sends all of it in
// one writev. What net/http buffers (the header, small pieces) is flushed
// before a large piece, so that the large piece passes its buffers whole
// instead of being cut and copied to fill them.
func writeGathered(w http.ResponseWriter, gc *gatherConn, parts [][]byte) {
	gc.gather(parts)
	defer func() { _ = gc.send() }()
	rc := http.NewResponseController(w)
	buffered := true // the header, until the first flush
	for _, p := range parts {
		if len(p) >= passWhole && buffered {
			if rc.Flush() != nil {
				return
			}
			buffered = false
		}
		if _, err := w.Write(p); err != nil {
			return
		}
		buffered = buffered || len(p) < passWhole
	}
	// What net/http still buffers (the last small pieces) goes with them.
	_ = rc.Flush()
}

// passWhole is the size from which a piece passes net/http's buffers
// (2 KB and 4 KB) whole when they are empty.
const passWhole = 4 << 10
