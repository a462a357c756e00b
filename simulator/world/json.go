package world

import (
	"strconv"

	"github.com/tcmkit/tcmkit/schemas/jsondoc"
)

// The documents are written by hand rather than with encoding/json: events
// are encoded once each (a million of them for the big benchmark world), and
// a tracked-videos answer is assembled per request.

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string (see jsondoc.AppendString).
func appendString(b []byte, s string) []byte { return jsondoc.AppendString(b, s) }

// appendKey appends ,"key": (or "key": first when first is true).
func appendKey(b []byte, key string, first bool) []byte {
	if !first {
		b = append(b, ',')
	}
	b = append(b, '"')
	b = append(b, key...)
	return append(b, '"', ':')
}

func appendInt(b []byte, n int64) []byte { return strconv.AppendInt(b, n, 10) }

// appendCount appends a counter, or null when hidden.
func appendCount(b []byte, n int64, hidden bool) []byte {
	if hidden {
		return append(b, "null"...)
	}
	return strconv.AppendInt(b, n, 10)
}

func appendBool(b []byte, v bool) []byte { return strconv.AppendBool(b, v) }

func appendStrings(b []byte, ss []string) []byte {
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, s)
	}
	return append(b, ']')
}
