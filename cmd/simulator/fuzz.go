package main

import (
	"flag"
	"fmt"
	"strconv"

	"github.com/tcmkit/tcmkit/simulator/fuzz"
)

// fuzzFlags are --fuzz-seed and --fuzz-break (package simulator/fuzz).
type fuzzFlags struct {
	seed   *int64 // nil: no schedule
	break_ bool
}

func (f *fuzzFlags) register(fs *flag.FlagSet) {
	fs.Func("fuzz-seed", "serve seed `N`'s fuzz schedule: a world at the contract's edges (it replaces --seed, --channels, --history and --edge-rate) and trouble on chosen requests (429, 5xx, slow, cut, a key revoked mid-walk); GET /_control/fuzz says what was served; see ci/fuzz-seeds.sh", func(v string) error {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return fmt.Errorf("want an integer")
		}
		f.seed = &n
		return nil
	})
	fs.BoolVar(&f.break_, "fuzz-break", false, "with --fuzz-seed: also serve answers that break the contract (a page out of order, a cursor cycle, an unknown event type...), to test a client's defences")
}

// apply puts the schedule of the seed into o.cfg, once the clock's speed is known.
func (f *fuzzFlags) apply(o *options) error {
	if f.seed == nil {
		if f.break_ {
			return fmt.Errorf("--fuzz-break needs --fuzz-seed")
		}
		return nil
	}
	fuzz.FromSeed(*f.seed, fuzz.Options{Break: f.break_, Realtime: o.cfg.Speed > 0}).Configure(&o.cfg)
	return nil
}
