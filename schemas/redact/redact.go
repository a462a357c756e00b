// Package redact keeps API keys out of everything the suite writes: logs,
// transcripts, failure messages and report files. A key is replaced by its
// redacted form, the key prefix and four hex digits of the key's SHA-256
// (tcm_…#3f9a), which is enough to tell keys apart and shows no character
// of the secret; and any
// fragment of a key's secret part of MinSecret characters or more, such as
// what is left of a key that something cut in two before it was redacted,
// is replaced by an ellipsis. Both are found also where an encoding hides
// them, stacked and with their characters joined by anything, and up to
// case (decode.go says which encodings: the promise the README repeats);
// what the key was encoded to is replaced whole.
//
// Redact where output is written, not where a message is formatted: wrap
// every writer with Writer and pass every finished text through String.
package redact

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"slices"
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
	mu      sync.RWMutex
	secrets []string // longest first, so a key containing another is replaced whole
	// hints[i] is Form(secrets[i]), and bare[i] its secret part folded
	// (what form looks for), made once rather than on every text.
	hints, bare []string
	frags       *FragmentSet
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
	if r.frags == nil {
		r.frags = NewFragmentSet()
	}
	added := false
	for _, s := range secrets {
		if len(s) >= MinSecret && !slices.Contains(r.secrets, s) {
			r.secrets = append(r.secrets, s)
			r.frags.Add(s)
			added = true
		}
	}
	if !added {
		return
	}
	slices.SortStableFunc(r.secrets, func(a, b string) int { return len(b) - len(a) })
	r.hints, r.bare = r.hints[:0], r.bare[:0]
	for _, s := range r.secrets {
		r.hints = append(r.hints, Form(s))
		r.bare = append(r.bare, string(folded(s[len(prefix(s)):])))
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
// every fragment of one by Fragment, also in the encodings decode.go
// promises.
func (r *Redactor) String(s string) string {
	if r == nil {
		return s
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	if len(r.secrets) == 0 {
		return s
	}
	s = r.replaceWhole(s) // plain whole keys keep their prefix before the hint
	s, _ = r.frags.Replace(s, r.form)
	return s
}

// replaceWhole replaces each plain whole key of s by its hint, from left
// to right, without overlaps; where keys begin at the same place, the
// longest (the first of r.secrets). This is what a strings.Replacer of the
// pairs would do, but most texts hold no key: a search for each key (a
// few, and fast) finds that out without a walk through a trie at every
// byte, and no Replacer is built for each key added. The caller holds r.mu.
func (r *Redactor) replaceWhole(s string) string {
	var b strings.Builder
	at := 0
	for {
		next, which := -1, -1 // where the next key begins, and which
		for i, k := range r.secrets {
			if j := strings.Index(s[at:], k); j >= 0 && (next < 0 || j < next) {
				next, which = j, i
			}
		}
		if next < 0 {
			break
		}
		b.WriteString(s[at : at+next])
		b.WriteString(r.hints[which])
		at += next + len(r.secrets[which])
	}
	if at == 0 {
		return s
	}
	b.WriteString(s[at:])
	return b.String()
}

// form is what a span that decoded to the letters and digits decoded
// becomes: the hint of the key it holds whole (up to case), or Fragment.
// The caller holds r.mu.
func (r *Redactor) form(decoded string) string {
	d := string(folded(decoded))
	for i, secret := range r.bare {
		if len(secret) >= MinSecret && strings.Contains(d, secret) {
			return r.hints[i]
		}
	}
	return Fragment
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
// it, on the suite's side and the simulator's ("tcm_…#3f9a"): the key's
// prefix up to and including its first underscore, an ellipsis, and four hex
// digits of the key's SHA-256. The prefix is the service's, public by the
// contract; no character of the secret part is shown, not even the last four
// (a fragment is a fragment), and 16 bits of a hash tell a run's few keys
// apart without narrowing a guess. A prefix longer than 16 characters is not
// shown (it may be part of the secret); a key whose secret part is shorter
// than 12 characters gets no digits (a hash of a short secret narrows a
// guess).
func Form(key string) string {
	p := prefix(key)
	if len(p) > 17 {
		p = ""
	}
	if len(key)-len(p) < 12 {
		return p + "…"
	}
	sum := sha256.Sum256([]byte(key))
	return HashForm(p, sum[:])
}

// HashForm is Form of a key known by its prefix (with the underscore) and
// its SHA-256, for who keeps the hash and not the key (the simulator's
// journal). The key's secret part must be 12 characters or more.
func HashForm(prefix string, keySHA256 []byte) string {
	return prefix + "…#" + hex.EncodeToString(keySHA256[:2])
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
	cut := encodedTail(w.pending)
	out := w.r.String(string(w.pending[:cut]))
	w.pending = append(w.pending[:0], w.pending[cut:]...)
	if _, err := io.WriteString(w.w, out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// maxHeldEncoded bounds the tail of a write that Writer holds back because
// the next write may complete an encoded key in it.
const maxHeldEncoded = 64 << 10

// encodedTail is where what Writer holds back begins at the end of b: the
// last line, which is written when it ends (an escape may have put many
// lines, a dump's, on it), and before it the run of bytes that a key,
// encoded or with its characters joined, may be made of (base64 in lines,
// hex bytes in lines, a dump's lines). Of a run longer than
// maxHeldEncoded, the last maxHeldEncoded bytes are held (a key cut there
// leaves fewer than MinSecret characters on one side, or is a fragment on
// both).
func encodedTail(b []byte) int {
	i := max(bytes.LastIndexByte(b, '\n')+1, len(b)-maxHeldEncoded)
	for i > 0 && len(b)-i < maxHeldEncoded {
		if encodedByte(b[i-1]) {
			i--
			continue
		}
		// Separators between hex bytes (74 63, 74:63, 0x74, 0x63, and
		// at the ends of lines of them).
		if k := spacedHexBefore(b, i); k < i {
			i = k
			continue
		}
		// A line break inside base64 in lines (MIME): the line before it
		// ends in 16 base64 characters or more.
		j := i
		for j > 0 && (b[j-1] == '\n' || b[j-1] == '\r') {
			j--
		}
		k := j
		for k > 0 && base64Value[b[k-1]] != 0xff {
			k--
		}
		if j == i || j-k < 16 {
			break
		}
		i = k
	}
	return max(min(i, dumpTail(b)), len(b)-maxHeldEncoded)
}

// spacedHexBefore is where the separators that end at i begin (up to three
// of space, tab, : , ; and line breaks), when they follow a group of hex
// bytes (a word of an even number of hex digits, perhaps after 0x)
// and come before an encoded byte, or at the end of b after two groups;
// i otherwise.
func spacedHexBefore(b []byte, i int) int {
	k := hexSeparatorsBefore(b, i)
	if k == i || !hexGroupBefore(b, k) {
		return i
	}
	if i < len(b) {
		if encodedByte(b[i]) {
			return k
		}
		return i
	}
	g := k
	for g > 0 && hexValue[b[g-1]] != 0xff {
		g--
	}
	if s := hexSeparatorsBefore(b, g); s < g && hexGroupBefore(b, s) {
		return k
	}
	return i
}

func hexSeparatorsBefore(b []byte, i int) int {
	k := i
	for k > 0 && i-k < 3 && strings.IndexByte(" \t:,;\r\n", b[k-1]) >= 0 {
		k--
	}
	return k
}

// hexGroupBefore says whether a group of hex bytes ends at k.
func hexGroupBefore(b []byte, k int) bool {
	g := k
	for g > 0 && hexValue[b[g-1]] != 0xff {
		g--
	}
	if g == k || (k-g)%2 != 0 {
		return false
	}
	return g == 0 || !isAlnum(b[g-1]) || g >= 2 && b[g-1]|0x20 == 'x' && b[g-2] == '0' && (g == 2 || !isAlnum(b[g-3]))
}

func encodedByte(c byte) bool {
	return base64Value[c] != 0xff || c == 0 || c >= 0x80 || strings.IndexByte("%=&#;\\.~+", c) >= 0
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

// dumpTail is where the dump that ends b begins (its lines, and a last
// line that may begin another), so that a dump written a piece at a time
// is read whole; len(b) when b ends with no dump.
func dumpTail(b []byte) int {
	ls := bytes.LastIndexByte(b, '\n') + 1
	if !dumpLinePrefix(b[ls:]) {
		return len(b)
	}
	hold := ls
	for hold > 0 && len(b)-hold < maxHeldEncoded {
		ps := bytes.LastIndexByte(b[:hold-1], '\n') + 1
		if _, _, ok := dumpData(b, ps, hold-1); !ok {
			break
		}
		hold = ps
	}
	if hold == ls {
		return len(b)
	}
	return hold
}

// dumpLinePrefix says whether p may begin a line of a dump: blanks, then
// hex digits of which there may be more, or an offset of 4 to 16 digits
// followed by a colon or a blank (and then anything).
func dumpLinePrefix(p []byte) bool {
	i := 0
	for i < len(p) && blank(p[i]) {
		i++
	}
	j := i
	for j < len(p) && hexValue[p[j]] != 0xff {
		j++
	}
	switch {
	case j == len(p):
		return j-i <= 16
	case j-i < 4 || j-i > 16:
		return false
	}
	return p[j] == ':' || blank(p[j])
}
