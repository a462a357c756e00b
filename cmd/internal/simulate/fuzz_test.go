package simulate

import (
	"io"
	"strings"
	"testing"

	"github.com/tcmkit/tcmkit/simulator/fuzz"
)

func TestFuzzSeed(t *testing.T) {
	o, err := parseOptions("simulator", []string{"--fuzz-seed", "7", "--speed", "0", "--seed", "99"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	s, ok := o.Sim.Fuzz.(*fuzz.Schedule)
	if !ok || len(o.Sim.Middleware) != 1 {
		t.Fatalf("no schedule: %#v", o.Sim.Fuzz)
	}
	want := fuzz.FromSeed(7, fuzz.Options{})
	if p := s.Plan(); p.String() != want.String() || o.Sim.Seed != want.World.Seed || o.Sim.Channels != want.World.Channels {
		t.Fatalf("plan %s, world seed %d", p, o.Sim.Seed)
	}
	o, err = parseOptions("simulator", []string{"--fuzz-seed", "7:break", "--speed", "1"}, io.Discard)
	if err != nil || !o.Sim.Fuzz.(*fuzz.Schedule).Plan().Opts.Break || !o.Sim.Fuzz.(*fuzz.Schedule).Plan().Opts.Realtime {
		t.Fatalf("--fuzz-seed 7:break --speed 1: %v", err)
	}
	for _, args := range [][]string{{"--fuzz-seed", "7:brake"}, {"--fuzz-seed", "x"}} {
		if _, err := parseOptions("simulator", args, io.Discard); err == nil || !strings.Contains(err.Error(), "fuzz") {
			t.Errorf("%v: %v", args, err)
		}
	}
}
