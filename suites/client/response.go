package client

import (
	"fmt"
	"net/http"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/schemas/jsondoc"
)

// Response is a finished exchange: the body is read once, whole (at most
// the client's MaxBody).
type Response struct {
	Request Request
	Status  int
	Header  http.Header
	// Body is the body when it is kept in memory, as it usually is; the
	// client moves large ones to disk when its memory budget is spent, and
	// leaves Body nil. Bytes reads it either way.
	Body []byte
	// Attempts is how many times the request was sent (more than one after 429s).
	Attempts int
	// Reused is set on a response handed out again by Cached.
	Reused bool
	// Seq is the request's number in the run (its first attempt's is
	// smaller), and Sent when it was sent by the client's Now: the order
	// and the times the contract oracle reads exchanges in.
	Seq  int
	Sent time.Time
	// Note says what the client did not do with this answer and why, such
	// as a 429 it did not retry; "" when nothing.
	Note string
	// Written is the request as it was written, when Client.Rewrite wrote
	// it in another form than Request (nil otherwise), and Rewritten says
	// how: the form a statement of the standards reads as the same request.
	Written   *Request
	Rewritten string

	redact  func(string) string // the client's, for Excerpt
	store   *store              // nil for a Response made by hand
	spilled *spill              // the body, when on disk

	// read is shared by a response and its reuses: the body is decoded,
	// and validated against a resource, once (decoded again only when the
	// client dropped the document to stay within its budget).
	read *reading
}

// AsWritten is the request as it went to the target: Written when the
// client wrote it in another form, else Request.
func (r *Response) AsWritten() Request {
	if r.Written != nil {
		return *r.Written
	}
	return r.Request
}

// reading is what was learnt from a body.
type reading struct {
	mu      sync.Mutex
	decoded bool
	doc     any
	err     error
	cost    int64 // estimated bytes of doc
	used    int64 // when last used, by the store's tick
	valid   map[schemas.Resource]error
}

func (r *Response) reading() *reading {
	if r.read == nil {
		r.read = &reading{}
	}
	return r.read
}

// reuse is a copy of r handed out again.
func (r *Response) reuse() *Response {
	return &Response{Request: r.Request, Status: r.Status, Header: r.Header, Body: r.Body, Attempts: r.Attempts,
		Reused: true, Seq: r.Seq, Sent: r.Sent, Note: r.Note, redact: r.redact, store: r.store, spilled: r.spilled, read: r.reading()}
}

// Bytes is the body, from memory or from disk.
func (r *Response) Bytes() ([]byte, error) {
	if r.spilled != nil {
		return r.spilled.read(-1)
	}
	return r.Body, nil
}

// Size is the body's length in bytes.
func (r *Response) Size() int {
	if r.spilled != nil {
		return r.spilled.size
	}
	return len(r.Body)
}

// head is the first n bytes of the body (all of it when n < 0).
func (r *Response) head(n int) []byte {
	if r.spilled != nil {
		b, err := r.spilled.read(n)
		if err != nil {
			return []byte("(the body is no longer kept: " + err.Error() + ")")
		}
		return b
	}
	if n >= 0 && n < len(r.Body) {
		return r.Body[:n]
	}
	return r.Body
}

// JSON decodes the body the way schemas.Validate expects it; decoded once
// while the client keeps the document.
func (r *Response) JSON() (any, error) {
	rd := r.reading()
	rd.mu.Lock()
	if rd.decoded {
		doc, err := rd.doc, rd.err
		rd.mu.Unlock()
		r.store.touch(rd)
		return doc, err
	}
	var raw []byte
	var err error
	if most := r.store.decodeLimit(); int64(r.Size()) > most {
		// A decoded document takes ten to twenty times its body: past
		// this a body is not decoded, so that memory stays a small
		// multiple of the largest body read.
		err = &TooLargeToDecodeError{Size: int64(r.Size()), Limit: most}
	} else {
		raw, err = r.Bytes()
	}
	switch {
	case err != nil:
		rd.doc, rd.err = nil, err
	case !utf8.Valid(raw):
		rd.doc, rd.err = nil, fmt.Errorf("the body is not UTF-8: invalid bytes at offset %d", invalidAt(raw))
	default:
		rd.doc, rd.err = jsondoc.Decode(raw)
	}
	rd.decoded, rd.cost = true, estimate(rd.doc)
	doc, err := rd.doc, rd.err
	rd.mu.Unlock()
	r.store.keepDoc(rd)
	return doc, err
}

// Validate validates the body against a resource, once per resource: nil,
// a *schemas.Error, or the error of a body that is not JSON. A large
// document is validated piece by piece, and at most MaxViolations are kept;
// every value quoted is redacted before it is cut.
func (r *Response) Validate(res schemas.Resource) error {
	rd := r.reading()
	rd.mu.Lock()
	verr, ok := rd.valid[res]
	rd.mu.Unlock()
	if ok {
		return verr
	}
	doc, err := r.JSON()
	if err != nil {
		return err
	}
	verr = validateBounded(res, doc, r.redact)
	rd.mu.Lock()
	defer rd.mu.Unlock()
	if rd.valid == nil {
		rd.valid = map[schemas.Resource]error{}
	}
	rd.valid[res] = verr
	return verr
}

// String names the exchange: request, status and the client's note.
func (r *Response) String() string {
	s := fmt.Sprintf("%s → %d", r.Request, r.Status)
	if r.Note != "" {
		s += " (" + r.Note + ")"
	}
	return s
}

// MaxExcerpt bounds the body shown in messages and transcripts.
const MaxExcerpt = 600

// excerptMargin is read past MaxExcerpt, so that a key that begins before
// the cut is whole when it is redacted.
const excerptMargin = 512

// Excerpt is the start of the body, for messages: keys are redacted
// before it is cut, so no part of one survives the cut.
func (r *Response) Excerpt() string {
	head := r.head(MaxExcerpt + excerptMargin)
	s := string(head)
	if r.redact != nil {
		s = r.redact(s)
	}
	return excerpt(s, r.Size(), len(head) < r.Size())
}

// excerpt is the start of a (redacted) text, and the whole's size when it
// was cut (or only its head was read).
func excerpt(s string, size int, partial bool) string {
	cut := jsondoc.Excerpt(s, MaxExcerpt)
	if len(s) > MaxExcerpt || partial {
		cut += fmt.Sprintf(" (%d bytes)", size)
	}
	return cut
}

// invalidAt is the offset of the first byte that is not UTF-8.
func invalidAt(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return len(b)
}

// TooLargeToDecodeError is a body the client read but does not decode.
type TooLargeToDecodeError struct{ Size, Limit int64 }

func (e *TooLargeToDecodeError) Error() string {
	return fmt.Sprintf("the body (%s) is larger than the suite decodes (%s; bounded memory): no answer of this API comes near it", Bytes(e.Size), Bytes(e.Limit))
}
