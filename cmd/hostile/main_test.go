package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestListAndRefuse(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run([]string{"--list"}, &out, &errOut, nil); code != 0 || !strings.Contains(out.String(), "huge-body") {
		t.Errorf("--list: %d %q %q", code, out.String(), errOut.String())
	}
	// A --size out of range is refused, not silently the default (-5) nor
	// a crash (50: a negative repeat count; 10^12: a terabyte in memory).
	for _, args := range [][]string{{"--name", "nope"}, {"--name", "drip", "--addr", "0.0.0.0:0"},
		{"--name", "invalid-json", "--size", "-5"}, {"--name", "invalid-json", "--size", "50"}, {"--name", "invalid-json", "--size", "1000000000000"}} {
		errOut.Reset()
		if code := run(args, &out, &errOut, nil); code != 2 || errOut.Len() == 0 {
			t.Errorf("%v: exit %d, %q", args, code, errOut.String())
		}
	}
}

func TestServes(t *testing.T) {
	var out, errOut bytes.Buffer
	stop := make(chan struct{})
	close(stop)
	if code := run([]string{"--name", "drip"}, &out, &errOut, stop); code != 0 || !strings.Contains(out.String(), "--pro-key tcm_") || !strings.Contains(out.String(), "got 0 requests") {
		t.Errorf("exit %d: %q %q", code, out.String(), errOut.String())
	}
}
