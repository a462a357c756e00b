package simulate

import (
	"encoding/json"
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
	want := fuzz.FromSeed(7, fuzz.Options{})
	if p := served(t, o); p != want.String() || o.Sim.Seed != want.World.Seed || o.Sim.Channels != want.World.Channels {
		t.Fatalf("plan %s, world seed %d", p, o.Sim.Seed)
	}
	o, err = parseOptions("simulator", []string{"--fuzz-seed", "7:break", "--speed", "1"}, io.Discard)
	if err != nil || served(t, o) != fuzz.FromSeed(7, fuzz.Options{Break: true, Realtime: true}).String() {
		t.Fatalf("--fuzz-seed 7:break --speed 1: %v", err)
	}
	for _, args := range [][]string{{"--fuzz-seed", "7:brake"}, {"--fuzz-seed", "x"}} {
		if _, err := parseOptions("simulator", args, io.Discard); err == nil || !strings.Contains(err.Error(), "fuzz") {
			t.Errorf("%v: %v", args, err)
		}
	}
}

// served is the plan the one layer of o, a fuzz schedule, serves.
func served(t *testing.T, o Settings) string {
	t.Helper()
	if len(o.Sim.Layers) != 1 || o.Sim.Layers[0].Served == nil {
		t.Fatalf("no schedule: %#v", o.Sim.Layers)
	}
	var r fuzz.Report
	if err := json.Unmarshal(o.Sim.Layers[0].Served().Body, &r); err != nil {
		t.Fatal(err)
	}
	return r.Plan
}
