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
	for _, args := range [][]string{{"--name", "nope"}, {"--name", "drip", "--addr", "0.0.0.0:0"}} {
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
