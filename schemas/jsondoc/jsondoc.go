// Package jsondoc reads and edits decoded JSON documents: trees of
// map[string]any or *Obj (an object that keeps its key order), []any,
// json.Number, string, bool and nil. It is the one kit the simulator, the
// suite and the fixtures share: decoding with exact numbers, JSON pointers
// (RFC 6901) to get, set, delete and walk, excerpts for messages, and one
// JSON encoder.
package jsondoc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Decode parses one JSON document: numbers as json.Number, so that 2^53-1
// and 1.5 survive exactly, and trailing data is an error.
func Decode(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return nil, err
	}
	if err := atEnd(dec); err != nil {
		return nil, err
	}
	return doc, nil
}

// atEnd reports trailing data after the decoded value: anything but
// whitespace, whether or not it would begin a JSON value ("garbage", a
// comma) as much as a second value.
func atEnd(dec *json.Decoder) error {
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("trailing data after the JSON value")
	}
	return nil
}

// DecodeOrdered is Decode with every object decoded as an *Obj in the order
// of its keys in raw, for a program that rewrites a document a person reads
// (a schema file) and must keep its order. A repeated key keeps its first
// place and its last value.
func DecodeOrdered(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	v, err := decodeOrdered(dec)
	if err != nil {
		return nil, err
	}
	if err := atEnd(dec); err != nil {
		return nil, err
	}
	return v, nil
}

func decodeOrdered(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch tok {
	case json.Delim('{'):
		o := NewObj()
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return nil, err
			}
			v, err := decodeOrdered(dec)
			if err != nil {
				return nil, err
			}
			o.Set(k.(string), v)
		}
		_, err := dec.Token() // '}'
		return o, err
	case json.Delim('['):
		a := []any{}
		for dec.More() {
			v, err := decodeOrdered(dec)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		_, err := dec.Token() // ']'
		return a, err
	}
	return tok, nil // string, json.Number, bool or nil
}

// Obj is a JSON object that keeps its keys in insertion order, so that the
// encoded bytes depend only on how it was built, never on map iteration.
type Obj struct {
	keys []string
	vals []any
}

// NewObj builds an object from key, value pairs.
func NewObj(kv ...any) *Obj {
	o := &Obj{keys: make([]string, 0, len(kv)/2+2), vals: make([]any, 0, len(kv)/2+2)}
	for i := 0; i+1 < len(kv); i += 2 {
		o.Set(kv[i].(string), kv[i+1])
	}
	return o
}

// Get returns the value of key k.
func (o *Obj) Get(k string) (any, bool) {
	if i := slices.Index(o.keys, k); i >= 0 {
		return o.vals[i], true
	}
	return nil, false
}

// Set replaces the value of k in place, or appends k at the end.
func (o *Obj) Set(k string, v any) {
	if i := slices.Index(o.keys, k); i >= 0 {
		o.vals[i] = v
		return
	}
	o.keys = append(o.keys, k)
	o.vals = append(o.vals, v)
}

// Del removes k; it reports whether k was there.
func (o *Obj) Del(k string) bool {
	i := slices.Index(o.keys, k)
	if i < 0 {
		return false
	}
	o.keys = slices.Delete(o.keys, i, i+1)
	o.vals = slices.Delete(o.vals, i, i+1)
	return true
}

// Keys lists the keys in order.
func (o *Obj) Keys() []string { return o.keys }

// Swap exchanges the members at positions i and j (for a shuffle: key
// order is not part of JSON).
func (o *Obj) Swap(i, j int) {
	o.keys[i], o.keys[j] = o.keys[j], o.keys[i]
	o.vals[i], o.vals[j] = o.vals[j], o.vals[i]
}

// MarshalJSON encodes the object with its keys in order.
func (o *Obj) MarshalJSON() ([]byte, error) { return Append(nil, o), nil }

// Raw is an encoded JSON value, written as is.
type Raw []byte

// Encode returns the compact encoding of a document. Text is written as
// UTF-8, not escaped (no HTML escaping either): clients must read it either
// way, and raw UTF-8 is the harder and more common case.
func Encode(v any) []byte { return Append(make([]byte, 0, 512), v) }

// Append appends the encoding of v to b. Maps are written with sorted keys,
// like encoding/json. It panics on a type that is not part of a document.
func Append(b []byte, v any) []byte {
	switch v := v.(type) {
	case nil:
		return append(b, "null"...)
	case Raw:
		return append(b, v...)
	case json.RawMessage:
		return append(b, v...)
	case bool:
		return strconv.AppendBool(b, v)
	case string:
		return AppendString(b, v)
	case json.Number:
		if v == "" {
			return append(b, '0')
		}
		return append(b, v...)
	case int:
		return strconv.AppendInt(b, int64(v), 10)
	case int64:
		return strconv.AppendInt(b, v, 10)
	case float64:
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return append(b, "null"...) // JSON has no such number
		}
		return strconv.AppendFloat(b, v, 'f', -1, 64)
	case *Obj:
		b = append(b, '{')
		for i, k := range v.keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = AppendString(b, k)
			b = append(b, ':')
			b = Append(b, v.vals[i])
		}
		return append(b, '}')
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = AppendString(b, k)
			b = append(b, ':')
			b = Append(b, v[k])
		}
		return append(b, '}')
	case []any:
		b = append(b, '[')
		for i, e := range v {
			if i > 0 {
				b = append(b, ',')
			}
			b = Append(b, e)
		}
		return append(b, ']')
	case []string:
		b = append(b, '[')
		for i, e := range v {
			if i > 0 {
				b = append(b, ',')
			}
			b = AppendString(b, e)
		}
		return append(b, ']')
	default:
		raw, err := json.Marshal(v)
		if err != nil {
			panic(fmt.Sprintf("jsondoc: cannot encode %T: %v", v, err))
		}
		return append(b, raw...)
	}
}

const hexDigits = "0123456789abcdef"

// AppendString appends s as a JSON string. Invalid UTF-8 becomes U+FFFD;
// control characters, U+2028 and U+2029 are escaped (so a line stays one
// line for JavaScript readers too).
func AppendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == '\u2028' || r == '\u2029' || r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			if r == utf8.RuneError {
				b = append(b, `\ufffd`...)
			} else {
				b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			}
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// Excerpt shortens s to at most max bytes (and an ellipsis), cut at a rune
// boundary, with invalid UTF-8 replaced: safe to quote in a message or a
// JSON body.
func Excerpt(s string, max int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// Quote is the JSON encoding of a value, shortened by Excerpt.
func Quote(v any, max int) string { return Excerpt(string(Encode(v)), max) }
