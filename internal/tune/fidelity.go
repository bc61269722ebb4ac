package tune

import (
	"cmp"
	"math"
	"sync"
	"time"

	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/decoder"
	"github.com/yukart/candec/internal/lab/latency"
	"github.com/yukart/candec/pipeline"
)

// Fidelity is how far what a subscriber sees of one signal is from the
// bus: the last published value, held until the next one, against every
// decoded value, on frame time (see "Fidelity" in the package
// documentation).
type Fidelity struct {
	// RMS is the time-weighted root mean square of the error, and Max
	// the largest error held for any time, in the signal's unit.
	RMS float64 `json:"rms_error"`
	Max float64 `json:"max_abs_error"`
	// Range is what the errors are normalised by: the DBC's range, or
	// the robust observed one where the DBC gives none or an implausible
	// one (RangeFrom says which, "dbc" or "observed", and
	// DBCRangeRejected why the DBC's was not used: RangeBeyondBits or
	// RangeTooWide); RMSRange and MaxRange are RMS and Max as a fraction
	// of it (0 when the range is 0).
	Range            float64 `json:"range"`
	RangeFrom        string  `json:"range_from"`
	DBCRangeRejected string  `json:"dbc_range_rejected,omitempty"`
	RMSRange         float64 `json:"rms_error_of_range"`
	MaxRange         float64 `json:"max_abs_error_of_range"`
	// RMSRes and MaxRes are RMS and Max in units of the signal's
	// resolution (its factor).
	RMSRes float64 `json:"rms_error_resolutions"`
	MaxRes float64 `json:"max_abs_error_resolutions"`
	// Changes counts the changes beyond the deadband (away from what a
	// subscriber saw) that were published; LagP50, LagP99 and LagMax
	// are the time they waited for it, in seconds.
	Changes uint64  `json:"changes"`
	LagP50  float64 `json:"lag_p50_s"`
	LagP99  float64 `json:"lag_p99_s"`
	LagMax  float64 `json:"lag_max_s"`
	// State is true for a value-table signal or an integer state (see
	// IsState); Transitions counts its changes of value on the bus and
	// Missed those whose new value no envelope ever carried.
	// Enum is true for a signal with a value table.
	State       bool   `json:"state"`
	Enum        bool   `json:"enum"`
	Transitions uint64 `json:"transitions,omitempty"`
	Missed      uint64 `json:"missed_transitions"`
	// HeartbeatsPerS and StalePerS are the heartbeats and the stale
	// marks published per second, counted apart from values.
	HeartbeatsPerS float64 `json:"heartbeats_per_s"`
	StalePerS      float64 `json:"stale_marks_per_s"`
}

// IsState reports whether sig is a state whose every transition counts:
// a signal with a value table, or an integer signal (whole factor and
// offset) of at most 8 bits.
func IsState(sig *dbc.Signal) bool {
	if len(sig.Values) > 0 {
		return true
	}
	whole := func(x float64) bool { return x == math.Trunc(x) }
	return sig.Length <= 8 && sig.Type == dbc.Integer && whole(sig.Factor) && whole(sig.Offset)
}

// sigFid is the running account of one signal's fidelity. Times are
// engine times in ns.
type sigFid struct {
	hasTruth, hasSeen bool
	truth, seen       float64
	last, start       int64   // the latest event; the first publish
	span              float64 // ns of error accounted for
	sumSq             float64
	maxAbs            float64
	tol               float64 // two values within it are the same (tolOf)
	runSeen           bool    // an envelope carried the current truth
	transitions       uint64
	missed            uint64
	pend              []pending // changes waiting for a publish
	lags              *latency.Histogram
	heartbeats, stale uint64
}

// pending is a change of the truth beyond the deadband: its engine
// time and its frame's timestamp.
type pending struct{ at, ts int64 }

// advance accumulates the error held from f.last to t.
func (f *sigFid) advance(t int64) {
	if t <= f.last {
		return
	}
	if f.hasTruth && f.hasSeen {
		e := diffWithin(f.truth, f.seen, f.tol)
		f.sumSq += e * e * float64(t-f.last)
		f.span += float64(t - f.last)
		f.maxAbs = max(f.maxAbs, e)
	}
	f.last = t
}

// restart goes on at t, on a new timebase (a discontinuity of the
// engine's clock): the step is no time, and a change waiting for a
// publish is timed no more.
func (f *sigFid) restart(t int64) {
	f.last = t
	f.pend = f.pend[:0]
}

// setTruth records decoded value v, of frame timestamp ts, at t; thr is
// the deadband a change must pass to be owed a publish. Values are
// compared within the signal's tolerance (diffWithin), as the error is:
// what publishing does to a value's last digits (rounded to the factor's
// decimals, a float32 published as its shortest decimal) is neither an
// error nor a transition.
func (f *sigFid) setTruth(v float64, t, ts int64, thr float64) {
	f.advance(t)
	if !f.hasTruth {
		f.hasTruth, f.truth = true, v
		f.last = max(f.last, t)
		return
	}
	changed := diffWithin(v, f.truth, f.tol) != 0
	if changed {
		f.transitions++
		if !f.runSeen {
			f.missed++
		}
		f.runSeen = false
	}
	f.truth = v
	switch {
	case !f.hasSeen:
	case diffWithin(v, f.seen, f.tol) <= thr:
		f.pend = f.pend[:0] // nothing is owed: the view is within the deadband
	case changed:
		f.pend = append(f.pend, pending{at: t, ts: ts})
	}
}

// published records an envelope of value v, of frame timestamp ts, at t.
func (f *sigFid) published(v float64, t, ts int64, kind pipeline.OutKind) {
	f.advance(t)
	if !f.hasSeen {
		f.hasSeen, f.start = true, t
	}
	f.seen = v
	if f.hasTruth && diffWithin(f.truth, v, f.tol) == 0 {
		f.runSeen = true
	}
	switch kind {
	case pipeline.KindHeartbeat:
		f.heartbeats++
	case pipeline.KindStale:
		f.stale++
	}
	n := 0
	for _, p := range f.pend {
		if p.ts > ts {
			f.pend[n] = p
			n++
			continue
		}
		if f.lags == nil {
			f.lags = histograms.Get().(*latency.Histogram)
		}
		f.lags.Record(t - p.at)
	}
	f.pend = f.pend[:n]
}

// histograms are the change lags' histograms (35 KB each) of the
// accounts released: the optimizer's passes reuse them.
var histograms = sync.Pool{New: func() any { return new(latency.Histogram) }}

// release gives the account's histogram back, once its result is
// taken.
func (f *sigFid) release() {
	if f.lags != nil {
		f.lags.Reset()
		histograms.Put(f.lags)
		f.lags = nil
	}
}

// result is the account as a Fidelity of sig, over its time to end,
// with rates per secs; obs is what was observed of sig, for its range.
func (f *sigFid) result(sig *dbc.Signal, secs float64, obs *spread) Fidelity {
	r := Fidelity{Max: f.maxAbs, State: IsState(sig), Enum: len(sig.Values) > 0, Transitions: f.transitions, Missed: f.missed}
	if !r.State {
		r.Transitions, r.Missed = 0, 0
	}
	if f.span > 0 {
		r.RMS = math.Sqrt(f.sumSq / f.span)
	}
	r.Range, r.RangeFrom, r.DBCRangeRejected = rangeOfSignal(sig, obs)
	if r.Range > 0 {
		r.RMSRange, r.MaxRange = r.RMS/r.Range, r.Max/r.Range
	}
	res := cmp.Or(math.Abs(sig.Factor), 1)
	r.RMSRes, r.MaxRes = r.RMS/res, r.Max/res
	if f.lags != nil {
		sec := func(d time.Duration) float64 { return d.Seconds() }
		r.Changes = f.lags.Count()
		r.LagP50, r.LagP99, r.LagMax = sec(f.lags.Quantile(0.5)), sec(f.lags.Quantile(0.99)), sec(f.lags.Max())
	}
	r.HeartbeatsPerS, r.StalePerS = float64(f.heartbeats)/secs, float64(f.stale)/secs
	return r
}

// truthOf is a decoded value: its physical value, which the published
// one equals but for the last digits (see diffWithin).
func truthOf(v *decoder.Value) float64 { return v.Phys }
