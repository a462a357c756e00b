package conformance

import (
	"strings"
	"testing"
)

func TestByteSize(t *testing.T) {
	for in, want := range map[string]int64{"4MiB": 4 << 20, "512KiB": 512 << 10, "1048576": 1 << 20, "1.5 MiB": 3 << 19, "2GB": 2e9, "10B": 10} {
		var b ByteSize
		if err := b.Set(in); err != nil || int64(b) != want {
			t.Errorf("Set(%q) = %d, %v; want %d", in, b, err, want)
		}
		var again ByteSize
		if err := again.Set(b.String()); err != nil || again != b {
			t.Errorf("%q does not read back: %q → %d, %v", in, b.String(), again, err)
		}
	}
	for _, in := range []string{"", "0", "-1MiB", "lots", "4XB"} {
		var b ByteSize
		if err := b.Set(in); err == nil {
			t.Errorf("Set(%q) accepted: %d", in, b)
		}
	}
	if _, err := bind(t, []string{"--max-body", "1KiB", "--run-deadline", "30s", "--request-timeout", "2s"}); err != nil {
		t.Fatal(err)
	}
}

func TestBoundsMustBePositive(t *testing.T) {
	c := NewConfig()
	c.Target, c.ProKey, c.RequestTimeout, c.RunDeadline = "http://127.0.0.1:1", "tcm_goodgoodgoodgood", 0, -1
	err := newSession(c).Preflight(t.Context())
	if err == nil || !strings.Contains(err.Error(), "request-timeout 0s: must be more than 0") || !strings.Contains(err.Error(), "run-deadline") {
		t.Errorf("Preflight = %v", err)
	}
}
