// Package redact keeps API keys out of everything the suite writes: logs,
// transcripts, failure messages and report files. A key is replaced by its
// redacted form, the key prefix and the last four characters (tcm_…x9Qa),
// which is enough to tell keys apart and useless to an attacker; and any
// fragment of a key's secret part of MinSecret characters or more, such as
// what is left of a key that something cut in two before it was redacted,
// is replaced by an ellipsis. Both are found also where an encoding hides
// them (decode.go): percent-encoding (+ for a space), base64 and
// base64url, HTML character references, JSON \u escapes, an encoding of
// an encoding; the encoded run is replaced whole.
//
// Redact where output is written, not where a message is formatted: wrap
// every writer with Writer and pass every finished text through String.
package redact

import (
	"bytes"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// MinSecret is the length below which a string is not treated as a secret:
// replacing "a" everywhere would garble output and protect nothing. It is
// also the length of the shortest key fragment that is redacted.
const MinSecret = 8

// Fragment replaces a fragment of a key that is not the whole key.
const Fragment = "…"

// Redactor replaces known secrets with their redacted form. The zero value
// redacts nothing; it is safe for concurrent use.
type Redactor struct {
	mu       sync.RWMutex
	secrets  []string // longest first, so a key containing another is replaced whole
	replacer *strings.Replacer
	starts   map[string]bool // every proper prefix of a secret or a fragment
	whole    map[string]bool // every secret and fragment
	lengths  []int           // their distinct lengths
	longest  int
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
	// Whole secrets first: a strings.Replacer tries its patterns in the
	// order given, so a whole key wins over its fragments.
	pairs := make([]string, 0, 2*len(r.secrets))
	for _, s := range r.secrets {
		pairs = append(pairs, s, Form(s))
	}
	var fragments []string
	for _, s := range r.secrets {
		for _, f := range Fragments(s) {
			if !slices.Contains(fragments, f) {
				fragments = append(fragments, f)
				pairs = append(pairs, f, Fragment)
			}
		}
	}
	r.replacer = strings.NewReplacer(pairs...)
	r.starts, r.whole, r.lengths, r.longest = map[string]bool{}, map[string]bool{}, nil, 0
	for _, p := range slices.Concat(r.secrets, fragments) {
		for n := 1; n < len(p); n++ {
			r.starts[p[:n]] = true
		}
		r.whole[p] = true
		if !slices.Contains(r.lengths, len(p)) {
			r.lengths = append(r.lengths, len(p))
		}
		r.longest = max(r.longest, len(p))
	}
}

// Fragments are the pieces of a key that are redacted wherever they stand:
// every run of MinSecret characters of its secret part (what follows the
// key prefix). Any longer piece of the secret part holds one of them.
func Fragments(key string) []string {
	secret := key[len(prefix(key)):]
	var out []string
	for i := 0; i+MinSecret <= len(secret); i++ {
		out = append(out, secret[i:i+MinSecret])
	}
	return out
}

// String returns s with every secret replaced by its redacted form, and
// every fragment of one by Fragment.
func (r *Redactor) String(s string) string {
	if r == nil {
		return s
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.replacer == nil {
		return s
	}
	if strings.Contains(s, `\u`) {
		s = r.escaped(s)
	}
	if MayHideEncoded(s) {
		s, _ = ReplaceEncoded(s, r.holds)
	}
	return r.replacer.Replace(s)
}

// holds says whether a decoded text holds a secret or a fragment of one,
// and what the run it was decoded from becomes. The caller holds r.mu.
func (r *Redactor) holds(decoded string) (string, bool) {
	if r.replacer.Replace(decoded) == decoded {
		return "", false
	}
	for _, s := range r.secrets {
		if strings.Contains(decoded, s) {
			return Form(s), true
		}
	}
	return Fragment, true
}

// escaped redacts the secrets and fragments that a JSON text spells with
// \u escapes, every character or only some (tcm\u005fAb\u0043d...): the
// escapes of characters a key is made of are decoded, the decoded text is
// searched, and what each match spans in s is replaced, by the key's form
// for a whole key and by Fragment otherwise. The caller holds r.mu.
func (r *Redactor) escaped(s string) string {
	dec := make([]byte, 0, len(s))
	from := make([]int, 0, len(s)+1) // offset in s of each byte of dec, then len(s)
	decoded := false
	for i := 0; i < len(s); {
		if c, ok := keyEscape(s[i:]); ok {
			dec, from, decoded = append(dec, c), append(from, i), true
			i += len(`\u0000`)
			continue
		}
		dec, from = append(dec, s[i]), append(from, i)
		i++
	}
	if !decoded {
		return s
	}
	from = append(from, len(s))
	var spans []span
	for p := range r.whole { // secrets and fragments
		for off := 0; ; {
			k := bytes.Index(dec[off:], []byte(p))
			if k < 0 {
				break
			}
			start := off + k
			sp := span{from[start], from[start+len(p)], Fragment}
			if slices.Contains(r.secrets, p) {
				sp.form = Form(p)
			}
			spans, off = append(spans, sp), start+1
		}
	}
	if len(spans) == 0 {
		return s
	}
	return replaceSpans(s, spans)
}

// keyEscape decodes a \u escape at the start of s of a character a key may
// hold: an ASCII letter or digit, or the underscore.
func keyEscape(s string) (byte, bool) {
	if len(s) < 6 || s[0] != '\\' || s[1] != 'u' || s[2] != '0' || s[3] != '0' {
		return 0, false
	}
	v, err := strconv.ParseUint(s[4:6], 16, 8)
	c := byte(v)
	ok := err == nil && ('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_')
	return c, ok
}

// safeCut returns where b may be cut so that what comes before can be
// redacted on its own: no secret or fragment that the next write could
// complete begins before the cut, and none that b holds whole crosses it.
func (r *Redactor) safeCut(b []byte) int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	cut := len(b)
	for n := min(r.longest-1, len(b)); n > 0; n-- {
		if r.starts[string(b[len(b)-n:])] {
			cut = len(b) - n
			break
		}
	}
	if cut == len(b) {
		return cut
	}
	for i := max(0, cut-r.longest+1); i < cut; i++ {
		for _, n := range r.lengths {
			if i+n > cut && i+n <= len(b) && r.whole[string(b[i:i+n])] {
				cut = i // hold the whole occurrence back, and look again before it
				i = max(0, cut-r.longest+1) - 1
				break
			}
		}
	}
	return cut
}

// prefix is the key prefix with its underscore ("tcm_"), or "" when the key
// has none.
func prefix(key string) string {
	if i := strings.IndexByte(key, '_'); i >= 0 && i < len(key)-1 {
		return key[:i+1]
	}
	return ""
}

// Form is the hint of a key, the one form a key takes wherever people read
// it, on the suite's side and the simulator's ("tcm_…x9Qa"): the key's
// prefix up to and including its first underscore, an ellipsis, and the
// last four characters. A prefix longer than 16 characters is not shown (it
// may be part of the secret); a key that cannot spare four characters (the
// part after the prefix shorter than 12) keeps none.
func Form(key string) string {
	p := prefix(key)
	if len(p) > 17 {
		p = ""
	}
	if len(key)-len(p) < 3*4 {
		return p + "…"
	}
	return p + "…" + key[len(key)-4:]
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
	// Hold back a tail that may begin a secret, then redact the rest.
	cut := min(w.r.safeCut(w.pending), encodedTail(w.pending))
	out := w.r.String(string(w.pending[:cut]))
	w.pending = append(w.pending[:0], w.pending[cut:]...)
	if _, err := io.WriteString(w.w, out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// maxHeldEncoded bounds the tail of a write that Writer holds back because
// the next write may complete an encoded key in it.
const maxHeldEncoded = 4 << 10

// encodedTail is where the run of characters that an encoded key may be
// made of begins at the end of b (percent, base64, HTML references, \u
// escapes), len(b) when it is longer than maxHeldEncoded.
func encodedTail(b []byte) int {
	i := len(b)
	for i > 0 && len(b)-i < maxHeldEncoded && encodedByte(b[i-1]) {
		i--
	}
	if len(b)-i >= maxHeldEncoded {
		return len(b)
	}
	return i
}

func encodedByte(c byte) bool {
	return base64Value[c] != 0xff || strings.IndexByte("%=&#;\\.~", c) >= 0
}

// Flush writes the held-back bytes; call it when no more output will come.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.pending) == 0 {
		return nil
	}
	out := w.r.String(string(w.pending))
	w.pending = w.pending[:0]
	_, err := io.WriteString(w.w, out)
	return err
}
