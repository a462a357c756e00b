package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func runArgs(args ...string) (int, string, string) {
	var out, errs bytes.Buffer
	code := run(context.Background(), args, &out, &errs)
	return code, out.String(), errs.String()
}

func TestHelpListsTheCommands(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"help"}, {"-h"}} {
		code, out, _ := runArgs(args...)
		if code != 0 {
			t.Errorf("%v: exit %d", args, code)
		}
		for _, c := range []string{"conform", "simulate", "fixtures", "version"} {
			if !strings.Contains(out, "\n  "+c+" ") {
				t.Errorf("%v: help lacks %s:\n%s", args, c, out)
			}
		}
		if n := strings.Count(out, "\n"); n > 50 {
			t.Errorf("%v: %d lines", args, n)
		}
	}
	if code, _, errs := runArgs(); code != 2 || !strings.Contains(errs, "COMMANDS") {
		t.Errorf("no command: exit %d, %q", code, errs)
	}
}

// TestEveryHelpFitsOneScreen: each command's help, whichever way it is
// asked for, is at most 50 lines.
func TestEveryHelpFitsOneScreen(t *testing.T) {
	for _, args := range [][]string{{"conform", "--help"}, {"simulate", "-h"}, {"help", "fixtures"}} {
		code, out, errs := runArgs(args...)
		if code != 0 || !strings.HasPrefix(out, "USAGE\n  tcmkit "+strings.TrimPrefix(args[0], "help")) && !strings.HasPrefix(out, "USAGE\n  tcmkit "+args[1]) {
			t.Errorf("%v: exit %d, %q %q", args, code, out, errs)
		}
		if n := strings.Count(out, "\n"); n > 50 {
			t.Errorf("%v: %d lines:\n%s", args, n, out)
		}
		if !strings.Contains(out, "ENVIRONMENT") {
			t.Errorf("%v: no word on the environment", args)
		}
	}
}

func TestDidYouMean(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"simulat"}, `unknown command "simulat" (did you mean simulate?)`},
		{[]string{"conformance"}, `did you mean conform?`},
		{[]string{"conform", "--prokey", "x"}, "unknown flag --prokey (did you mean --pro-key?)"},
		{[]string{"simulate", "--feedlimit", "3"}, "unknown flag --feedlimit (did you mean --feed-limit?)"},
		{[]string{"fixtures", "--knd", "FeedPage"}, "unknown flag --knd (did you mean --kind?)"},
		{[]string{"--target", "x"}, "before a command"},
	} {
		code, out, errs := runArgs(tc.args...)
		if code != 2 || out != "" || !strings.Contains(errs, tc.want) || strings.Count(errs, "\n") != 1 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q, want %q", tc.args, code, out, errs, tc.want)
		}
	}
}

func TestVersion(t *testing.T) {
	code, out, _ := runArgs("version")
	if code != 0 || !strings.HasPrefix(out, "tcmkit ") || !strings.Contains(out, "conformance suite") {
		t.Errorf("exit %d: %q", code, out)
	}
}

func TestFixturesRuns(t *testing.T) {
	code, out, errs := runArgs("fixtures", "--kind", "ChannelRef", "--count", "2")
	if code != 0 || strings.Count(out, "\n") != 2 {
		t.Errorf("exit %d: %q %q", code, out, errs)
	}
}
