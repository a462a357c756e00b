package variant

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"hash/fnv"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// A JSON document whose objects keep their members' order: decoded from
// the server's answer, edited, and written in the draw's layout.

// object is a JSON object in member order.
type object struct {
	keys []string
	vals []any
}

func (o *object) get(k string) (any, bool) {
	if o == nil {
		return nil, false
	}
	if i := slices.Index(o.keys, k); i >= 0 {
		return o.vals[i], true
	}
	return nil, false
}

// set replaces k's value, or appends k.
func (o *object) set(k string, v any) {
	if i := slices.Index(o.keys, k); i >= 0 {
		o.vals[i] = v
		return
	}
	o.keys, o.vals = append(o.keys, k), append(o.vals, v)
}

// del removes k.
func (o *object) del(k string) {
	if i := slices.Index(o.keys, k); i >= 0 {
		o.keys, o.vals = slices.Delete(o.keys, i, i+1), slices.Delete(o.vals, i, i+1)
	}
}

func (o *object) str(k string) string {
	v, _ := o.get(k)
	s, _ := v.(string)
	return s
}

func (o *object) list(k string) []any {
	v, _ := o.get(k)
	l, _ := v.([]any)
	return l
}

func number(n int) json.Number { return json.Number(strconv.Itoa(n)) }

// parse decodes JSON into objects, []any, json.Number, string, bool, nil.
func parse(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	v, err := parseValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("variant: trailing data after the JSON value")
	}
	return v, nil
}

func parseValue(dec *json.Decoder) (any, error) {
	t, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := t.(type) {
	case json.Delim:
		switch t {
		case '{':
			o := &object{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				v, err := parseValue(dec)
				if err != nil {
					return nil, err
				}
				o.keys, o.vals = append(o.keys, kt.(string)), append(o.vals, v)
			}
			_, err := dec.Token()
			return o, err
		case '[':
			list := []any{}
			for dec.More() {
				v, err := parseValue(dec)
				if err != nil {
					return nil, err
				}
				list = append(list, v)
			}
			_, err := dec.Token()
			return list, err
		}
		return nil, errors.New("variant: unexpected delimiter")
	}
	return t, nil
}

// parseObject decodes a JSON object; nil when raw is none.
func parseObject(raw []byte) (*object, error) {
	v, err := parse(raw)
	o, _ := v.(*object)
	return o, err
}

// toOrdered turns a value of encoding/json's making (maps) into one of
// ours, members sorted; ordered values pass unchanged.
func toOrdered(v any) any {
	switch v.(type) {
	case *object, []any, string, json.Number, bool, nil:
		return v
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return v
	}
	if o, err := parse(raw); err == nil {
		return o
	}
	return v
}

// render writes v in the draw's layout.
func (d Draw) render(v any) []byte {
	var b bytes.Buffer
	d.write(&b, v, 0)
	if d.Newline {
		b.WriteString(d.newline())
	}
	return b.Bytes()
}

func (d Draw) newline() string {
	if d.CRLF {
		return "\r\n"
	}
	return "\n"
}

func (d Draw) write(b *bytes.Buffer, v any, depth int) {
	sep, colon := ",", ":"
	if d.Spaced || d.Indent != "" {
		colon = ": "
	}
	if d.Spaced && d.Indent == "" {
		sep = ", "
	}
	item := func(i, depth int) {
		if i > 0 {
			b.WriteString(sep)
		}
		if d.Indent != "" {
			b.WriteString(d.newline())
			b.WriteString(strings.Repeat(d.Indent, depth+1))
		}
	}
	close := func(c byte, n, depth int) {
		if d.Indent != "" && n > 0 {
			b.WriteString(d.newline())
			b.WriteString(strings.Repeat(d.Indent, depth))
		}
		b.WriteByte(c)
	}
	switch v := v.(type) {
	case *object:
		b.WriteByte('{')
		for i, k := range d.order(v) {
			item(i, depth)
			d.str(b, v.keys[k])
			b.WriteString(colon)
			d.write(b, v.vals[k], depth+1)
		}
		close('}', len(v.keys), depth)
	case []any:
		b.WriteByte('[')
		for i, x := range v {
			item(i, depth)
			d.write(b, x, depth+1)
		}
		close(']', len(v), depth)
	case string:
		d.str(b, v)
	case json.Number:
		b.WriteString(string(v))
	case bool:
		b.WriteString(strconv.FormatBool(v))
	case nil:
		b.WriteString("null")
	default:
		raw, _ := json.Marshal(v)
		b.Write(raw)
	}
}

// order is the order the members of o are written in, as indexes.
func (d Draw) order(o *object) []int {
	idx := make([]int, len(o.keys))
	for i := range idx {
		idx[i] = i
	}
	switch d.KeyOrder {
	case "sorted":
		slices.SortStableFunc(idx, func(a, b int) int { return strings.Compare(o.keys[a], o.keys[b]) })
	case "reversed":
		slices.Reverse(idx)
	case "hashed":
		slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(d.keyHash(o.keys[a]), d.keyHash(o.keys[b])) })
	}
	return idx
}

func (d Draw) keyHash(k string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(strconv.FormatUint(d.N, 10)))
	h.Write([]byte(k))
	return h.Sum64()
}

const hexDigits = "0123456789abcdef"

// str writes a JSON string with the draw's escaping: runs of characters
// that need no escape are written whole (titles may be long).
func (d Draw) str(b *bytes.Buffer, s string) {
	b.WriteByte('"')
	u := func(r rune) {
		b.WriteString(`\u`)
		for shift := 12; shift >= 0; shift -= 4 {
			b.WriteByte(hexDigits[(r>>shift)&0xf])
		}
	}
	plain := 0 // where the run of unescaped characters began
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		var esc string
		switch {
		case r == '"':
			esc = `\"`
		case r == '\\':
			esc = `\\`
		case r == '\n':
			esc = `\n`
		case r == '\r':
			esc = `\r`
		case r == '\t':
			esc = `\t`
		case r < 0x20 || r == 0x2028 || r == 0x2029 || r == utf8.RuneError:
		case r == '/' && d.Escape == "slash":
			esc = `\/`
		case (r == '<' || r == '>' || r == '&') && d.Escape == "html":
		case r >= 0x80 && d.Escape == "ascii":
		default:
			i += size
			continue
		}
		b.WriteString(s[plain:i])
		switch {
		case esc != "":
			b.WriteString(esc)
		case r > 0xffff:
			r -= 0x10000
			u(0xd800 + (r>>10)&0x3ff)
			u(0xdc00 + r&0x3ff)
		default:
			u(r)
		}
		i += size
		plain = i
	}
	b.WriteString(s[plain:])
	b.WriteByte('"')
}
