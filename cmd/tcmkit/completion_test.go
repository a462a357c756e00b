package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCompletionBash runs the bash script in bash: the commands, a
// command's flags, and the fault names after --fault are completed.
func TestCompletionBash(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash on PATH: the bash completion is not run")
	}
	code, script, errs := runArgs("completion", "bash")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	path := filepath.Join(t.TempDir(), "tcmkit.bash")
	if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		words string
		want  []string
		not   []string
	}{
		{"tcmkit co", []string{"conform", "completion"}, []string{"simulate"}},
		{"tcmkit simulate --sp", []string{"--speed"}, []string{"--seed"}},
		{"tcmkit simulate --fault oldest-f", []string{"oldest-first", "oldest-first@first-page"}, []string{"--speed"}},
		{"tcmkit simulate --scenario 429", []string{"429-storm"}, nil},
		{"tcmkit conform --lab", []string{"--label-filter"}, nil},
		{"tcmkit completion f", []string{"fish"}, []string{"bash"}},
	} {
		cmd := exec.Command(bash, "--norc", "-c", `source "$1"; COMP_WORDS=($2); COMP_CWORD=$((${#COMP_WORDS[@]}-1)); _tcmkit; printf '%s\n' "${COMPREPLY[@]}"`, "bash", path, tc.words)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v: %s", tc.words, err, out)
		}
		got := strings.Fields(string(out))
		for _, w := range tc.want {
			if !contains(got, w) {
				t.Errorf("%q: completions %v lack %s", tc.words, got, w)
			}
		}
		for _, w := range tc.not {
			if contains(got, w) {
				t.Errorf("%q: completions %v hold %s", tc.words, got, w)
			}
		}
	}
}

func TestCompletionZshAndFish(t *testing.T) {
	_, zsh, _ := runArgs("completion", "zsh")
	if !strings.Contains(zsh, "bashcompinit") || !strings.Contains(zsh, "complete -o default -F _tcmkit tcmkit") {
		t.Errorf("zsh script:\n%.300s", zsh)
	}
	_, fish, _ := runArgs("completion", "fish")
	for _, want := range []string{"-a simulate", "'__fish_seen_subcommand_from simulate' -l speed", "-l fault -x -a '", " accept-empty-id "} {
		if !strings.Contains(fish, want) {
			t.Errorf("fish script lacks %q", want)
		}
	}
	if code, _, errs := runArgs("completion", "bsh"); code != 2 || !strings.Contains(errs, "did you mean bash?") {
		t.Errorf("completion bsh: exit %d, %q", code, errs)
	}
	if code, _, _ := runArgs("completion"); code != 2 {
		t.Errorf("completion without a shell: exit %d, want 2", code)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
