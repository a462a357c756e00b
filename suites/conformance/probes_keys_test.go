package conformance

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/tcmkit/tcmkit/schemas/redact"
	"github.com/tcmkit/tcmkit/suites/probe"
)

// The probes' keys derived from the Pro key are secrets: a curl line
// spells each as a shell expression of $TCM_PRO_KEY that gives the key
// back, and the redactor hides each whole.
func TestDerivedKeysSpelledAndRedacted(t *testing.T) {
	tg := Target{Pro: "tcm_AbCdEfGhIjKlMnOpQrStUvWxYz012345"}
	_, secret, _ := strings.Cut(tg.Pro, "_")
	red := redact.New(append(tg.keys(), tg.derived()...)...)
	_, err := exec.LookPath("sh")
	for _, f := range probe.KeyForms {
		key, ok := f.Derive(tg.Pro)
		if !ok {
			t.Fatalf("%s: not derived from %s", f, redact.Form(tg.Pro))
		}
		auth := "Bearer " + key
		v := tg.keyVar(auth)
		if v == "" || strings.Contains(v, secret[:8]) || strings.Contains(v, secret[len(secret)-8:]) {
			t.Errorf("%s is spelled %q: want a shell expression of $TCM_PRO_KEY", f, v)
		}
		if out := red.String("Authorization: " + auth); strings.Contains(out, secret[4:12]) {
			t.Errorf("%s: the redactor leaves %q", f, out)
		}
		if err != nil {
			continue
		}
		cmd := exec.Command("sh", "-c", `printf %s "`+strings.TrimPrefix(v, "Bearer ")+`"`)
		cmd.Env = []string{"TCM_PRO_KEY=" + tg.Pro, "PATH=/usr/bin:/bin"}
		if out, err := cmd.CombinedOutput(); err != nil || string(out) != key {
			t.Errorf("%s: %s gives %d bytes (%v), not the key", f, v, len(out), err)
		}
	}
}

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
