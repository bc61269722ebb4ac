package simulate

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/yukart/candec/capture"
	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/decoder"
	"github.com/yukart/candec/frame"
)

// Scenario is what the simulated kart does during the capture.
type Scenario string

// Scenarios.
const (
	// Idle: parked in neutral with the high-voltage system on and the
	// motor idling. Nothing moves but noise and slow temperatures.
	Idle Scenario = "idle"
	// Drive: a standing start, then laps of a kart track: straights at
	// full throttle, braking with regeneration, corners both ways, a
	// drive-mode change after the second lap.
	Drive Scenario = "drive"
)

// Scenarios lists the known scenarios.
var Scenarios = []Scenario{Idle, Drive}

// Defaults of Options. DefaultOptions with these reproduces the checked-in
// testdata/idle.log from testdata/yukart.dbc.
const (
	// DefaultSeed is the seed of the checked-in capture (Options.Seed
	// itself has no default: zero is a seed like any other).
	DefaultSeed = 1
	// DefaultDuration is the capture's length.
	DefaultDuration = 20 * time.Second
	// MaxDuration is the longest capture: a day of the kart's bus is
	// about 3.5 GB of candump -l text (41 kB/s).
	MaxDuration = 24 * time.Hour
	// DefaultScenario is the parked kart.
	DefaultScenario = Idle
	// DefaultInterface is the interface name written in the log.
	DefaultInterface = "can0"
	// DefaultBitrate is the bus speed that decides how long each frame
	// occupies the bus.
	DefaultBitrate = 500_000
	// DefaultJitter is the largest deviation of a frame from its cycle:
	// ECU tasks are not scheduled to the microsecond.
	DefaultJitter = 200 * time.Microsecond
)

// DefaultStart is the wall-clock time of the first frame's cycle.
var DefaultStart = time.Date(2026, 10, 9, 16, 37, 36, 0, time.UTC)

// Errors of the generator.
var (
	// ErrOptions reports options that make no capture (a negative
	// duration, an unknown scenario, …).
	ErrOptions = errors.New("simulate: invalid options")
	// ErrNoCyclic reports a database without any message that has a
	// cycle time (GenMsgCycleTime): there is nothing to send.
	ErrNoCyclic = errors.New("simulate: no cyclic messages")
)

// Options control a generated capture. The zero value of each field but
// Seed means its default.
type Options struct {
	// Seed selects the random streams: the same seed, database and
	// options give the same capture, byte for byte.
	Seed int64
	// Start is the time of the capture's start; frames carry it as
	// their timestamps' origin.
	Start time.Time
	// Duration is the capture's length: every message sends each cycle
	// that starts before Start + Duration.
	Duration time.Duration
	// Scenario is what the kart does.
	Scenario Scenario
	// Interface is the interface name written in the log.
	Interface string
	// Bitrate is the bus speed, bit/s.
	Bitrate int
	// Jitter is the largest deviation from the cycle time; negative for
	// none.
	Jitter time.Duration
}

// DefaultOptions returns the options of the checked-in idle capture.
func DefaultOptions() Options {
	return Options{Seed: DefaultSeed}.withDefaults()
}

func (o Options) withDefaults() Options {
	if o.Start.IsZero() {
		o.Start = DefaultStart
	}
	o.Duration = cmp.Or(o.Duration, DefaultDuration)
	o.Scenario = cmp.Or(o.Scenario, DefaultScenario)
	o.Interface = cmp.Or(o.Interface, DefaultInterface)
	o.Bitrate = cmp.Or(o.Bitrate, DefaultBitrate)
	o.Jitter = cmp.Or(o.Jitter, DefaultJitter)
	return o
}

// Validate reports whether the options (with defaults filled in) make a
// capture.
func (o Options) Validate() error {
	o = o.withDefaults()
	switch {
	case o.Duration < 0:
		return fmt.Errorf("%w: negative duration %s", ErrOptions, o.Duration)
	case o.Duration > MaxDuration:
		return fmt.Errorf("%w: duration %s above %s (a day of the bus is about 3.5 GB)", ErrOptions, o.Duration, MaxDuration)
	case o.Scenario != Idle && o.Scenario != Drive:
		return fmt.Errorf("%w: unknown scenario %q (want %s or %s)", ErrOptions, o.Scenario, Idle, Drive)
	case strings.ContainsAny(o.Interface, " \t\r\n"):
		return fmt.Errorf("%w: interface name %q contains white space", ErrOptions, o.Interface)
	case o.Bitrate < 10_000 || o.Bitrate > 1_000_000:
		return fmt.Errorf("%w: bitrate %d outside 10000–1000000", ErrOptions, o.Bitrate)
	case o.Jitter > 10*time.Millisecond:
		return fmt.Errorf("%w: jitter %s above 10ms", ErrOptions, o.Jitter)
	}
	return nil
}

// WriteLog generates a capture and writes it to w in candump -l format.
// It returns the number of frames written. It stops early with the
// context's error when ctx ends.
func WriteLog(ctx context.Context, w io.Writer, db *dbc.Database, opts Options) (int, error) {
	opts = opts.withDefaults()
	cw := capture.NewWriter(w)
	n := 0
	err := Generate(db, opts, func(f *frame.Frame) error {
		if n%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		n++
		return cw.Write(f, opts.Interface)
	})
	if err != nil {
		return n, err
	}
	return n, cw.Flush()
}

// Generate simulates the kart and calls emit with each frame, in
// timestamp order. Every message with a cycle time sends at that cycle,
// from a random phase, with a small random jitter; frames that become
// ready together go out in arbitration order, each taking its time on the
// bus, so timestamps strictly increase (at microsecond resolution, as
// candump writes them). Messages without a cycle time are not sent.
//
// The frame passed to emit is reused: emit must copy what it keeps. An
// error from emit stops the generation and is returned.
func Generate(db *dbc.Database, opts Options, emit func(*frame.Frame) error) error {
	opts = opts.withDefaults()
	if err := opts.Validate(); err != nil {
		return err
	}
	g, err := newGenerator(db, opts)
	if err != nil {
		return err
	}
	return g.run(emit)
}

// generator is one capture being made.
type generator struct {
	opts    Options
	w       *world
	msgs    []*msgState
	bitNs   int64
	startNs int64 // capture start, ns since the Unix epoch
	endNs   int64 // cycles starting at or after this are not sent, ns since start
	f       frame.Frame
}

// msgState is one message's schedule and the state of its signals.
type msgState struct {
	m        *dbc.Message
	period   int64 // ns
	phase    int64 // ns since start of the first cycle
	k        int64 // next cycle
	ready    int64 // when cycle k is queued for the bus, ns since start
	done     bool
	prio     uint64 // arbitration: lower wins
	bits     int64  // frame length on the bus, bits
	r        rng    // phase and jitter
	sigs     []sigState
	switches []int   // indexes in sigs of the multiplexer switches
	configs  [][]mux // multiplexer configurations, cycled frame by frame
	cfg      int
}

// mux is one switch's value in a multiplexer configuration.
type mux struct {
	active bool
	value  uint64
}

// sigState is one signal's model and its running state.
type sigState struct {
	s      *dbc.Signal
	spec   spec
	r      rng
	count  uint64  // counters
	offset float64 // drift
	last   float64 // time of the previous sample, s
}

func newGenerator(db *dbc.Database, opts Options) (*generator, error) {
	if db == nil {
		return nil, fmt.Errorf("%w: no database", ErrNoCyclic)
	}
	g := &generator{
		opts:    opts,
		bitNs:   int64(time.Second) / int64(opts.Bitrate),
		startNs: opts.Start.UnixNano(),
		endNs:   int64(opts.Duration),
	}
	g.w = newWorld(opts.Scenario, opts.Seed, opts.Duration.Seconds())
	for _, m := range db.Messages {
		if m.CycleTime <= 0 {
			continue
		}
		if m.Length > frame.MaxLen {
			return nil, fmt.Errorf("simulate: message %s: length %d above %d", m.Name, m.Length, frame.MaxLen)
		}
		g.msgs = append(g.msgs, g.newMsg(m))
	}
	if len(g.msgs) == 0 {
		return nil, ErrNoCyclic
	}
	return g, nil
}

func (g *generator) newMsg(m *dbc.Message) *msgState {
	ms := &msgState{m: m, period: int64(m.CycleTime), r: newRNG(g.opts.Seed, "msg "+dbc.Key{ID: m.ID, Extended: m.Extended}.String())}
	ms.phase = ms.r.intn(ms.period)
	ms.prio, ms.bits = arbitration(m)
	ms.ready = ms.readyAt(g, 0)
	ms.done = ms.phase >= g.endNs
	for _, s := range m.Signals {
		r := newRNG(g.opts.Seed, "sig "+s.FullName())
		st := sigState{s: s, spec: specFor(s, &r), r: r}
		if st.spec.kind == kindCounter {
			st.count = r.next() // an ECU that has been running a while
		}
		if s.Multiplexer {
			ms.switches = append(ms.switches, len(ms.sigs))
		}
		ms.sigs = append(ms.sigs, st)
	}
	ms.configs = muxConfigs(ms)
	ms.cfg = int(ms.r.intn(int64(len(ms.configs))))
	return ms
}

// readyAt returns when cycle k is queued, ns since start: on the cycle,
// moved by the jitter, never before the start.
func (ms *msgState) readyAt(g *generator, k int64) int64 {
	t := ms.phase + k*ms.period
	if j := int64(g.opts.Jitter); j > 0 {
		t += ms.r.intn(2*j+1) - j
	}
	return max(t, 0)
}

// arbitration returns a message's bus priority (lower wins arbitration)
// and its length on the bus in bits. Standard and extended frames
// compare on the 11 base ID bits first; on a tie the standard frame wins
// (its RTR bit is dominant where the extended frame sends SRR).
func arbitration(m *dbc.Message) (prio uint64, bits int64) {
	n := int64(min(m.Length, 8))
	if m.Length > 8 {
		n = int64(m.Length) // CAN FD: not bit-exact, close enough for spacing
	}
	if m.Extended {
		prio = uint64(m.ID>>18)<<20 | 1<<19 | uint64(m.ID&0x3FFFF)<<1
		bits = 64 + 8*n
	} else {
		prio = uint64(m.ID) << 20
		bits = 44 + 8*n
	}
	// Stuff bits: about one in ten of the stuffed part, plus the
	// three-bit intermission before the next frame may start.
	bits += (bits-10)/10 + 3
	return prio, bits
}

// muxConfigs lists the multiplexer configurations of a message: one per
// combination of switch values that selects some signal, nested switches
// expanded only where their own switch selects them. A message without
// multiplexing has one empty configuration.
func muxConfigs(ms *msgState) [][]mux {
	const maxConfigs = 4096
	configs := [][]mux{make([]mux, len(ms.switches))}
	for si, idx := range ms.switches {
		sw := ms.sigs[idx].s
		values := switchValues(ms, sw)
		var next [][]mux
		for _, c := range configs {
			if !selected(ms, c, sw) { // a nested switch its own switch does not select
				next = append(next, c)
				continue
			}
			for _, v := range values {
				if len(next) >= maxConfigs {
					break
				}
				nc := append([]mux(nil), c...)
				nc[si] = mux{active: true, value: v}
				next = append(next, nc)
			}
		}
		configs = next
	}
	return configs
}

// switchValues returns the values of switch sw that select some signal,
// ascending, or {0} when none does. Long ranges are cut short: a capture
// needs examples of each branch, not every value.
func switchValues(ms *msgState, sw *dbc.Signal) []uint64 {
	const maxPerRange = 64
	seen := map[uint64]bool{}
	var values []uint64
	limit := uint64(math.MaxUint64)
	if sw.Length < 64 {
		limit = 1<<sw.Length - 1
	}
	for _, st := range ms.sigs {
		if st.s.Mux == nil || st.s.Mux.Switch != sw {
			continue
		}
		for _, r := range st.s.Mux.Ranges {
			for v := r.Lo; v <= r.Hi && v <= limit && v-r.Lo < maxPerRange; v++ {
				if !seen[v] {
					seen[v] = true
					values = append(values, v)
				}
				if v == math.MaxUint64 {
					break
				}
			}
		}
	}
	if len(values) == 0 {
		return []uint64{0}
	}
	for i := 1; i < len(values); i++ { // insertion sort: a handful of values
		for j := i; j > 0 && values[j] < values[j-1]; j-- {
			values[j], values[j-1] = values[j-1], values[j]
		}
	}
	return values
}

// selected reports whether signal s is present in configuration c: a
// signal without multiplexer always is, a multiplexed one (a nested
// switch included) when its switch is present and selects it.
func selected(ms *msgState, c []mux, s *dbc.Signal) bool {
	if s.Mux == nil {
		return true
	}
	for si, idx := range ms.switches {
		if ms.sigs[idx].s == s.Mux.Switch {
			return c[si].active && s.Mux.Matches(c[si].value)
		}
	}
	return false // a switch outside the message: never selected
}

// run sends the frames, bus arbitration deciding the order.
func (g *generator) run(emit func(*frame.Frame) error) error {
	var busFree int64 // ns since start
	for {
		// The bus starts the next frame when it is free and something
		// is ready; among the frames ready by then the lowest priority
		// value wins.
		var first *msgState
		for _, ms := range g.msgs {
			if !ms.done && (first == nil || ms.ready < first.ready) {
				first = ms
			}
		}
		if first == nil {
			return nil
		}
		t0 := max(busFree, first.ready)
		win := first
		for _, ms := range g.msgs {
			if !ms.done && ms.ready <= t0 && ms.prio < win.prio {
				win = ms
			}
		}
		end := t0 + win.bits*g.bitNs
		busFree = end
		// candump stamps frames to the microsecond; keep exactly that.
		ts := (g.startNs + end) / 1000 * 1000
		if err := g.build(win, ts); err != nil {
			return err
		}
		if err := emit(&g.f); err != nil {
			return err
		}
		win.k++
		if win.phase+win.k*win.period >= g.endNs {
			win.done = true
		} else {
			win.ready = win.readyAt(g, win.k)
		}
	}
}

// build fills g.f with message ms's frame at ts (ns since the epoch).
func (g *generator) build(ms *msgState, ts int64) error {
	t := float64(ts-g.startNs) / 1e9
	g.w.advance(t)
	m := ms.m
	f := &g.f
	*f = frame.Frame{Time: ts, ID: m.ID, Len: uint8(m.Length)}
	if m.Extended {
		f.Flags |= frame.Extended
	}
	if m.Length > 8 {
		f.Flags |= frame.FD
	}
	data := f.Data[:m.Length]
	cfg := ms.configs[ms.cfg]
	ms.cfg = (ms.cfg + 1) % len(ms.configs)

	var sums []int
	for i := range ms.sigs {
		st := &ms.sigs[i]
		if !selected(ms, cfg, st.s) {
			continue
		}
		var err error
		switch st.spec.kind {
		case kindSwitch:
			for si, idx := range ms.switches {
				if idx == i {
					err = decoder.EncodeRaw(st.s, data, cfg[si].value)
				}
			}
		case kindCounter:
			err = decoder.EncodeRaw(st.s, data, st.count)
			st.count++
		case kindChecksum:
			sums = append(sums, i)
		default:
			_, err = decoder.EncodePhys(st.s, data, st.sample(g.w, t))
			if errors.Is(err, decoder.ErrRawRange) {
				err = nil // saturated, as a real sensor's reading would be
			}
		}
		if err != nil {
			return fmt.Errorf("simulate: message %s: %w", m.Name, err)
		}
	}
	for _, i := range sums {
		if err := encodeChecksum(ms.sigs[i].s, data); err != nil {
			return fmt.Errorf("simulate: message %s: %w", m.Name, err)
		}
	}
	return nil
}

// sample returns the signal's physical value at t seconds: the model's
// truth, drift and noise, held inside the DBC's range as a sensor
// saturates.
func (st *sigState) sample(w *world, t float64) float64 {
	sp := &st.spec
	v := sp.value(w)
	if sp.drift > 0 {
		dt := t - st.last
		st.last = t
		if dt > 0 {
			const tau = 600 // s: the walk reverts to the truth over minutes
			st.offset += -st.offset*dt/tau + sp.drift*math.Sqrt(dt)*st.r.norm()
		}
		v += st.offset
	}
	if sigma := sp.noise + sp.vib*w.speed/10; sigma > 0 {
		v += sigma * st.r.norm()
	}
	if s := st.s; s.Min < s.Max {
		v = clamp(v, s.Min, s.Max)
	}
	return v
}
