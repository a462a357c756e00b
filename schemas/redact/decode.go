package redact

import (
	"cmp"
	"html"
	"slices"
	"strings"
)

// A key can reach output in an encoding that hides its characters: a
// client percent-encodes it in a query, a server echoes it base64-encoded
// in a Location or as HTML entities in a page, a JSON text spells it with
// \u escapes. Redaction decodes before it looks: ReplaceEncoded finds the
// runs of a text that one of these encodings made, decodes each (twice
// over, for an encoding of an encoding), and replaces a run whose decoded
// text holds a secret. Both the suite's Redactor and the simulator use it.

// maxEncodedDepth is how many encodings deep a run is decoded.
const maxEncodedDepth = 2

// minBase64Run is the shortest base64 run that is decoded: 8 characters of
// a key take 11 of base64, and 3 more when they start off the boundary of
// a group of 3 bytes.
const minBase64Run = 11

// MayHideEncoded reports whether s holds anything ReplaceEncoded decodes:
// a percent escape, an HTML character reference, a \u escape or a base64
// run. It is cheap, for a hot path to skip ReplaceEncoded.
func MayHideEncoded(s string) bool {
	if mayHideEscaped(s) {
		return true
	}
	for i := 0; i < len(s); {
		if base64Value[s[i]] == 0xff {
			i++
			continue
		}
		to := i
		for to < len(s) && base64Value[s[to]] != 0xff {
			to++
		}
		if to-i >= minBase64Run {
			for off := 0; off < 4 && to-i-off >= minBase64Run; off++ {
				if asciiGroups(s[i+off:to]) && base64MayHide(s[i+off:to]) {
					return true
				}
			}
		}
		i = to
	}
	return false
}

// asciiGroups is a cheap test that base64MayHide may say yes: two groups
// of four characters in a row that decode to bytes below 0x80, as any
// MinSecret key characters in a row, or an escape of them, hold.
func asciiGroups(s string) bool {
	ok := 0
	for i := 0; i+3 < len(s); i += 4 {
		if base64Value[s[i]]&32 == 0 && base64Value[s[i+1]]&8 == 0 && base64Value[s[i+2]]&2 == 0 {
			if ok++; ok == 2 {
				return true
			}
		} else {
			ok = 0
		}
	}
	return false
}

// mayHideEscaped: s holds a percent escape, an HTML character reference
// or a \u escape.
func mayHideEscaped(s string) bool {
	for i := 0; i+2 < len(s); i++ {
		switch c := s[i]; {
		case c == '%' && isHex(s[i+1]) && isHex(s[i+2]),
			c == '&' && entityLen(s[i:]) > 0,
			c == '\\' && (s[i+1] == 'u' || s[i+1] == 'U'):
			return true
		}
	}
	return false
}

// base64MayHide decodes s without keeping what it decodes: true when the
// decoded bytes hold MinSecret key characters in a row or an escape. Most
// base64-looking runs (a path, a cursor) hold neither, and cost no
// allocation.
func base64MayHide(s string) bool {
	var acc uint32
	bits, run := 0, 0
	var prev [2]byte // the two bytes before, for an escape
	for i := 0; i < len(s); i++ {
		acc = acc<<6 | uint32(base64Value[s[i]])
		if bits += 6; bits < 8 {
			continue
		}
		bits -= 8
		c := byte(acc >> bits)
		switch byteClass[c] {
		case keyClass:
			if run++; run >= MinSecret {
				return true
			}
		case otherClass:
			run = 0
		default: // the start of an escape: looked at with the next bytes
			run = 0
		}
		if byteClass[prev[1]] == escapeClass || prev[0] == '%' {
			switch {
			case prev[0] == '%' && isHex(prev[1]) && isHex(c),
				prev[1] == '&' && (c == '#' || isLetter(c)),
				prev[1] == '\\' && (c == 'u' || c == 'U'):
				return true
			}
		}
		prev[0], prev[1] = prev[1], c
	}
	return false
}

// The classes of a decoded byte, for base64MayHide.
const (
	otherClass = iota
	keyClass
	escapeClass // '%', '&' or '\\'
)

var byteClass = func() (t [256]byte) {
	for c := range 256 {
		if isKeyByte(byte(c)) {
			t[c] = keyClass
		}
	}
	t['%'], t['&'], t['\\'] = escapeClass, escapeClass, escapeClass
	return t
}()

// ReplaceEncoded replaces every run of s that an encoding made whose
// decoded text holds a secret: holds says whether a decoded text does and
// what the run becomes (the redacted form of a key, or Fragment). Runs
// that overlap become one Fragment. It also reports whether it replaced
// anything.
func ReplaceEncoded(s string, holds func(decoded string) (form string, ok bool)) (string, bool) {
	var spans []span
	eachEncoded(s, func(from, to int, decoded string) {
		if form, ok := hidesSecret(decoded, holds, 1); ok {
			spans = append(spans, span{from, to, form})
		}
	})
	if len(spans) == 0 {
		return s, false
	}
	return replaceSpans(s, spans), true
}

// span is a piece of a text to replace by form.
type span struct {
	from, to int
	form     string
}

// replaceSpans replaces the spans of s. Widest first at each start: a
// whole key comes before its fragments, and takes them in; spans that
// overlap otherwise become one Fragment.
func replaceSpans(s string, spans []span) string {
	slices.SortFunc(spans, func(a, b span) int { return cmp.Or(a.from-b.from, b.to-a.to) })
	var b strings.Builder
	at := 0
	for i := 0; i < len(spans); {
		g := spans[i]
		for i++; i < len(spans) && spans[i].from < g.to; i++ {
			if spans[i].to > g.to {
				g.to, g.form = spans[i].to, Fragment
			}
		}
		b.WriteString(s[at:g.from])
		b.WriteString(g.form)
		at = g.to
	}
	b.WriteString(s[at:])
	return b.String()
}

// hidesSecret: the decoded text holds a secret, or one of its own encoded
// runs does.
func hidesSecret(decoded string, holds func(string) (string, bool), depth int) (string, bool) {
	if form, ok := holds(decoded); ok {
		return form, true
	}
	if depth >= maxEncodedDepth || !MayHideEncoded(decoded) {
		return "", false
	}
	found := false
	eachEncoded(decoded, func(_, _ int, inner string) {
		if !found {
			_, found = hidesSecret(inner, holds, depth+1)
		}
	})
	return Fragment, found
}

// eachEncoded calls fn with every run of s that an encoding made, its
// bounds in s and its decoded text: percent-encoding (with + for a
// space), HTML character references, \u escapes, and base64 or base64url
// (decoded from each of the first four characters of a run, as the run
// may begin before what was encoded). A decoded text without a run of
// MinSecret letters, digits or underscores, nor anything encoded, holds no
// key and is skipped.
func eachEncoded(s string, fn func(from, to int, decoded string)) {
	emit := func(from, to int, decoded string) {
		if keyRun(decoded) || MayHideEncoded(decoded) {
			fn(from, to, decoded)
		}
	}
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '%' || c == '&' || c == '\\':
			// The run of escapes and key characters around it.
			from := i
			for from > 0 && isKeyByte(s[from-1]) {
				from--
			}
			to, dec := escapedRun(s, from)
			if to > i {
				emit(from, to, dec)
				i = to
				continue
			}
			i++
		case base64Value[c] != 0xff:
			to := i
			for to < len(s) && base64Value[s[to]] != 0xff {
				to++
			}
			end := to
			for end < len(s) && s[end] == '=' {
				end++
			}
			if to-i >= minBase64Run {
				for off := 0; off < 4 && to-i-off >= minBase64Run; off++ {
					if base64MayHide(s[i+off : to]) {
						emit(i+off, end, decodeBase64(s[i+off:to]))
					}
				}
			}
			i = end
			if end == to {
				i = to
			}
		default:
			i++
		}
	}
}

// escapedRun reads from s[from:] a run of key characters and escapes
// (percent, HTML character references, \u) and returns where it ends and
// its decoded text; it ends at from when no escape is in it.
func escapedRun(s string, from int) (int, string) {
	var dec []byte
	escapes := 0
	i := from
	for i < len(s) {
		c := s[i]
		if isKeyByte(c) || c == '-' || c == '.' || c == '~' {
			dec = append(dec, c)
			i++
			continue
		}
		if c == '+' {
			dec = append(dec, ' ')
			i++
			continue
		}
		if c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			dec = append(dec, unhex(s[i+1])<<4|unhex(s[i+2]))
			i, escapes = i+3, escapes+1
			continue
		}
		if c == '\\' && i+5 < len(s) && (s[i+1] == 'u' || s[i+1] == 'U') && isHex(s[i+2]) && isHex(s[i+3]) && isHex(s[i+4]) && isHex(s[i+5]) {
			r := rune(unhex(s[i+2]))<<12 | rune(unhex(s[i+3]))<<8 | rune(unhex(s[i+4]))<<4 | rune(unhex(s[i+5]))
			dec = append(dec, string(r)...)
			i, escapes = i+6, escapes+1
			continue
		}
		if c == '&' {
			if n := entityLen(s[i:]); n > 0 {
				dec = append(dec, html.UnescapeString(s[i:i+n])...)
				i, escapes = i+n, escapes+1
				continue
			}
		}
		if c == '&' || c == '#' || c == ';' {
			// What an outer encoding may have left of an inner one.
			dec = append(dec, c)
			i++
			continue
		}
		break
	}
	// Trailing plus signs and separators are no part of an encoded key.
	for i > from && (s[i-1] == '+' || s[i-1] == '&' || s[i-1] == '#' || s[i-1] == ';') && !strings.HasSuffix(s[from:i], "&#59;") {
		i--
		dec = dec[:len(dec)-1]
	}
	if escapes == 0 {
		return from, ""
	}
	return i, string(dec)
}

// entityLen is the length of an HTML character reference at the start of
// s (&#84; &#x54; &lowbar;, the semicolon optional after digits), 0 if
// none.
func entityLen(s string) int {
	if len(s) < 3 || s[0] != '&' {
		return 0
	}
	i := 1
	switch {
	case s[1] == '#' && len(s) > 3 && (s[2] == 'x' || s[2] == 'X'):
		i = 3
		for i < len(s) && i < 10 && isHex(s[i]) {
			i++
		}
		if i == 3 {
			return 0
		}
	case s[1] == '#':
		i = 2
		for i < len(s) && i < 10 && '0' <= s[i] && s[i] <= '9' {
			i++
		}
		if i == 2 {
			return 0
		}
	default:
		for i < len(s) && i < 12 && (isLetter(s[i]) || '0' <= s[i] && s[i] <= '9') {
			i++
		}
		if i == 1 || i >= len(s) || s[i] != ';' {
			return 0
		}
		if html.UnescapeString(s[:i+1]) == s[:i+1] {
			return 0 // not a name HTML knows
		}
	}
	if i < len(s) && s[i] == ';' {
		i++
	}
	return i
}

// decodeBase64 decodes s in either alphabet (+ and - are 62, / and _ are
// 63), ignoring a last group too short to make a byte.
func decodeBase64(s string) string {
	out := make([]byte, 0, len(s)*3/4)
	var acc uint32
	bits := 0
	for i := 0; i < len(s); i++ {
		acc = acc<<6 | uint32(base64Value[s[i]])
		if bits += 6; bits >= 8 {
			bits -= 8
			out = append(out, byte(acc>>bits))
		}
	}
	return string(out)
}

// keyRun: s holds MinSecret letters, digits or underscores in a row.
func keyRun(s string) bool {
	run := 0
	for i := 0; i < len(s); i++ {
		if isKeyByte(s[i]) {
			if run++; run >= MinSecret {
				return true
			}
		} else {
			run = 0
		}
	}
	return false
}

var base64Value = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xff
	}
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	for i := range len(alphabet) {
		t[alphabet[i]] = byte(i)
	}
	t['+'], t['-'], t['/'], t['_'] = 62, 62, 63, 63
	return t
}()

func isKeyByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_'
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c >= 'a':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}
