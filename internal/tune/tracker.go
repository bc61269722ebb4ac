package tune

import (
	"fmt"
	"math"
	"time"

	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/decoder"
	"github.com/yukart/candec/envelope"
	"github.com/yukart/candec/frame"
	"github.com/yukart/candec/pipeline"
)

// tracker sits on both sides of one pipeline run: as the run's source
// it decodes every frame it passes on (the truth: every value on the
// bus), and as the engine's sink it takes every envelope published (what
// a subscriber sees). Both go into a sigFid per signal, on the engine's
// clock, so that the figures are those of the pipeline's actual output.
//
// A frame's values are the truth once the engine has run the frame:
// timers the frame fires first (trailing values, heartbeats, stale marks
// of earlier samples) are published before them. A publish of the
// frame's own sample (its envelope carries the frame's timestamp) makes
// that signal's value the truth first.
type tracker struct {
	src pipeline.Source
	eng *pipeline.Engine
	dec *decoder.Decoder

	vals    []decoder.Value
	done    []bool // vals[i] is the truth already
	valsTS  int64
	applied uint64 // the engine's frames decoded or not, before vals' frame

	seen, changes, last []uint64
	steps               []rawSteps
	// obs are every signal's decoded values, as a Recording observes
	// them (Recording.observe); borrowed from the recording a run
	// replays, which observed them already.
	obs       []spread
	observes  bool
	envelopes []uint64
	windows   uint64
	// now and jumps are the engine's clock and discontinuities when
	// last looked at.
	now, jumps uint64
	// held are the values of the frames the clock guard holds, of
	// heldFrames frames.
	held       []heldValue
	heldFrames int
	adopting   bool // a new timebase: the held frames are being run
	fid        []sigFid
	pols       []pipeline.Policy

	// received, if not nil, gives the values instead of the engine (see
	// Config.Received); next is how many of each topic's were taken,
	// bad the first that was not the engine's.
	received map[string][]envelope.Envelope
	next     map[string]int
	bad      error
}

func newTracker(src pipeline.Source, dec *decoder.Decoder, n int, obs []spread) *tracker {
	observes := obs == nil
	if observes {
		obs = make([]spread, n)
	}
	return &tracker{
		obs: obs, observes: observes,
		src: src, dec: dec,
		vals:      make([]decoder.Value, 0, dec.MaxSignals()),
		done:      make([]bool, 0, dec.MaxSignals()),
		seen:      make([]uint64, n),
		changes:   make([]uint64, n),
		last:      make([]uint64, n),
		steps:     make([]rawSteps, n),
		envelopes: make([]uint64, n),
		fid:       make([]sigFid, n),
		pols:      make([]pipeline.Policy, n),
	}
}

// start gives the tracker the engine it watches.
func (t *tracker) start(eng *pipeline.Engine, db *dbc.Database) {
	t.eng = eng
	for _, s := range db.Signals {
		t.pols[s.Index] = eng.Policy(s)
		t.fid[s.Index].tol = tolOf(s)
	}
}

// handled is how many frames the engine ran (decoded, unknown or
// skipped): a frame its clock guard dropped or holds is not among them.
func (t *tracker) handled() uint64 { return t.eng.Handled() }

// Next makes the frame the engine has just run the truth, then reads
// and decodes the next one.
func (t *tracker) Next(f *frame.Frame) error {
	t.commit()
	if err := t.src.Next(f); err != nil {
		t.vals = t.vals[:0]
		return err
	}
	_, t.vals = t.dec.Decode(f, t.vals[:0])
	t.done = t.done[:0]
	for i := range t.vals {
		t.done = append(t.done, false)
		v := &t.vals[i]
		if v.Flags&decoder.Truncated != 0 {
			t.done[i] = true
			continue
		}
		k := v.Signal.Index
		if t.seen[k] > 0 {
			if v.Raw != t.last[k] {
				t.changes[k]++
			}
			t.steps[k].add(t.last[k], v.Raw)
		}
		if t.observes {
			t.obs[k].add(truthOf(v))
		}
		t.seen[k]++
		t.last[k] = v.Raw
	}
	t.valsTS, t.applied = f.Time, t.handled()
	return nil
}

// commit makes every value of the last frame not yet the truth the
// truth, at the engine's time, if the engine ran the frame.
func (t *tracker) commit() {
	t.clock()
	if t.eng == nil {
		t.vals = t.vals[:0]
		return
	}
	switch n := t.handled() - t.applied; {
	case n == 0:
		// Held by the clock guard as a candidate for a new timebase,
		// or dropped: kept until the next frame the engine runs says.
		if t.heldFrames < pipeline.MaxClockConfirm {
			t.heldFrames++
			for i := range t.vals {
				if !t.done[i] {
					t.held = append(t.held, heldValue{t.vals[i], t.valsTS})
				}
			}
		}
		t.vals = t.vals[:0]
		return
	case n > 1:
		// A new timebase adopted: the held frames ran before this one.
		t.commitHeld(math.MaxInt64)
	}
	t.held, t.heldFrames, t.adopting = t.held[:0], 0, false
	for i := range t.vals {
		if !t.done[i] {
			t.commitValue(i)
		}
	}
	t.vals = t.vals[:0]
}

// commitHeld makes the held values of frames up to timestamp ts the
// truth, in order, and keeps the others.
func (t *tracker) commitHeld(ts int64) {
	n := 0
	for i := range t.held {
		if h := &t.held[i]; h.ts <= ts {
			// On the new timebase the engine ran the frame at its own
			// time (or now, if it was behind).
			t.commitOne(&h.v, h.ts, min(h.ts, t.eng.Now()))
		} else {
			t.held[n] = *h
			n++
		}
	}
	t.held = t.held[:n]
}

// heldValue is a value of a frame the clock guard held.
type heldValue struct {
	v  decoder.Value
	ts int64
}

// clock restarts every signal's account when the engine's clock
// adopted a new timebase: the step between the two is no time. Only a
// clock that went back or leapt a second is looked into.
func (t *tracker) clock() {
	if t.eng == nil {
		return
	}
	now := uint64(t.eng.Now())
	if now >= t.now && now-t.now < uint64(time.Second) {
		t.now = now
		return
	}
	t.now = now
	if n := t.eng.Stats().Discontinuities; n != t.jumps {
		t.jumps, t.adopting = n, true
		for i := range t.fid {
			t.fid[i].restart(int64(now))
		}
	}
}

func (t *tracker) commitValue(i int) {
	t.done[i] = true
	t.commitOne(&t.vals[i], t.valsTS, t.eng.Now())
}

// commitOne makes v, of a frame of timestamp ts, the truth at engine
// time at.
func (t *tracker) commitOne(v *decoder.Value, ts, at int64) {
	k := v.Signal.Index
	p := &t.pols[k]
	if !p.Publish {
		return
	}
	f := &t.fid[k]
	thr := 0.0
	if p.OnChange {
		thr = max(p.Deadband, p.DeadbandPct/100*math.Abs(f.seen))
	}
	f.setTruth(truthOf(v), at, ts, thr)
}

// Publish takes an envelope: what every subscriber receives.
func (t *tracker) Publish(o *pipeline.Out) {
	if o.Signal == nil {
		t.windows++
		return
	}
	t.clock()
	if t.adopting {
		t.commitHeld(o.TS)
	}
	k := o.Signal.Index
	t.envelopes[k]++
	if o.Stream != k {
		return // a J1939 source's stream: the truth is kept per signal
	}
	if o.TS == t.valsTS {
		for i := range t.vals {
			if !t.done[i] && t.vals[i].Signal.Index == k {
				t.commitValue(i)
			}
		}
	}
	v, ts := o.Env.Float64(), o.TS
	if t.received != nil {
		v, ts = t.receivedValue(o)
	}
	t.fid[k].published(v, t.eng.Now(), ts, o.Kind)
}

// receivedValue is the value and timestamp of the received envelope
// that stands for o.
func (t *tracker) receivedValue(o *pipeline.Out) (float64, int64) {
	if t.next == nil {
		t.next = map[string]int{}
	}
	i := t.next[o.Topic]
	t.next[o.Topic]++
	got := t.received[o.Topic]
	if i >= len(got) || got[i].Seq != o.Seq {
		if t.bad == nil {
			t.bad = fmt.Errorf("%w: %s: envelope seq %d was not received in its place (%d received)", ErrReceived, o.Topic, o.Seq, len(got))
		}
		return o.Env.Float64(), o.TS
	}
	return got[i].Float64(), got[i].TS
}

// receivedAll fails unless every received envelope stood for one the
// engine published.
func (t *tracker) receivedAll() error {
	if t.bad != nil || t.received == nil {
		return t.bad
	}
	for topic, envs := range t.received {
		if n := t.next[topic]; n != len(envs) {
			return fmt.Errorf("%w: %s: %d envelopes received, the run published %d", ErrReceived, topic, len(envs), n)
		}
	}
	return nil
}

// finish accounts every signal's error up to end, the time of the
// run's final flush.
func (t *tracker) finish(end int64) {
	t.commit()
	for i := range t.fid {
		t.fid[i].advance(end)
	}
}
