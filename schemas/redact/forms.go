package redact

import (
	"encoding/binary"
	"slices"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// What servers and clients really make of a key besides the escapes and
// encodings of decode.go (the promise lists them too): Unicode's
// compatibility forms, byte arrays in decimal, hex in groups of any size.

// widthFold is v with every character whose compatibility form (NFKC) is
// one ASCII character replaced by it, made in dst: fullwidth letters
// (ｔｃｍ), mathematical and circled letters and digits, superscripts;
// nil when v holds none. Each folded byte stands for the character it
// came from.
func widthFold(v *view, dst *view) *view {
	b := v.b
	var w *view
	copied := 0
	for i := 0; i < len(b); {
		// Skip ASCII eight bytes at a time: most of a text is.
		for i+8 <= len(b) && binary.LittleEndian.Uint64(b[i:])&0x8080808080808080 == 0 {
			i += 8
		}
		if i == len(b) {
			break
		}
		if b[i] < utf8.RuneSelf {
			i++
			continue
		}
		p := norm.NFKC.Properties(b[i:])
		n := max(p.Size(), 1)
		d := p.Decomposition()
		if len(d) != 1 || d[0] < ' ' || d[0] >= utf8.RuneSelf {
			i += n
			continue
		}
		if w == nil {
			w = dst
			w.b, w.from, w.to = slices.Grow(w.b[:0], len(b)), slices.Grow(w.from[:0], len(b)), slices.Grow(w.to[:0], len(b))
		}
		v.appendBytes(w, copied, i)
		from, to := v.span(i, i+n-1)
		w.b, w.from, w.to = append(w.b, d[0]), append(w.from, int32(from)), append(w.to, int32(to))
		i += n
		copied = i
	}
	if w == nil {
		return nil
	}
	v.appendBytes(w, copied, len(b))
	return w
}

// eachDecimalRun calls fn with the bytes of each run of MinSecret decimal
// numbers or more, each 0 to 255, joined by blanks and at most one comma
// or semicolon each: a byte array as JSON prints it (Node's Buffer:
// {"type":"Buffer","data":[116,99,…]}) or a list of bytes a log prints.
// Each byte stands for its number. A number that a word runs into counts
// (text before a list may end in a letter): a list that is no key's costs
// a search, nothing more.
func (fd *finder) eachDecimalRun(v *view, depth int, fn func(d *view)) {
	b := v.b
	d := &fd.levels[depth].decoded
	d.b, d.from, d.to = d.b[:0], d.from[:0], d.to[:0]
	emit := func() {
		if len(d.b) >= MinSecret && fd.budget > 0 {
			fn(d)
		}
		d.b, d.from, d.to = d.b[:0], d.from[:0], d.to[:0]
	}
	last := -1 // where the last number of the run ended
	for i := 0; i < len(b); {
		if b[i] < '0' || b[i] > '9' {
			i++
			continue
		}
		j := i
		n := 0
		for j < len(b) && '0' <= b[j] && b[j] <= '9' && j-i < 4 {
			n = n*10 + int(b[j]-'0')
			j++
		}
		if j-i > 3 || n > 255 {
			for j < len(b) && '0' <= b[j] && b[j] <= '9' {
				j++
			}
			emit()
			last, i = -1, j
			continue
		}
		if last >= 0 && !decimalSeparator(b[last:i]) {
			emit()
		}
		from, _ := v.span(i, i)
		_, to := v.span(j-1, j-1)
		d.b, d.from, d.to = append(d.b, byte(n)), append(d.from, int32(from)), append(d.to, int32(to))
		last, i = j, j
	}
	emit()
}

// decimalSeparator says whether g joins two numbers of a byte list:
// blanks (+ in a query) and line breaks (up to 64, as an indented array
// prints), with at most one comma or semicolon.
func decimalSeparator(g []byte) bool {
	marks := 0
	for _, c := range g {
		switch c {
		case ' ', '\t', '\r', '\n', '+': // + is a blank in a query
		case ',', ';':
			marks++
		default:
			return false
		}
	}
	return len(g) > 0 && len(g) <= 64 && marks <= 1
}

// eachGroupedHex calls fn with the indexes in v of each run of hex digits
// written in groups of any size (7 463 6d5f …, as a log cuts a hex string)
// joined as eachSpacedHex's groups are, when one group or more has an odd
// number of digits (eachSpacedHex reads the others) and the run holds
// minHexRun digits or more in two groups or more.
func (fd *finder) eachGroupedHex(v *view, depth int, fn func(run []int)) {
	b := v.b
	lv := &fd.levels[depth]
	run := lv.spaced[:0]
	defer func() { lv.spaced = run[:0] }()
	groups, odd, prevEnd := 0, false, -1
	emit := func() {
		if odd && groups >= 2 && len(run) >= minHexRun && fd.budget > 0 {
			fn(run)
		}
		run, groups, odd, prevEnd = run[:0], 0, false, -1
	}
	for p := 0; p < len(b); {
		if foldValue[b[p]] == 0 {
			p++
			continue
		}
		w := p
		for w < len(b) && hexValue[b[w]] != 0xff {
			w++
		}
		if w < len(b) && foldValue[b[w]] != 0 { // a word, not a group
			for w < len(b) && foldValue[b[w]] != 0 {
				w++
			}
			emit()
			p = w
			continue
		}
		if prevEnd >= 0 && !separator(b[prevEnd:p]) {
			emit()
		}
		for k := p; k < w; k++ {
			run = append(run, k)
		}
		groups++
		odd = odd || (w-p)%2 == 1
		prevEnd, p = w, w
	}
	emit()
}
