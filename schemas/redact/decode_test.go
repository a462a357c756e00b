package redact_test

import (
	"encoding/base64"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/tcmkit/tcmkit/schemas/redact"
)

// encodings spell a text as a target may echo it, or a client send it.
var encodings = map[string]func(string) string{
	"percent every byte": func(s string) string {
		var b strings.Builder
		for i := range len(s) {
			fmt.Fprintf(&b, "%%%02X", s[i])
		}
		return b.String()
	},
	"percent query escape": func(s string) string { return url.QueryEscape("key=" + s + " and more") },
	"plus for space":       func(s string) string { return url.QueryEscape("key " + s[:10] + "%" + s[10:]) },
	"base64":               func(s string) string { return base64.StdEncoding.EncodeToString([]byte("k:" + s)) },
	"base64url":            func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte("xy=" + s + "?")) },
	"HTML decimal": func(s string) string {
		var b strings.Builder
		for i := range len(s) {
			fmt.Fprintf(&b, "&#%d;", s[i])
		}
		return b.String()
	},
	"HTML hex, some": func(s string) string {
		return s[:6] + "&#x" + fmt.Sprintf("%x", s[6]) + ";" + s[7:20] + "&lowbar;" + s[20:]
	},
	"JSON \\u some":       func(s string) string { return s[:5] + `\u00` + fmt.Sprintf("%x", s[5]) + s[6:] },
	"percent of base64":   func(s string) string { return url.QueryEscape(base64.StdEncoding.EncodeToString([]byte(s + "\n"))) },
	"base64 of percent":   func(s string) string { return base64.URLEncoding.EncodeToString([]byte(url.QueryEscape("a " + s))) },
	"percent of entities": func(s string) string { return url.QueryEscape("&#" + fmt.Sprint(s[0]) + ";" + s[1:]) },
}

// TestEncodedKeys: a key, or its secret part alone, echoed in any of the
// encodings, never comes out of String, in a Location or a JSON text.
func TestEncodedKeys(t *testing.T) {
	secret := key[len("tcm_"):]
	r := redact.New(key)
	for name, enc := range encodings {
		for _, what := range []string{key, secret} {
			e := enc(what)
			for _, text := range []string{"Location: /p?p=" + e + "&q=1", `{"echo":"` + e + `"}`, e} {
				out := r.String(text)
				if leaks(out, e) {
					t.Errorf("%s of %q: %q came out as %q", name, what[:6], text, out)
				}
			}
		}
	}
}

// leaks: out still holds 12 characters in a row of the encoded key (the
// hint aside).
func leaks(out, encoded string) bool {
	out = strings.ReplaceAll(out, redact.Form(key), "\x00")
	for i := 0; i+12 <= len(encoded); i++ {
		if strings.Contains(out, encoded[i:i+12]) {
			return true
		}
	}
	return false
}

func TestEncodedLeavesOtherTextAlone(t *testing.T) {
	r := redact.New(key)
	for _, text := range []string{
		"GET /api/public-feed?limit=50&cursor=AAAAAQtKXy0dPfbu",
		"a+b%20c &amp; d \\n e",
		base64.StdEncoding.EncodeToString([]byte("nothing secret in here at all")),
		"Location: /p?p=%54%6F%6B%65%6E",
	} {
		if got := r.String(text); got != text {
			t.Errorf("String(%q) = %q", text, got)
		}
	}
}

func TestWriterHoldsAnEncodedKeySplitAcrossWrites(t *testing.T) {
	e := encodings["percent every byte"](key)
	for cut := 1; cut < len(e); cut += 7 {
		var out strings.Builder
		w := redact.New(key).Writer(&out)
		w.Write([]byte("p=" + e[:cut]))
		w.Write([]byte(e[cut:] + "\n"))
		w.Flush()
		if leaks(out.String(), e) {
			t.Fatalf("cut at %d: %q", cut, out.String())
		}
	}
}
