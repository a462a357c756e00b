package world

import (
	"math"

	"github.com/brianvoe/gofakeit/v7"
)

// mix is the splitmix64 finalizer: a bijection of uint64 that scatters bits.
func mix(z uint64) uint64 {
	z ^= z >> 30
	z *= 0xbf58476d1ce4e5b9
	z ^= z >> 27
	z *= 0x94d049bb133111eb
	return z ^ z>>31
}

// rng is splitmix64. It implements math/rand/v2's Source, so gofakeit can
// draw from it. Each poll derives its own from (seed, entity, time, count).
type rng struct{ s uint64 }

// Entity kinds, mixed into a generator's derivation.
const (
	kindChannel uint64 = iota + 1
	kindVideo
	kindWorld
	kindAccount
)

func (w *World) rngFor(kind, index uint64, at int64, count uint32) rng {
	h := mix(w.seedHash ^ kind<<56 ^ index)
	h = mix(h ^ uint64(at))
	h = mix(h ^ uint64(count)<<1)
	return rng{h}
}

func (r *rng) Uint64() uint64 {
	r.s += 0x9e3779b97f4a7c15
	return mix(r.s)
}

// float is uniform in [0, 1).
func (r *rng) float() float64 { return float64(r.Uint64()>>11) * 0x1p-53 }

// between is uniform in [lo, hi).
func (r *rng) between(lo, hi float64) float64 { return lo + (hi-lo)*r.float() }

// intn is uniform in [0, n); n > 0.
func (r *rng) intn(n int) int { return int(r.Uint64() % uint64(n)) }

// chance reports an event of the given rate per hour over dtMs.
func (r *rng) chance(perHour float64, dtMs int64) bool {
	if dtMs <= 0 || perHour <= 0 {
		return false
	}
	return r.float() < -math.Expm1(-perHour*float64(dtMs)/float64(hourMs))
}

// poisson draws a count with mean lambda (small), capped.
func (r *rng) poisson(lambda float64, max int) int {
	if lambda <= 0 {
		return 0
	}
	l := math.Exp(-lambda)
	k, p := 0, r.float()
	for p > l && k < max {
		k++
		p *= r.float()
	}
	return k
}

// faker is gofakeit drawing from a child of r (a copy, so that r itself
// stays on the stack of the hot poll paths).
func (r *rng) faker() *gofakeit.Faker { return gofakeit.NewFaker(&rng{r.Uint64()}, false) }
