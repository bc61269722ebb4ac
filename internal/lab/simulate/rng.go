package simulate

// rng is a small deterministic random source (SplitMix64). The generator
// keeps its own, rather than math/rand, so that a seed gives the same
// capture byte for byte on every Go version and platform: math/rand/v2
// promises stable sources but not stable derived methods (NormFloat64,
// IntN, …), and those would decide every noisy value.
type rng struct{ s uint64 }

// newRNG returns the stream named name of seed. Each message and each
// signal draws from its own stream, so adding a message to a DBC does not
// change the noise of the others.
func newRNG(seed int64, name string) rng {
	// FNV-1a of the name, mixed with the seed.
	h := uint64(14695981039346656037)
	for i := 0; i < len(name); i++ {
		h ^= uint64(name[i])
		h *= 1099511628211
	}
	r := rng{s: uint64(seed) ^ h}
	r.next() // spread nearby seeds apart
	return r
}

// next returns 64 random bits.
func (r *rng) next() uint64 {
	r.s += 0x9E3779B97F4A7C15
	z := r.s
	z = (z ^ z>>30) * 0xBF58476D1CE4E5B9
	z = (z ^ z>>27) * 0x94D049BB133111EB
	return z ^ z>>31
}

// float returns a uniform value in [0, 1).
func (r *rng) float() float64 { return float64(r.next()>>11) * 0x1p-53 }

// uniform returns a uniform value in [lo, hi).
func (r *rng) uniform(lo, hi float64) float64 { return lo + (hi-lo)*r.float() }

// intn returns a uniform integer in [0, n); n > 0.
func (r *rng) intn(n int64) int64 { return int64(r.next() % uint64(n)) }

// norm returns an approximately standard normal value: the sum of twelve
// uniforms less six (Irwin–Hall). It needs only additions, so it rounds
// identically everywhere, and it is bounded at ±6, so one unlucky draw
// never throws a sensor across its range.
func (r *rng) norm() float64 {
	s := 0.0
	for range 12 {
		s += r.float()
	}
	return s - 6
}
