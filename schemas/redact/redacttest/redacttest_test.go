package redacttest

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/tcmkit/tcmkit/schemas/redact"
)

// FirstLeak finds what Leaks finds: an encoded key, or a piece of its
// secret, anywhere in a large text, and nothing once it is redacted.
func TestFirstLeakFindsWhatLeaksFinds(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	for range 200 {
		key := Key(r)
		enc := Encode(r, Stack(r), key)
		cases := []Case{{Encoded: Encode(r, Stack(r), Key(r)), Key: Key(r)}, {Encoded: enc, Key: key}}
		at := r.IntN(1 << 16)
		text := Text(r, 1<<16)
		cut := r.IntN(len(enc)/2 + 1)
		out := text[:at%len(text)] + enc[cut:] + text[at%len(text):]
		want := Leaks(out, enc, key)
		i, got := FirstLeak(out, cases)
		if (want != "") != (i >= 0) {
			t.Fatalf("%s in %.40q: Leaks %q, FirstLeak %d %q", Names(nil), enc, want, i, got)
		}
		if i, got := FirstLeak(strings.ReplaceAll(out, enc[cut:], "x"), cases[1:]); i >= 0 {
			t.Fatalf("found %q with the key gone", got)
		}
	}
	if i, _ := FirstLeak("say "+redact.Form("tcm_abcdefghijklmnop")+" here", []Case{{Encoded: "tcm_abcdefghijklmnop", Key: "tcm_abcdefghijklmnop"}}); i >= 0 {
		t.Fatal("the key's hint is no leak")
	}
}
