//go:build unix

package main

import (
	"os"
	"strings"
	"testing"
	"time"
)

// finish waits for the process to end and returns its exit status.
func (c *child) finish(t *testing.T, d time.Duration) int {
	t.Helper()
	select {
	case <-c.done:
	case <-time.After(d):
		t.Fatalf("%v: still running after %s; stderr:\n%.2000s", c.cmd.Args[1:], d, c.stderr.String())
	}
	return c.code
}

// TestAPassMeansTheTargetWasJudged: a run whose filter selects no spec,
// or no spec that judges a must requirement, is refused (exit 2) in a line
// that names the filter, and leaves the report directory as it was; a
// --max-wait the user set that stops a spec makes the run incomplete
// (exit 3), not failed.
func TestAPassMeansTheTargetWasJudged(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	for _, tc := range []struct {
		args []string
		says string
	}{
		{[]string{"--focus", "nomatch"}, `--focus "nomatch" selects none of the suite's`},
		{[]string{"--skip", "."}, `--skip "." selects none`},
		{[]string{"--label-filter", "helth"}, `--label-filter "helth" selects none`},
		{[]string{"--label-filter", "explore"}, `none of them judged any of the`},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			c := start(t, append([]string{"conform", "--report-dir", dir, "--no-color"}, tc.args...)...)
			code := c.finish(t, 60*time.Second)
			lines := strings.Split(strings.TrimSpace(c.stderr.String()), "\n")
			last := lines[len(lines)-1]
			if code != 2 || !strings.HasPrefix(last, "the run was refused: ") || !strings.Contains(last, tc.says) {
				t.Errorf("exit %d, last line %q; want exit 2 and %q", code, last, tc.says)
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 0 {
				t.Errorf("the report directory holds %d entries, want it as it was (empty)", len(entries))
			}
		})
	}
	t.Run("--max-wait 1ns", func(t *testing.T) {
		t.Parallel()
		c := start(t, "conform", "--max-wait", "1ns", "--label-filter", "rate-limit", "--report-dir", t.TempDir(), "--no-color")
		if code := c.finish(t, 60*time.Second); code != 3 || !strings.Contains(c.stderr.String(), "a bound you set stopped") {
			t.Errorf("exit %d, want 3 (incomplete) naming the bound; stderr:\n%.3000s", code, c.stderr.String())
		}
	})
}
