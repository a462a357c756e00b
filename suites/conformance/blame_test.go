package conformance

import (
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2/types"
)

// A curl line spells every key the suite sends as the environment
// variable it came from, or a shell expression of it: paste-ready, and no
// key in it.
func TestKeyVar(t *testing.T) {
	tg := Target{Pro: "tcm_AbCdEfGhIjKlMnOpQrStUvWxYz012345", Free: "tcm_FreeFreeFreeFreeFreeFreeFree0001", Revoked: "tcm_RevokedRevokedRevokedRevoked0002"}
	for _, tc := range []struct{ auth, want string }{
		{"Bearer " + tg.Pro, "Bearer $TCM_PRO_KEY"},
		{"Bearer " + tg.Free, "Bearer $TCM_FREE_KEY"},
		{"Bearer " + tg.Revoked, "Bearer $TCM_REVOKED_KEY"},
		{"Token " + tg.Pro, "Token $TCM_PRO_KEY"},
		{"Bearer " + tg.longerKey(), "Bearer ${TCM_PRO_KEY}A"},
		{"Bearer " + tg.shorterKey(), "Bearer ${TCM_PRO_KEY%?}"},
		{"Bearer ", "Bearer "},
		{"Bearer tcm_SomebodyElsesKeySomebodyElses9", ""},
	} {
		if got := tg.keyVar(tc.auth); got != tc.want {
			t.Errorf("keyVar(%q) = %q, want %q", tc.auth, got, tc.want)
		}
	}
	// the derived keys, computed by a shell from the variable, are the keys
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	for _, key := range []string{tg.swappedKey(), tg.longerKey(), tg.shorterKey()} {
		expr := strings.TrimPrefix(tg.keyVar("Bearer "+key), "Bearer ")
		cmd := exec.Command("sh", "-c", `printf %s "`+expr+`"`)
		cmd.Env = []string{"TCM_PRO_KEY=" + tg.Pro, "PATH=/usr/bin:/bin"}
		if out, err := cmd.CombinedOutput(); err != nil || string(out) != key {
			t.Errorf("%s gives %q (%v), want the key", expr, out, err)
		}
	}
	for _, expr := range []string{tg.keyVar("Bearer " + tg.unknownKey()), tg.keyVar("Bearer " + tg.unprefixedToken())} {
		if expr == "" || strings.Contains(expr, tg.unknownKey()[4:12]) {
			t.Errorf("an invented key is spelled %q: want a random one of its shape", expr)
		}
	}
}

// A message names a request only with its whole query: limit=2 is not
// limit=20.
func TestMentions(t *testing.T) {
	text := "GET /api/public-feed?limit=20: status 500\nPOST /api/public/videos (status 400)"
	for name, want := range map[string]bool{
		"GET /api/public-feed?limit=20": true,
		"GET /api/public-feed?limit=2":  false,
		"GET /api/public-feed":          false,
		"POST /api/public/videos":       true,
	} {
		if got := mentions(text, name); got != want {
			t.Errorf("mentions(%q) = %v, want %v", name, got, want)
		}
	}
	if got := requestIn("page 3 (GET /api/public-feed?cursor=x&limit=200) /events/4"); got != "GET /api/public-feed?cursor=x&limit=200" {
		t.Errorf("requestIn = %q", got)
	}
}

// The rerun line names every key variable of the full run (never a key),
// repeats the settings that matter, and writes beside the full run's
// reports; pasted into a shell without the keys it stops, naming them.
func TestRerunLine(t *testing.T) {
	cfg := NewConfig()
	cfg.Target, cfg.ProKey, cfg.FreeKey = "http://127.0.0.1:1/api base", "tcm_AbCdEfGhIjKlMnOpQrStUvWxYz012345", "tcm_FreeFreeFreeFreeFreeFreeFree0001"
	cfg.ControlClock, cfg.Profile, cfg.ExploreSeed, cfg.ReportDir = true, "thorough", 7, "/tmp/the reports"
	s := newSession(cfg)
	spec := types.SpecReport{ContainerHierarchyTexts: []string{"Tracked-Channel Monitoring API", "generated probes"},
		ContainerHierarchyLabels: [][]string{{}, {probeLabel}}, LeafNodeText: "FEED-ORDER, the Pro key on a page reached through a cursor",
		LeafNodeLabels: []string{"FEED-ORDER"}, LeafNodeType: types.NodeTypeIt}
	line := s.rerun(spec)
	for _, want := range []string{
		`: "${TCM_PRO_KEY:?set TCM_PRO_KEY to the --pro-key of the full run}" "${TCM_FREE_KEY:?set TCM_FREE_KEY to the --free-key of the full run}" && tcmkit conform`,
		`--target 'http://127.0.0.1:1/api base'`, "--control-clock", "--profile thorough", "--explore-seed 7",
		`--label-filter 'probe && FEED-ORDER'`, `--report-dir '/tmp/the reports/rerun-`, `--focus '(^| )Tracked-Channel`,
	} {
		if !strings.Contains(line, want) {
			t.Errorf("the rerun line does not say %q:\n%s", want, line)
		}
	}
	if strings.Contains(line, "TCM_REVOKED_KEY") || strings.Contains(line, cfg.ProKey[4:12]) || strings.Contains(line, cfg.FreeKey[4:12]) {
		t.Errorf("the rerun line names a key not given, or a key itself:\n%s", line)
	}
	if other := rerunDir(spec.FullText() + " and more"); strings.Contains(line, other) || !strings.HasPrefix(other, "rerun-") {
		t.Errorf("two specs share the rerun directory %s", other)
	}
	// Ginkgo matches a focus against its suite's description and the
	// spec's text: the spec's alone
	focus := regexp.MustCompile(focusOn(spec.FullText()))
	for text, want := range map[string]bool{
		"Tracked-Channel Monitoring API conformance " + spec.FullText():                                                 true,
		"any suite " + spec.FullText():                                                                                  true,
		"Tracked-Channel Monitoring API conformance " + spec.FullText() + " and more":                                   false,
		"Tracked-Channel Monitoring API conformance " + strings.Replace(spec.FullText(), "FEED-ORDER", "FEED-LIMIT", 1): false,
	} {
		if focus.MatchString(text) != want {
			t.Errorf("the focus %s matches %q: %v", focus, text, !want)
		}
	}
	bundled := newSession(NewConfig())
	if l := bundled.rerun(spec); strings.Contains(l, "${") || strings.Contains(l, "--target") || strings.Contains(l, "--profile") {
		t.Errorf("against the bundled simulator the rerun needs no key, no target, no profile: %s", l)
	}
	// pasted into a fresh shell without its keys, it stops at once, saying which
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	cmd := exec.Command("bash", "-c", strings.Replace(line, "tcmkit conform", "echo ran", 1))
	cmd.Env = []string{"PATH=/usr/bin:/bin", "TCM_PRO_KEY=" + cfg.ProKey}
	out, err := cmd.CombinedOutput()
	if err == nil || strings.Contains(string(out), "ran") || !strings.Contains(string(out), "set TCM_FREE_KEY to the --free-key of the full run") {
		t.Errorf("without TCM_FREE_KEY: %v, %q", err, out)
	}
	cmd = exec.Command("bash", "-c", strings.Replace(line, "tcmkit conform", "echo ran", 1))
	cmd.Env = []string{"PATH=/usr/bin:/bin", "TCM_PRO_KEY=" + cfg.ProKey, "TCM_FREE_KEY=" + cfg.FreeKey}
	if out, err := cmd.CombinedOutput(); err != nil || !strings.HasPrefix(string(out), "ran") {
		t.Errorf("with both keys: %v, %q", err, out)
	}
}
