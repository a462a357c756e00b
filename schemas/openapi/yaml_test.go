package openapi

import (
	"encoding/json"
	"reflect"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/tcmkit/tcmkit/schemas/jsondoc"
)

// Every string reads back as itself, quoted or not, in block and flow
// position; so do numbers, booleans, null and empty collections.
func TestYAMLReadsBackAsWritten(t *testing.T) {
	tricky := []any{"null", "Null", "true", "yes", "no", "on", "y", "~", "", " x", "x ", "a: b", "a:b", "x:",
		"#x", "a #b", "a#b", "-x", "- x", "?x", "1", "1.0", "0x1F", "1e3", ".5", "@x", "`x", "'x'", "\"x\"",
		"{x}", "[x]", "a, b", "x\ny", "tab\there", "é 🍞", "$ref", "#/components/schemas/X", "A counter: an integer >= 0",
		"use POST", "a > b", "a|b", "*x", "&x", "!x", "%x", "x\\y", "\u2028"}
	in := jsondoc.NewObj(
		"strings", tricky,
		"flow", []any{"integer", "null", "a, b", "x"},
		"keys", jsondoc.NewObj("null", json.Number("1"), "a: b", json.Number("2"), "$ref", json.Number("3"), "1", json.Number("4")),
		"scalars", []any{json.Number("0"), json.Number("-1.5"), true, false, nil},
		"empty", jsondoc.NewObj("o", jsondoc.NewObj(), "a", []any{}),
		"nested", []any{jsondoc.NewObj("a", []any{jsondoc.NewObj("b", "c")}, "d", jsondoc.NewObj("e", "f")), []any{[]any{"x"}}},
	)
	out := appendYAML(nil, jsondoc.NewObj("doc", in), 2)
	var got any
	if err := yaml.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var want any
	if err := json.Unmarshal(jsondoc.Encode(jsondoc.NewObj("doc", in)), &want); err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(got)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var gotJSON any
	if err := json.Unmarshal(raw, &gotJSON); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(gotJSON, want) {
		t.Errorf("read back:\n%s\nwant:\n%s\nYAML:\n%s", raw, jsondoc.Encode(in), out)
	}
}
