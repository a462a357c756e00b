package simulate

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/tcmkit/tcmkit/simulator"
	"github.com/tcmkit/tcmkit/simulator/fuzz"
)

// applyFuzz puts the fuzz schedule of --fuzz-seed N into cfg (package
// simulator/fuzz): its world replaces the seed, channels, history and edge
// rate, and its layer goes around the operations. N:break also serves
// answers that break the contract (fuzz.Options.Break).
func (s Settings) applyFuzz(cfg *simulator.Config) error {
	if s.FuzzSeed == "" {
		return nil
	}
	seed, breaking := strings.CutSuffix(s.FuzzSeed, ":break")
	n, err := strconv.ParseInt(seed, 10, 64)
	if err != nil {
		return fmt.Errorf("invalid value %q for --fuzz-seed: want an integer, or an integer and :break", s.FuzzSeed)
	}
	fuzz.FromSeed(n, fuzz.Options{Break: breaking, Realtime: cfg.Speed > 0}).Configure(cfg)
	return nil
}
