package pipeline

import (
	"math"

	"github.com/yukart/candec/frame"
)

// The clock guard (see "Clock jumps" in the package documentation):
// frames far from the clock are held until they prove to be outliers or
// a new timebase.

// offset reports whether t is ahead of (or at) now, and whether it is
// more than maxJump away from it. It computes in uint64 so that no
// timestamp, however wild, overflows.
func (e *Engine) offset(t int64) (ahead, far bool) {
	if t >= e.now {
		return true, uint64(t)-uint64(e.now) > uint64(e.maxJump)
	}
	return false, uint64(e.now)-uint64(t) > uint64(e.maxJump)
}

// candidate holds f, far from now, as a frame of a possible new
// timebase: the run so far if f agrees with it (within maxJump of its
// newest frame), else a new run. A run of confirm frames is adopted.
func (e *Engine) candidate(f *frame.Frame) {
	if len(e.cand) > 0 {
		d := f.Time - e.candMax
		if f.Time < e.candMax {
			d = e.candMax - f.Time
		}
		if d < 0 || d > e.maxJump { // d < 0: the difference overflowed
			e.dropCandidates()
		}
	}
	if len(e.cand) == 0 || f.Time > e.candMax {
		e.candMax = f.Time
	}
	e.cand = append(e.cand, *f) // within its capacity: no allocation
	if len(e.cand) >= e.confirm {
		e.adopt()
	}
}

// dropCandidates counts the held frames as outliers and forgets them.
func (e *Engine) dropCandidates() {
	for i := range e.cand {
		t := e.cand[i].Time
		if ahead, _ := e.offset(t); ahead {
			e.stats.Future++
		} else {
			e.stats.Past++
		}
		e.stats.LastOutlier = t
	}
	e.cand = e.cand[:0]
}

// adopt makes the held run the clock's new timebase: it restarts the
// policies' timing at the run's earliest frame and then runs the held
// frames, in the order they came, as if they had come now.
func (e *Engine) adopt() {
	t := e.cand[0].Time
	for i := range e.cand {
		t = min(t, e.cand[i].Time)
	}
	e.stats.Discontinuities++
	e.stats.LastJump = satSub(t, e.now)
	e.restart(t)
	for i := range e.cand {
		e.apply(&e.cand[i])
	}
	e.cand = e.cand[:0]
}

// satSub returns a−b, saturated at the int64 range.
func satSub(a, b int64) int64 {
	d := a - b
	switch {
	case a >= b && d < 0:
		return math.MaxInt64
	case a < b && d >= 0:
		return math.MinInt64
	}
	return d
}

// restart moves the clock to t on a new timebase. The old timebase's
// deadlines mean nothing there: the open window is sent, and every
// timer starts again from t, as if each signal had last been published
// one cap period before t, each held value had come at t, and each
// message had just sent a frame. So the next value of every signal goes
// out at once (superseding a held one, as after any cap window), a held
// value whose message does not come back goes out at its grace deadline
// on the new timebase, no stale mark fires for the step itself, and a
// message that does not come back is marked stale its stale_after after
// t. Seq goes on.
func (e *Engine) restart(t int64) {
	if e.win != nil {
		if e.win.Len() > 0 {
			e.sendWindow()
		}
		e.winEnd = math.MinInt64
	}
	for _, h := range e.heap {
		e.hpos[h.id] = -1
	}
	e.heap = e.heap[:0]
	e.now, e.latest = t, t
	for i := range e.sigs {
		if s := &e.sigs[i]; s.hasPub {
			s.lastPubAt = t - s.interval
			s.lastAt = t
			e.schedule(s)
		}
	}
	for m := range e.msgs {
		ms := &e.msgs[m]
		ms.seen = t
		if ms.minStale > 0 {
			e.arm(ms.tid, t+ms.minStale)
		}
	}
}
