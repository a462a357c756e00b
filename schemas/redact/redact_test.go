package redact_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/tcmkit/tcmkit/schemas/redact"
)

const key = "tcm_AbCdEfGhIjKlMnOpQrStUvWxYz012345"

func TestForm(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{key, "tcm_…#1fa1"},
		{"live_0123456789abcdef", "live_…#f1d2"},
		{"noprefix0123456789", "…#03db"},
		{"tcm_short", "tcm_…"},
		{"trailing_", "…"},
		{"aprefixlongerthansixteen_0123456789abcdef", "…#ae78"},
	} {
		if got := redact.Form(tc.in); got != tc.want {
			t.Errorf("Form(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestString(t *testing.T) {
	other := "tcm_ZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZ"
	r := redact.New(key, "", "short", other)
	for _, tc := range []struct{ in, want string }{
		{"Authorization: Bearer " + key, "Authorization: Bearer tcm_…#1fa1"},
		{key + key, "tcm_…#1fa1tcm_…#1fa1"},
		{`{"message":"bad key ` + other + `"}`, `{"message":"bad key tcm_…#1a9d"}`},
		{"short words stay short", "short words stay short"},
		{"no secret here", "no secret here"},
	} {
		if got := r.String(tc.in); got != tc.want {
			t.Errorf("String(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestLongerSecretWins(t *testing.T) {
	inner := "tcm_AbCdEfGhIjKl"
	r := redact.New(inner, key)
	if got := r.String(key); got != redact.Form(key) {
		t.Errorf("String(key) = %q, want the longer key redacted whole", got)
	}
}

func TestAdd(t *testing.T) {
	var zero redact.Redactor
	if got := zero.String(key); got != key {
		t.Errorf("zero value changed %q", got)
	}
	zero.Add(key)
	if got := zero.String(key); strings.Contains(got, key) {
		t.Errorf("added secret not redacted: %q", got)
	}
}

// TestWriterSplitsAnywhere writes a text holding the key in every possible
// pair of chunks: the key must never come out whole, and nothing else may be
// lost or changed.
func TestWriterSplitsAnywhere(t *testing.T) {
	text := "before " + key + " middle " + key + " after\n"
	want := "before tcm_…#1fa1 middle tcm_…#1fa1 after\n"
	for i := 0; i <= len(text); i++ {
		for j := i; j <= len(text); j++ {
			var out bytes.Buffer
			w := redact.New(key).Writer(&out)
			for _, chunk := range []string{text[:i], text[i:j], text[j:]} {
				n, err := w.Write([]byte(chunk))
				if err != nil || n != len(chunk) {
					t.Fatalf("Write = %d, %v", n, err)
				}
			}
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			if out.String() != want {
				t.Fatalf("split at %d,%d: got %q, want %q", i, j, out.String(), want)
			}
		}
	}
}

func TestWriterPassesLinesAtOnce(t *testing.T) {
	var out bytes.Buffer
	w := redact.New(key).Writer(&out)
	w.Write([]byte("waiting 3 s for the rate limit\n"))
	if out.String() != "waiting 3 s for the rate limit\n" {
		t.Errorf("a line without a secret's start was held back: %q", out.String())
	}
	w.Write([]byte("ends with tcm_Ab"))
	if strings.Contains(out.String(), "tcm_Ab") {
		t.Errorf("a possible secret start was written early: %q", out.String())
	}
	w.Write([]byte("X done\n"))
	if !strings.HasSuffix(out.String(), "ends with tcm_AbX done\n") {
		t.Errorf("held-back bytes lost: %q", out.String())
	}
}

// TestNoFragmentSurvives cuts a text holding the key at every place, as an
// excerpt cut before redaction would, and looks for any run of
// MinSecret characters of the key's secret part in the redacted result, from
// String and from a Writer fed in two pieces.
func TestNoFragmentSurvives(t *testing.T) {
	r := redact.New(key)
	text := `{"echo":"Bearer ` + key + `","again":"` + key[7:30] + `"}`
	leaks := func(s string) string {
		for _, f := range redact.Fragments(key) {
			if strings.Contains(s, f) {
				return f
			}
		}
		return ""
	}
	for from := 0; from < len(text); from++ {
		for to := from; to <= len(text); to += 3 {
			cut := text[from:to]
			if f := leaks(r.String(cut)); f != "" {
				t.Fatalf("String(%q) keeps the fragment %q: %q", cut, f, r.String(cut))
			}
			for _, at := range []int{0, len(cut) / 2, len(cut)} {
				var out bytes.Buffer
				w := r.Writer(&out)
				w.Write([]byte(cut[:at]))
				w.Write([]byte(cut[at:]))
				w.Flush()
				if f := leaks(out.String()); f != "" {
					t.Fatalf("Writer split at %d of %q keeps the fragment %q: %q", at, cut, f, out.String())
				}
			}
		}
	}
	if got := r.String("x " + key[10:25] + " y"); got != "x "+redact.Fragment+" y" {
		t.Errorf("a fragment in a text: %q", got)
	}
}

// A key a JSON text spells with \u escapes, wholly or in part, is a key.
func TestEscapedKeys(t *testing.T) {
	r := redact.New(key)
	every := func(s string, n int) string { // escapes every n-th character
		var b strings.Builder
		for i := range len(s) {
			if i%n == 0 {
				fmt.Fprintf(&b, `\u%04x`, s[i])
			} else {
				b.WriteByte(s[i])
			}
		}
		return b.String()
	}
	for _, tc := range []struct{ in, want string }{
		{`{"id":"` + every(key, 1) + `"}`, `{"id":"tcm_…#1fa1"}`},
		{`{"id":"` + every(key, 3) + `"}`, `{"id":"tcm_…#1fa1"}`},
		{`{"id":"` + every(key, 1) + every(key, 2) + `"}`, `{"id":"tcm_…#1fa1tcm_…#1fa1"}`},
		{`"x` + every(key[10:24], 2) + `y"`, `"x…y"`},                                 // a fragment
		{`\\` + every(key, 1), `\\tcm_…#1fa1`},                                        // escaped once more, as a JSON report holds it
		{`"caf\u00e9 \u0041\u0042 ` + key[:4] + `"`, `"caf\u00e9 \u0041\u0042 tcm_"`}, // escapes that spell no key stay
		{`"` + every(key[:20], 1) + `|` + every(key[20:], 1) + `"`, `"tcm_…#1fa1"`},   // a key cut in two by a separator: still the key (its characters joined by anything)
	} {
		got := r.String(tc.in)
		if got != tc.want {
			t.Errorf("String(%s)\n got %s\nwant %s", tc.in, got, tc.want)
		}
	}
}

// TestFormShowsNoPieceOfTheSecret: a hint holds no character of the key's
// secret part where it stood (the last four once were), whatever the key.
func TestFormShowsNoPieceOfTheSecret(t *testing.T) {
	const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	seen := map[string]bool{}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		b := []byte("tcm_")
		for range 32 {
			b = append(b, alnum[rng.IntN(len(alnum))])
		}
		k := string(b)
		f := redact.Form(k)
		if !strings.HasPrefix(f, "tcm_…#") || len(f) != len("tcm_…#")+4 {
			t.Fatalf("Form = %q, want tcm_…# and four hex digits", f)
		}
		if tail := k[len(k)-4:]; strings.Contains(f, tail) {
			t.Errorf("Form(key ending %q) = %q shows its last characters", tail, f)
		}
		seen[f] = true
	}
	if len(seen) < 1900 {
		t.Errorf("2000 keys have %d hints: too few to tell keys apart", len(seen))
	}
}

// A key up to case (a header's name, printed lower-cased) is a key: in a
// run of 16 letters and digits or more; 8 of a key made of words that
// match ordinary words only up to case are no key (the report's text
// stays whole).
func TestKeysUpToCase(t *testing.T) {
	words := "tcm_KnownRevokedKeyKnownRevokedKe03"
	r := redact.New(key, words)
	for _, tc := range []struct{ in, want string }{
		{"x-" + strings.ToLower(key) + ": 1", "x-tcm_…#1fa1: 1"},
		{"X-Tcm_" + strings.ToLower(key[4:]) + ": 1", "X-tcm_…#1fa1: 1"},
		{strings.ToUpper(key[4:]), "tcm_…#1fa1"},
		{"[" + strings.ToLower(key[6:22]) + "]", "[…]"},                                  // 16 of its secret
		{"[" + strings.ToLower(key[6:21]) + "]", "[" + strings.ToLower(key[6:21]) + "]"}, // 15: no
		{`"id": "AUTH-REVOKED-KEY", "known": true`, `"id": "AUTH-REVOKED-KEY", "known": true`},
		{"a RevokedK in its case", "a … in its case"},
	} {
		if got := r.String(tc.in); got != tc.want {
			t.Errorf("String(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
