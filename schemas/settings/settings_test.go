package settings

import (
	"strings"
	"testing"
	"time"
)

func TestEnvName(t *testing.T) {
	for _, tc := range []struct{ prefix, flag, want string }{
		{"TCM", "pro-key", "TCM_PRO_KEY"},
		{"TCM_SIM", "--feed-limit", "TCM_SIM_FEED_LIMIT"},
		{"tcm_fixtures", "edge-rate", "TCM_FIXTURES_EDGE_RATE"},
		{"", "addr", "ADDR"},
	} {
		if got := EnvName(tc.prefix, tc.flag); got != tc.want {
			t.Errorf("EnvName(%q, %q) = %q, want %q", tc.prefix, tc.flag, got, tc.want)
		}
	}
}

func TestSuggest(t *testing.T) {
	known := []string{"target", "pro-key", "free-key", "revoked-key", "report-dir", "max-wait", "feed-limit", "seed", "speed"}
	for in, want := range map[string]string{
		"prokey":      "pro-key",
		"--pro_key":   "pro-key",
		"PRO-KEY":     "pro-key",
		"pro-kye":     "pro-key",
		"targte=x":    "target",
		"report-dirs": "report-dir",
		"feedlimit":   "feed-limit",
		"sped":        "speed", // one edit from both: the longer shared beginning
		"sed":         "seed",
		"verbose":     "",
		"x":           "",
		"completely":  "",
		"revoked":     "revoked-key",
		"max":         "",
		"feed-lim":    "feed-limit",
	} {
		if got := Suggest(in, known); got != want {
			t.Errorf("Suggest(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestSuggestAmongMany: a mistyped name among many long ones (the named
// faults) gets the one it was meant to be, not a list.
func TestSuggestAmongMany(t *testing.T) {
	known := []string{"oldest-first", "older-first-page", "newest-last", "first-page-short", "cursor-cycle", "cursor-repeat", "limit-ignored"}
	for in, want := range map[string]string{
		"oldest-frist": "oldest-first",
		"oldestfirst":  "oldest-first",
		"cursor-cylce": "cursor-cycle",
		"cursor":       "cursor-cycle",
		"limit":        "limit-ignored",
		"unrelated":    "",
	} {
		if got := Suggest(in, known); got != want {
			t.Errorf("Suggest(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestNearest: among a setting's few values, the nearest however far, so
// that a refusal can say which was meant.
func TestNearest(t *testing.T) {
	known := []string{"quick", "thorough"}
	for in, want := range map[string]string{"fast": "quick", "thoro": "thorough", "QUICK": "quick", "slow": "quick", "thurough": "thorough"} {
		if got := Nearest(in, known); got != want {
			t.Errorf("Nearest(%q) = %q, want %q", in, got, want)
		}
	}
	if got := Nearest("x", nil); got != "" {
		t.Errorf("Nearest among none = %q", got)
	}
}

// TestTimeFlagRefusesTheZeroTime: 0001-01-01T00:00:00Z, in any zone, is
// the zero time, which a struct takes for "the default": refused, not
// silently the default.
func TestTimeFlagRefusesTheZeroTime(t *testing.T) {
	var at time.Time
	f := TimeFlag{T: &at}
	for _, v := range []string{"0001-01-01T00:00:00Z", "0001-01-01T02:00:00+02:00"} {
		if err := f.Set(v); err == nil || !strings.Contains(err.Error(), "zero time") {
			t.Errorf("%s: %v", v, err)
		}
	}
	if err := f.Set("0001-01-01T00:00:01Z"); err != nil || at.IsZero() {
		t.Errorf("a second past the zero time: %v %v", err, at)
	}
}
