package redact

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"hash/maphash"
	"html"
	"io"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

// A key reaches output in whatever a server or a client made of it: a JSON
// text spells it with \u escapes (an echoed JSON string escapes them again:
// \\u0074), a query percent-encodes it (twice, through a redirect), a page
// writes HTML character references, a header carries it in base64 (of any
// of these, or of UTF-16), a log shows it in hex or \x escapes, a debug
// line as hex bytes (Go's "% x") or a dump, a server packs it into an
// opaque token (a JSON state, gzip, base64), a mail writes it in
// quoted-printable, a copy joins its characters with zero-width spaces, a
// header's name carries it lower-cased.
//
// The promise (README, "keys in any encoding"): a key, or any MinSecret
// characters of its secret part, is found in a text under any stack of up
// to maxDepth of these layers, wherever it stands and whatever separates
// its characters (anything that is not a letter or a digit: spaces, +, -,
// NUL of UTF-16, zero-width spaces); and up to case (a key printed lower-
// or upper-cased), foldedRun of its letters and digits in a row:
//
//   - escapes: JSON string escapes of every kind (\uXXXX with surrogate
//     pairs, \\ \/ \" \n ...), \UXXXXXXXX, \xHH, %HH and %uXXXX,
//     quoted-printable =HH, HTML character references (&#116; &#x74;
//     &lowbar;);
//   - Unicode's compatibility forms of ASCII, as NFKC folds them (forms.go):
//     fullwidth letters (ｔｃｍ＿…), mathematical, circled, super- and
//     subscript letters and digits;
//   - byte arrays in decimal (forms.go): Node's Buffer as JSON prints it
//     ({"type":"Buffer","data":[116,99,…]}), lists joined by commas or
//     blanks, on one line or indented;
//   - base64 and base64url (padded or not, with line breaks), and hex;
//   - hex in groups of any size (746 36d5 f…, forms.go), and hex bytes
//     with separators, in either case: words of an even number
//     of hex digits (perhaps after 0x) joined by up to three of space,
//     tab, : , ; - . + or by blanks around a line break (Go's "% x",
//     74:63:6D, 74-63-6d, 0x74, 0x63, xxd's 7463 6d5f); and dumps, lines
//     that begin with an offset (hexdump -C, Go's hex.Dump, xxd, od -A x
//     -t x1z: the offset, the bytes, the bytes as text), read as one run
//     of bytes from line to line while the offsets follow on;
//   - compressed data in base64, base64url or hex: gzip and zlib wherever
//     their header stands, raw deflate (which has none) at the start of a
//     base64 run (a token of its own); each stream inflated up to
//     compressedRatio times its size, all of a text's together up to
//     viewBudget times the text (a bomb stops there), and a cut stream
//     read up to the cut.
//
// How: FragmentSet.Replace reads the text as a tree of views, the text itself
// and what each layer decodes it to, each byte of a view mapped to the span
// of the original text it came from (every byte a compressed stream
// inflates to, to the whole stream; every byte of a dump's line, to the
// whole line). In each view it drops every byte that is not a letter or a
// digit and looks up each window of MinSecret bytes among the fragments,
// as it stands and folded to lower case; a run of matches replaces the
// span it came from. The work is bounded: escapes shrink a view, a base64
// run is decoded at its four alignments but only one that reads as text is
// decoded further, all views together hold at most viewBudget times the
// text, and what compressed streams inflate to as much again (each try
// costs it tryCost).

// maxDepth is how many layers deep a text is decoded.
const maxDepth = 6

// viewBudget bounds the bytes of all views of one text, as a multiple of
// its length (and a floor for short texts).
const (
	viewBudget      = 16
	viewBudgetFloor = 1 << 16
)

// minBase64Run is the shortest base64 run that is decoded: MinSecret
// characters take 11 of base64. minHexRun is the same for hex.
const (
	minBase64Run = 11
	minHexRun    = 2 * MinSecret
)

// Compressed streams: raw deflate, which has no header to tell it by, is
// tried on a base64 run of minDeflateRun characters or more (MinSecret
// bytes deflated take at least 10); each stream is inflated up to
// compressedRatio times its size (and compressedFloor bytes), and a
// text's streams together up to viewBudget times the text.
const (
	minDeflateRun   = 14
	compressedRatio = 64
	compressedFloor = 4 << 10
)

// FragmentSet is a set of the fragments of keys (every run of MinSecret
// letters and digits of a key's secret part, as it stands and folded to
// lower case), kept by hash: no key is kept whole. It is not safe for
// concurrent use: its owner locks.
type FragmentSet struct {
	seed   maphash.Seed
	counts map[uint64]int32 // the fragments as they stand
	folded map[uint64]int32 // the fragments folded to lower case
	// maybe is a filter in front of both: a bit per cheap hash of a
	// folded window, set for every fragment ever added (most windows of
	// a text are no fragment, and cost a multiply and a load).
	maybe []uint64
}

// foldedRun is the fewest letters and digits in a row that are redacted
// when they match a key only up to case (a key in a header's name, which
// was printed lower-cased): 8 letters of a key made of words would match
// ordinary words in other cases (RevokedK, "revoked key").
const foldedRun = 2 * MinSecret

// filterBits is the size of FragmentSet.maybe, in bits (128 KB).
const filterBits = 1 << 20

func filterSlot(w []byte) uint64 {
	return (binary.LittleEndian.Uint64(w) * 0x9E3779B97F4A7C15) >> (64 - 20)
}

// NewFragmentSet is an empty set.
func NewFragmentSet() *FragmentSet {
	return &FragmentSet{seed: maphash.MakeSeed(), counts: map[uint64]int32{}, folded: map[uint64]int32{}, maybe: make([]uint64, filterBits/64)}
}

// Add keeps the fragments of key and returns their hashes, for Remove.
func (f *FragmentSet) Add(key string) []uint64 {
	secret := compact(key[len(prefix(key)):])
	low := folded(string(secret))
	var hs []uint64
	for i := 0; i+MinSecret <= len(secret); i++ {
		h, hl := maphash.Bytes(f.seed, secret[i:i+MinSecret]), maphash.Bytes(f.seed, low[i:i+MinSecret])
		f.counts[h]++
		f.folded[hl]++
		slot := filterSlot(low[i : i+MinSecret])
		f.maybe[slot/64] |= 1 << (slot % 64)
		hs = append(hs, h, hl)
	}
	return hs
}

// Remove forgets fragments that Add returned.
func (f *FragmentSet) Remove(hs []uint64) {
	for i := 0; i+1 < len(hs); i += 2 {
		if f.counts[hs[i]]--; f.counts[hs[i]] <= 0 {
			delete(f.counts, hs[i])
		}
		if f.folded[hs[i+1]]--; f.folded[hs[i+1]] <= 0 {
			delete(f.folded, hs[i+1])
		}
	}
}

// Len is the number of distinct fragments kept.
func (f *FragmentSet) Len() int { return len(f.counts) }

// maybeFolded is the filter in front of match: false when the folded
// window is surely no fragment (most windows: a multiply and a load).
func (f *FragmentSet) maybeFolded(low []byte) bool {
	slot := filterSlot(low)
	return f.maybe[slot/64]&(1<<(slot%64)) != 0
}

// match says whether a window (as it stands, and folded) is a fragment:
// exact, up to case (folded), or neither.
func (f *FragmentSet) match(window, low []byte) (exact, folded bool) {
	if !f.maybeFolded(low) || f.folded[maphash.Bytes(f.seed, low)] <= 0 {
		return false, false
	}
	return f.counts[maphash.Bytes(f.seed, window)] > 0, true
}

// Replace replaces every span of s that holds a fragment in a promised
// encoding (see above) by form of the letters and digits it decoded to
// (a whole key, its fragments, or both), and reports whether it replaced
// any. Spans that overlap become one Fragment.
func (f *FragmentSet) Replace(s string, form func(decoded string) string) (string, bool) {
	if f == nil || len(f.counts) == 0 || s == "" {
		return s, false
	}
	// A long text is read in chunks that overlap by more than the longest
	// encoded key the promise covers, so that memory stays bounded
	// whatever the text's size: every such key lies whole in one chunk.
	fd := finders.Get().(*finder)
	fd.f, fd.form = f, form
	for off := 0; ; off += chunkLen - chunkOverlap {
		end := min(off+chunkLen, len(s))
		fd.base, fd.budget = off, max(viewBudget*(end-off), viewBudgetFloor)
		fd.packed = fd.budget
		fd.text.b = append(fd.text.b[:0], s[off:end]...)
		fd.explore(&fd.text, 0)
		if end == len(s) {
			break
		}
	}
	spans := fd.spans
	fd.release()
	if len(spans) == 0 {
		return s, false
	}
	return replaceSpans(s, spans), true
}

// chunkLen and chunkOverlap: how a long text is read (see Replace). The
// overlap is the longest encoded key the promise covers, as the Writer
// holds back as much.
const (
	chunkLen     = 256 << 10
	chunkOverlap = maxHeldEncoded
)

// view is a text and where each of its bytes came from in the original
// (from and to nil: the original itself; whole: every byte came from the
// one span all, as what a compressed stream inflates to).
type view struct {
	b        []byte
	from, to []int32
	whole    bool
	all      [2]int32
}

func (v *view) span(i, j int) (int, int) { // bytes i..j inclusive
	switch {
	case v.whole:
		return int(v.all[0]), int(v.all[1])
	case v.from == nil:
		return i, j + 1
	}
	return int(v.from[i]), int(v.to[j])
}

// slice is the view of v's bytes i..j-1.
func (v *view) slice(i, j int) *view {
	s := &view{b: v.b[i:j], whole: v.whole, all: v.all}
	if v.from != nil {
		s.from, s.to = v.from[i:j], v.to[i:j]
	}
	return s
}

// mapSpans replaces, in place, indexes of bytes of v by where those bytes
// came from: each from[k] by where byte from[k] begins, each to[k] by
// where byte to[k] ends (as span(i, i) says, asked once a view rather
// than once a byte).
func (v *view) mapSpans(from, to []int32) {
	switch {
	case v.whole:
		for k := range from {
			from[k], to[k] = v.all[0], v.all[1]
		}
	case v.from == nil:
		for k := range to {
			to[k]++
		}
	default:
		for k := range from {
			from[k], to[k] = v.from[from[k]], v.to[to[k]]
		}
	}
}

// appendBytes appends v's bytes i..j-1 to d as they stand, each with the
// span it came from.
func (v *view) appendBytes(d *view, i, j int) {
	d.b = append(d.b, v.b[i:j]...)
	switch {
	case v.whole:
		for range j - i {
			d.from, d.to = append(d.from, v.all[0]), append(d.to, v.all[1])
		}
	case v.from == nil:
		for k := i; k < j; k++ {
			d.from, d.to = append(d.from, int32(k)), append(d.to, int32(k+1))
		}
	default:
		d.from, d.to = append(d.from, v.from[i:j]...), append(d.to, v.to[i:j]...)
	}
}

type finder struct {
	f      *FragmentSet
	form   func(string) string
	spans  []span
	base   int // where the chunk being read begins in the text
	budget int
	// packed is what compressed streams may still inflate to; while one's
	// bytes are read (unpacking), budget is it.
	packed    int
	unpacking bool
	inflater  io.ReadCloser // a flate reader, reset for each stream
	src       bytes.Reader
	scratch   []byte
	low       []byte // scratch, folded
	at        []int32
	text      view // the chunk of the text being read
	// levels holds, per depth, the views that depth decodes into and the
	// run it reads, reused from one run to the next: a view is dead once
	// it is searched and explored, and a deeper level has views of its
	// own (most texts have many short runs: a request body of video ids).
	levels [maxDepth + 1]level
}

// finders keeps finders and their buffers from one text to the next: the
// simulator searches every request it is sent.
var finders = sync.Pool{New: func() any { return new(finder) }}

// maxPooledFinder bounds the bytes of buffers a finder keeps in the pool;
// one that read a long text goes to the collector.
const maxPooledFinder = 1 << 20

// release puts fd back in the pool, without what it found.
func (fd *finder) release() {
	n := cap(fd.text.b) + cap(fd.scratch) + cap(fd.low) + 4*cap(fd.at)
	for i := range fd.levels {
		lv := &fd.levels[i]
		n += 8 * cap(lv.run)
		n += 4*cap(lv.lines) + 8*cap(lv.spaced)
		for _, v := range []*view{&lv.unescaped, &lv.decoded, &lv.utf16, &lv.inflated, &lv.folded} {
			n += cap(v.b) + 4*cap(v.from) + 4*cap(v.to)
		}
	}
	fd.f, fd.form, fd.spans = nil, nil, nil
	fd.src.Reset(nil)
	if n <= maxPooledFinder {
		finders.Put(fd)
	}
}

// level is what one depth of explore decodes into.
type level struct {
	unescaped, decoded, utf16, inflated, folded view
	run, spaced                                 []int
	lines                                       []dumpLine
}

func (fd *finder) explore(v *view, depth int) {
	fd.search(v)
	fd.budget -= len(v.b)
	if depth >= maxDepth || fd.budget <= 0 {
		return
	}
	lv := &fd.levels[depth]
	if u := unescape(v, &lv.unescaped); u != nil {
		fd.budget -= len(u.b)
		fd.explore(u, depth+1)
	}
	if w := widthFold(v, &lv.folded); w != nil {
		fd.budget -= len(w.b)
		fd.explore(w, depth+1)
	}
	fd.eachDecimalRun(v, depth, func(d *view) {
		fd.budget -= len(d.b)
		fd.searchAndDescend(d, depth)
	})
	fd.eachGroupedHex(v, depth, func(run []int) {
		for off := 0; off < 2 && fd.budget > 0; off++ {
			d := decodeRun(v, run[off:], 4, &hexValue, &lv.decoded)
			fd.budget -= len(d.b)
			fd.searchAndDescend(d, depth)
		}
	})
	fd.eachRun(v, &base64Value, minBase64Run, depth, func(run []int) {
		for off := 0; off < 4 && len(run)-off >= minBase64Run && fd.budget > 0; off++ {
			raw := decodeRun(v, run[off:], 6, &base64Value, &lv.decoded)
			fd.budget -= len(raw.b)
			d := raw
			if u := utf16View(d, &lv.utf16); u != nil {
				d = u // UTF-16 read as the text it spells
			}
			fd.searchAndDescend(d, depth)
			fd.inflate(raw, depth, off == 0 && len(run) >= minDeflateRun)
		}
	})
	fd.eachRun(v, &hexValue, minHexRun, depth, func(run []int) {
		for off := 0; off < 2 && fd.budget > 0; off++ {
			d := decodeRun(v, run[off:], 4, &hexValue, &lv.decoded)
			fd.budget -= len(d.b)
			fd.searchAndDescend(d, depth)
			fd.inflate(d, depth, false)
		}
	})
	fd.eachSpacedHex(v, depth, func(run []int, lines []dumpLine) {
		if fd.budget <= 0 {
			return
		}
		d := decodeRun(v, run, 4, &hexValue, &lv.decoded)
		for _, l := range lines { // a dump's line that holds a key goes whole
			for k := l.first / 2; k < l.last/2; k++ {
				d.from[k], d.to[k] = l.from, l.to
			}
		}
		fd.budget -= len(d.b)
		fd.searchAndDescend(d, depth)
		fd.inflate(d, depth, false)
	})
}

// search looks up every window of MinSecret letters and digits of v
// (whatever stands between them) among the fragments, as it stands and
// folded to lower case. A run of windows that match is a span to replace
// when one matches as it stands, or it is foldedRun long.
func (fd *finder) search(v *view) {
	// Sized once: a view of megabytes grown a byte at a time costs five
	// times its size.
	// The letters and digits folded (the filter and the folded set read
	// them); a window as it stands is gathered from v only when the folded
	// one is a fragment (rare).
	low, at := slices.Grow(fd.low[:0], len(v.b)), slices.Grow(fd.at[:0], len(v.b))
	for i, c := range v.b {
		if f := foldValue[c]; f != 0 {
			low, at = append(low, f), append(at, int32(i))
		}
	}
	fd.low, fd.at = low, at
	stand := func(i, j int) []byte { // the letters and digits i..j-1 as they stand
		cb := fd.scratch[:0]
		for _, k := range at[i:j] {
			cb = append(cb, v.b[k])
		}
		fd.scratch = cb
		return cb
	}
	start, end, exact := -1, -1, false
	flush := func() {
		if start < 0 || !exact && end-start < foldedRun {
			start = -1
			return
		}
		first := int(at[start])
		form := fd.form(string(stand(start, end)))
		// A whole key's hint shows its prefix: the prefix before the
		// secret (as this view reads it, in any case) goes with it.
		if p, _, ok := strings.Cut(form, Fragment); ok && p != "" && first >= len(p) && strings.EqualFold(string(v.b[first-len(p):first]), p) {
			first -= len(p)
		}
		from, to := v.span(first, int(at[end-1]))
		fd.spans = append(fd.spans, span{fd.base + from, fd.base + to, form})
		start = -1
	}
	for i := 0; i+MinSecret <= len(low); i++ {
		if !fd.f.maybeFolded(low[i : i+MinSecret]) {
			continue
		}
		e, f := fd.f.match(stand(i, i+MinSecret), low[i:i+MinSecret])
		if !f {
			continue
		}
		if start >= 0 && i <= end {
			end, exact = i+MinSecret, exact || e
			continue
		}
		flush()
		start, end, exact = i, i+MinSecret, e
	}
	flush()
}

// eachRun calls fn with the indexes in v of each run of bytes of an
// encoding (those whose value in values is not 0xff; line breaks inside
// a run are skipped, as MIME breaks base64), when it holds min of them or
// more. depth is explore's, whose level keeps the run.
func (fd *finder) eachRun(v *view, values *[256]byte, min, depth int, fn func(run []int)) {
	b := v.b
	run := fd.levels[depth].run[:0]
	defer func() { fd.levels[depth].run = run[:0] }()
	for i := 0; i < len(b); {
		if values[b[i]] == 0xff {
			i++
			continue
		}
		// Measure the run before gathering its indexes: most runs of a
		// text (its words) are shorter than min, and cost no appends.
		j, n := i, 0
		for ; j < len(b); j++ {
			if values[b[j]] != 0xff {
				n++
			} else if b[j] != '\n' && b[j] != '\r' {
				break
			}
		}
		if n >= min {
			run = run[:0]
			for k := i; k < j; k++ {
				if values[b[k]] != 0xff {
					run = append(run, k)
				}
			}
			fn(run)
		}
		i = j
	}
}

// decodeRun decodes the bytes of v at run, bits bits each (6 for base64, 4
// for hex), into d, a view whose every byte maps to the characters it came
// from: a byte of hex, to its two digits; a byte of base64, to the two
// characters that hold its bits (4 characters make 3 bytes: the first and
// the second, the second and the third, the third and the fourth).
func decodeRun(v *view, run []int, bits int, value *[256]byte, d *view) *view {
	n := len(run) * bits / 8
	d.b, d.from, d.to = slices.Grow(d.b[:0], n)[:n], slices.Grow(d.from[:0], n)[:n], slices.Grow(d.to[:0], n)[:n]
	b, out, from, to := v.b, d.b, d.from, d.to
	// Indexes in v for now: mapSpans maps them all at once.
	if bits == 4 {
		for k := range n {
			i, j := run[2*k], run[2*k+1]
			out[k], from[k], to[k] = value[b[i]]<<4|value[b[j]], int32(i), int32(j)
		}
		v.mapSpans(from, to)
		return d
	}
	for k, p := 0, 0; k < n; p += 4 {
		i, j := run[p], run[p+1]
		c0, c1 := value[b[i]], value[b[j]]
		out[k], from[k], to[k] = c0<<2|c1>>4, int32(i), int32(j)
		if k++; k == n {
			break
		}
		i, j = j, run[p+2]
		c2 := value[b[j]]
		out[k], from[k], to[k] = c1<<4|c2>>2, int32(i), int32(j)
		if k++; k == n {
			break
		}
		i, j = j, run[p+3]
		out[k], from[k], to[k] = c2<<6|value[b[j]], int32(i), int32(j)
		k++
	}
	v.mapSpans(from, to)
	return d
}

// utf16View is v without its NUL bytes, made in u, when a third or more
// of them are NUL, as UTF-16 of ASCII text is (either byte order); nil
// otherwise.
func utf16View(v *view, u *view) *view {
	nul := 0
	for _, c := range v.b {
		if c == 0 {
			nul++
		}
	}
	if nul*3 < len(v.b) || len(v.b) < 2*MinSecret {
		return nil
	}
	n := len(v.b) - nul
	u.b, u.from, u.to = slices.Grow(u.b[:0], n), slices.Grow(u.from[:0], n), slices.Grow(u.to[:0], n)
	for i, c := range v.b {
		if c != 0 {
			from, to := v.span(i, i)
			u.b, u.from, u.to = append(u.b, c), append(u.from, int32(from)), append(u.to, int32(to))
		}
	}
	return u
}

// searchAndDescend searches a decoded view and decodes further each
// stretch of it that reads as text (printable UTF-8, of minBase64Run bytes
// or more; UTF-16 was made UTF-8 before): a wrong alignment of base64 or the bytes that
// the letters around an encoded run decode to are not, and are not
// decoded further.
func (fd *finder) searchAndDescend(d *view, depth int) {
	fd.search(d)
	if len(d.b) < minBase64Run {
		return // no stretch long enough (most decoded words)
	}
	start := 0
	for i := 0; i <= len(d.b); {
		n := 1
		bad := i == len(d.b)
		if !bad {
			if c := d.b[i]; c < utf8.RuneSelf { // ASCII, without decoding a rune
				bad = c < ' ' && c != '\t' && c != '\n' && c != '\r' || c == 0x7f
			} else {
				var r rune
				r, n = utf8.DecodeRune(d.b[i:])
				bad = r == utf8.RuneError && n <= 1
			}
		}
		if bad {
			if i-start >= minBase64Run {
				seg := d
				if start != 0 || i != len(d.b) {
					seg = d.slice(start, i)
				}
				fd.explore(seg, depth+1)
			}
			start = i + 1
		}
		i += n
	}
}

// unescape decodes the escapes of v (see above) into dst, nil when it
// holds none.
func unescape(v *view, dst *view) *view {
	b := v.b
	var u *view
	emit := func(i, j int, out []byte) { // bytes i..j-1 of v become out
		from, to := v.span(i, j-1)
		for _, c := range out {
			u.b, u.from, u.to = append(u.b, c), append(u.from, int32(from)), append(u.to, int32(to))
		}
	}
	var tmp [utf8.UTFMax]byte
	copied := 0 // bytes of b before it are in u
	for i := 0; i < len(b); {
		if c := b[i]; c != '\\' && c != '%' && c != '=' && c != '&' {
			i++ // no escape starts here (escapeAt's cases)
			continue
		}
		n, out := escapeAt(b, i, tmp[:0])
		if n == 0 {
			i++
			continue
		}
		if u == nil {
			u = dst
			u.b, u.from, u.to = slices.Grow(u.b[:0], len(b)), slices.Grow(u.from[:0], len(b)), slices.Grow(u.to[:0], len(b))
		}
		v.appendBytes(u, copied, i)
		emit(i, i+n, out)
		i += n
		copied = i
	}
	if u == nil {
		return nil
	}
	v.appendBytes(u, copied, len(b))
	return u
}

// escapeAt is the length of an escape at b[i:] and what it decodes to
// (appended to out), 0 if none starts there.
func escapeAt(b []byte, i int, out []byte) (int, []byte) {
	rest := b[i:]
	switch rest[0] {
	case '\\':
		if len(rest) < 2 {
			return 0, nil
		}
		switch rest[1] {
		case 'u', 'U':
			if r, ok := hexRune(rest[2:], 8); ok && rest[1] == 'U' && r <= utf8.MaxRune {
				return 10, utf8.AppendRune(out, r) // C's, Python's \U0001F600
			}
			r, ok := hexRune(rest[2:], 4)
			if !ok {
				return 0, nil
			}
			if 0xD800 <= r && r < 0xDC00 && len(rest) >= 12 && rest[6] == '\\' && (rest[7] == 'u' || rest[7] == 'U') {
				if lo, ok := hexRune(rest[8:], 4); ok && 0xDC00 <= lo && lo < 0xE000 {
					return 12, utf8.AppendRune(out, 0x10000+(r-0xD800)<<10+(lo-0xDC00))
				}
			}
			return 6, utf8.AppendRune(out, r)
		case 'x', 'X':
			if r, ok := hexRune(rest[2:], 2); ok {
				return 4, append(out, byte(r))
			}
		case '\\', '/', '"', '\'':
			return 2, append(out, rest[1])
		case 'n':
			return 2, append(out, '\n')
		case 't':
			return 2, append(out, '\t')
		case 'r':
			return 2, append(out, '\r')
		case 'b', 'f':
			return 2, append(out, ' ')
		}
	case '%':
		if len(rest) >= 2 && (rest[1] == 'u' || rest[1] == 'U') {
			if r, ok := hexRune(rest[2:], 4); ok {
				return 6, utf8.AppendRune(out, r)
			}
		}
		if r, ok := hexRune(rest[1:], 2); ok {
			return 3, append(out, byte(r))
		}
	case '=':
		if r, ok := hexRune(rest[1:], 2); ok {
			return 3, append(out, byte(r))
		}
	case '&':
		if n := entityLen(rest); n > 0 {
			return n, append(out, html.UnescapeString(string(rest[:n]))...)
		}
	}
	return 0, nil
}

// hexRune reads n hex digits at the start of b.
func hexRune(b []byte, n int) (rune, bool) {
	if len(b) < n {
		return 0, false
	}
	var r rune
	for _, c := range b[:n] {
		if hexValue[c] == 0xff {
			return 0, false
		}
		r = r<<4 | rune(hexValue[c])
	}
	return r, true
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

// entityLen is the length of an HTML character reference at the start of
// s (&#84; &#x54; &lowbar;, the semicolon optional after digits), 0 if
// none.
func entityLen(s []byte) int {
	if len(s) < 3 || s[0] != '&' {
		return 0
	}
	i := 1
	switch {
	case s[1] == '#' && len(s) > 3 && (s[2] == 'x' || s[2] == 'X'):
		i = 3
		for i < len(s) && i < 10 && hexValue[s[i]] != 0xff {
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
		for i < len(s) && i < 12 && isAlnum(s[i]) {
			i++
		}
		if i == 1 || i >= len(s) || s[i] != ';' {
			return 0
		}
		if html.UnescapeString(string(s[:i+1])) == string(s[:i+1]) {
			return 0 // not a name HTML knows
		}
	}
	if i < len(s) && s[i] == ';' {
		i++
	}
	return i
}

// compact is s without what is not a letter or a digit.
func compact(s string) []byte {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if isAlnum(s[i]) {
			out = append(out, s[i])
		}
	}
	return out
}

// folded is s without what is not a letter or a digit, its letters in
// lower case.
func folded(s string) []byte {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if f := foldValue[s[i]]; f != 0 {
			out = append(out, f)
		}
	}
	return out
}

// foldValue is a letter or a digit as the search compares it (a letter in
// lower case), 0 for any other byte.
var foldValue = func() (t [256]byte) {
	for c := range 256 {
		switch {
		case 'A' <= c && c <= 'Z':
			t[c] = byte(c) + 'a' - 'A'
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
			t[c] = byte(c)
		}
	}
	return t
}()

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

var hexValue = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xff
	}
	for i, c := range "0123456789abcdef" {
		t[c] = byte(i)
		t[strings.ToUpper(string(c))[0]] = byte(i)
	}
	return t
}()

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}
