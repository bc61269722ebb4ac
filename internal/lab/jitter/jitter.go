package jitter

import (
	"math"
	"slices"

	"github.com/yukart/candec/internal/lab/latency"
)

// Cycle follows the arrivals of one topic's envelopes. The zero value
// with Period set is ready to use.
type Cycle struct {
	// Period is the topic's period in ns; while it is 0, arrivals are
	// followed and no interval is measured.
	Period int64

	last, lastTS int64
	seq, epoch   uint64
	primed       bool
}

// Interval is one measured arrival interval of a cyclic topic, in ns.
type Interval struct {
	// Dev is |arrival interval − period|: the jitter.
	Dev int64
	// Path is |arrival interval − ts interval|: the part of it the path
	// from the frames to the subscriber added (batching, decoder, broker,
	// scheduling), without the frames' own irregularity and the cap's
	// rounding to whole cycles, which the ts interval carries.
	Path int64
}

// Observe takes an envelope with frame timestamp ts, seq and epoch that
// arrived at (ns). It returns its interval and true when the topic's
// previous envelope was seq − 1 of the same epoch; false for the first
// one, one after a gap, a restart or Break, or while Period is 0. A
// duplicate (seq not above the previous one's, same epoch) is ignored.
func (c *Cycle) Observe(at, ts int64, seq, epoch uint64) (Interval, bool) {
	if c.primed && epoch == c.epoch && seq <= c.seq {
		return Interval{}, false
	}
	follows := c.primed && epoch == c.epoch && seq == c.seq+1
	prev, prevTS := c.last, c.lastTS
	c.last, c.lastTS, c.seq, c.epoch, c.primed = at, ts, seq, epoch, true
	if !follows || c.Period <= 0 {
		return Interval{}, false
	}
	return Interval{Dev: abs(at - prev - c.Period), Path: abs(at - prev - (ts - prevTS))}, true
}

func abs(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// Break forgets the previous arrival: the next one starts afresh. A
// stale mark, a heartbeat or a retained message breaks the cycle.
func (c *Cycle) Break() { c.primed = false }

// Histogram counts intervals' deviations: in ns and as a share of their
// period, and the path's part. The zero value is empty; it is about
// 100 KB: allocate it once.
type Histogram struct {
	dev   latency.Histogram
	share latency.Histogram // parts per million of the period
	path  latency.Histogram
}

// Record adds one interval iv of a topic whose period is period (ns,
// > 0; a period of 0 or less records nothing).
func (h *Histogram) Record(iv Interval, period int64) {
	if period <= 0 {
		return
	}
	h.dev.Record(iv.Dev)
	h.share.Record(int64(math.Round(float64(iv.Dev) * 1e6 / float64(period))))
	h.path.Record(iv.Path)
}

// Merge adds every interval of o to h.
func (h *Histogram) Merge(o *Histogram) {
	h.dev.Merge(&o.dev)
	h.share.Merge(&o.share)
	h.path.Merge(&o.path)
}

// Reset empties the histogram.
func (h *Histogram) Reset() { *h = Histogram{} }

// Count returns the number of intervals.
func (h *Histogram) Count() uint64 { return h.dev.Count() }

// Deviations returns the histogram of the deviations in ns, for a
// distribution to print.
func (h *Histogram) Deviations() *latency.Histogram { return &h.dev }

// Summary is the part of the jitter a result quotes.
type Summary struct {
	// N is the number of intervals measured; Topics the cyclic topics
	// they are from (set by the caller, who knows them).
	N      uint64 `json:"n"`
	Topics int    `json:"topics,omitempty"`
	// P50, P99 and Max are the deviations' median, 99th percentile and
	// largest, in milliseconds.
	P50 float64 `json:"p50_ms"`
	P99 float64 `json:"p99_ms"`
	Max float64 `json:"max_ms"`
	// P50Pct, P99Pct and MaxPct are the same of each deviation as a
	// share of its own topic's period, in percent: percentiles of their
	// own, not P50 / period.
	P50Pct float64 `json:"p50_pct"`
	P99Pct float64 `json:"p99_pct"`
	MaxPct float64 `json:"max_pct"`
	// PathP50, PathP99 and PathMax are the same of the path's part
	// (Interval.Path), in milliseconds.
	PathP50 float64 `json:"path_p50_ms"`
	PathP99 float64 `json:"path_p99_ms"`
	PathMax float64 `json:"path_max_ms"`
}

// Summary returns the count and percentiles, in ms rounded to the µs and
// in percent rounded to 0.01.
func (h *Histogram) Summary() Summary {
	pct := func(q float64) float64 {
		ppm := float64(h.share.Quantile(q))
		return math.Round(ppm/100) / 100
	}
	ms := func(l *latency.Histogram, q float64) float64 { return latency.Millis(l.Quantile(q)) }
	return Summary{
		N:   h.dev.Count(),
		P50: ms(&h.dev, 0.50), P99: ms(&h.dev, 0.99), Max: ms(&h.dev, 1),
		P50Pct: pct(0.50), P99Pct: pct(0.99), MaxPct: pct(1),
		PathP50: ms(&h.path, 0.50), PathP99: ms(&h.path, 0.99), PathMax: ms(&h.path, 1),
	}
}

// LearnIntervals is how many intervals between a topic's first fresh
// values a Learner takes to find its period.
const LearnIntervals = 16

// Learner finds a topic's period from the frame timestamps of its
// values, for a subscriber that knows neither the DBC nor the policy.
type Learner struct {
	iv     [LearnIntervals]int64
	n      int
	lastTS int64
	has    bool
	period int64
	done   bool
}

// Observe takes the ts of the topic's next fresh value. Once it has
// LearnIntervals intervals it returns done and the period: their median
// when at least three quarters of them are within a quarter of it, else
// 0 (not cyclic). The answer does not change after that.
func (l *Learner) Observe(ts int64) (period int64, done bool) {
	if l.done {
		return l.period, true
	}
	if l.has && ts > l.lastTS {
		l.iv[l.n] = ts - l.lastTS
		l.n++
	}
	l.lastTS, l.has = ts, true
	if l.n < LearnIntervals {
		return 0, false
	}
	l.done = true
	s := l.iv
	slices.Sort(s[:])
	m := s[LearnIntervals/2]
	near := 0
	for _, v := range s {
		if d := v - m; d <= m/4 && -d <= m/4 {
			near++
		}
	}
	if near*4 >= LearnIntervals*3 {
		l.period = m
	}
	return l.period, true
}
