package redact_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/tcmkit/tcmkit/schemas/redact"
	"github.com/tcmkit/tcmkit/schemas/redact/redacttest"
)

var updateOutputs = flag.Bool("update-outputs", false, "rewrite testdata/outputs.sha256 from the current code")

// TestOutputsUnchanged pins what the redactor writes, byte for byte, for a
// large and varied corpus: the promise's generated cases (keys, their
// secret parts, fragments and strings that are no key's, under random
// stacks of the encodings, in random texts), written through String, a
// Writer in random pieces and FragmentSet.Replace (with a form that shows
// what each span decoded to), and texts like the suite's (feed pages,
// transcript blocks, with a key and without, a compressed bomb). A change
// made to cost less must leave every output as it was; one that means to
// change an output regenerates the file (go test -run TestOutputsUnchanged
// -update-outputs) and says why. The corpus is made by redacttest and
// compress/gzip: a change to either (a new layer, a Go whose compressor
// writes other bytes) changes texts, not the redactor; regenerate the file
// then from the code before the change, and check the code after it.
func TestOutputsUnchanged(t *testing.T) {
	got := outputCorpus()
	const path = "testdata/outputs.sha256"
	if *updateOutputs {
		var b strings.Builder
		for _, c := range got {
			fmt.Fprintf(&b, "%s %s\n", c.name, c.sum)
		}
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, sum, _ := strings.Cut(sc.Text(), " ")
		want[name] = sum
	}
	if len(want) != len(got) {
		t.Errorf("%d outputs pinned, %d made", len(want), len(got))
	}
	bad := 0
	for _, c := range got {
		if want[c.name] != c.sum {
			if bad++; bad <= 20 {
				t.Errorf("%s: output changed", c.name)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d outputs changed (if the corpus changed, not the redactor, see the test's comment)", bad, len(got))
	}
}

type pinned struct{ name, sum string }

// outputCorpus makes every case of TestOutputsUnchanged and the digest of
// its output (the outputs hold keys: only digests are kept).
func outputCorpus() []pinned {
	var out []pinned
	add := func(name, s string) {
		sum := sha256.Sum256([]byte(s))
		out = append(out, pinned{name, hex.EncodeToString(sum[:8])})
	}
	show := func(d string) string { return "<" + d + ">" }
	for seed := range uint64(1500) {
		r := rand.New(rand.NewPCG(seed, 41))
		key := redacttest.Key(r)
		red := redact.New(key, redacttest.Key(r))
		set := redact.NewFragmentSet()
		set.Add(key)
		secret := key[strings.IndexByte(key, '_')+1:]
		what := key
		switch r.IntN(5) {
		case 1:
			what = secret
		case 2: // a fragment, perhaps shorter than MinSecret
			n := 5 + r.IntN(16)
			i := r.IntN(len(secret) - n + 1)
			what = secret[i : i+n]
		case 3: // no key's
			what = redacttest.Key(r)
		case 4: // a key cut in two
			i := 2 + r.IntN(len(key)-4)
			what = key[:i] + redacttest.Text(r, 1+r.IntN(20)) + key[i:]
		}
		stack := redacttest.Stack(r)
		text := redacttest.Text(r, r.IntN(300)) + redacttest.Encode(r, stack, what) + redacttest.Text(r, r.IntN(300))
		name := fmt.Sprintf("promise/%d", seed)
		add(name+"/String", red.String(text))
		s, found := set.Replace(text, show)
		add(name+"/Replace", fmt.Sprint(found, s))
		if seed%4 == 0 {
			var b strings.Builder
			w := red.Writer(&b)
			for rest := text; rest != ""; {
				n := min(len(rest), 1+r.IntN(64))
				w.Write([]byte(rest[:n]))
				rest = rest[n:]
			}
			w.Flush()
			add(name+"/Writer", b.String())
		}
	}
	for i, tc := range suiteTexts() {
		add(fmt.Sprintf("suite/%d/String", i), tc.red.String(tc.text))
	}
	return out
}

type redactCase struct {
	red  *redact.Redactor
	text string
}

// suiteTexts are texts like the ones the suite writes: feed pages and
// transcript blocks, with a key and without, long ones that are read in
// chunks, and a compressed bomb.
func suiteTexts() []redactCase {
	r := rand.New(rand.NewPCG(41, 41))
	key, other := redacttest.Key(r), redacttest.Key(r)
	red := redact.New(key, other)
	var cases []redactCase
	for i := range 40 {
		page := feedPage(r, 1+r.IntN(60))
		auth := redact.Form(key)
		if i%2 == 0 {
			auth = key
		}
		cases = append(cases, redactCase{red, transcriptBlock(auth, page)})
		cases = append(cases, redactCase{red, page})
	}
	var long strings.Builder
	for long.Len() < 600<<10 {
		long.WriteString(transcriptBlock(key, feedPage(r, 20)))
		long.WriteString(redacttest.Encode(r, redacttest.Stack(r), key))
	}
	cases = append(cases, redactCase{red, long.String()})

	var z bytes.Buffer
	w, _ := gzip.NewWriterLevel(&z, gzip.BestCompression)
	w.Write(bytes.Repeat([]byte("a"), 4<<20))
	w.Close()
	bomb := base64.StdEncoding.EncodeToString(z.Bytes())
	cases = append(cases, redactCase{red, `{"state":"` + bomb + `","again":"` + bomb + `","k":"` + base64.StdEncoding.EncodeToString([]byte(key)) + `"}`})
	return cases
}

// feedPage is a FeedPage of n events as the simulator writes one, with a
// cursor of base64.
func feedPage(r *rand.Rand, n int) string {
	const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	word := func(n int) string {
		w := make([]byte, n)
		for i := range w {
			w[i] = alnum[r.IntN(len(alnum))]
		}
		return string(w)
	}
	var b strings.Builder
	b.WriteString(`{"events":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":"evt_%016x","type":"title_changed","channel":{"id":"UC%s","title":"%s %s"},"video":{"id":"%s","title":"%s"},"createdAt":%d}`,
			r.Uint64(), word(22), word(5), word(8), word(11), word(1+r.IntN(30)), 1796000000000+r.Int64N(1e10))
	}
	cursor := base64.RawURLEncoding.EncodeToString([]byte(fmt.Sprintf(`{"before":%d,"id":"evt_%016x"}`, r.Int64N(1e13), r.Uint64())))
	fmt.Fprintf(&b, `],"nextCursor":"%s"}`, cursor)
	return b.String()
}

// transcriptBlock is one exchange of the client's transcript: a feed
// request sent with auth, and its answer (the body cut as the client
// cuts it).
func transcriptBlock(auth, page string) string {
	body := page
	if len(body) > 600 {
		body = body[:600] + "…"
	}
	return "=== GET /api/public-feed?limit=50&cursor=eyJiZWZvcmUiOjE3OTYwMDAwMDAwMDB9\n" +
		"> Authorization: Bearer " + auth + "\n" +
		"> Accept: application/json\n" +
		"< 200 OK (3ms)\n" +
		"< Content-Type: application/json; charset=utf-8\n" +
		"< Content-Length: " + fmt.Sprint(len(page)) + "\n" +
		"< Date: Wed, 02 Dec 2026 09:51:16 GMT\n" +
		"< " + body + "\n\n"
}
