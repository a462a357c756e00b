package jsontestsuite

import (
	"encoding/json"
	"testing"
	"unicode/utf8"
)

// The corpus is what its names say: every must-reject text is no JSON, and
// every id is one JSON string of 1 to 32 bytes.
func TestCorpusIsWhatItSays(t *testing.T) {
	if len(MustReject()) < 150 || len(IDs()) < 30 {
		t.Fatalf("%d texts to reject, %d ids: the corpus is cut short", len(MustReject()), len(IDs()))
	}
	for _, x := range MustReject() {
		if json.Valid([]byte(x.Input)) {
			t.Errorf("%s is valid JSON", x.Name)
		}
	}
	for _, x := range IDs() {
		var s string
		if err := json.Unmarshal([]byte(x.Input), &s); err != nil || s == "" || len(s) > 32 || !utf8.ValidString(s) {
			t.Errorf("%s: %q is not a JSON string of 1 to 32 bytes (%v)", x.Name, x.Input, err)
		}
	}
	if Source() == "" {
		t.Error("no source")
	}
}
