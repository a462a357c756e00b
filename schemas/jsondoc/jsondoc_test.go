package jsondoc_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/tcmkit/tcmkit/schemas/jsondoc"
)

func TestDecodeKeepsNumbersExact(t *testing.T) {
	doc, err := jsondoc.Decode([]byte(`{"n":9007199254740993,"f":1.5}`))
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := jsondoc.Get(doc, "/n"); n != json.Number("9007199254740993") {
		t.Errorf("/n = %v", n)
	}
	// One JSON value and whitespace, nothing else: a reader of the first
	// value alone would take each of these.
	for _, bad := range []string{`{} {}`, `{}garbage`, `{},`, `{}]`, `1 2`} {
		if _, err := jsondoc.Decode([]byte(bad)); err == nil {
			t.Errorf("Decode(%s): trailing data accepted", bad)
		}
	}
	for _, good := range []string{"{}\n", " {} \t\r\n"} {
		if _, err := jsondoc.Decode([]byte(good)); err != nil {
			t.Errorf("Decode(%q): %v", good, err)
		}
	}
}

func TestDecodeOrderedKeepsKeyOrder(t *testing.T) {
	in := `{"z":{"b":1,"a":[{"y":null,"x":true}]},"a":"s","n":1.50}`
	doc, err := jsondoc.DecodeOrdered([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if got := string(jsondoc.Encode(doc)); got != in {
		t.Errorf("Encode(DecodeOrdered(x)) = %s, want %s", got, in)
	}
	if v, _ := jsondoc.Get(doc, "/z/a/0/x"); v != true {
		t.Errorf("/z/a/0/x = %v", v)
	}
	for _, bad := range []string{`{"a":1} 2`, `{"a":}`, `[1,`, `{"a":1}x`} {
		if _, err := jsondoc.DecodeOrdered([]byte(bad)); err == nil {
			t.Errorf("DecodeOrdered(%s) accepted", bad)
		}
	}
}

func TestEncodeRoundTrip(t *testing.T) {
	in := `{"a":[1,"x\u2028y",null,true],"b":{"c~/d":"é\"\\"}}`
	doc, err := jsondoc.Decode([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	got := string(jsondoc.Encode(doc))
	want := `{"a":[1,"x\u2028y",null,true],"b":{"c~/d":"é\"\\"}}`
	if got != want {
		t.Errorf("Encode = %s, want %s", got, want)
	}
	o := jsondoc.NewObj("z", 1, "a", []string{"<&>"})
	if got := string(jsondoc.Encode(o)); got != `{"z":1,"a":["<&>"]}` {
		t.Errorf("ordered object = %s", got)
	}
	if got := string(jsondoc.AppendString(nil, "\x01\xff")); got != `"\u0001\ufffd"` {
		t.Errorf("AppendString = %s", got)
	}
}

func TestPointers(t *testing.T) {
	doc, _ := jsondoc.Decode([]byte(`{"events":[{"id":"a","n":3},{"id":"b"}],"a/b":{"~":1}}`))
	if s, ok := jsondoc.String(doc, "/events/1/id"); !ok || s != "b" {
		t.Errorf("String = %q %v", s, ok)
	}
	if n, ok := jsondoc.Int(doc, "/events/0/n"); !ok || n != 3 {
		t.Errorf("Int = %d %v", n, ok)
	}
	if _, ok := jsondoc.Get(doc, "/events/01"); ok {
		t.Error("a non-canonical index resolved")
	}
	if n, ok := jsondoc.Int(doc, jsondoc.Pointer("a/b", "~")); !ok || n != 1 {
		t.Errorf("escaped pointer: %d %v", n, ok)
	}
	if _, err := jsondoc.Set(doc, "/events/0/id", "z"); err != nil {
		t.Fatal(err)
	}
	if !jsondoc.Delete(doc, "/events/1/id") || jsondoc.Has(doc, "/events/1/id") {
		t.Error("Delete did not delete")
	}
	var ptrs []string
	jsondoc.Walk(doc, func(ptr string, _ any) { ptrs = append(ptrs, ptr) })
	want := []string{"/a~1b", "/a~1b/~0", "/events", "/events/0", "/events/0/id", "/events/0/n", "/events/1"}
	if !slices.Equal(ptrs, want) {
		t.Errorf("Walk = %q, want %q", ptrs, want)
	}
	if jsondoc.Last("/a~1b/~0") != "~" {
		t.Error("Last does not unescape")
	}
}

func TestComparePointers(t *testing.T) {
	ps := []string{"/events/107", "/events/18", "/events/2/id", "/events/2", "", "/a"}
	slices.SortFunc(ps, jsondoc.ComparePointers)
	want := []string{"", "/a", "/events/2", "/events/2/id", "/events/18", "/events/107"}
	if !slices.Equal(ps, want) {
		t.Errorf("sorted = %q, want %q", ps, want)
	}
}

func TestExcerpt(t *testing.T) {
	if got := jsondoc.Excerpt("ééé", 3); got != "é…" {
		t.Errorf("Excerpt = %q", got)
	}
	if got := jsondoc.Excerpt("ab\xff", 10); got != "ab\uFFFD" {
		t.Errorf("Excerpt = %q", got)
	}
}
