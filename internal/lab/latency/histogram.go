package latency

import (
	"math"
	"math/bits"
	"time"
)

// Bucket layout: values below 2^subBits are exact; above, each power of
// two is split into 2^(subBits-1) buckets.
const (
	subBits  = 8
	halfSub  = 1 << (subBits - 1)
	maxBits  = 40 // values up to 2^40-1 ns are bucketed
	maxValue = 1<<maxBits - 1
	// numBuckets is index(maxValue)+1.
	numBuckets = (maxBits-subBits+1)*halfSub + halfSub
)

// RelativeError is the largest amount by which a reported percentile can
// exceed the exact one, as a fraction of it.
const RelativeError = 1.0 / halfSub

// Histogram counts latency samples in nanoseconds. The zero value is
// empty and ready to use. It is about 35 KB: allocate it once, not per
// sample.
type Histogram struct {
	counts   [numBuckets]uint64
	n        uint64
	negative uint64
	min, max int64
	sum      float64
}

// index returns the bucket of v, which must be in [0, maxValue].
func index(v int64) int {
	u := uint64(v)
	if u < 1<<subBits {
		return int(u)
	}
	shift := bits.Len64(u) - subBits
	return shift*halfSub + int(u>>uint(shift))
}

// highest returns the largest value that falls in bucket i.
func highest(i int) int64 {
	if i < 1<<subBits {
		return int64(i)
	}
	shift := i/halfSub - 1
	sub := int64(i - shift*halfSub)
	return (sub+1)<<uint(shift) - 1
}

// Record adds one sample. A negative sample (a clock that stepped back,
// or a timestamp from another host) counts as 0 and is counted apart in
// Negative.
func (h *Histogram) Record(ns int64) {
	if ns < 0 {
		h.negative++
		ns = 0
	}
	if h.n == 0 || ns < h.min {
		h.min = ns
	}
	if ns > h.max {
		h.max = ns
	}
	h.n++
	h.sum += float64(ns)
	if ns > maxValue {
		h.counts[numBuckets-1]++
		return
	}
	h.counts[index(ns)]++
}

// Reset empties the histogram.
func (h *Histogram) Reset() { *h = Histogram{} }

// Merge adds every sample of o to h.
func (h *Histogram) Merge(o *Histogram) {
	if o.n == 0 {
		return
	}
	if h.n == 0 || o.min < h.min {
		h.min = o.min
	}
	if o.max > h.max {
		h.max = o.max
	}
	h.n += o.n
	h.negative += o.negative
	h.sum += o.sum
	for i, c := range o.counts {
		h.counts[i] += c
	}
}

// Count returns the number of samples.
func (h *Histogram) Count() uint64 { return h.n }

// Negative returns how many samples were negative (and recorded as 0).
func (h *Histogram) Negative() uint64 { return h.negative }

// Min returns the smallest sample, exactly; 0 when empty.
func (h *Histogram) Min() time.Duration { return time.Duration(h.min) }

// Max returns the largest sample, exactly; 0 when empty.
func (h *Histogram) Max() time.Duration { return time.Duration(h.max) }

// Mean returns the mean of the samples; 0 when empty.
func (h *Histogram) Mean() time.Duration {
	if h.n == 0 {
		return 0
	}
	return time.Duration(math.Round(h.sum / float64(h.n)))
}

// Quantile returns the sample at quantile q (0.5 for the median, 0.99 for
// p99): the smallest recorded value v such that at least q of the samples
// are ≤ v, rounded up to the top of its bucket (see the package comment)
// and never beyond Min and Max. It returns 0 when the histogram is empty.
func (h *Histogram) Quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	switch {
	case q <= 0 || math.IsNaN(q):
		return time.Duration(h.min)
	case q >= 1:
		return time.Duration(h.max)
	}
	rank := max(uint64(math.Ceil(q*float64(h.n))), 1)
	var seen uint64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			if i == numBuckets-1 { // it also holds every value above maxValue
				return time.Duration(h.max)
			}
			v := highest(i)
			v = min(v, h.max)
			v = max(v, h.min)
			return time.Duration(v)
		}
	}
	return time.Duration(h.max)
}

// Summary is the part of a distribution that a result line quotes, in
// milliseconds.
type Summary struct {
	// N is the number of samples.
	N uint64 `json:"n"`
	// P50, P99 and Max are the median, the 99th percentile and the
	// largest sample, in milliseconds.
	P50 float64 `json:"p50"`
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
}

// Summary returns the sample count, p50, p99 and max in milliseconds,
// rounded to the microsecond.
func (h *Histogram) Summary() Summary {
	return Summary{
		N:   h.n,
		P50: Millis(h.Quantile(0.50)),
		P99: Millis(h.Quantile(0.99)),
		Max: Millis(h.Max()),
	}
}

// Millis converts d to milliseconds rounded to the microsecond, the
// precision results are quoted in.
func Millis(d time.Duration) float64 {
	return math.Round(float64(d)/1e3) / 1e3
}
