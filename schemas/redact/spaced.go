package redact

import (
	"bytes"
	"compress/flate"
	"slices"
)

// Hex bytes with separators and dumps (see the promise in decode.go).

// dumpLine is a line of a dump in a run of hex digits: the run's indexes
// first..last-1 are its digits, and from..to is the whole line in the
// text (its offset and its text column too), which each of its bytes
// stands for: a dump's line that holds a piece of a key is replaced
// whole, its text column with it.
type dumpLine struct {
	first, last int
	from, to    int32
}

// maxDumpWidth is the most bytes a dump's line is taken to hold.
const maxDumpWidth = 256

// eachSpacedHex calls fn with the indexes in v of each run of hex bytes
// written with separators: groups of an even number of digits joined by
// separators (a 0x before a group is one too), or the lines of a dump (an
// offset, groups, the bytes as text), whose offsets say how many bytes
// each line holds and that the next goes on. A run is passed on when it
// holds minHexRun digits or more, in two groups or lines or more (one
// group alone is eachRun's), with the dump's lines it spans.
func (fd *finder) eachSpacedHex(v *view, depth int, fn func(run []int, lines []dumpLine)) {
	lv := &fd.levels[depth]
	b := v.b
	run, lines := lv.spaced[:0], lv.lines[:0]
	groups, prevEnd := 0, -1
	emit := func() {
		if len(run) >= minHexRun && (groups >= 2 || len(lines) >= 2) {
			fn(run, lines)
		}
		run, lines, groups, prevEnd = run[:0], lines[:0], 0, -1
	}
	defer func() { lv.spaced, lv.lines = run[:0], lines[:0] }()

	var want uint64 // the offset a dump's next line has, when it goes on
	inDump := false
	width := -1 // bytes a line of the dump being read, -1 unknown
	for ls := 0; ls < len(b); {
		le := lineEnd(b, ls)
		next := le + 1
		if off, data, ok := dumpData(b, ls, le); ok {
			if !inDump || off != want {
				emit()
				width = -1
			}
			// The line holds as many bytes as the next line's offset
			// says (its text column may look like hex), else as many as
			// the lines before it.
			limit := width
			if nw, ok := nextDumpWidth(b, next, off); ok {
				limit, width = nw, nw
			}
			first := len(run)
			var n int
			run, n = appendDumpBytes(run, b, data, le, limit)
			from, _ := v.span(ls, ls)
			_, to := v.span(le-1, le-1)
			lines = append(lines, dumpLine{first: first, last: len(run), from: int32(from), to: int32(to)})
			groups++
			inDump, want = true, off+uint64(n)
			ls = next
			continue
		}
		if inDump {
			emit()
			inDump = false
		}
		for p := ls; ; {
			gs, d, w, ok := nextGroup(b, p, le)
			if !ok {
				break
			}
			if prevEnd >= 0 && !separator(b[prevEnd:gs]) {
				emit()
			}
			for k := d; k < w; k++ {
				run = append(run, k)
			}
			groups++
			prevEnd = w
			p = w
		}
		ls = next
	}
	emit()
}

// lineEnd is where the line of b that begins at ls ends: at its '\n', or at
// the end of b.
func lineEnd(b []byte, ls int) int {
	if le := bytes.IndexByte(b[ls:], '\n'); le >= 0 {
		return ls + le
	}
	return len(b)
}

// nextDumpWidth is how many bytes the dump's line at offset off holds, as
// the offset of the line that begins at next says; ok is false when that
// line has no offset past off, within maxDumpWidth.
func nextDumpWidth(b []byte, next int, off uint64) (int, bool) {
	if next >= len(b) {
		return 0, false
	}
	if noff, _, ok := dumpOffset(b, next, lineEnd(b, next)); ok && noff > off && noff-off <= maxDumpWidth {
		return int(noff - off), true
	}
	return 0, false
}

// appendDumpBytes appends to run the indexes of the hex digits of a dump's
// line, its groups from data to le, at most limit bytes (limit < 0: no
// limit), and returns run and how many bytes it took. It stops at what is
// not whole hex bytes, or at more than three blanks: the text column.
func appendDumpBytes(run []int, b []byte, data, le, limit int) ([]int, int) {
	n := 0
	for p := data; p < le && (limit < 0 || n < limit); {
		q := p
		for q < le && hexValue[b[q]] != 0xff {
			q++
		}
		if q == p || (q-p)%2 == 1 || (q < le && !blank(b[q])) {
			break
		}
		take := (q - p) / 2
		if limit >= 0 {
			take = min(take, limit-n)
		}
		for k := p; k < p+2*take; k++ {
			run = append(run, k)
		}
		n += take
		r := q
		for r < le && blank(b[r]) {
			r++
		}
		if r-q > 3 {
			break
		}
		p = r
	}
	return run, n
}

// nextGroup finds the first group in b[p:le]. A group is a word (a run of
// letters and digits) of an even number of hex digits, perhaps after 0x.
// It returns where the group begins (at its 0x) and where its digits begin
// and end; ok is false when the line holds no more.
func nextGroup(b []byte, p, le int) (gs, d, w int, ok bool) {
	for p < le {
		if foldValue[b[p]] == 0 {
			p++
			continue
		}
		// A word: are all its characters hex digits (after a 0x)?
		gs, d = p, p // where the group and its digits begin
		if p+2 < le && b[p] == '0' && b[p+1]|0x20 == 'x' {
			d = p + 2
		}
		w = d
		for w < le && hexValue[b[w]] != 0xff {
			w++
		}
		if w < le && foldValue[b[w]] != 0 { // a letter past f: no group
			for w < le && foldValue[b[w]] != 0 {
				w++
			}
			p = w
			continue
		}
		if w > d && (w-d)%2 == 0 {
			return gs, d, w, true
		}
		p = w
	}
	return 0, 0, 0, false
}

// separator says whether what stands between two groups of hex bytes
// joins them: up to three of space, tab, : , ; - . + on a line, or blanks
// and those around line breaks.
func separator(g []byte) bool {
	nl := false
	for _, c := range g {
		switch c {
		case ' ', '\t', ':', ',', ';', '-', '.', '+':
		case '\n', '\r':
			nl = true
		default:
			return false
		}
	}
	return len(g) > 0 && (len(g) <= 3 || nl && len(g) <= 64)
}

// blank is what stands between a dump's columns: a space, a tab, a + (a
// space in a query), and a line's \r.
func blank(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '+' }

// dumpOffset reads the offset that begins a line of a dump, b[ls:le]: 4
// to 16 hex digits after blanks, then a colon, a blank or the line's end.
// It returns the offset and where what follows it begins.
func dumpOffset(b []byte, ls, le int) (uint64, int, bool) {
	p := ls
	for p < le && blank(b[p]) {
		p++
	}
	q := p
	var off uint64
	for q < le && q-p <= 16 && hexValue[b[q]] != 0xff {
		off = off<<4 | uint64(hexValue[b[q]])
		q++
	}
	if n := q - p; n < 4 || n > 16 {
		return 0, 0, false
	}
	if q < le && b[q] == ':' {
		q++
	}
	if q < le && !blank(b[q]) {
		return 0, 0, false
	}
	return off, q, true
}

// dumpData reads a line of a dump: an offset, blanks, then a group of an
// even number of hex digits. It returns the offset and where the group
// begins.
func dumpData(b []byte, ls, le int) (uint64, int, bool) {
	off, p, ok := dumpOffset(b, ls, le)
	if !ok {
		return 0, 0, false
	}
	r := p
	for r < le && blank(b[r]) {
		r++
	}
	if r == p || r-p > 4 {
		return 0, 0, false
	}
	q := r
	for q < le && hexValue[b[q]] != 0xff {
		q++
	}
	if q == r || (q-r)%2 == 1 || q < le && !blank(b[q]) {
		return 0, 0, false
	}
	return off, r, true
}

// inflate reads the compressed streams in d and explores what each
// inflates to, every byte of it standing for d from the stream's start to
// its end. A gzip or zlib stream is told by its header, wherever it
// begins (base64 that letters run into decodes to it at some offset);
// raw deflate, which has none, is tried at d's start when raw is set (a
// token that stands apart: quoted, after = or a blank). A stream may be
// cut: what it inflates to before the cut is read.
func (fd *finder) inflate(d *view, depth int, raw bool) {
	b := d.b
	if len(b) < minStream {
		return
	}
	if raw && rawDeflate(b) {
		fd.inflateAt(d, depth, 0, 0)
	}
	for p := 0; p+3 < len(b); p++ {
		if b[p] != 0x1f && b[p] != 0x78 && p > 0 {
			continue
		}
		if start, ok := streamHeader(b[p:]); ok {
			fd.inflateAt(d, depth, p, p+start)
		}
	}
}

// minStream is the fewest bytes of a compressed stream that hold MinSecret
// bytes of a key: deflate's fewest bits for them, each a literal of 8 bits,
// the block's header and its end (a header of gzip or zlib comes on top).
const minStream = 10

// tryCost is what a try at inflating costs the budget, whatever it
// inflates to: a text of many headers that begin nothing stays bounded.
const tryCost = 256

// inflateAt inflates the deflate data of d that begins at start (the
// stream, its header included, begins at at).
func (fd *finder) inflateAt(d *view, depth, at, start int) {
	b := d.b
	if !fd.unpacking {
		saved := fd.budget
		fd.budget, fd.unpacking = fd.packed, true
		defer func() { fd.packed, fd.budget, fd.unpacking = fd.budget, saved, false }()
	}
	fd.budget -= tryCost
	limit := min(fd.budget, max(compressedRatio*(len(b)-start), compressedFloor))
	if limit < MinSecret {
		return
	}
	fd.src.Reset(b[start:])
	if fd.inflater == nil {
		fd.inflater = flate.NewReader(&fd.src)
	} else {
		fd.inflater.(flate.Resetter).Reset(&fd.src, nil)
	}
	lv := &fd.levels[depth]
	out := lv.inflated.b[:0]
	for len(out) < limit {
		if len(out) == cap(out) {
			out = slices.Grow(out, min(limit-len(out), max(len(out), 4<<10)))
		}
		n, err := fd.inflater.Read(out[len(out):min(cap(out), limit)])
		out = out[:len(out)+n]
		if err != nil {
			break
		}
	}
	iv := &lv.inflated
	iv.b, iv.from, iv.to, iv.whole = out, nil, nil, false
	if len(out) < MinSecret {
		return
	}
	from, _ := d.span(at, at)
	_, to := d.span(len(b)-1, len(b)-1)
	iv.whole, iv.all = true, [2]int32{int32(from), int32(to)}
	fd.explore(iv, depth+1)
}

// streamHeader is where the deflate data of a gzip or zlib stream that
// begins b begins, after its header. A zlib header is taken in its common
// form (0x78: a 32 KB window) except at a view's start.
func streamHeader(b []byte) (int, bool) {
	switch {
	case len(b) > 10 && b[0] == 0x1f && b[1] == 0x8b && b[2] == 8:
		flags, p := b[3], 10
		if flags&4 != 0 { // FEXTRA
			if len(b) < p+2 {
				return 0, false
			}
			p += 2 + (int(b[p]) | int(b[p+1])<<8)
		}
		for _, f := range []byte{8, 16} { // FNAME, FCOMMENT: zero-terminated
			if flags&f != 0 && p < len(b) {
				i := bytes.IndexByte(b[p:], 0)
				if i < 0 {
					return 0, false
				}
				p += i + 1
			}
		}
		if flags&2 != 0 { // FHCRC
			p += 2
		}
		return p, p < len(b)
	case len(b) > 2 && b[0]&0x0f == 8 && b[0]>>4 <= 7 && (uint(b[0])<<8|uint(b[1]))%31 == 0 && b[1]&0x20 == 0:
		return 2, true
	}
	return 0, false
}

// rawDeflate says whether b can begin raw deflate data: its first block's
// type is one of the three, and a stored block's length agrees with its
// complement.
func rawDeflate(b []byte) bool {
	if len(b) < MinSecret {
		return false
	}
	switch b[0] >> 1 & 3 {
	case 3:
		return false
	case 0:
		return b[1] == ^b[3] && b[2] == ^b[4]
	}
	return true
}
