package redact_test

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/tcmkit/tcmkit/schemas/redact"
	"github.com/tcmkit/tcmkit/schemas/redact/redacttest"
)

// The promise, generated: a random key (whole, or its secret part alone)
// under a random stack of the promised encodings, at a random place of a
// random text, written whole or in random pieces, never comes out of
// String or Writer.
func TestThePromiseHolds(t *testing.T) {
	for seed := range uint64(400) {
		r := rand.New(rand.NewPCG(seed, 25))
		key := redacttest.Key(r)
		red := redact.New(key, redacttest.Key(r)) // and another key
		what := key
		if r.IntN(4) == 0 {
			what = key[strings.IndexByte(key, '_')+1:]
		}
		stack := redacttest.Stack(r)
		enc := redacttest.Encode(r, stack, what)
		text := redacttest.Text(r, r.IntN(200)) + enc + redacttest.Text(r, r.IntN(200))
		if leak := redacttest.Leaks(red.String(text), enc, key); leak != "" {
			t.Errorf("seed %d, %s: String keeps %q of %q", seed, redacttest.Names(stack), leak, enc)
			continue
		}
		var out strings.Builder
		w := red.Writer(&out)
		for rest := text; rest != ""; {
			n := min(len(rest), 1+r.IntN(64))
			w.Write([]byte(rest[:n]))
			rest = rest[n:]
		}
		w.Flush()
		if leak := redacttest.Leaks(out.String(), enc, key); leak != "" {
			t.Errorf("seed %d, %s: Writer in pieces keeps %q of %q", seed, redacttest.Names(stack), leak, enc)
		}
	}
}

// Redaction costs about the same per byte however large the text: no
// quadratic path through a long base64 run or many escapes.
func BenchmarkStringLarge(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	key := redacttest.Key(r)
	red := redact.New(key)
	text := strings.Repeat(redacttest.Text(r, 1<<10)+redacttest.Encode(r, redacttest.Stack(r), key), 256)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		red.String(text)
	}
}
