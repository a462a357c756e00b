package explore

import (
	"slices"
	"strings"
	"testing"
)

var keys = Keys{Pro: "tcm_PROPROPROPROPRO12345", Free: "tcm_FREEFREEFREEFREE6789", Revoked: "tcm_REVOKEDREVOKEDREV000", Video: "dQw4w9WgXcQ"}

func names(vs []Variant) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.Name
	}
	return out
}

// The same seed picks the same requests; another seed others.
func TestSampleIsDeterministic(t *testing.T) {
	b := Budget{Pro: 12, Free: 12, None: 40}
	a, again, other := Sample(7, b), Sample(7, b), Sample(8, b)
	if !slices.Equal(names(a), names(again)) {
		t.Error("seed 7 picked different variants twice")
	}
	if slices.Equal(names(a), names(other)) {
		t.Error("seeds 7 and 8 picked the same variants")
	}
}

// A sample keeps within its budget, visits every family, and takes the
// variants marked first before the others of their family.
func TestSampleKeepsItsBudget(t *testing.T) {
	b := Budget{Pro: 12, Free: 12, None: 30}
	spent := map[Spend]int{}
	families := map[Family]bool{}
	lastFirst := map[Family]bool{}
	for _, v := range Sample(3, b) {
		spent[v.Spend] += v.Cost()
		families[v.Family] = true
		if v.First && lastFirst[v.Family] {
			t.Errorf("%s: a variant marked first comes after others of its family", v.Name)
		}
		if !v.First {
			lastFirst[v.Family] = true
		}
	}
	if spent[SpendPro] > b.Pro || spent[SpendFree] > b.Free || spent[SpendNone] > b.None {
		t.Errorf("spent %v, budget %+v", spent, b)
	}
	for _, f := range Families {
		if !families[f] {
			t.Errorf("no %s variant in the sample", f)
		}
	}
	if all := Sample(3, Budget{}); len(all) != len(All()) {
		t.Errorf("a zero budget sends %d of %d variants", len(all), len(All()))
	}
}

// The leads (a repeated member answered from the reading not checked, a
// raw control character in a string) are sent by every sample that has
// room for them: quick's on a simulator's clock (20 on the Pro key) and
// thorough's (60), whatever the seed; and thorough sends the corpus's
// ids every parser must accept, and a text of raw control characters.
func TestSamplesSendTheLeads(t *testing.T) {
	var leads []string
	for _, v := range All() {
		if v.Lead {
			leads = append(leads, v.Name)
		}
	}
	if len(leads) < 3 {
		t.Fatalf("%d leads, want the two repeated members and the raw control character", len(leads))
	}
	for _, b := range []Budget{{Pro: 20, Free: 16, None: -1}, {Pro: 60, Free: 30, None: -1}} {
		for seed := uint64(0); seed < 20; seed++ {
			got := names(Sample(seed, b))
			for _, l := range leads {
				if !slices.Contains(got, l) {
					t.Errorf("budget %+v, seed %d: %s not sent", b, seed, l)
				}
			}
			if b.Pro == 60 && !slices.ContainsFunc(got, func(n string) bool { return strings.Contains(n, "n_string_unescaped") }) {
				t.Errorf("thorough, seed %d: no corpus text of a raw control character", seed)
			}
			if b.Pro == 60 && !slices.ContainsFunc(got, func(n string) bool {
				return strings.Contains(n, "n_string_escape_x") || strings.Contains(n, "n_string_invalid_backslash_esc")
			}) {
				t.Errorf("thorough, seed %d: no corpus text of an escape JSON does not have", seed)
			}
			if b.Pro == 60 && !slices.ContainsFunc(got, func(n string) bool {
				return strings.Contains(n, "n_number_with_leading_zero") || strings.Contains(n, "n_number_NaN")
			}) {
				t.Errorf("thorough, seed %d: no corpus text of a number JSON does not have", seed)
			}
			if accept := slices.DeleteFunc(slices.Clone(got), func(n string) bool { return !strings.Contains(n, "every JSON parser must accept") }); b.Pro == 60 && len(accept) < 3 {
				t.Errorf("thorough, seed %d: %d of the 3 requests of ids every parser must accept", seed, len(accept))
			}
		}
	}
}

// Every variant makes a request from keys, and names are unique.
func TestEveryVariantBuilds(t *testing.T) {
	seen := map[string]bool{}
	for _, v := range All() {
		if seen[v.Name] {
			t.Errorf("two variants named %q", v.Name)
		}
		seen[v.Name] = true
		req, ok := v.Request(keys)
		if !ok || req.Method == "" || req.Path == "" {
			t.Errorf("%s: no request (%v)", v.Name, ok)
		}
	}
}
