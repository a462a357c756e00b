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
