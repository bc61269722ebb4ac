package pipeline

import (
	"fmt"
	"math"
	"time"

	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/decoder"
	"github.com/yukart/candec/envelope"
	"github.com/yukart/candec/frame"
)

// Engine runs decoded values through their policies and publishes
// envelopes to a Sink. Build it with New. An Engine is not safe for
// concurrent use: one goroutine calls Frame, Advance, Flush, Republish,
// SetPolicies and Stats.
type Engine struct {
	db   *dbc.Database
	dec  *decoder.Decoder
	cfg  Config
	sink Sink

	vals []decoder.Value
	sigs []sigState // by dbc.Signal.Index, then the sources' states
	msgs []msgState // by message position, then the sources' states
	heap []timer    // min-heap on wake
	// By timer id: the position in heap (-1 when absent), and what the
	// timer is: a signal's state (its index in sigs) or a message's
	// staleness (^ its index in msgs). The database's signals' timers
	// come first, then its messages', then those of J1939 sources.
	hpos   []int32
	timers []int32
	now    int64
	begun  bool // a frame has set now

	// J1939 sources (see "J1939 sources" in doc.go), when the topic
	// template has {sa}: for a J1939 message m, sources[m] gives, by
	// source address, 1 + the index in msgs of that source's state, 0
	// until its first frame; it is made at the message's first frame. pos gives,
	// by dbc.Signal.Index, a signal's position in its message. owner
	// holds every published topic and the window's, so that a new
	// source's topics are checked against them.
	sources [][]int32
	pos     []int32
	owner   map[string]bool

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
	// policyVersion is SetPolicyVersion's.
	policyVersion uint64
}

// New builds an engine for db. It resolves every signal's policy and
// topic, and fails with a clear message when the topic template maps two
// published signals to one topic or makes an invalid topic.
func New(db *dbc.Database, cfg Config, sink Sink) (*Engine, error) {
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
		hpos: make([]int32, 0, len(db.Signals)+len(db.Messages)),
		buf:  make([]byte, 0, 256),

		maxJump: int64(cfg.MaxClockJump),
		confirm: cfg.ClockConfirm,
		cand:    make([]frame.Frame, 0, cfg.ClockConfirm),
	}
	e.vals = make([]decoder.Value, 0, e.dec.MaxSignals())
	e.env.Epoch = cfg.Epoch
	perSA := hasSA(cfg.TopicTemplate)
	msgIndex := e.indexMessages(perSA)
	owner, err := e.indexSignals(msgIndex, perSA)
	if err != nil {
		return nil, err
	}
	for m := range e.msgs {
		e.newTimer(^int32(m))
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
	if e.sources != nil {
		e.setOwners(owner)
	}
	return e, nil
}

// indexMessages sets up each message's state and returns each message's
// index. With a per-source template (perSA), a J1939 message's signals
// get their place in it, for the per-source state.
func (e *Engine) indexMessages(perSA bool) map[*dbc.Message]int32 {
	msgIndex := make(map[*dbc.Message]int32, len(e.db.Messages))
	for i, m := range e.db.Messages {
		msgIndex[m] = int32(i)
		e.msgs[i].first = -1
		e.msgs[i].tid = int32(len(e.db.Signals) + i)
		if perSA && isJ1939(m) {
			if e.sources == nil {
				e.sources = make([][]int32, len(e.db.Messages))
				e.pos = make([]int32, len(e.db.Signals))
			}
			for j, sig := range m.Signals {
				e.pos[sig.Index] = int32(j)
			}
		}
	}
	return msgIndex
}

// indexSignals sets up each signal's state and timer, and returns the
// signal that owns each published topic; two published signals on one
// topic are an error naming every clash.
func (e *Engine) indexSignals(msgIndex map[*dbc.Message]int32, perSA bool) (map[string]*dbc.Signal, error) {
	owner := make(map[string]*dbc.Signal, len(e.db.Signals))
	var clashes topicClashes
	for i, sig := range e.db.Signals {
		s := &e.sigs[i]
		if err := e.initSignal(s, int32(i), sig, msgIndex[sig.Message], perSA); err != nil {
			return nil, err
		}
		if !s.pol.Publish {
			continue
		}
		if s.staleAfter > 0 {
			m := &e.msgs[s.msg]
			m.sigs = append(m.sigs, int32(i))
			if m.minStale == 0 || s.staleAfter < m.minStale {
				m.minStale = s.staleAfter
			}
		}
		if prev, ok := owner[s.topic]; ok {
			clashes.add(s.topic, prev, sig)
			continue
		}
		owner[s.topic] = sig
	}
	if len(clashes.topics) > 0 {
		return nil, clashes.err(e.cfg.TopicTemplate)
	}
	return owner, nil
}

// initSignal fills s, the state of signal sig (index i, of message msg):
// its timer, policy, what its envelope needs ready (unit, decimals,
// labels) and its topic.
func (e *Engine) initSignal(s *sigState, i int32, sig *dbc.Signal, msg int32, perSA bool) error {
	s.sig = sig
	s.id, s.tid = i, e.newTimer(i)
	s.msg = msg
	s.perSource = perSA && isJ1939(sig.Message)
	s.pol = e.cfg.Policies.Resolve(sig)
	s.setPolicy()
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
	sa := anySA
	if s.perSource {
		// Its sources' topics, with {sa} left in: two signals that
		// share it would share a topic on every source.
		sa = templateSA
	}
	topic, err := expandTopicSA(e.cfg.TopicTemplate, sig, e.cfg.Bus, sa)
	if err != nil {
		return err
	}
	s.topic = topic
	return nil
}

// newTimer adds a timer for what (see Engine.timers) and returns its id.
func (e *Engine) newTimer(what int32) int32 {
	e.hpos = append(e.hpos, -1)
	e.timers = append(e.timers, what)
	return int32(len(e.hpos) - 1)
}

// setOwners keeps the published topics, and the window's, for the check
// of new sources' topics.
func (e *Engine) setOwners(owner map[string]*dbc.Signal) {
	e.owner = make(map[string]bool, len(owner)+1)
	for t := range owner {
		e.owner[t] = true
	}
	if e.win != nil {
		e.owner[e.winTopic] = true
	}
}

// Frame decodes f and runs each of its values through its signal's
// policy, publishing what is due. First it fires every deadline before
// f.Time (trailing values, heartbeats, stale marks). Frames of unknown
// IDs are counted. A frame more than Config.MaxClockJump from now is
// held as a candidate for a new timebase and, unless enough frames
// confirm that timebase, dropped (see "Clock jumps" in the package
// documentation). It does not allocate in steady state.
func (e *Engine) Frame(f *frame.Frame) {
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

// Advance moves now forward to t when frames stop: it fires every
// deadline before t and closes the window stream's windows that end at
// or before t. Call it only with a t that no later frame will precede
// (a watermark: wall-clock time minus the worst delivery delay), or
// later frames count as late and the output may differ from an offline
// run. A t at or before now does nothing. Advance trusts t: derive it
// from Latest, which frames with implausible timestamps do not move.
func (e *Engine) Advance(t int64) {
	if !e.begun || t <= e.now {
		return
	}
	prev := e.now
	e.fireBefore(t)
	e.now = t
	e.stats.Span += time.Duration(t - prev)
	e.closeWindow()
}

// Flush is for shutdown: it advances to t, publishes every value a rate
// cap still holds back (KindFlush) and closes the open window.
func (e *Engine) Flush(t int64) {
	// Frames still waiting to confirm a new timebase did not: the
	// stream ended first.
	e.dropCandidates()
	e.Advance(t)
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

// Republish publishes, after a reconnect, each signal's last published
// envelope again (KindRepublish: same value, ts and flags) with the next
// seq of its topic, so that retained values are current and subscribers
// see the gap. It changes no policy timing and is not added to the
// window stream. Envelopes after it carry seq one higher than an offline
// run would give them.
func (e *Engine) Republish() {
	for i := range e.sigs {
		if s := &e.sigs[i]; s.hasPub && s.publish {
			e.publish(s, KindRepublish, e.now)
		}
	}
}

// Handled returns how many frames the Engine has run: decoded, of an
// unknown ID, or skipped (remote and error frames). A frame its clock
// guard dropped, or holds as a candidate for a new timebase, is not
// among them. It is Stats' Decoded + Unknown + Skipped without the copy
// of Stats, for a caller that asks after every frame.
func (e *Engine) Handled() uint64 { return e.stats.Decoded + e.stats.Unknown + e.stats.Skipped }

// Stats returns a copy of the counters.
func (e *Engine) Stats() Stats { return e.stats }

// Topics returns the topics of the published signals, in signal order,
// then those of J1939 sources (with {sa} in the template), in the order
// their sources were first seen.
func (e *Engine) Topics() []string {
	ts := make([]string, 0, len(e.sigs))
	for i := range e.sigs {
		if e.sigs[i].publish {
			ts = append(ts, e.sigs[i].topic)
		}
	}
	return ts
}

// Streams returns the number of Out.Stream values so far: the
// database's signals, and the signals of every J1939 source seen (with
// {sa} in the topic template). It grows only in Frame, when a source
// sends its first frame.
func (e *Engine) Streams() int { return len(e.sigs) }

// Topic returns signal s's topic; for a J1939 signal kept per source
// ({sa} in the template), its sources' topic with {sa} left in
// ("truck/{sa}/EngineSpeed").
func (e *Engine) Topic(s *dbc.Signal) string { return e.sigs[s.Index].topic }

// Policy returns the resolved policy of signal s.
func (e *Engine) Policy(s *dbc.Signal) Policy { return e.sigs[s.Index].pol }

// Now returns the Engine's current frame time.
func (e *Engine) Now() int64 { return e.now }

// Latest returns the newest frame time the Engine has accepted on its
// current timebase (Advance does not move it; a discontinuity resets
// it). A live caller derives its watermark from it: frames the Engine
// dropped as outliers must not drag the watermark along.
func (e *Engine) Latest() int64 { return e.latest }

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
	if len(msg.Signals) == 0 {
		return
	}
	s0 := &e.sigs[msg.Signals[0].Index]
	m := s0.msg
	if s0.perSource {
		m = e.source(m, uint8(f.ID)) // the ID's low byte: its source address
	}
	first := e.msgs[m].first
	for i := range vals {
		v := &vals[i]
		id := int32(v.Signal.Index)
		if first >= 0 {
			id = first + e.pos[id]
		}
		e.value(&e.sigs[id], v, f.Time)
	}
	e.seen(m)
}

// source returns the index in e.msgs of the state of J1939 message m
// for source address sa, making it, and its signals' states, at the
// source's first frame: copies of the message's per-signal states with
// the topics of sa. A topic another signal already has is not published
// (Stats.Clashes): the template's {sa} makes that all but impossible,
// yet names can be made to meet ("{signal}{sa}" with signals A and A0).
func (e *Engine) source(m int32, sa uint8) int32 {
	if e.sources[m] == nil {
		e.sources[m] = make([]int32, 256)
	}
	if k := e.sources[m][sa]; k != 0 {
		return k - 1
	}
	k := int32(len(e.msgs))
	first := int32(len(e.sigs))
	e.msgs = append(e.msgs, msgState{first: first, tid: e.newTimer(^k)})
	for _, sig := range e.db.Messages[m].Signals {
		s := e.sigs[sig.Index] // a copy: its policy, unit, labels and scale
		s.id, s.msg = int32(len(e.sigs)), k
		s.tid = e.newTimer(s.id)
		s.perSource = false
		topic, err := expandTopicSA(e.cfg.TopicTemplate, sig, e.cfg.Bus, int(sa))
		s.topic = topic
		if err != nil || e.owner[topic] {
			s.clash = true
			if s.pol.Publish {
				e.stats.Clashes++
			}
		}
		s.setPolicy()
		if s.publish {
			e.owner[topic] = true
			if ms := &e.msgs[k]; s.staleAfter > 0 {
				ms.sigs = append(ms.sigs, s.id)
				if ms.minStale == 0 || s.staleAfter < ms.minStale {
					ms.minStale = s.staleAfter
				}
			}
		}
		e.sigs = append(e.sigs, s)
	}
	e.sources[m][sa] = k + 1
	e.stats.Sources++
	return k
}

// value runs one decoded value through the policy of its state s at
// e.now.
func (e *Engine) value(s *sigState, v *decoder.Value, ts int64) {
	e.stats.Values++
	if v.Flags&decoder.Truncated != 0 {
		e.stats.Truncated++
		return
	}
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
	e.out = Out{Topic: s.topic, Payload: e.buf, Signal: s.sig, Stream: int(s.id), Seq: s.seq, TS: p.ts, Kind: kind, Env: env}
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
	for len(e.heap) > 0 && e.heap[0].wake < t {
		id := e.timers[e.heap[0].id]
		var d int64
		if id < 0 {
			m := &e.msgs[^id]
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
		e.arm(s.tid, d)
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
		e.arm(ms.tid, ms.seen+ms.minStale)
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
