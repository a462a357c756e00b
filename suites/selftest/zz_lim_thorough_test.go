package selftest

import (
	"strconv"
	"testing"

	"github.com/tcmkit/tcmkit/simulator/variant"
)

func TestLimThoroughDraws(t *testing.T) {
	for n := uint64(1); n <= 4; n++ {
		d := variant.New(n)
		t.Run(strconv.FormatUint(n, 10), func(t *testing.T) {
			t.Parallel()
			r := runSuite(t, startDraw(t, d), "--profile=thorough")
			if r.exitCode != 0 || len(r.failed()) > 0 || r.passed() < 60 {
				t.Errorf("conforming draw %d failed (exit %d, %d passed)\n%s\n%s", n, r.exitCode, r.passed(), d, failures(r))
			}
			t.Logf("draw %d: %d passed", n, r.passed())
		})
	}
}
