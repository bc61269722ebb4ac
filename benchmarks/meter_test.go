package benchmarks

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/yukart/candec/envelope"
	"github.com/yukart/candec/frame"
	"github.com/yukart/candec/rawbatch"
)

const ms = int64(time.Millisecond)

// batch encodes n frames stamped at ts, whose first frame has seq.
func batch(t *testing.T, seq uint64, n int, ts int64) []byte {
	t.Helper()
	fs := make([]frame.Frame, n)
	for i := range fs {
		fs[i] = frame.Frame{Time: ts, ID: 0x100 + uint32(i), Len: 8}
	}
	b, err := rawbatch.AppendBatch(nil, seq, fs)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestRawMeter(t *testing.T) {
	m := newRawMeter()
	const t0 = int64(1_760_000_000_000_000_000)
	// Gate and warm-up: tracked, not counted.
	m.observe(batch(t, 100, 10, t0), t0+5*ms)
	select {
	case <-m.ready:
	default:
		t.Fatal("not ready after a valid batch")
	}
	m.observe([]byte("garbage"), t0)
	m.open()
	m.observe(batch(t, 110, 10, t0+10*ms), t0+12*ms) // 2 ms each
	m.observe(batch(t, 125, 5, t0+20*ms), t0+24*ms)  // 5 lost before, 4 ms each
	c := m.close()
	// Drain: loss still counted, rates and latency not.
	m.observe(batch(t, 130, 10, t0+30*ms), t0+40*ms)
	if got, want := c, (counts{Messages: 2, Bytes: uint64(2*rawbatch.HeaderSize + 15*rawbatch.FrameSize), Items: 15}); got != want {
		t.Errorf("window counts = %+v, want %+v", got, want)
	}
	if got, want := m.lost(0), uint64(5); got != want {
		t.Errorf("lost(unknown final) = %d, want %d", got, want)
	}
	// The replay sent up to seq 150: the last 10 never arrived.
	if got, want := m.lost(150), uint64(15); got != want {
		t.Errorf("lost(150) = %d, want %d", got, want)
	}
	h := m.histogram()
	if got, want := h.Count(), uint64(15); got != want {
		t.Errorf("latency samples = %d, want %d (warm-up and drain excluded)", got, want)
	}
	if got, want := h.Max(), 4*time.Millisecond; got != want {
		t.Errorf("latency max = %v, want %v", got, want)
	}
	if got, want := h.Min(), 2*time.Millisecond; got != want {
		t.Errorf("latency min = %v, want %v", got, want)
	}
	if got, want := m.invalidCount(), uint64(1); got != want {
		t.Errorf("invalid = %d, want %d", got, want)
	}
	if got, want := m.lastDataAt(), t0+40*ms; got != want {
		t.Errorf("last data at %d, want %d", got, want)
	}
}

func env(t *testing.T, seq uint64, ts int64, stale bool) []byte {
	t.Helper()
	e := envelope.Envelope{TS: ts, Seq: seq, Epoch: 7}
	e.SetFloat(12.5)
	if stale {
		e.Flags |= envelope.Stale
	}
	return envelope.AppendJSON(nil, &e)
}

func TestEnvMeterSignals(t *testing.T) {
	requireParse(t)
	const t0 = int64(1_760_000_000_000_000_000)
	m := newEnvMeter(false, signalSet{heartbeat: map[string]bool{"v/Gear": true}})
	m.observe([]byte("v/Speed"), env(t, 1, t0, false), t0+ms) // retained / first
	m.observe([]byte("v/Gear"), env(t, 1, t0, false), t0+ms)
	m.open()
	m.observe([]byte("v/Speed"), env(t, 2, t0+10*ms, false), t0+13*ms)
	m.observe([]byte("v/Speed"), env(t, 5, t0+20*ms, false), t0+21*ms) // 3 and 4 lost
	m.observe([]byte("v/Gear"), env(t, 2, t0, false), t0+500*ms)       // heartbeat topic: no latency
	m.observe([]byte("v/Temp"), env(t, 9, t0+20*ms, false), t0+22*ms)  // first of its topic: no loss
	m.observe([]byte("v/Speed"), env(t, 6, t0+20*ms, true), t0+900*ms) // stale mark: no latency
	m.observe([]byte("v/Speed"), env(t, 5, t0+20*ms, false), t0+23*ms) // duplicate: no loss
	c := m.close()
	if got, want := c.Items, uint64(6); got != want {
		t.Errorf("envelopes in window = %d, want %d", got, want)
	}
	if got, want := c.Messages, uint64(6); got != want {
		t.Errorf("messages in window = %d, want %d", got, want)
	}
	h := m.histogram()
	if got, want := h.Count(), uint64(4); got != want {
		t.Errorf("latency samples = %d, want %d", got, want)
	}
	if got, want := h.Max(), 3*time.Millisecond; got != want {
		t.Errorf("latency max = %v, want %v", got, want)
	}
	// The broker retained Speed 8 and Temp 9: Speed 7 and 8 never came.
	lost, _, unseen := m.lost(map[string]finalSeq{"v/Speed": {7, 8}, "v/Temp": {7, 9}, "v/Rpm": {7, 3}})
	if got, want := lost, uint64(4); got != want {
		t.Errorf("lost = %d, want %d", got, want)
	}
	if len(unseen) != 1 || unseen[0] != "v/Rpm" {
		t.Errorf("unseen = %v, want [v/Rpm]", unseen)
	}
	if got, want := m.lastDataAt(), t0+23*ms; got != want {
		t.Errorf("last data at %d, want %d (stale and heartbeat topics do not count)", got, want)
	}
}

func TestEnvMeterWindow(t *testing.T) {
	requireParse(t)
	const t0 = int64(1_760_000_000_000_000_000)
	m := newEnvMeter(true, signalSet{})
	w := envelope.NewWindowEncoder(envelope.JSON)
	window := func(seq uint64, items ...uint64) []byte {
		w.Reset(t0, t0+10*ms)
		for _, s := range items {
			e := envelope.Envelope{TS: t0, Seq: s, Epoch: 7}
			e.SetInt(int64(s))
			w.Add("v/Speed", &e)
		}
		return w.Append(nil, seq, 7)
	}
	m.observe([]byte("w"), window(1, 1), t0+ms)
	m.open()
	m.observe([]byte("w"), window(2, 2, 3), t0+4*ms)
	m.observe([]byte("w"), window(4, 6), t0+5*ms) // window 3 and envelopes 4, 5 lost
	c := m.close()
	if got, want := c, (counts{Messages: 2, Bytes: c.Bytes, Items: 3}); got != want {
		t.Errorf("window counts = %+v, want %+v", got, want)
	}
	envs, windows, _ := m.lost(nil)
	if envs != 2 || windows != 1 {
		t.Errorf("lost = %d envelopes, %d windows; want 2, 1", envs, windows)
	}
	if got, want := m.histogram().Count(), uint64(3); got != want {
		t.Errorf("latency samples = %d, want %d", got, want)
	}
}

// requireParse skips until the envelope parser exists.
func requireParse(t *testing.T) {
	t.Helper()
	var e envelope.Envelope
	b := envelope.AppendJSON(nil, &envelope.Envelope{TS: 1, Seq: 1})
	if err := envelope.Parse(b, &e); err != nil {
		t.Skipf("envelope.Parse: %v", err)
	}
}

func TestMeterObserveAllocs(t *testing.T) {
	m := newRawMeter()
	b := batch(t, 0, 45, 1)
	m.open()
	seq := uint64(0)
	n := testing.AllocsPerRun(200, func() {
		binary.LittleEndian.PutUint64(b[4:], seq) // the next batch
		seq += 45
		m.observe(b, 1_000)
	})
	if got := m.lost(0); got != 0 {
		t.Errorf("lost %d frames of consecutive batches", got)
	}
	if n != 0 {
		t.Errorf("rawMeter.observe allocates %v times per batch, want 0", n)
	}
}

func TestEnvMeterObserveAllocs(t *testing.T) {
	requireParse(t)
	m := newEnvMeter(false, signalSet{heartbeat: map[string]bool{"v/Gear": true}, period: map[string]time.Duration{"v/Speed": 10 * time.Millisecond}})
	topic := []byte("v/Speed")
	m.observe(topic, env(t, 1, 1, false), 2) // the topic's first envelope allocates its state
	m.open()
	seq := uint64(2)
	payloads := make([][]byte, 0, 1100)
	for i := range 1100 {
		payloads = append(payloads, env(t, seq+uint64(i), 1, false))
	}
	i := 0
	n := testing.AllocsPerRun(1000, func() {
		m.observe(topic, payloads[i], 2)
		i++
	})
	if n != 0 {
		t.Errorf("envMeter.observe allocates %v times per envelope, want 0", n)
	}
	if got := m.jitter().Count(); got < 1000 {
		t.Errorf("jitter of %d intervals, want every envelope's (cyclic jitter measured allocation-free)", got)
	}
	if lost, _, _ := m.lost(nil); lost != 0 {
		t.Errorf("lost %d of consecutive envelopes", lost)
	}
}

// TestEnvMeterJitter checks cyclic jitter on the per-signal topics:
// |arrival interval − period| of consecutive envelopes of a cyclic
// topic, in the window only, none across a gap or a stale mark.
func TestEnvMeterJitter(t *testing.T) {
	requireParse(t)
	const t0 = int64(1_760_000_000_000_000_000)
	speed := []byte("v/Speed") // cyclic, every 50 ms
	m := newEnvMeter(false, signalSet{period: map[string]time.Duration{"v/Speed": 50 * time.Millisecond}})
	m.observe(speed, env(t, 1, t0, false), t0) // the warm-up: primes the cycle
	m.open()
	for _, a := range []struct {
		seq   uint64
		at    int64
		stale bool
	}{
		{2, 50 * ms, false},  // 0
		{3, 103 * ms, false}, // 3 ms
		{5, 150 * ms, false}, // after a lost envelope: none
		{6, 190 * ms, false}, // 10 ms
		{7, 200 * ms, true},  // stale mark: breaks the cycle
		{8, 250 * ms, false}, // none
		{9, 300 * ms, false}, // 0
		{9, 301 * ms, false}, // duplicate: none
	} {
		m.observe(speed, env(t, a.seq, t0+a.at, a.stale), t0+a.at)
	}
	m.observe([]byte("v/Gear"), env(t, 2, t0, false), t0+77*ms) // not cyclic: none
	m.close()
	m.observe(speed, env(t, 10, t0+400*ms, false), t0+400*ms) // the drain: none
	// Deviations 0, 3, 10, 0 ms of 50: p50 (the 2nd) 0, p99 (the 4th)
	// and max 10 ms, 20 %. Each arrives at its ts: the frames' own
	// irregularity, none of it the path's.
	got := m.jitter().Summary()
	if got.N != 4 || got.P50 != 0 || got.Max != 10 || got.MaxPct != 20 || got.P99 < 10 || got.P99 > 10.08 || got.PathMax != 0 {
		t.Errorf("jitter = %+v, want 4 intervals, p50 0, p99 and max 10 ms, max 20 %%, the path's part 0", got)
	}
}

// TestEnvMeterWindowJitter checks that every envelope of a window
// arrives with the window: two of one cyclic topic in one window are an
// interval of 0, a whole period off.
func TestEnvMeterWindowJitter(t *testing.T) {
	requireParse(t)
	const t0 = int64(1_760_000_000_000_000_000)
	m := newEnvMeter(true, signalSet{period: map[string]time.Duration{"v/Speed": 10 * time.Millisecond}})
	w := envelope.NewWindowEncoder(envelope.JSON)
	window := func(seq uint64, items ...uint64) []byte {
		w.Reset(t0, t0+10*ms)
		for _, s := range items {
			e := envelope.Envelope{TS: t0, Seq: s, Epoch: 7}
			e.SetInt(int64(s))
			w.Add("v/Speed", &e)
		}
		return w.Append(nil, seq, 7)
	}
	m.observe([]byte("w"), window(1, 1), t0)
	m.open()
	m.observe([]byte("w"), window(2, 2, 3), t0+12*ms) // 2 ms, then 10 ms (0 apart)
	m.observe([]byte("w"), window(3, 4), t0+20*ms)    // 2 ms
	m.close()
	got := m.jitter().Summary()
	if got.N != 3 || got.Max != 10 || got.MaxPct != 100 || got.P50 < 2 || got.P50 > 2.02 {
		t.Errorf("jitter = %+v, want 3 intervals, p50 2 ms, max 10 ms (100 %%)", got)
	}
}
