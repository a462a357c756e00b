package fuzz_test

import (
	"testing"

	"github.com/tcmkit/tcmkit/simulator"
	"github.com/tcmkit/tcmkit/simulator/fuzz"
)

// The first byte of an input is the lead step: one byte changed in a calm
// input reaches every kind of step, from one of the first four requests,
// on the feed; 0 leaves the rest of the input as it was.
func TestLeadByteReachesEveryKind(t *testing.T) {
	world := []byte{0, 1, 3, 3, 0, 0, 0}
	for _, o := range []fuzz.Options{{}, {Break: true}} {
		calm := fuzz.FromBytes(append([]byte{0}, world...), o)
		if len(calm.Steps) != 0 {
			t.Fatalf("a lead byte of 0 makes steps: %v", calm.Steps)
		}
		seen, at := map[fuzz.Kind]bool{}, map[int]bool{}
		for b := 1; b < 256; b++ {
			p := fuzz.FromBytes(append([]byte{byte(b)}, world...), o)
			if len(p.Steps) != 1 || p.World != calm.World {
				t.Fatalf("lead byte %d: %d steps, world %v (want one step and the calm world)", b, len(p.Steps), p.World)
			}
			s := p.Steps[0]
			if s.At < 1 || s.At > 4 || s.Op != simulator.OpFeed {
				t.Fatalf("lead byte %d: step %v at request %d on %s", b, s.Kind, s.At, s.Op)
			}
			if _, breaks := fuzz.Breaks[s.Kind]; breaks && !o.Break {
				t.Fatalf("lead byte %d serves %s without Break", b, s.Kind)
			}
			seen[s.Kind], at[s.At] = true, true
		}
		want := len(fuzz.Trouble)
		if o.Break {
			want += len(fuzz.Broken)
		}
		if len(at) != 4 {
			t.Errorf("Break %t: the lead step comes at %d of the first four requests", o.Break, len(at))
		}
		if len(seen) != want {
			t.Errorf("Break %t: the lead byte reaches %d kinds, want %d", o.Break, len(seen), want)
		}
	}
}
