//go:build unix

package redact_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tcmkit/tcmkit/schemas/redact"
	"github.com/tcmkit/tcmkit/schemas/redact/redacttest"
)

// BenchmarkReplaceVideosBody is the search the simulator runs on every
// tracked-videos request body (for the client judge): 20 ids of 11
// letters, digits, - and _, none of them a key, against the fragments of
// a few keys. cpu-ns/op is the process's CPU time (the machine may be
// shared; hence unix only).
func BenchmarkReplaceVideosBody(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	set := redact.NewFragmentSet()
	for range 4 {
		set.Add(redacttest.Key(r))
	}
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	ids := make([]string, 20)
	for i := range ids {
		id := make([]byte, 11)
		for j := range id {
			id[j] = alphabet[r.IntN(len(alphabet))]
		}
		ids[i] = `"` + string(id) + `"`
	}
	body := `{"videoIds":[` + strings.Join(ids, ",") + `]}`
	form := func(string) string { return "…" }
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	cpu0 := cpuTime()
	for b.Loop() {
		if _, found := set.Replace(body, form); found {
			b.Fatal("found a key in ids that hold none")
		}
	}
	if cpu := cpuTime() - cpu0; cpu > 0 {
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkStringJSON is the redactor over a large JSON text that holds no
// key (a report, a feed page a failure quotes): what any output costs. Its
// text is fixed, whatever encodings the promise grows to cover.
func BenchmarkStringJSON(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	red := redact.New("tcm_Q2x9fTk3LmPzR8sVwY4bN6cJdH1gK0aE", "tcm_Z7yXw6VuT5sR4qP3oN2mL1kJ0iH9gF8e")
	const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	word := func(n int) string {
		w := make([]byte, n)
		for i := range w {
			w[i] = alnum[r.IntN(len(alnum))]
		}
		return string(w)
	}
	var sb strings.Builder
	for sb.Len() < 1<<20 {
		fmt.Fprintf(&sb, `{"id":"evt_%016x","type":"title_changed","channel":{"id":"UC%s","title":"%s %s"},"videoId":"%s","createdAt":"2026-11-%02dT09:%02d:00Z","viewCount":%d},`+"\n",
			r.Uint64(), word(22), word(5), word(8), word(11), 1+r.IntN(28), r.IntN(60), r.IntN(1e9))
	}
	text := sb.String()
	b.SetBytes(int64(len(text)))
	cpu0 := cpuTime()
	for b.Loop() {
		red.String(text)
	}
	if cpu := cpuTime() - cpu0; cpu > 0 {
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
}

// BenchmarkStringTranscriptBlock is what the client pays on every exchange
// (and the reports again): one transcript block of a feed page of 50
// events, its Authorization header holding the key as sent ("key") or
// its hint already ("no key"), through a redactor of a run's three keys.
// BenchmarkReplaceTranscriptBlock is its search alone.
func BenchmarkStringTranscriptBlock(b *testing.B) {
	for _, tc := range transcriptBlocks() {
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(tc.text)))
			b.ReportAllocs()
			cpu0 := cpuTime()
			for b.Loop() {
				tc.red.String(tc.text)
			}
			if cpu := cpuTime() - cpu0; cpu > 0 {
				b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
			}
		})
	}
}

func BenchmarkReplaceTranscriptBlock(b *testing.B) {
	for _, tc := range transcriptBlocks() {
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(tc.text)))
			b.ReportAllocs()
			form := func(string) string { return redact.Fragment }
			for b.Loop() {
				tc.set.Replace(tc.text, form)
			}
		})
	}
}

type blockCase struct {
	name string
	red  *redact.Redactor
	set  *redact.FragmentSet
	text string
}

func transcriptBlocks() []blockCase {
	r := rand.New(rand.NewPCG(5, 6))
	keys := []string{redacttest.Key(r), redacttest.Key(r), redacttest.Key(r)}
	red := redact.New(keys...)
	set := redact.NewFragmentSet()
	for _, k := range keys {
		set.Add(k)
	}
	page := feedPage(r, 50)
	return []blockCase{
		{"key", red, set, transcriptBlock(keys[0], page)},
		{"no key", red, set, transcriptBlock(redact.Form(keys[0]), page)},
	}
}

// BenchmarkNew is building a redactor of a run's three keys.
func BenchmarkNew(b *testing.B) {
	r := rand.New(rand.NewPCG(7, 8))
	keys := []string{redacttest.Key(r), redacttest.Key(r), redacttest.Key(r)}
	b.ReportAllocs()
	for b.Loop() {
		redact.New(keys...)
	}
}
