package probegrid

import (
	"strings"
	"testing"
)

// A shaped id keeps the feed's ids' length and alphabet and is none of them.
func TestShapedLike(t *testing.T) {
	ids := []string{"dQw4w9WgXcQ", "9bZkp7q19f0", "kJQP7kiw5Fk", "longer_id_of_20_char"}
	seen := map[string]bool{}
	for _, id := range ids {
		seen[id] = true
	}
	got, ok := shapedLike(ids, seen)
	if !ok || len(got) != 11 || seen[got] {
		t.Fatalf("shapedLike = %q, %v", got, ok)
	}
	for _, c := range got {
		if !strings.ContainsRune(strings.Join(ids, ""), c) {
			t.Errorf("%q has %q, which no id of the feed has", got, c)
		}
	}
	// dense ids: the neighbours of an id are ids too
	dense := []string{"v0000000001", "v0000000002", "v0000000003"}
	for _, id := range dense {
		seen[id] = true
	}
	if got, ok := shapedLike(dense, seen); !ok || seen[got] || len(got) != 11 {
		t.Errorf("shapedLike(dense) = %q, %v", got, ok)
	}
	if _, ok := shapedLike(nil, seen); ok {
		t.Error("an id shaped like no id")
	}
}
