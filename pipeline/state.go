package pipeline

import (
	"math"

	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/decoder"
	"github.com/yukart/candec/envelope"
)

// never is the deadline of nothing due.
const never = math.MaxInt64

// noLabel marks a sample without a value-table label.
const noLabel = -1

// sample is one value of one signal, as it will be published.
type sample struct {
	kind  envelope.Kind
	flags envelope.Flags
	label int32 // index into sigState.labels, or noLabel
	i     int64
	u     uint64
	f     float64
	ts    int64 // the frame's timestamp
}

// float returns the value as a float64 for deadband comparisons.
func (s *sample) float() float64 {
	switch s.kind {
	case envelope.Int:
		return float64(s.i)
	case envelope.Uint:
		return float64(s.u)
	}
	return s.f
}

// sigState is everything the Engine keeps per published stream of a
// signal: per signal, at Engine.sigs[dbc.Signal.Index], and for a J1939
// message kept per source address, per signal and source, after the
// database's signals (see "J1939 sources" in doc.go). Times are frame
// times in ns.
type sigState struct {
	sig    *dbc.Signal
	pol    Policy
	topic  string
	unit   []byte
	labels [][]byte // parallel to sig.Values

	id  int32 // its index in Engine.sigs
	tid int32 // its timer's id
	// perSource marks the state of a signal kept per source address:
	// it only holds the signal's policy for the states of its sources,
	// and its topic is the template's with {sa} left in; it never
	// publishes. clash marks a source's state whose topic another
	// signal has: it never publishes either (Stats.Clashes).
	perSource, clash bool

	// decimals is 10^d for a signal whose factor and offset have d
	// decimal places: its physical values are rounded to them, so that
	// raw 7 × 0.1 is published as 0.7, not 0.7000000000000001. Zero for
	// no rounding. f32 marks an IEEE float32 signal published as its
	// shortest decimal form.
	decimals float64
	f32      bool

	// Policy in nanoseconds and flat fields for the hot path.
	interval, heartbeat, staleAfter int64
	// cycle is the message's cycle time when the signal has a rate cap
	// and its message a cycle time, else 0: a closing cap window then
	// waits up to a grace period for the message's next frame.
	cycle                 int64
	deadband, deadbandPct float64
	onChange, publish     bool

	last      sample // latest value seen
	pub       sample // last value published, with its flags
	seq       uint64 // last seq published on the topic
	msg       int32  // index of the signal's message in Engine.msgs
	lastPubAt int64  // engine time of the last publish, for caps and heartbeats
	lastAt    int64  // last's frame time, for the grace deadline; a discontinuity moves it
	hasLast   bool
	hasPub    bool
	pending   bool // last is held back by the cap, due at trailAt()
	stale     bool // the stale mark is the last thing published
}

// msgState is what the Engine keeps per message, by the message's
// position in the database. Staleness is timed per message, from its
// last frame: a multiplexed signal is not in every frame, and one timer
// per message is cheaper than one per signal.
type msgState struct {
	seen     int64   // engine time of the latest frame
	minStale int64   // the smallest stale_after of its signals, 0 for none
	sigs     []int32 // its published signals with a stale_after
	tid      int32   // its staleness timer's id
	// first is, for the state of one source of a J1939 message, the
	// index in Engine.sigs of its first signal's state, the others
	// following in the message's signal order; -1 for a message whose
	// signals' states are at their dbc.Signal.Index.
	first int32
}

// timer is one entry of the timer heap: a signal's state or a message's
// staleness, by timer id (Engine.timers says which), and the deadline it
// was filed under. The key sits in the entry so that sifting reads one
// contiguous array.
type timer struct {
	wake int64
	id   int32
}

// nextDeadline returns when a trailing value or a heartbeat is next due
// for s, or never. Staleness is the message's timer.
func (s *sigState) nextDeadline() int64 {
	d := int64(never)
	if s.pending {
		d = s.trailAt()
	}
	if s.heartbeat > 0 && s.hasPub && !s.stale {
		d = min(d, s.lastPubAt+s.heartbeat)
	}
	return d
}

// trailAt returns when the value held back by the cap is published as
// trailing. Without a cycle time that is the end of the cap window. With
// one, the window's end waits for the message's next frame, which
// supersedes the held value and goes out at once (see value), so that a
// capped envelope is as fresh as an uncapped one. The wait ends at the
// grace deadline: one and a half cycles after the held value's frame,
// when the next frame is half a cycle overdue and the message has
// stopped, but never before the window's end. (A bound of one cycle
// after the window's end would fire before jittered on-time frames of a
// message whose cycle is near the cap's period.)
func (s *sigState) trailAt() int64 {
	end := s.lastPubAt + s.interval
	if s.cycle == 0 {
		return end
	}
	return max(s.lastAt+s.cycle+s.cycle/2, end)
}

// staleDue reports whether s is to be marked stale by deadline d of
// message seen at seen.
func (s *sigState) staleDue(seen, d int64) bool {
	return s.hasLast && !s.stale && seen+s.staleAfter <= d
}

// unchanged reports whether v is within the on-change deadbands of the
// value last published.
func (s *sigState) unchanged(v *sample) bool {
	p := &s.pub
	if v.kind == p.kind && v.kind != envelope.Float {
		if v.i == p.i && v.u == p.u {
			return true
		}
	}
	a, b := v.float(), p.float()
	if a == b || (a != a && b != b) { // equal, or both NaN
		return true
	}
	d := math.Abs(a - b)
	if d != d { // one NaN, or ±Inf against ±Inf of the other sign
		return false
	}
	if d <= s.deadband {
		return true
	}
	return s.deadbandPct > 0 && d <= s.deadbandPct/100*math.Abs(b)
}

// setPolicy copies the resolved policy into the hot-path fields. It sets
// every one of them, so that it also serves SetPolicies. A signal that is
// not published (by its policy, or because it is kept per source) has no
// timing: nothing of it is ever due.
func (s *sigState) setPolicy() {
	p := &s.pol
	s.publish = p.Publish && !s.perSource && !s.clash
	s.onChange = p.OnChange
	s.deadband, s.deadbandPct = p.Deadband, p.DeadbandPct
	s.interval, s.cycle, s.heartbeat, s.staleAfter = 0, 0, 0, 0
	if !p.Publish {
		return
	}
	if p.MaxRate > 0 {
		s.interval = max(int64(math.Round(1e9/p.MaxRate)), 1)
		if m := s.sig.Message; m != nil && m.CycleTime > 0 {
			s.cycle = int64(m.CycleTime)
		}
	}
	s.heartbeat = int64(p.Heartbeat)
	s.staleAfter = int64(p.StaleAfter)
}

// setSample stores decoded value v, seen in a frame at ts, as s.last.
func (s *sigState) setSample(v *decoder.Value, ts int64) {
	l := &s.last
	s.hasLast = true
	l.ts, s.lastAt = ts, ts
	l.flags = 0
	if v.Flags&decoder.OutOfRange != 0 {
		l.flags = envelope.OutOfRange
	}
	l.i, l.u, l.f = 0, 0, 0
	switch {
	case v.Flags&(decoder.Exact|decoder.Unsigned) == decoder.Exact|decoder.Unsigned && v.Raw > math.MaxInt64:
		l.kind, l.u = envelope.Uint, v.Raw
	case v.Flags&(decoder.Exact|decoder.Unsigned) == decoder.Exact|decoder.Unsigned:
		l.kind, l.i = envelope.Int, int64(v.Raw)
	case v.Flags&decoder.Exact != 0:
		l.kind, l.i = envelope.Int, v.Int
	default:
		// decoder.Tidy with the scale worked out once, in New: every
		// value is tidied as it comes, so that on-change compares like
		// with like.
		l.kind, l.f = envelope.Float, decoder.TidyScaled(v.Phys, s.decimals)
	}
	l.label = noLabel
	if len(s.labels) > 0 {
		l.label = labelIndex(s.sig.Values, int64(v.Raw))
	}
}

// labelIndex finds raw value r in a sorted value table.
func labelIndex(vs []dbc.ValueDescription, r int64) int32 {
	lo, hi := 0, len(vs)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if vs[m].Value < r {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < len(vs) && vs[lo].Value == r {
		return int32(lo)
	}
	return noLabel
}
