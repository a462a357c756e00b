package simulate

import (
	"fmt"
	"strconv"

	"github.com/tcmkit/tcmkit/simulator"
	"github.com/tcmkit/tcmkit/simulator/fuzz"
)

// applyFuzz puts the fuzz schedule of --fuzz-seed into cfg (package
// simulator/fuzz): its world replaces the seed, channels, history and edge
// rate, and its middleware goes around the operations.
func (s Settings) applyFuzz(cfg *simulator.Config) error {
	if s.FuzzSeed == "" {
		if s.FuzzBreak {
			return fmt.Errorf("--fuzz-break needs --fuzz-seed")
		}
		return nil
	}
	n, err := strconv.ParseInt(s.FuzzSeed, 10, 64)
	if err != nil {
		return fmt.Errorf("invalid value %q for --fuzz-seed: want an integer", s.FuzzSeed)
	}
	fuzz.FromSeed(n, fuzz.Options{Break: s.FuzzBreak, Realtime: cfg.Speed > 0}).Configure(cfg)
	return nil
}
