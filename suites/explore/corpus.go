package explore

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/tcmkit/tcmkit/schemas"
	"github.com/tcmkit/tcmkit/suites/client"
	"github.com/tcmkit/tcmkit/suites/explore/jsontestsuite"
)

// Corpus is the family of texts from outside the team: the JSON Parsing
// Test Suite's texts that every parser must reject, as tracked-videos
// bodies, and its strings that every parser must accept, as ids.
const Corpus Family = "corpus"

// corpusIDsPerRequest packs the corpus's ids into requests of the most ids
// the contract allows: one request judges twenty of them (an answer that
// fails names the id).
const corpusIDsPerRequest = schemas.MaxVideoIDs

// normalForms are ids that Unicode's normalization forms spell otherwise
// (NFC composes e + U+0301 into é, NFD decomposes é, NFKC folds the
// fullwidth A, the ligature fi and the mathematical bold A to ASCII, NFC
// maps the Ångström and Ohm signs to letters): a server that normalizes
// what it echoes lists another id as missing than the one asked. Each
// begins with ~, which no video id has; they are spelled as JSON escapes.
// The first holds what HTML escapes (<, >, &, quotes): an echo written for
// a page (&lt;, \u003c is the same JSON) shows too.
var normalForms = []string{`~<b>&amp;\u0027\"`, `~e\u0301`, `~\u00e9`, `~\uff21`, `~\ufb01`, `~\ud835\udc00`, `~\u212b`, `~A\u030a`, `~\u2126`, `~\u1e9b\u0323`, `~\u0071\u0307\u0323`}

// firstRejects are the must-reject texts a sample sends first: raw
// control characters inside a string, escapes RFC 8259 §7 does not have
// (\x, \a), and numbers §6 does not have (a leading zero, NaN), which
// lenient parsers take (JavaScript's and Python's).
var firstRejects = map[string]bool{"n_string_unescaped_ctrl_char.json": true, "n_string_unescaped_newline.json": true, "n_string_unescaped_tab.json": true,
	"n_string_escape_x.json": true, "n_string_invalid_backslash_esc.json": true,
	"n_number_with_leading_zero.json": true, "n_number_NaN.json": true}

func corpusVariants() []Variant {
	normal := `{"videoIds":["` + strings.Join(normalForms, `","`) + `"]}`
	out := []Variant{{Family: Corpus, Name: fmt.Sprintf("tracked videos with the Pro key, %d ids whose Unicode normal forms differ, and one of what HTML escapes (each must come back as sent)", len(normalForms)),
		Spend: SpendPro, First: true, build: func(k Keys) (client.Request, bool) {
			return client.Request{Method: "POST", Path: schemas.PathVideos, Body: []byte(normal), ContentType: "application/json", Auth: "Bearer " + k.Pro}, true
		}}}
	ids := jsontestsuite.IDs()
	for from := 0; from < len(ids); from += corpusIDsPerRequest {
		part := ids[from:min(from+corpusIDsPerRequest, len(ids))]
		var elems, names []string
		for _, x := range part {
			elems = append(elems, x.Input)
			names = append(names, strings.TrimSuffix(x.Name, ".json"))
		}
		body := `{"videoIds":[` + strings.Join(elems, ",") + `]}`
		// first: the corpus's one statement of what a parser must accept
		// has no other request (42 strings, three requests)
		out = append(out, Variant{Family: Corpus, Name: fmt.Sprintf("tracked videos with the Pro key, %d ids every JSON parser must accept (JSONTestSuite %s … %s)", len(part), names[0], names[len(names)-1]),
			Spend: SpendPro, First: true, build: func(k Keys) (client.Request, bool) {
				return client.Request{Method: "POST", Path: schemas.PathVideos, Body: []byte(body), ContentType: "application/json", Auth: "Bearer " + k.Pro}, true
			}})
	}
	for _, x := range jsontestsuite.MustReject() {
		body := rejectBody(x.Input)
		out = append(out, Variant{Family: Corpus, Name: "tracked videos with the Pro key, a body no JSON parser may accept (JSONTestSuite " + strings.TrimSuffix(x.Name, ".json") + ")",
			Spend: SpendPro, First: firstRejects[x.Name], build: func(k Keys) (client.Request, bool) {
				return client.Request{Method: "POST", Path: schemas.PathVideos, Body: []byte(body), ContentType: "application/json", Auth: "Bearer " + k.Pro}, true
			}})
	}
	return out
}

// rejectBody puts a text that is no JSON where a lenient parser would
// take it and still find a valid request: as the value of a member beside
// a valid videoIds. The body is no JSON (a value that is none makes the
// object none), so it is invalid; a parser that accepts the text's
// extension (a trailing comma, a comment, NaN, single quotes) serves it.
func rejectBody(text string) string {
	b := `{"videoIds":["~explored~"],"corpus":` + text + `}`
	if json.Valid([]byte(b)) {
		return text // a text whose junk the object closes: sent as the body
	}
	return b
}
