package jitter

import (
	"testing"
	"time"
)

const ms = int64(time.Millisecond)

func TestCycle(t *testing.T) {
	type arrival struct {
		at, ts     int64
		seq, epoch uint64
		brk        bool // Break before this arrival
		dev, path  int64
		ok         bool
	}
	for _, c := range []struct {
		name     string
		period   int64
		arrivals []arrival
	}{
		{"on time, early, late", 50 * ms, []arrival{
			{at: 1000 * ms, ts: 0, seq: 1, epoch: 1},
			{at: 1050 * ms, ts: 50 * ms, seq: 2, epoch: 1, dev: 0, path: 0, ok: true},
			{at: 1097 * ms, ts: 100 * ms, seq: 3, epoch: 1, dev: 3 * ms, path: 3 * ms, ok: true},
			{at: 1158 * ms, ts: 150 * ms, seq: 4, epoch: 1, dev: 11 * ms, path: 11 * ms, ok: true},
		}},
		{"the cap's rounding is the frames', not the path's", 50 * ms, []arrival{
			{at: 5 * ms, ts: 0, seq: 1, epoch: 1},
			{at: 65 * ms, ts: 60 * ms, seq: 2, epoch: 1, dev: 10 * ms, path: 0, ok: true},
			{at: 113 * ms, ts: 110 * ms, seq: 3, epoch: 1, dev: 2 * ms, path: 2 * ms, ok: true},
		}},
		{"two in one batch, then a gap of two periods' worth", 10 * ms, []arrival{
			{at: 0, ts: -15 * ms, seq: 1, epoch: 1},
			{at: 0, ts: -5 * ms, seq: 2, epoch: 1, dev: 10 * ms, path: 10 * ms, ok: true},
			{at: 20 * ms, ts: 5 * ms, seq: 3, epoch: 1, dev: 10 * ms, path: 10 * ms, ok: true},
		}},
		{"a lost envelope gives no interval", 50 * ms, []arrival{
			{at: 0, seq: 1, epoch: 1},
			{at: 100 * ms, ts: 100 * ms, seq: 3, epoch: 1},
			{at: 151 * ms, ts: 150 * ms, seq: 4, epoch: 1, dev: 1 * ms, path: 1 * ms, ok: true},
		}},
		{"a duplicate is ignored", 50 * ms, []arrival{
			{at: 0, seq: 5, epoch: 1},
			{at: 10 * ms, seq: 5, epoch: 1},
			{at: 52 * ms, ts: 50 * ms, seq: 6, epoch: 1, dev: 2 * ms, path: 2 * ms, ok: true},
		}},
		{"a restart gives no interval", 50 * ms, []arrival{
			{at: 0, seq: 7, epoch: 1},
			{at: 50 * ms, ts: 50 * ms, seq: 1, epoch: 2},
			{at: 99 * ms, ts: 100 * ms, seq: 2, epoch: 2, dev: 1 * ms, path: 1 * ms, ok: true},
		}},
		{"break", 50 * ms, []arrival{
			{at: 0, seq: 1, epoch: 1},
			{at: 50 * ms, ts: 50 * ms, seq: 2, epoch: 1, brk: true},
			{at: 100 * ms, ts: 100 * ms, seq: 3, epoch: 1, dev: 0, path: 0, ok: true},
		}},
		{"no period yet", 0, []arrival{
			{at: 0, seq: 1, epoch: 1},
			{at: 50 * ms, ts: 50 * ms, seq: 2, epoch: 1},
		}},
	} {
		cy := Cycle{Period: c.period}
		for i, a := range c.arrivals {
			if a.brk {
				cy.Break()
			}
			iv, ok := cy.Observe(a.at, a.ts, a.seq, a.epoch)
			if want := (Interval{Dev: a.dev, Path: a.path}); iv != want || ok != a.ok {
				t.Errorf("%s: arrival %d: got %+v %v, want %+v %v", c.name, i, iv, ok, want, a.ok)
			}
		}
	}
}

func TestHistogramSummary(t *testing.T) {
	var h Histogram
	// 102 intervals of a 50 ms topic: 100 on time, one 5 ms off (10 %),
	// one 25 ms off (50 %); and 98 of a 10 ms topic, each 2 ms off
	// (20 %). Deviations sorted: 100 × 0, 98 × 2 ms, 5 ms, 25 ms: p50
	// (the 100th of 200) is 0, p99 (the 198th) 2 ms. Shares sorted:
	// 100 × 0, 10 %, 98 × 20 %, 50 %: p99 is 20 %, not 2 ms of 50 ms.
	// The path's part: 1 ms for all but the 25 ms one, 7 ms.
	for range 100 {
		h.Record(Interval{0, ms}, 50*ms)
	}
	h.Record(Interval{5 * ms, ms}, 50*ms)
	h.Record(Interval{25 * ms, 7 * ms}, 50*ms)
	for range 98 {
		h.Record(Interval{2 * ms, ms}, 10*ms)
	}
	h.Record(Interval{ms, ms}, 0) // no period: not recorded
	got := h.Summary()
	want := Summary{N: 200, P50: 0, P99: 2, Max: 25, P50Pct: 0, P99Pct: 20, MaxPct: 50, PathP50: 1, PathP99: 1, PathMax: 7}
	if !nearSummary(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
	var m Histogram
	m.Merge(&h)
	m.Merge(&h)
	if m.Count() != 400 || m.Summary().Max != 25 {
		t.Errorf("merged: got %d deviations, max %v ms, want 400 and 25", m.Count(), m.Summary().Max)
	}
	m.Reset()
	if m.Count() != 0 {
		t.Errorf("reset: got %d deviations, want 0", m.Count())
	}
}

// nearSummary compares summaries within the histogram's 0.8 % bucket width.
func nearSummary(a, b Summary) bool {
	near := func(x, y float64) bool { return x >= y && x <= y*1.008+1e-9 }
	return a.N == b.N && near(a.P50, b.P50) && near(a.P99, b.P99) && a.Max == b.Max &&
		near(a.P50Pct, b.P50Pct) && near(a.P99Pct, b.P99Pct) && near(a.MaxPct, b.MaxPct) &&
		near(a.PathP50, b.PathP50) && near(a.PathP99, b.PathP99) && a.PathMax == b.PathMax
}

func TestLearner(t *testing.T) {
	cyclic := func(base int64, jitter []int64) []int64 {
		ts := []int64{0}
		for i := range LearnIntervals {
			ts = append(ts, ts[len(ts)-1]+base+jitter[i%len(jitter)])
		}
		return ts
	}
	for _, c := range []struct {
		name string
		ts   []int64
		want int64
	}{
		{"steady 50 ms", cyclic(50*ms, []int64{0}), 50 * ms},
		{"50 ms ± 1 ms", cyclic(50*ms, []int64{-ms, ms, 0, 0}), 50 * ms},
		{"one in four missed: still 60 ms", cyclic(60*ms, []int64{0, 0, 0, 60 * ms}), 60 * ms},
		{"on change: 10, 30, 10, 80, …", cyclic(0, []int64{10 * ms, 30 * ms, 10 * ms, 80 * ms}), 0},
	} {
		var l Learner
		var got int64
		var done bool
		for i, ts := range c.ts {
			got, done = l.Observe(ts)
			if done != (i == len(c.ts)-1) {
				t.Fatalf("%s: value %d: done %v, want %v", c.name, i, done, !done)
			}
		}
		if got != c.want {
			t.Errorf("%s: period %v, want %v", c.name, time.Duration(got), time.Duration(c.want))
		}
		if p, d := l.Observe(c.ts[len(c.ts)-1] + 5*ms); p != c.want || !d {
			t.Errorf("%s: after learning: %v %v, want %v true", c.name, time.Duration(p), d, time.Duration(c.want))
		}
	}
}

func TestRecordAllocs(t *testing.T) {
	h := new(Histogram)
	c := Cycle{Period: 50 * ms}
	var seq uint64
	n := testing.AllocsPerRun(1000, func() {
		seq++
		if iv, ok := c.Observe(int64(seq)*51*ms, int64(seq)*50*ms, seq, 1); ok {
			h.Record(iv, c.Period)
		}
	})
	if n != 0 {
		t.Errorf("got %v allocations per envelope, want 0", n)
	}
}
