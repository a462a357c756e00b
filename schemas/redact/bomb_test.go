package redact_test

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"runtime"
	"strings"
	"testing"

	"github.com/tcmkit/tcmkit/schemas/redact"
)

// A compressed stream inflates to at most 64 times its size, and a text's
// streams to 16 times the text: a bomb (16 MB of one byte, gzip, base64:
// 22 KB) costs no more memory than that, and a key encoded after it in
// the same text is still found (a bomb spends the compressed streams'
// budget, not the one of the text's other views).
func TestCompressedBombIsBounded(t *testing.T) {
	var z bytes.Buffer
	w, _ := gzip.NewWriterLevel(&z, gzip.BestCompression)
	w.Write(bytes.Repeat([]byte("a"), 16<<20))
	w.Close()
	bomb := base64.StdEncoding.EncodeToString(z.Bytes())
	text := `{"state":"` + bomb + `","again":"` + bomb + `","k":"` + base64.StdEncoding.EncodeToString([]byte(key)) + `"}`
	r := redact.New(key)
	r.String("warm up the pool")
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	out := r.String(text)
	runtime.ReadMemStats(&after)
	if strings.Contains(out, base64.StdEncoding.EncodeToString([]byte(key))[:16]) {
		t.Errorf("the key after the bomb was not found")
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 24<<20 {
		t.Errorf("redacting a %d KB text allocated %d MB", len(text)>>10, alloc>>20)
	}
}

// Many headers that begin no stream cost a try each, within the budget.
func TestManyStreamHeadersAreBounded(t *testing.T) {
	text := strings.Repeat(base64.StdEncoding.EncodeToString([]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0, 0xff, 0x78, 0x9c}), 20000) + " " + key
	out := redact.New(key).String(text)
	if strings.Contains(out, key[4:]) {
		t.Errorf("the key after the headers was not found")
	}
}
