package conformance

import (
	"os/exec"
	"strings"
	"testing"
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
