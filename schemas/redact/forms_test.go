package redact_test

import (
	"encoding/hex"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/tcmkit/tcmkit/schemas/redact"
	"github.com/tcmkit/tcmkit/schemas/redact/redacttest"
)

// TestFormsServersUse: a key as Unicode's compatibility forms, byte arrays
// in decimal, eight-digit escapes and hex in odd groups spell it (the forms
// the README lists) never comes out of String.
func TestFormsServersUse(t *testing.T) {
	r := redact.New(key)
	decimal := func(sep string) string {
		var b []string
		for i := range len(key) {
			b = append(b, fmt.Sprint(key[i]))
		}
		return strings.Join(b, sep)
	}
	mapped := func(f func(c rune) rune) string { return strings.Map(f, key) }
	h := hex.EncodeToString([]byte(key))
	for name, text := range map[string]string{
		"fullwidth, in a header":         "> Authorization: Bearer " + redacttest.Fullwidth(key),
		"fullwidth, in JSON":             `{"auth":"Bearer ` + redacttest.Fullwidth(key) + `"}`,
		"fullwidth, percent-encoded":     "?k=" + percent(redacttest.Fullwidth(key)),
		"Node Buffer JSON":               `{"echo":{"type":"Buffer","data":[` + decimal(",") + `]}}`,
		"an indented byte array":         "[\n    " + decimal(",\n    ") + "\n]",
		"decimal bytes joined by blanks": "bytes: " + decimal(" "),
		"decimal bytes in a query":       "?k=" + url.QueryEscape("["+decimal(", ")+"]"),
		`\U every character`:             escapeU(key),
		"hex in groups of three":         "hex: " + strings.Join(groups(h, 3), " "),
		"hex in groups of five, colons":  "hex=" + strings.Join(groups(h, 5), ":"),
		"circled letters": mapped(func(c rune) rune {
			if 'a' <= c && c <= 'z' {
				return 0x24D0 + c - 'a'
			}
			return c
		}),
		"mathematical bold": mapped(func(c rune) rune {
			if 'A' <= c && c <= 'Z' {
				return 0x1D400 + c - 'A'
			}
			return c
		}),
	} {
		if leak := redacttest.Leaks(r.String(text), text, key); leak != "" || strings.Contains(r.String(text), key[len(key)-12:]) {
			t.Errorf("%s: %q came out as %q", name, text, r.String(text))
		}
	}
}

// TestFormsLeaveOtherTextAlone: numbers, fullwidth words and hex that hold
// no key pass unchanged.
func TestFormsLeaveOtherTextAlone(t *testing.T) {
	r := redact.New(key)
	for _, text := range []string{
		"[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]",
		`{"type":"Buffer","data":[104,101,108,108,111,32,119,111,114,108,100,33]}`,
		"ＡＢＣＤＥＦＧＨ ｗｏｒｌｄ ①②③",
		"a 746 36d 5f6 1 cafe bad",
		`\U0001F600 \U0001F601`,
	} {
		if got := r.String(text); got != text {
			t.Errorf("%q became %q", text, got)
		}
	}
}

func percent(s string) string {
	var b strings.Builder
	for i := range len(s) {
		fmt.Fprintf(&b, "%%%02X", s[i])
	}
	return b.String()
}

func groups(s string, n int) []string {
	var out []string
	for len(s) > n {
		out, s = append(out, s[:n]), s[n:]
	}
	return append(out, s)
}

func escapeU(s string) string {
	var b strings.Builder
	for _, c := range s {
		fmt.Fprintf(&b, `\U%08X`, c)
	}
	return b.String()
}
