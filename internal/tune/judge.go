package tune

import (
	"math"
	"slices"

	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/pipeline"
)

// How a signal is judged: the tolerance two of its values are the same
// within, the range its errors are normalised by, and whether it is
// housekeeping (see "How a signal is judged" in docs/tuning.md).

// tolOf is the tolerance within which two values of sig are the same:
// half its resolution for an integer signal (its values are a grid of
// that step: what publishing does to a value's last digits is far less,
// a real difference is a step or more); 0 for a float signal, whose
// values are compared relatively (see sameWithin).
func tolOf(sig *dbc.Signal) float64 {
	if sig.Type != dbc.Integer {
		return 0
	}
	return math.Abs(sig.Factor) / 2
}

// diffWithin is |a-b|, or 0 when a and b are the same value within tol
// or a millionth of a (a float32 published as its shortest decimal).
// The error metric and the transitions both use it: one computation.
func diffWithin(a, b, tol float64) float64 {
	e := math.Abs(a - b)
	if e <= tol || e <= 1e-6*math.Abs(a) {
		return 0
	}
	return e
}

// maxSample is how many values a spread keeps to estimate percentiles.
const maxSample = 1024

// spread is a running account of a signal's observed values: its
// extremes and an evenly spaced sample, in order, of at most maxSample
// values (every value until it is full, then every 2nd, 4th…), the
// same for the same values in the same order.
type spread struct {
	n, skip, stride int
	lo, hi          float64
	vals            []float64
	// robust is observed's result once frozen: a Recording's spreads
	// are read by many passes at once, and sorted once.
	robust float64
	frozen bool
}

// freeze works out the robust observed range once, for a signal of
// resolution res; the spread takes no more values.
func (s *spread) freeze(res float64) {
	s.robust = s.observed(res)
	s.frozen = true
}

func (s *spread) add(v float64) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return // a float signal's NaN or infinity has no place in a range
	}
	if s.n == 0 {
		s.lo, s.hi, s.stride = v, v, 1
	}
	s.lo, s.hi = min(s.lo, v), max(s.hi, v)
	s.n++
	if s.skip > 0 {
		s.skip--
		return
	}
	if len(s.vals) == maxSample {
		for i := range maxSample / 2 {
			s.vals[i] = s.vals[2*i]
		}
		s.vals = s.vals[:maxSample/2]
		s.stride *= 2
	}
	s.vals = append(s.vals, v)
	s.skip = s.stride - 1
}

// merge adds o's sample and extremes to s (for several captures).
func (s *spread) merge(o *spread) {
	if o.n == 0 {
		return
	}
	if s.n == 0 {
		s.lo, s.hi = o.lo, o.hi
	}
	s.lo, s.hi, s.n = min(s.lo, o.lo), max(s.hi, o.hi), s.n+o.n
	s.vals = append(s.vals, o.vals...)
	s.frozen = false
}

// observed is the robust observed range: the spread between the 1st and
// the 99th percentile of the sample (a glitch or a fault value a few
// frames long does not widen it); where that is no more than res (a
// signal that moved on fewer than 1 % of its frames), the full observed
// range; at least res.
func (s *spread) observed(res float64) float64 {
	if s.frozen {
		return s.robust
	}
	if s.n == 0 {
		return res
	}
	v := slices.Clone(s.vals)
	slices.Sort(v)
	at := func(q float64) float64 { return v[int(math.Round(q*float64(len(v)-1)))] }
	r := at(0.99) - at(0.01)
	if r <= res {
		r = s.hi - s.lo
	}
	return max(r, res)
}

// Reasons a DBC's range is not used (Fidelity.DBCRangeRejected).
const (
	// RangeBeyondBits: less than half the DBC's range is a value the
	// signal's bits can carry at its factor and offset (the raw full
	// scale given as the physical range: [0|65535] for a signed 16-bit
	// signal of factor 0.01).
	RangeBeyondBits = "beyond_bits"
	// RangeTooWide: the DBC's range is more than 1000 times the robust
	// observed range, and that is 10 resolutions or more (a signal that
	// moved: a quiet one, noise of a step or two or a constant, says
	// nothing of its scale and keeps the DBC's range).
	RangeTooWide = "too_wide"
)

// tooWide is how many times the robust observed range a DBC's range may
// be before it is not believed, when the observed range is at least
// movedRes resolutions.
const (
	tooWide  = 1000
	movedRes = 10
)

// rangeOfSignal is the range sig's errors and deadbands are fractions of,
// given what was observed of it: the DBC's, unless it gives none
// (min ≥ max) or it is implausible (see RangeBeyondBits, RangeTooWide);
// then the robust observed range (spread.observed). from is "dbc" or
// "observed", rejected why the DBC's range was not used ("" if it was
// or there is none).
func rangeOfSignal(sig *dbc.Signal, s *spread) (rng float64, from, rejected string) {
	res := resolution(sig)
	if !(sig.Min < sig.Max) {
		return s.observed(res), "observed", ""
	}
	if beyondBits(sig) {
		return s.observed(res), "observed", RangeBeyondBits
	}
	if s.n > 0 {
		if obs := s.observed(res); obs > 0 && sig.Max-sig.Min > tooWide*obs && obs >= movedRes*res {
			return obs, "observed", RangeTooWide
		}
	}
	return sig.Max - sig.Min, "dbc", ""
}

// resolution is sig's factor, or 1 where it has none; a float signal's
// resolution is 0 (none).
func resolution(sig *dbc.Signal) float64 {
	if sig.Type != dbc.Integer {
		return 0
	}
	if r := math.Abs(sig.Factor); r > 0 {
		return r
	}
	return 1
}

// beyondBits reports whether less than half of sig's DBC range is in
// the physical range its bits can carry.
func beyondBits(sig *dbc.Signal) bool {
	if sig.Type != dbc.Integer || sig.Length <= 0 || sig.Length > 64 || !(sig.Min < sig.Max) {
		return false
	}
	n := float64(sig.Length)
	lo, hi := 0.0, math.Exp2(n)-1
	if sig.Signed {
		lo, hi = -math.Exp2(n-1), math.Exp2(n-1)-1
	}
	a, b := lo*sig.Factor+sig.Offset, hi*sig.Factor+sig.Offset
	if a > b {
		a, b = b, a
	}
	in := min(b, sig.Max) - max(a, sig.Min)
	return in < (sig.Max-sig.Min)/2
}

// ImplausibleRanges counts the signals of db whose DBC range is beyond
// what their bits carry (RangeBeyondBits), of those that state a range.
// When every stated range is (n == of > 0), the DBC's ranges are most
// likely its raw full scales: the tuner normalises by the observed ranges
// throughout.
func ImplausibleRanges(db *dbc.Database) (n, of int) {
	for _, s := range db.Signals {
		if s.Min < s.Max {
			of++
			if beyondBits(s) {
				n++
			}
		}
	}
	return n, of
}

// rawSteps counts, for one signal, its consecutive decoded values and
// how they step: by one raw count up, or back down (a counter wrapping).
type rawSteps struct {
	pairs, changes, ups, wraps uint64
}

func (r *rawSteps) add(prev, raw uint64) {
	r.pairs++
	switch {
	case raw == prev+1:
		r.ups++
	case raw < prev:
		r.wraps++
	}
	if raw != prev {
		r.changes++
	}
}

func (r *rawSteps) merge(o rawSteps) {
	r.pairs, r.changes, r.ups, r.wraps = r.pairs+o.pairs, r.changes+o.changes, r.ups+o.ups, r.wraps+o.wraps
}

// Kinds of housekeeping (Signal.Housekeeping).
const (
	// HousekeepingName: the name says checksum or CRC, or says counter
	// and the value changes on at least half its frames.
	HousekeepingName = "name"
	// HousekeepingBehaviour: an unsigned integer of 2 to 8 bits that,
	// over at least 16 consecutive values, steps up by one on at least
	// half of them and by one or back down (wrapping) on at least 90 %,
	// and wrapped at least once; not a multiplexer, whose cycling through
	// its pages is the same steps. (A wider value that climbs by one a
	// frame is as likely a ramp: only its name can say.)
	HousekeepingBehaviour = "behaviour"
)

// housekeepingOf says whether sig, with steps st, is a checksum or a
// rolling counter, which no subscriber reads: "" when it is not,
// HousekeepingName or HousekeepingBehaviour when it is.
func housekeepingOf(sig *dbc.Signal, st rawSteps) string {
	switch pipeline.HousekeepingName(sig.Name) {
	case "checksum":
		return HousekeepingName
	case "counter":
		// A counter of events (a fault count, an odometer-like count)
		// changes now and then: judged as any signal.
		if st.pairs > 0 && 2*st.changes >= st.pairs {
			return HousekeepingName
		}
	}
	if sig.Type == dbc.Integer && !sig.Signed && !sig.Multiplexer && sig.Length >= 2 && sig.Length <= 8 && st.pairs >= 16 &&
		st.wraps > 0 && 2*st.ups >= st.pairs && 10*(st.ups+st.wraps) >= 9*st.pairs {
		return HousekeepingBehaviour
	}
	return ""
}
