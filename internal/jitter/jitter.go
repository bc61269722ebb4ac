package jitter

import (
	"math"
	"slices"

	"github.com/yukart/candec/internal/latency"
)

// Cycle follows the arrivals of one topic's envelopes. The zero value
// with Period set is ready to use.
type Cycle struct {
	// Period is the topic's period in ns; while it is 0, arrivals are
	// followed and no deviation is given.
	Period int64

	last       int64
	seq, epoch uint64
	primed     bool
}

// Observe takes an envelope with seq and epoch that arrived at (ns). It
// returns |interval − Period| and true when the topic's previous
// envelope was seq − 1 of the same epoch; false for the first one, one
// after a gap, a restart or Break, or while Period is 0. A duplicate
// (seq not above the previous one's, same epoch) is ignored.
func (c *Cycle) Observe(at int64, seq, epoch uint64) (dev int64, ok bool) {
	if c.primed && epoch == c.epoch && seq <= c.seq {
		return 0, false
	}
	follows := c.primed && epoch == c.epoch && seq == c.seq+1
	prev := c.last
	c.last, c.seq, c.epoch, c.primed = at, seq, epoch, true
	if !follows || c.Period <= 0 {
		return 0, false
	}
	d := at - prev - c.Period
	if d < 0 {
		d = -d
	}
	return d, true
}

// Break forgets the previous arrival: the next one starts afresh. A
// stale mark, a heartbeat or a retained message breaks the cycle.
func (c *Cycle) Break() { c.primed = false }

// Histogram counts deviations, in ns and as a share of their period.
// The zero value is empty; it is about 70 KB: allocate it once.
type Histogram struct {
	dev   latency.Histogram
	share latency.Histogram // parts per million of the period
}

// Record adds one deviation dev of an interval whose period is period
// (both ns, period > 0; a period of 0 or less records nothing).
func (h *Histogram) Record(dev, period int64) {
	if period <= 0 {
		return
	}
	h.dev.Record(dev)
	h.share.Record(int64(math.Round(float64(dev) * 1e6 / float64(period))))
}

// Merge adds every deviation of o to h.
func (h *Histogram) Merge(o *Histogram) {
	h.dev.Merge(&o.dev)
	h.share.Merge(&o.share)
}

// Reset empties the histogram.
func (h *Histogram) Reset() { *h = Histogram{} }

// Count returns the number of deviations.
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
}

// Summary returns the count and percentiles, in ms rounded to the µs and
// in percent rounded to 0.01.
func (h *Histogram) Summary() Summary {
	pct := func(q float64) float64 {
		ppm := float64(h.share.Quantile(q))
		return math.Round(ppm/100) / 100
	}
	return Summary{
		N:   h.dev.Count(),
		P50: latency.Millis(h.dev.Quantile(0.50)), P99: latency.Millis(h.dev.Quantile(0.99)), Max: latency.Millis(h.dev.Max()),
		P50Pct: pct(0.50), P99Pct: pct(0.99), MaxPct: pct(1),
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
