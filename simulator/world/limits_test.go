package world

import (
	"math"
	"strconv"
	"strings"
	"testing"
	"time"
)

// An import refuses data after the world, and any time beyond the range
// of the clock's arithmetic.
func TestImportRefusesTrailingDataAndTimesOutOfRange(t *testing.T) {
	w := newWorld(t, Config{Seed: 3, Channels: 2, History: 24 * time.Hour})
	w.CreateAccount(Pro)
	exp := string(export(t, w))
	if _, err := Import(strings.NewReader(exp + "  \n")); err != nil {
		t.Fatalf("an export with whitespace after it: %v", err)
	}
	now := `"now":` + strconv.FormatInt(w.now.Load(), 10)
	for name, doc := range map[string]string{
		"trailing bytes":         exp + "garbage",
		"a second document":      exp + exp,
		"now at the int64 limit": strings.Replace(exp, now, `"now":`+strconv.FormatInt(math.MaxInt64, 10), 1),
		"now before 1970":        strings.Replace(exp, now, `"now":-1`, 1),
		"now after 9999":         strings.Replace(exp, now, `"now":`+strconv.FormatInt(MaxTime+1, 10), 1),
		"start at the limit":     strings.Replace(exp, `"start":`, `"start":9223372036854775807,"x":`, 1),
		"an event's createdAt":   strings.Replace(exp, `"createdAt":`, `"createdAt":9223372036854775807,"x":`, 1),
	} {
		if doc == exp {
			t.Fatalf("%s: the test did not change the export", name)
		}
		if _, err := Import(strings.NewReader(doc)); err == nil {
			t.Errorf("%s: imported", name)
		} else if len(err.Error()) > 400 {
			t.Errorf("%s: an error of %d bytes", name, len(err.Error()))
		}
	}
}
