// Package redacttest generates what the redactor promises to see through
// (package schemas/redact, decode.go): random keys, random stacks of the
// encodings a server or a client applies, random texts around them; and
// says whether an output still shows a key so encoded. The redactor's own
// tests, the suite's and the simulator's draw from it, so the promise is
// held the same way everywhere.
package redacttest

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html"
	"math/rand/v2"
	"net/url"
	"slices"
	"strings"
	"unicode/utf16"

	"github.com/tcmkit/tcmkit/schemas/redact"
)

// Layer is one encoding, as something that echoes a text applies it.
type Layer struct {
	Name string
	Enc  func(r *rand.Rand, s string) string
}

// Layers are the promised encodings.
var Layers = []Layer{
	{"JSON string", func(_ *rand.Rand, s string) string { b, _ := json.Marshal(s); return string(b[1 : len(b)-1]) }},
	{"JSON \\u every character", func(_ *rand.Rand, s string) string {
		return each(s, func(c rune) string { return fmt.Sprintf(`\u%04x`, c) })
	}},
	{"JSON \\u some characters", func(r *rand.Rand, s string) string {
		return each(s, func(c rune) string {
			if r.IntN(2) == 0 || c == '\\' || c == '"' || c < ' ' { // as a JSON text must
				return fmt.Sprintf(`\u%04X`, c)
			}
			return string(c)
		})
	}},
	{"percent every byte", func(_ *rand.Rand, s string) string { return bytesOf(s, "%%%02X") }},
	{"query escape", func(_ *rand.Rand, s string) string { return url.QueryEscape(s) }},
	{"\\x every byte", func(_ *rand.Rand, s string) string { return bytesOf(s, `\x%02x`) }},
	{"quoted-printable every byte", func(_ *rand.Rand, s string) string { return bytesOf(s, "=%02X") }},
	{"HTML decimal references", func(_ *rand.Rand, s string) string {
		return each(s, func(c rune) string { return fmt.Sprintf("&#%d;", c) })
	}},
	{"HTML hex references", func(_ *rand.Rand, s string) string {
		return each(s, func(c rune) string { return fmt.Sprintf("&#x%x;", c) })
	}},
	{"HTML escape", func(_ *rand.Rand, s string) string { return html.EscapeString(s) }},
	{"base64", func(_ *rand.Rand, s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }},
	{"base64url", func(_ *rand.Rand, s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }},
	{"base64 in lines of 16", func(_ *rand.Rand, s string) string {
		e := base64.StdEncoding.EncodeToString([]byte(s))
		var b strings.Builder
		for len(e) > 16 {
			b.WriteString(e[:16] + "\r\n")
			e = e[16:]
		}
		return b.String() + e
	}},
	{"base64 of UTF-16", func(_ *rand.Rand, s string) string {
		var b []byte
		for _, u := range utf16.Encode([]rune(s)) {
			b = append(b, byte(u), byte(u>>8))
		}
		return base64.StdEncoding.EncodeToString(b)
	}},
	{"hex", func(_ *rand.Rand, s string) string { return hex.EncodeToString([]byte(s)) }},
	// Hex with separators, as debug output prints bytes: after a blank
	// (a group of hex digits that a word runs into is no group).
	{"hex bytes joined by spaces (Go's % x)", func(_ *rand.Rand, s string) string { return fmt.Sprintf(" % x", s) }},
	{"hex bytes joined by colons, upper case", func(_ *rand.Rand, s string) string {
		return " " + strings.ReplaceAll(fmt.Sprintf("% X", s), " ", ":")
	}},
	{"hex bytes joined by dashes, in lines", func(r *rand.Rand, s string) string {
		width := 8 + r.IntN(25) // bytes a line
		var b strings.Builder
		b.WriteByte(' ')
		for i := range len(s) {
			switch {
			case i == 0:
			case i%width == 0:
				b.WriteString("\n")
			default:
				b.WriteByte('-')
			}
			fmt.Fprintf(&b, "%02x", s[i])
		}
		return b.String()
	}},
	{"hex bytes as 0x, comma-separated", func(_ *rand.Rand, s string) string {
		var b strings.Builder
		for i := range len(s) {
			b.WriteString(", "[1-min(i, 1):]) // a blank before the first
			fmt.Fprintf(&b, "0x%02x", s[i])
		}
		return b.String()
	}},
	// A dump begins a line.
	{"hexdump -C (Go's hex.Dump)", func(r *rand.Rand, s string) string {
		lead, trail := dumpContext(r, len(s))
		return "\n" + hex.Dump([]byte(lead+s+trail))
	}},
	{"xxd", func(r *rand.Rand, s string) string {
		lead, trail := dumpContext(r, len(s))
		return "\n" + xxd(lead+s+trail)
	}},
	// State packed into an opaque token: the key inside a JSON text,
	// compressed, then base64.
	{"gzip then base64 (a state token)", func(r *rand.Rand, s string) string {
		return base64.StdEncoding.EncodeToString(compress(r, "gzip", s))
	}},
	{"zlib then base64url", func(r *rand.Rand, s string) string {
		return base64.RawURLEncoding.EncodeToString(compress(r, "zlib", s))
	}},
	{"deflate then base64, quoted (SAML's redirect binding)", func(r *rand.Rand, s string) string {
		// Raw deflate has no header: the token stands apart.
		return `"` + base64.StdEncoding.EncodeToString(compress(r, "deflate", s)) + `"`
	}},
	// A key in a header's name, printed as HTTP/2 or Go's canonical form
	// prints it: the key up to case.
	{"lower case", func(_ *rand.Rand, s string) string { return strings.ToLower(s) }},
	{"upper case", func(_ *rand.Rand, s string) string { return strings.ToUpper(s) }},
	{"joined by zero-width spaces", func(_ *rand.Rand, s string) string {
		return each(s, func(c rune) string { return string(c) + "\u200b" })
	}},
	{"joined by +", func(_ *rand.Rand, s string) string { return each(s, func(c rune) string { return string(c) + "+" }) }},
	// What servers and clients really make of a key: Unicode's
	// compatibility forms (NFKC folds them back), byte arrays, escapes
	// of eight digits, hex in groups of any size.
	{"fullwidth", func(_ *rand.Rand, s string) string { return Fullwidth(s) }},
	{"Node Buffer JSON", func(_ *rand.Rand, s string) string {
		b, _ := json.Marshal(map[string]any{"type": "Buffer", "data": decimals(s)})
		return string(b)
	}},
	{"decimal bytes, comma-separated", func(_ *rand.Rand, s string) string {
		return strings.Trim(strings.ReplaceAll(fmt.Sprint(decimals(s)), " ", ", "), "[]")
	}},
	{"decimal bytes, space-separated", func(_ *rand.Rand, s string) string { return " " + strings.Trim(fmt.Sprint(decimals(s)), "[]") }},
	{"\\U every character", func(_ *rand.Rand, s string) string {
		return each(s, func(c rune) string { return fmt.Sprintf(`\U%08x`, c) })
	}},
	{"hex in groups of any size", func(r *rand.Rand, s string) string {
		h := hex.EncodeToString([]byte(s))
		var b strings.Builder
		for h != "" {
			n := min(len(h), 1+r.IntN(7))
			b.WriteString(" " + h[:n])
			h = h[n:]
		}
		return b.String()
	}},
}

// Fullwidth writes the printable ASCII characters of s in their fullwidth
// forms, which NFKC folds back (as the suite's explorer sends a key).
func Fullwidth(s string) string {
	return strings.Map(func(r rune) rune {
		if r > ' ' && r < 0x7f {
			return r - 0x21 + 0xff01
		}
		return r
	}, s)
}

// decimals is the bytes of s as numbers (a JSON array of them is what
// Node's Buffer becomes).
func decimals(s string) []int {
	out := make([]int, len(s))
	for i := range len(s) {
		out[i] = int(s[i])
	}
	return out
}

// dumpContext is the bytes a dump shows before and after the key: a few
// before, and after it no more than fill its last line (a line of a dump
// that holds no byte of the key is no part of the key's encoding).
func dumpContext(r *rand.Rand, n int) (lead, trail string) {
	lead = Text(r, r.IntN(8))
	if rest := (len(lead) + n) % 16; rest != 0 {
		trail = Text(r, r.IntN(16-rest+1))
	}
	return lead, trail
}

// xxd is what the xxd tool prints of s: an offset, 16 bytes in groups of
// two, and the bytes as text.
func xxd(s string) string {
	var b strings.Builder
	for off := 0; off < len(s); off += 16 {
		line := []byte(s[off:min(off+16, len(s))])
		fmt.Fprintf(&b, "%08x:", off)
		for i := 0; i < 16; i += 2 {
			switch {
			case i+1 < len(line):
				fmt.Fprintf(&b, " %02x%02x", line[i], line[i+1])
			case i < len(line):
				fmt.Fprintf(&b, " %02x  ", line[i])
			default:
				b.WriteString("     ")
			}
		}
		b.WriteString("  ")
		for _, c := range line {
			if c < ' ' || c > '~' {
				c = '.'
			}
			b.WriteByte(c)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// compress packs s into a JSON state and compresses it (gzip, zlib or raw
// deflate).
func compress(r *rand.Rand, how, s string) []byte {
	state, _ := json.Marshal(map[string]any{"v": r.IntN(9), "session": Text(r, r.IntN(40)), "k": s, "at": r.Int64()})
	var b bytes.Buffer
	var w interface {
		Write([]byte) (int, error)
		Close() error
	}
	level := []int{flate.BestSpeed, flate.DefaultCompression, flate.BestCompression, flate.HuffmanOnly}[r.IntN(4)]
	switch how {
	case "gzip":
		w, _ = gzip.NewWriterLevel(&b, level)
	case "zlib":
		w, _ = zlib.NewWriterLevel(&b, level)
	default:
		w, _ = flate.NewWriter(&b, level)
	}
	w.Write(state)
	w.Close()
	return b.Bytes()
}

// MaxStack is the deepest stack the promise holds for.
const MaxStack = 3

func each(s string, f func(rune) string) string {
	var b strings.Builder
	for _, c := range s {
		b.WriteString(f(c))
	}
	return b.String()
}

func bytesOf(s, format string) string {
	var b strings.Builder
	for i := range len(s) {
		fmt.Fprintf(&b, format, s[i])
	}
	return b.String()
}

// Stack is a random stack of 1 to MaxStack layers, innermost first. A
// joiner (zero-width spaces, +) joins the key's own characters, and a
// change of case is of the key's own letters (a header's name): each
// comes first or not at all, as nothing joins the characters of an
// encoding, and base64 in another case is no longer what it encoded.
func Stack(r *rand.Rand) []Layer {
	out := make([]Layer, 1+r.IntN(MaxStack))
	for i := range out {
		for {
			out[i] = Layers[r.IntN(len(Layers))]
			// UTF-16 is read as the ASCII text it spells (its every other
			// byte NUL), not fullwidth letters.
			utf16Wide := i > 0 && out[0].Name == "fullwidth" && strings.Contains(out[i].Name, "UTF-16")
			if (i == 0 || !Innermost(out[i])) && !utf16Wide {
				break
			}
		}
	}
	return out
}

// Innermost says whether a layer applies to the key's own characters
// only (a joiner, a change of case, fullwidth letters), so that it comes
// first in a stack.
func Innermost(l Layer) bool {
	return strings.HasPrefix(l.Name, "joined") || strings.HasSuffix(l.Name, " case") || l.Name == "fullwidth"
}

// Encode applies the stack to s, innermost first.
func Encode(r *rand.Rand, stack []Layer, s string) string {
	for _, l := range stack {
		s = l.Enc(r, s)
	}
	return s
}

// Names names a stack, innermost first.
func Names(stack []Layer) string {
	var n []string
	for _, l := range stack {
		n = append(n, l.Name)
	}
	return strings.Join(n, " then ")
}

const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

// Key is a random key of a random prefix: the prefix, an underscore and 32
// letters and digits.
func Key(r *rand.Rand) string {
	var b strings.Builder
	for range 2 + r.IntN(5) {
		b.WriteByte("abcdefghijklmnopqrstuvwxyz"[r.IntN(26)])
	}
	b.WriteByte('_')
	for range 32 {
		b.WriteByte(alnum[r.IntN(len(alnum))])
	}
	return b.String()
}

// Text is a random text around which a key is echoed: words, JSON and URL
// punctuation, letters that may run into a base64 run.
func Text(r *rand.Rand, n int) string {
	const pieces = " {}\":,=&?/%+-_.;\n\\"
	var b strings.Builder
	for b.Len() < n {
		if r.IntN(4) == 0 {
			b.WriteByte(pieces[r.IntN(len(pieces))])
		} else {
			b.WriteByte(alnum[r.IntN(len(alnum))])
		}
	}
	return b.String()
}

// Leaks says whether out still shows the key as it was encoded: a piece of
// the encoded key long enough to hold MinSecret characters of it (the
// key's hint aside). It returns the piece.
func Leaks(out, encoded, key string) string {
	out = strings.ReplaceAll(out, redact.Form(key), "\x00")
	ratio := float64(len(encoded)) / float64(len(key))
	n := int(ratio*float64(redact.MinSecret)) + 2
	// Every piece of n, or, in a large output, pieces of n every n/2 (a
	// piece of 3n/2 or more still shows), so that a search stays cheap.
	step := 1
	if len(out)*len(encoded) > 1<<26 {
		step = max(1, n/2)
	}
	for i := 0; i+n <= len(encoded); i += step {
		if strings.Contains(out, encoded[i:i+n]) {
			return encoded[i : i+n]
		}
	}
	secret := key[strings.IndexByte(key, '_')+1:]
	for i := 0; i+redact.MinSecret <= len(secret); i++ {
		if strings.Contains(out, secret[i:i+redact.MinSecret]) {
			return secret[i : i+redact.MinSecret]
		}
	}
	return ""
}

// Case is an encoded key to look for: Encoded, the text the key became.
type Case struct{ Encoded, Key string }

// FirstLeak is Leaks for many cases at once: the index of a case whose
// key out still shows, and the piece, or -1. It reads out once for each
// length of piece the cases need, whatever their number (Leaks reads it
// once for each piece).
func FirstLeak(out string, cases []Case) (int, string) {
	bySize := map[int]map[string]int{}
	add := func(s string, n, i int) {
		if n <= 0 || len(s) < n {
			return
		}
		m := bySize[n]
		if m == nil {
			m = map[string]int{}
			bySize[n] = m
		}
		for j := 0; j+n <= len(s); j++ {
			if _, ok := m[s[j:j+n]]; !ok {
				m[s[j:j+n]] = i
			}
		}
	}
	replaced := map[string]bool{} // many cases share a key: its form goes once
	for i, c := range cases {
		if form := redact.Form(c.Key); !replaced[form] {
			replaced[form] = true
			out = strings.ReplaceAll(out, form, "\x00")
		}
		n := int(float64(len(c.Encoded))/float64(len(c.Key))*float64(redact.MinSecret)) + 2
		add(c.Encoded, n, i)
		add(c.Key[strings.IndexByte(c.Key, '_')+1:], redact.MinSecret, i)
	}
	// A window whose first four bytes begin no piece is passed over at the
	// cost of a bit: only the few others are looked up, at the sizes of
	// the pieces whose first four bytes fall in the same slot (there are as
	// many sizes as encodings).
	var starts [1 << 14]uint64
	slot := func(b string) uint32 {
		return (uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24) * 2654435761 >> 12
	}
	sizesAt := map[uint32][]int{}
	for n, pieces := range bySize {
		if n < 4 {
			continue
		}
		for p := range pieces {
			h := slot(p)
			starts[h/64] |= 1 << (h % 64)
			if !slices.Contains(sizesAt[h], n) {
				sizesAt[h] = append(sizesAt[h], n)
			}
		}
	}
	for j := 0; j+4 <= len(out); j++ {
		h := slot(out[j:])
		if starts[h/64]&(1<<(h%64)) == 0 {
			continue
		}
		for _, n := range sizesAt[h] {
			if j+n <= len(out) {
				if i, ok := bySize[n][out[j:j+n]]; ok {
					return i, out[j : j+n]
				}
			}
		}
	}
	return -1, ""
}
