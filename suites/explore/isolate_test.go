package explore

import (
	"math/bits"
	"slices"
	"strings"
	"testing"
)

// A pack whose answer is the plain one's costs one request; a culprit is
// found in about 2·log2(n) more and blamed alone; a set that could not be
// sent is left, with why.
func TestIsolateBlamesOneTransformation(t *testing.T) {
	set := TransformationsOf(BaseVideos)
	for _, culprits := range [][]string{nil, {"chunked-body"}, {"header-names-lower-case", "json-escaped-strings"}} {
		calls := 0
		try := func(s []Transformation) (string, string) {
			calls++
			for _, tr := range s {
				if slices.Contains(culprits, tr.Name) {
					return "status 400 where the plain request got 200", ""
				}
			}
			return "", ""
		}
		out := Isolate(BaseVideos, set, try)
		if len(out) != len(set) {
			t.Fatalf("%v: %d outcomes for %d transformations", culprits, len(out), len(set))
		}
		var blamed []string
		for _, o := range out {
			if !o.Reached {
				t.Errorf("%v: %s not reached", culprits, o.Transformation.Name)
			}
			if o.Differs != "" {
				blamed = append(blamed, o.Transformation.Name)
			}
		}
		slices.Sort(blamed)
		if !slices.Equal(blamed, culprits) {
			t.Errorf("blamed %v, want %v", blamed, culprits)
		}
		if bound := 1 + 2*len(culprits)*bits.Len(uint(len(set))); calls > bound {
			t.Errorf("%v: %d requests, more than %d", culprits, calls, bound)
		}
		if culprits == nil && calls != 1 {
			t.Errorf("nothing differed, and %d requests were sent", calls)
		}
	}
	out := Isolate(BaseFeed, TransformationsOf(BaseFeed), func([]Transformation) (string, string) { return "", "no room in the key's window" })
	for _, o := range out {
		if o.Reached || !strings.Contains(o.Left, "no room") {
			t.Errorf("%s: %+v, want it left", o.Transformation.Name, o)
		}
	}
}
