package variant

import (
	"crypto/sha256"
	"fmt"
	"reflect"
	"slices"
	"testing"
)

// pinnedFields are the dimensions a draw had when its draws were pinned.
// A dimension added later is not in this list, so the pins below still
// hold: adding a dimension moves no existing draw. Removing or renaming
// one, or changing its list of values, does (and fails here, on purpose:
// every regression case pinned to a draw would move with it).
var pinnedFields = []string{
	"Seed", "Channels", "History", "Start", "EdgeRate", "KeyPrefix", "Growth",
	"Vocabulary", "Message", "Details", "ErrorExtras", "ProblemJSON", "Challenge",
	"KeyOrder", "Indent", "Spaced", "CRLF", "Newline", "Escape",
	"ExtraPage", "ExtraEvent", "ExtraEntry", "ExtraVideos", "ExtraHealth", "ChannelVideoNull", "IDs",
	"Cursor", "UnknownCursor", "BadLimit",
	"LenientType", "StrictBody", "VideoOrder", "EntryEvents", "EntrySamples", "WindowDays", "GraphNever",
	"BadBeforeAuth", "BadBeforePro", "RateFirst",
	"Shared", "VideosLimit", "HealthKey", "HealthCounted", "HealthBody", "RetryAfter", "RetryPad",
	"Framing", "ContentType", "Headers", "Close",
}

// choices are a draw's values of the pinned dimensions, one "name=value"
// a line.
func choices(d Draw) string {
	v := reflect.ValueOf(d)
	s := ""
	for _, f := range pinnedFields {
		s += fmt.Sprintf("%s=%v\n", f, v.FieldByName(f).Interface())
	}
	return s
}

// TestDrawsArePinned: a few draws keep their choices, whatever dimensions
// are added: a few choices in words, and a hash of all of them.
func TestDrawsArePinned(t *testing.T) {
	for _, tc := range []struct {
		n      uint64
		pinned string // a few choices, readable
		hash   string // sha256 of choices(New(n)), 12 hex digits
	}{
		{1, "2 channels, snake codes, base64 cursors, framing length, health key optional", "be2ba7b30cee"},
		{7, "3 channels, status codes, decimal cursors, framing gzip, health key optional", "d7e22c3eeab9"},
		{42, "16 channels, dotted codes, decimal cursors, framing chunked, health key none", "b1acdf2a7047"},
	} {
		d := New(tc.n)
		pinned := fmt.Sprintf("%d channels, %s codes, %s cursors, framing %s, health key %s", d.Channels, d.Vocabulary, d.Cursor, d.Framing, d.HealthKey)
		h := sha256.Sum256([]byte(choices(d)))
		hash := fmt.Sprintf("%x", h[:6])
		if pinned != tc.pinned || hash != tc.hash {
			t.Errorf("draw %d moved: %q (hash %s), pinned %q (hash %s); its choices now:\n%s", tc.n, pinned, hash, tc.pinned, tc.hash, choices(d))
		}
	}
}

// TestEachDimensionHasItsOwnName: two dimensions of one name would draw
// the same sequence (and move together).
func TestEachDimensionHasItsOwnName(t *testing.T) {
	for n := uint64(0); n < 50; n++ {
		_, names := newDraw(n)
		sorted := slices.Clone(names)
		slices.Sort(sorted)
		if len(slices.Compact(sorted)) != len(names) {
			t.Fatalf("draw %d: a dimension name is used twice: %v", n, names)
		}
	}
}

// TestEveryDimensionIsDrawn: every field of a Draw takes more than one
// value over the draws, so a dimension added to Draw but not drawn in
// newDraw fails here.
func TestEveryDimensionIsDrawn(t *testing.T) {
	typ := reflect.TypeOf(Draw{})
	values := make([]map[string]bool, typ.NumField())
	for n := range uint64(300) {
		v := reflect.ValueOf(New(n))
		for i := range values {
			if values[i] == nil {
				values[i] = map[string]bool{}
			}
			values[i][fmt.Sprint(v.Field(i).Interface())] = true
		}
	}
	for i, seen := range values {
		if len(seen) < 2 {
			t.Errorf("Draw.%s is never drawn: add one line for it in newDraw (draw.go)", typ.Field(i).Name)
		}
	}
}
