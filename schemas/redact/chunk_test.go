package redact_test

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/tcmkit/tcmkit/schemas/redact"
	"github.com/tcmkit/tcmkit/schemas/redact/redacttest"
)

// A text longer than a chunk is read in overlapping chunks: a key encoded
// across a chunk's edge, anywhere in a large text, is still redacted.
func TestLargeTextRedactedAcrossChunks(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	key := redacttest.Key(r)
	red := redact.New(key)
	var b strings.Builder
	var encs []string
	for b.Len() < 3<<20 {
		b.WriteString(redacttest.Text(r, r.IntN(200<<10)))
		enc := redacttest.Encode(r, redacttest.Stack(r), key)
		encs = append(encs, enc)
		b.WriteString(enc)
	}
	out := red.String(b.String())
	for _, enc := range encs {
		if leak := redacttest.Leaks(out, enc, key); leak != "" {
			t.Errorf("keeps %.60q of %.60q", leak, enc)
		}
	}
}
