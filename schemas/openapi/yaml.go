package openapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"regexp"
	"strings"

	"github.com/tcmkit/tcmkit/schemas/jsondoc"
)

// The lines that enclose the generated part of openapi.yaml. Everything
// between them is written by Update; everything else is written by hand.
const (
	BeginMarker = "  # BEGIN GENERATED components/schemas: written by `go generate ./schemas` from the schema files; edit those, not this."
	EndMarker   = "  # END GENERATED components/schemas"
)

// Update returns the OpenAPI document doc with its generated part (between
// BeginMarker and EndMarker) rewritten from the schema files of fsys.
func Update(doc []byte, fsys fs.FS) ([]byte, error) {
	comps, err := Build(fsys)
	if err != nil {
		return nil, err
	}
	begin := bytes.Index(doc, []byte("\n"+BeginMarker+"\n"))
	end := bytes.Index(doc, []byte("\n"+EndMarker+"\n"))
	if begin < 0 || end < begin {
		return nil, fmt.Errorf("openapi: the document has no line %q followed by a line %q", BeginMarker, EndMarker)
	}
	var b bytes.Buffer
	b.Write(doc[:begin+1+len(BeginMarker)+1])
	b.WriteString("  schemas:\n")
	b.Write(appendYAML(nil, Schemas(comps), 4))
	b.Write(doc[end+1:])
	return b.Bytes(), nil
}

// appendYAML writes a JSON value (as jsondoc decodes it, objects as *Obj)
// as block YAML, every line indented by indent spaces. It knows only what
// the schema components hold: objects, arrays, strings, numbers, booleans
// and null. Strings are plain where YAML reads them back as the same
// string, otherwise double-quoted with JSON's escapes (which YAML reads
// the same way).
func appendYAML(b []byte, v any, indent int) []byte {
	pad := strings.Repeat(" ", indent)
	switch v := v.(type) {
	case *jsondoc.Obj:
		if len(v.Keys()) == 0 {
			return append(b, pad+"{}\n"...)
		}
		for _, k := range v.Keys() {
			val, _ := v.Get(k)
			b = append(b, pad...)
			b = appendScalar(b, k, false)
			b = append(b, ':')
			b = appendValue(b, val, indent)
		}
		return b
	case []any:
		if len(v) == 0 {
			return append(b, pad+"[]\n"...)
		}
		for _, e := range v {
			b = append(b, pad+"-"...)
			if o, ok := e.(*jsondoc.Obj); ok && len(o.Keys()) > 0 {
				// The first member goes on the dash's line.
				inner := appendYAML(nil, o, indent+2)
				b = append(b, ' ')
				b = append(b, inner[indent+2:]...)
				continue
			}
			b = appendValue(b, e, indent)
		}
		return b
	}
	b = append(b, pad...)
	b = appendScalar(b, v, false)
	return append(b, '\n')
}

// appendValue writes what follows "key:" or "-": a scalar, an empty or
// short flow collection on the same line, or a block on the next lines.
func appendValue(b []byte, v any, indent int) []byte {
	switch x := v.(type) {
	case *jsondoc.Obj:
		if len(x.Keys()) == 0 {
			return append(b, " {}\n"...)
		}
		b = append(b, '\n')
		return appendYAML(b, x, indent+2)
	case []any:
		if flow, ok := flowList(x); ok && indent+len(flow) < 100 {
			b = append(b, ' ')
			b = append(b, flow...)
			return append(b, '\n')
		}
		b = append(b, '\n')
		return appendYAML(b, x, indent+2)
	}
	b = append(b, ' ')
	b = appendScalar(b, v, false)
	return append(b, '\n')
}

// flowList writes a list of scalars as [a, b, c].
func flowList(list []any) ([]byte, bool) {
	b := []byte{'['}
	for i, e := range list {
		switch e.(type) {
		case *jsondoc.Obj, []any:
			return nil, false
		}
		if i > 0 {
			b = append(b, ", "...)
		}
		b = appendScalar(b, e, true)
	}
	return append(b, ']'), true
}

func appendScalar(b []byte, v any, flow bool) []byte {
	switch v := v.(type) {
	case nil:
		return append(b, "null"...)
	case bool, json.Number:
		return jsondoc.Append(b, v)
	case string:
		if plain(v, flow) {
			return append(b, v...)
		}
		return jsondoc.AppendString(b, v)
	}
	panic(fmt.Sprintf("openapi: no YAML for %T", v))
}

// plainText is what may be written unquoted: it starts with a letter or $
// and holds only characters that never start a YAML construct inside a
// plain scalar; ": ", " #" and a trailing ":" are excluded below.
var plainText = regexp.MustCompile(`^[A-Za-z$][A-Za-z0-9 _.,;:()/'+<>=$-]*$`)

// plain reports whether s reads back as the same string when unquoted.
func plain(s string, flow bool) bool {
	if !plainText.MatchString(s) || strings.HasSuffix(s, " ") || strings.HasSuffix(s, ":") ||
		strings.Contains(s, ": ") || strings.Contains(s, " #") || flow && strings.Contains(s, ",") {
		return false
	}
	switch strings.ToLower(s) {
	case "null", "true", "false", "yes", "no", "on", "off", "y", "n":
		return false
	}
	return true
}
