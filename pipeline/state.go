package pipeline

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/decoder"
	"github.com/yukart/candec/envelope"
	"github.com/yukart/candec/frame"
)

// Errors of the pipeline package.
var (
	// ErrConfig is wrapped by errors in a Config.
	ErrConfig = errors.New("pipeline: bad config")
	// ErrTopic is wrapped by errors in a topic or topic template.
	ErrTopic = errors.New("pipeline: bad topic")
	// ErrPolicy is wrapped by every *PolicyError.
	ErrPolicy = errors.New("pipeline: bad policy")
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

// sigState is everything the Engine keeps per signal, indexed by
// dbc.Signal.Index. Times are frame times in ns.
type sigState struct {
	sig    *dbc.Signal
	pol    Policy
	topic  string
	unit   []byte
	labels [][]byte // parallel to sig.Values

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
}

// timer is one entry of the timer heap: a signal (id < number of
// signals) or a message's staleness (id − number of signals), and the
// deadline it was filed under. The key sits in the entry so that sifting
// reads one contiguous array.
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

// Engine runs decoded values through their policies and publishes
// envelopes to a Sink. Build it with New. An Engine is not safe for
// concurrent use: one goroutine calls Frame, Advance, Flush, Republish
// and Stats.
type Engine struct {
	db   *dbc.Database
	dec  *decoder.Decoder
	cfg  Config
	sink Sink

	vals  []decoder.Value
	sigs  []sigState
	msgs  []msgState
	heap  []timer // min-heap on wake
	hpos  []int32 // by timer id: its position in heap, -1 when absent
	now   int64
	begun bool // a frame has set now

	// The clock guard (see "Clock jumps" in doc.go). latest is the
	// newest frame time accepted on the current timebase; cand holds
	// the frames, beyond maxJump from now, that may start a new one
	// (capacity confirm, allocated once), candMax the newest of them.
	maxJump int64
	confirm int
	latest  int64
	cand    []frame.Frame
	candMax int64

	stats Stats
	env   envelope.Envelope
	out   Out
	buf   []byte

	// The window stream, when configured.
	win       *envelope.WindowEncoder
	winTopic  string
	winPeriod int64
	winEnd    int64
	winSeq    uint64
	winBuf    []byte
	winOut    Out
}

func newEngine(db *dbc.Database, cfg Config, sink Sink) (*Engine, error) {
	if db == nil {
		return nil, fmt.Errorf("%w: no database", ErrConfig)
	}
	if sink == nil {
		return nil, fmt.Errorf("%w: no sink", ErrConfig)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	e := &Engine{
		db:   db,
		dec:  decoder.New(db),
		cfg:  cfg,
		sink: sink,
		sigs: make([]sigState, len(db.Signals)),
		msgs: make([]msgState, len(db.Messages)),
		heap: make([]timer, 0, len(db.Signals)+len(db.Messages)),
		hpos: make([]int32, len(db.Signals)+len(db.Messages)),
		buf:  make([]byte, 0, 256),

		maxJump: int64(cfg.MaxClockJump),
		confirm: cfg.ClockConfirm,
		cand:    make([]frame.Frame, 0, cfg.ClockConfirm),
	}
	e.vals = make([]decoder.Value, 0, e.dec.MaxSignals())
	for i := range e.hpos {
		e.hpos[i] = -1
	}
	msgIndex := make(map[*dbc.Message]int32, len(db.Messages))
	for i, m := range db.Messages {
		msgIndex[m] = int32(i)
	}
	e.env.Epoch = cfg.Epoch
	owner := make(map[string]*dbc.Signal, len(db.Signals))
	var clashes topicClashes
	for i, sig := range db.Signals {
		s := &e.sigs[i]
		s.sig = sig
		s.msg = msgIndex[sig.Message]
		s.pol = cfg.Policies.Resolve(sig)
		s.setPolicy()
		if s.interval > 0 && sig.Message != nil && sig.Message.CycleTime > 0 {
			s.cycle = int64(sig.Message.CycleTime)
		}
		s.unit = []byte(sig.Unit)
		switch sig.Type {
		case dbc.Integer:
			s.decimals = decoder.ScaleDecimals(sig.Factor, sig.Offset)
		case dbc.Float32:
			s.f32 = sig.Factor == 1 && sig.Offset == 0
		}
		if len(sig.Values) > 0 {
			s.labels = make([][]byte, len(sig.Values))
			for j, v := range sig.Values {
				s.labels[j] = []byte(v.Label)
			}
		}
		topic, err := expandTopic(cfg.TopicTemplate, sig, cfg.Bus)
		if err != nil {
			return nil, err
		}
		s.topic = topic
		if !s.publish {
			continue
		}
		if s.staleAfter > 0 {
			m := &e.msgs[s.msg]
			m.sigs = append(m.sigs, int32(i))
			if m.minStale == 0 || s.staleAfter < m.minStale {
				m.minStale = s.staleAfter
			}
		}
		if prev, ok := owner[topic]; ok {
			clashes.add(topic, prev, sig)
			continue
		}
		owner[topic] = sig
	}
	if len(clashes.topics) > 0 {
		return nil, clashes.err(cfg.TopicTemplate)
	}
	if w := cfg.Window; w != nil {
		if _, ok := owner[w.Topic]; ok {
			return nil, fmt.Errorf("%w: window topic %q is also a signal topic", ErrTopic, w.Topic)
		}
		e.win = envelope.NewWindowEncoder(cfg.Encoding)
		e.winTopic = w.Topic
		e.winPeriod = int64(w.Period)
		e.winEnd = math.MinInt64
		e.winBuf = make([]byte, 0, 4096)
	}
	return e, nil
}

// setPolicy copies the resolved policy into the hot-path fields.
func (s *sigState) setPolicy() {
	p := &s.pol
	s.publish = p.Publish
	s.onChange = p.OnChange
	s.deadband, s.deadbandPct = p.Deadband, p.DeadbandPct
	if p.MaxRate > 0 {
		s.interval = max(int64(math.Round(1e9/p.MaxRate)), 1)
	}
	s.heartbeat = int64(p.Heartbeat)
	s.staleAfter = int64(p.StaleAfter)
}

func (e *Engine) topicList() []string {
	ts := make([]string, 0, len(e.sigs))
	for i := range e.sigs {
		if e.sigs[i].publish {
			ts = append(ts, e.sigs[i].topic)
		}
	}
	return ts
}

func (e *Engine) frame(f *frame.Frame) {
	e.stats.Frames++
	if e.begun {
		if _, far := e.offset(f.Time); far {
			e.candidate(f)
			return
		}
	}
	if len(e.cand) > 0 {
		// The clock's timebase goes on: what looked like a new one was
		// a run of outliers.
		e.dropCandidates()
	}
	e.apply(f)
}

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
	nsig := int32(len(e.sigs))
	for m := range e.msgs {
		ms := &e.msgs[m]
		ms.seen = t
		if ms.minStale > 0 {
			e.arm(nsig+int32(m), t+ms.minStale)
		}
	}
}

// apply runs f on the clock's timebase: it moves now on to f's time, or
// counts f late when it is behind, and runs its values.
func (e *Engine) apply(f *frame.Frame) {
	t := f.Time
	switch {
	case !e.begun:
		e.begun, e.now, e.latest = true, t, t
	case t < e.now:
		e.stats.Late++
	default:
		prev := e.now
		e.fireBefore(t)
		e.now = t
		e.stats.Span += time.Duration(t - prev)
	}
	e.latest = max(e.latest, t)
	e.closeWindow()
	msg, vals := e.dec.Decode(f, e.vals[:0])
	if msg == nil {
		if f.Flags&(frame.Remote|frame.Error) != 0 {
			e.stats.Skipped++
		} else {
			e.stats.Unknown++
		}
		return
	}
	e.stats.Decoded++
	for i := range vals {
		e.value(&vals[i], f.Time)
	}
	if len(msg.Signals) > 0 {
		e.seen(e.sigs[msg.Signals[0].Index].msg)
	}
}

// value runs one decoded value through its signal's policy at e.now.
func (e *Engine) value(v *decoder.Value, ts int64) {
	e.stats.Values++
	if v.Flags&decoder.Truncated != 0 {
		e.stats.Truncated++
		return
	}
	s := &e.sigs[v.Signal.Index]
	if !s.publish {
		e.stats.Unpublished++
		return
	}
	s.setSample(v, ts)
	now := e.now
	switch {
	case !s.hasPub || s.stale:
		// The first value, or the one that clears a stale mark: at once.
		e.publish(s, KindValue, now)
	case s.onChange && s.unchanged(&s.last):
		e.stats.SuppressedUnchanged++
		if s.pending {
			// What was held back is no longer the current value.
			s.pending = false
			e.stats.SuppressedUnchanged++
		}
		if s.heartbeat > 0 && now >= s.lastPubAt+s.heartbeat {
			e.publish(s, KindHeartbeat, now)
		}
	case s.interval == 0 || now >= s.lastPubAt+s.interval:
		// Past the window's end, also while a held value waits for its
		// grace deadline: this fresher value supersedes it.
		if s.pending {
			e.stats.SuppressedCap++
		}
		e.publish(s, KindValue, now)
	default:
		if s.pending {
			e.stats.SuppressedCap++
		}
		s.pending = true
	}
	e.schedule(s)
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

// publish sends s.last (or, for KindRepublish, s.pub) on s's topic.
// at is the engine time of the publish, which policies time from.
func (e *Engine) publish(s *sigState, kind OutKind, at int64) {
	switch kind {
	case KindRepublish:
		// The retained state again: same value, ts and flags, new seq.
	case KindStale:
		s.pub = s.last
		s.pub.flags |= envelope.Stale
	default:
		s.pub = s.last
	}
	if kind != KindRepublish {
		s.hasPub = true
		s.pending = false
		s.stale = kind == KindStale
		s.lastPubAt = at
	}
	s.seq++
	p := &s.pub
	env := &e.env
	env.Kind, env.Int, env.Uint, env.Float = p.kind, p.i, p.u, p.f
	if s.f32 && p.kind == envelope.Float {
		// The rest of decoder.Tidy, for float32 signals: done on publish
		// only, as it costs a formatting and a parse.
		env.Float = decoder.Shortest32(p.f)
	}
	env.Unit = s.unit
	env.Label = nil
	if p.label >= 0 {
		env.Label = s.labels[p.label]
	}
	env.TS, env.Seq, env.Flags = p.ts, s.seq, p.flags
	e.buf = envelope.Append(e.cfg.Encoding, e.buf[:0], env)
	if e.win != nil && kind != KindRepublish {
		e.windowAt(at)
		e.win.AddEncoded(s.topic, e.buf)
	}
	e.stats.Envelopes[kind]++
	e.out = Out{Topic: s.topic, Payload: e.buf, Signal: s.sig, Seq: s.seq, TS: p.ts, Kind: kind, Env: env}
	e.sink.Publish(&e.out)
}

// fire publishes what is due for s at deadline d (trailing value or
// heartbeat); e.now is d.
func (e *Engine) fire(s *sigState, d int64) {
	if at := s.trailAt(); s.pending && at <= d {
		// The window of the cap closed and no fresher frame came by the
		// grace deadline: the held value goes out, and the next window
		// is timed from this publish, so the cap holds in every window.
		e.publish(s, KindTrailing, at)
	}
	if s.heartbeat > 0 && s.hasPub && !s.stale && s.lastPubAt+s.heartbeat <= d {
		e.publish(s, KindHeartbeat, d)
	}
}

// fireBefore fires every deadline before t, in deadline order.
func (e *Engine) fireBefore(t int64) {
	nsig := int32(len(e.sigs))
	for len(e.heap) > 0 && e.heap[0].wake < t {
		id := e.heap[0].id
		var d int64
		if id >= nsig {
			m := &e.msgs[id-nsig]
			if d = e.staleDeadline(m); d <= e.heap[0].wake {
				e.now = max(e.now, d)
				e.fireStale(m, d)
				d = e.staleDeadline(m)
			}
		} else {
			s := &e.sigs[id]
			if d = s.nextDeadline(); d <= e.heap[0].wake {
				// Due (d < wake cannot happen: schedule lowers the key).
				e.now = max(e.now, d)
				e.fire(s, d)
				d = s.nextDeadline()
			}
		}
		// The deadline moved on (a new value came since it was set) or
		// was just served: re-key the root, or drop it.
		if d == never {
			e.heapPop()
		} else {
			e.heap[0].wake = d
			e.heapDown(0)
		}
	}
}

// schedule makes sure s is in the timer heap no later than its next
// deadline. A deadline that moved later is left for fireBefore to find.
func (e *Engine) schedule(s *sigState) {
	if d := s.nextDeadline(); d != never {
		e.arm(int32(s.sig.Index), d)
	}
}

// arm makes sure timer id is in the heap no later than d.
func (e *Engine) arm(id int32, d int64) {
	switch pos := e.hpos[id]; {
	case pos < 0:
		e.heapPush(timer{wake: d, id: id})
	case d < e.heap[pos].wake:
		e.heap[pos].wake = d
		e.heapUp(int(pos))
	}
}

// seen records a frame of message m at e.now and arms its staleness
// timer no later than the earliest deadline its signals can have.
func (e *Engine) seen(m int32) {
	ms := &e.msgs[m]
	ms.seen = e.now
	if ms.minStale > 0 {
		e.arm(int32(len(e.sigs))+m, ms.seen+ms.minStale)
	}
}

// staleDeadline returns when the next signal of m turns stale, or never.
func (e *Engine) staleDeadline(m *msgState) int64 {
	d := int64(never)
	for _, i := range m.sigs {
		if s := &e.sigs[i]; s.hasLast && !s.stale {
			d = min(d, m.seen+s.staleAfter)
		}
	}
	return d
}

// fireStale marks stale, in signal order, each signal of m whose
// stale_after has passed by deadline d.
func (e *Engine) fireStale(m *msgState, d int64) {
	for _, i := range m.sigs {
		if s := &e.sigs[i]; s.staleDue(m.seen, d) {
			e.publish(s, KindStale, d)
			e.schedule(s)
		}
	}
}

func (e *Engine) advance(t int64) {
	if !e.begun || t <= e.now {
		return
	}
	prev := e.now
	e.fireBefore(t)
	e.now = t
	e.stats.Span += time.Duration(t - prev)
	e.closeWindow()
}

func (e *Engine) flush(t int64) {
	// Frames still waiting to confirm a new timebase did not: the
	// stream ended first.
	e.dropCandidates()
	e.advance(t)
	for i := range e.sigs {
		if s := &e.sigs[i]; s.pending {
			e.publish(s, KindFlush, e.now)
			e.schedule(s)
		}
	}
	if e.win != nil && e.win.Len() > 0 {
		e.sendWindow()
	}
}

func (e *Engine) republish() {
	for i := range e.sigs {
		if s := &e.sigs[i]; s.hasPub {
			e.publish(s, KindRepublish, e.now)
		}
	}
}

// windowAt makes the open window the one holding engine time at,
// sending the previous one if it has items.
func (e *Engine) windowAt(at int64) {
	if at < e.winEnd {
		return
	}
	if e.win.Len() > 0 {
		e.sendWindow()
	}
	start := at - at%e.winPeriod
	if at%e.winPeriod < 0 {
		start -= e.winPeriod
	}
	e.win.Reset(start, start+e.winPeriod)
	e.winEnd = start + e.winPeriod
}

// closeWindow sends the open window once e.now has reached its end.
func (e *Engine) closeWindow() {
	if e.win != nil && e.now >= e.winEnd && e.win.Len() > 0 {
		e.sendWindow()
	}
}

func (e *Engine) sendWindow() {
	e.winSeq++
	e.winBuf = e.win.Append(e.winBuf[:0], e.winSeq, e.cfg.Epoch)
	e.stats.Envelopes[KindWindow]++
	e.winOut = Out{Topic: e.winTopic, Payload: e.winBuf, Seq: e.winSeq, TS: e.win.Start(), Kind: KindWindow}
	e.win.Reset(e.win.Start(), e.win.End())
	e.sink.Publish(&e.winOut)
}
