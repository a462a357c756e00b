// Package redact keeps API keys out of everything the suite writes: logs,
// transcripts, failure messages and report files. A key is replaced by its
// redacted form, the key prefix and the last four characters (tcm_…x9Qa),
// which is enough to tell keys apart and useless to an attacker.
//
// Redact where output is written, not where a message is formatted: wrap
// every writer with Writer and pass every finished text through String.
package redact

import (
	"bytes"
	"io"
	"slices"
	"strings"
	"sync"
)

// MinSecret is the length below which a string is not treated as a secret:
// replacing "a" everywhere would garble output and protect nothing.
const MinSecret = 8

// Redactor replaces known secrets with their redacted form. The zero value
// redacts nothing; it is safe for concurrent use.
type Redactor struct {
	mu       sync.RWMutex
	secrets  []string // longest first, so a key containing another is replaced whole
	replacer *strings.Replacer
}

// New returns a Redactor for the given secrets; empty and short ones are ignored.
func New(secrets ...string) *Redactor {
	r := &Redactor{}
	r.Add(secrets...)
	return r
}

// Add registers more secrets, such as keys provisioned during the run.
func (r *Redactor) Add(secrets ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range secrets {
		if len(s) >= MinSecret && !slices.Contains(r.secrets, s) {
			r.secrets = append(r.secrets, s)
		}
	}
	slices.SortStableFunc(r.secrets, func(a, b string) int { return len(b) - len(a) })
	pairs := make([]string, 0, 2*len(r.secrets))
	for _, s := range r.secrets {
		pairs = append(pairs, s, Form(s))
	}
	r.replacer = strings.NewReplacer(pairs...)
}

// String returns s with every secret replaced by its redacted form.
func (r *Redactor) String(s string) string {
	if r == nil {
		return s
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.replacer == nil {
		return s
	}
	return r.replacer.Replace(s)
}

// longest returns the length of the longest secret.
func (r *Redactor) longest() int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if len(r.secrets) == 0 {
		return 0
	}
	return len(r.secrets[0])
}

// heldBack returns how many trailing bytes of b could be the start of a
// secret that the next write completes.
func (r *Redactor) heldBack(b []byte) int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	best := 0
	for _, s := range r.secrets {
		for n := min(len(s)-1, len(b)); n > best; n-- {
			if bytes.HasSuffix(b, []byte(s[:n])) {
				best = n
				break
			}
		}
	}
	return best
}

// Form is the redacted form of one key: everything up to and including the
// first underscore (the key prefix), an ellipsis, and the last four
// characters. A key too short to spare four characters keeps none.
func Form(key string) string {
	prefix := ""
	if i := strings.IndexByte(key, '_'); i >= 0 && i < len(key)-1 {
		prefix = key[:i+1]
	}
	if len(key)-len(prefix) < 3*4 {
		return prefix + "…"
	}
	return prefix + "…" + key[len(key)-4:]
}

// Writer returns a writer that redacts what it passes on to w. A secret split
// across two writes is still caught: the bytes that could begin a secret are
// held back until the next write shows whether they do, or until Flush.
func (r *Redactor) Writer(w io.Writer) *Writer {
	return &Writer{r: r, w: w}
}

// Writer is a redacting io.Writer; see Redactor.Writer.
type Writer struct {
	r       *Redactor
	w       io.Writer
	mu      sync.Mutex
	pending []byte
}

// Write redacts p (together with any held-back bytes) and writes it on.
// It reports len(p) written when the underlying write succeeds.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.pending = append(w.pending, p...)
	if w.r.longest() == 0 {
		return len(p), w.flushLocked()
	}
	// Redact everything, then hold back a tail that may be a secret's start.
	// Redaction first: a whole secret inside pending is never held back.
	out := []byte(w.r.String(string(w.pending)))
	keep := w.r.heldBack(out)
	w.pending = append(w.pending[:0], out[len(out)-keep:]...)
	if _, err := w.w.Write(out[:len(out)-keep]); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes the held-back bytes; call it when no more output will come.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.flushLocked()
}

func (w *Writer) flushLocked() error {
	if len(w.pending) == 0 {
		return nil
	}
	out := w.r.String(string(w.pending))
	w.pending = w.pending[:0]
	_, err := io.WriteString(w.w, out)
	return err
}
