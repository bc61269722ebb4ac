package benchmarks

import (
	"sync"

	"github.com/yukart/candec/envelope"
	"github.com/yukart/candec/frame"
	"github.com/yukart/candec/internal/lab/jitter"
	"github.com/yukart/candec/internal/lab/latency"
	"github.com/yukart/candec/rawbatch"
)

// phase is where a run is, as a meter sees it.
type phase uint8

const (
	// phaseGate: subscribed, waiting for the first message; then the
	// warm-up. Seq is tracked, nothing is counted.
	phaseGate phase = iota
	// phaseWindow: the measured window. Everything is counted.
	phaseWindow
	// phaseDrain: after the window. Loss is still counted; rates and
	// latency no longer: when the load stops, the decoder releases the
	// values its caps held back by the wall clock, a little later than
	// a next frame would have, which says nothing about the steady
	// state. A backlog shows in the window's latency and in the drain.
	phaseDrain
)

// counts are what a meter counted during the measured window.
type counts struct {
	// Messages and Bytes are MQTT messages and payload bytes received.
	Messages, Bytes uint64
	// Items are raw frames, or envelopes (also those inside windows).
	Items uint64
}

// meter is the part of a subscriber that is independent of the stream:
// phases, readiness, window counters, the last data arrival. Its
// methods are called with mu held.
type meter struct {
	mu       sync.Mutex
	phase    phase
	ready    chan struct{} // closed on the first valid message
	isReady  bool
	lat      *latency.Histogram
	window   counts
	lastData int64 // arrival time of the latest message that counts for the drain
	lastAny  int64 // arrival time of the latest valid message of any kind
	invalid  uint64
}

func newMeter() meter {
	return meter{ready: make(chan struct{}), lat: new(latency.Histogram)}
}

// markReady records a valid message: the subscription works.
func (m *meter) markReady() {
	if !m.isReady {
		m.isReady = true
		close(m.ready)
	}
}

// rawMeter measures one subscriber of the raw stream: frames received,
// frames lost from gaps in the batch seq, and each frame's latency from
// its timestamp (the replay's send time) to arrival.
type rawMeter struct {
	meter
	seq        rawbatch.SeqTracker
	lostAtOpen uint64
	// nextAtOpen and nextAtClose are the seq expected next when the
	// window opened and closed: the frames the replay sent in between.
	nextAtOpen, nextAtClose uint64
	f                       frame.Frame
}

func newRawMeter() *rawMeter { return &rawMeter{meter: newMeter()} }

// observe records one raw message that arrived at now (ns since the
// Unix epoch).
func (m *rawMeter) observe(payload []byte, now int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b, err := rawbatch.Parse(payload)
	if err != nil {
		m.invalid++
		return
	}
	m.markReady()
	m.seq.Observe(b.Seq(), b.Len())
	m.lastData, m.lastAny = now, now
	if m.phase != phaseWindow {
		return
	}
	for i := range b.Len() {
		b.Frame(i, &m.f)
		m.lat.Record(now - m.f.Time)
	}
	m.window.Messages++
	m.window.Bytes += uint64(len(payload))
	m.window.Items += uint64(b.Len())
}

// open starts the measured window.
func (m *rawMeter) open() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.phase = phaseWindow
	m.window = counts{}
	m.lat.Reset()
	m.lostAtOpen = m.seq.Lost()
	m.nextAtOpen, _ = m.seq.Next()
}

// close ends the measured window and returns its counts.
func (m *rawMeter) close() counts {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.phase = phaseDrain
	m.nextAtClose, _ = m.seq.Next()
	return m.window
}

// sent returns the frames the replay sent during the window, as this
// subscriber's seq saw them.
func (m *rawMeter) sent() uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.nextAtClose - min(m.nextAtOpen, m.nextAtClose)
}

// expected returns the frames this subscriber should have received since
// the window opened, up to final (the seq after the replay's last frame;
// 0 when unknown).
func (m *rawMeter) expected(final uint64) uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	next, _ := m.seq.Next()
	return max(final, next) - min(m.nextAtOpen, max(final, next))
}

// lost returns the frames lost since the window opened, plus those
// missing at the end: final is the seq after the last frame the replay
// sent (0 when unknown).
func (m *rawMeter) lost(final uint64) uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := m.seq.Lost() - m.lostAtOpen
	if next, ok := m.seq.Next(); ok && final > next {
		n += final - next
	}
	return n
}

// envMeter measures one subscriber of the envelopes, on the per-signal
// topics or on the window stream: envelopes received, envelopes lost
// from gaps in each topic's seq, and latency from each envelope's ts.
//
// Latency and the drain count only envelopes that carry a new frame's
// value: not stale marks, and nothing on a topic whose policy has a
// heartbeat. A heartbeat republishes the latest value with its frame's
// timestamp, so its "latency" is the age of a value the subscriber
// already has (up to a cycle of a slow message), and after the load
// stops heartbeats go on for ever.
//
// Cyclic jitter counts the envelopes of the cyclic topics (signalSet's
// period): how far each one's arrival interval falls from the topic's
// period (package jitter). A stale mark breaks a topic's cycle.
type envMeter struct {
	meter
	onWindow bool
	// heartbeat holds the topics whose policy has a heartbeat.
	heartbeat map[string]bool
	// cycles follows each cyclic topic's arrivals; made once, so that
	// an envelope allocates nothing.
	cycles map[string]*jitter.Cycle
	jit    *jitter.Histogram

	track          *envelope.Tracker // per signal topic
	windows        *envelope.Tracker // the window stream's own seq
	lostAtOpen     uint64
	receivedAtOpen uint64
	winAtOpen      uint64
	env            envelope.Envelope
	win            envelope.Window
	winEnv         envelope.Envelope
	stale          uint64
}

// newEnvMeter returns a meter of the envelopes, on the window stream or
// not, for topics whose heartbeat and cyclic periods set gives.
func newEnvMeter(onWindow bool, set signalSet) *envMeter {
	m := &envMeter{
		meter:     newMeter(),
		onWindow:  onWindow,
		heartbeat: set.heartbeat,
		cycles:    make(map[string]*jitter.Cycle, len(set.period)),
		jit:       new(jitter.Histogram),
		track:     envelope.NewTracker(),
		windows:   envelope.NewTracker(),
	}
	for topic, p := range set.period {
		m.cycles[topic] = &jitter.Cycle{Period: int64(p)}
	}
	return m
}

// windowKey is the tracker key of the window stream's own seq.
const windowKey = "window"

// observe records one message on topic that arrived at now (ns since the
// Unix epoch).
func (m *envMeter) observe(topic, payload []byte, now int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.onWindow {
		m.observeWindow(payload, now)
		return
	}
	if err := envelope.Parse(payload, &m.env); err != nil {
		m.invalid++
		return
	}
	m.markReady()
	m.lastAny = now
	m.track.ObserveBytes(topic, &m.env)
	m.item(topic, &m.env, now)
	if m.phase == phaseWindow {
		m.window.Messages++
		m.window.Bytes += uint64(len(payload))
	}
}

func (m *envMeter) observeWindow(payload []byte, now int64) {
	if err := envelope.ParseWindow(payload, &m.win); err != nil {
		m.invalid++
		return
	}
	m.markReady()
	m.lastAny = now
	m.winEnv.Seq, m.winEnv.Epoch = m.win.Seq, m.win.Epoch
	m.windows.Observe(windowKey, &m.winEnv)
	for i := range m.win.Items {
		it := &m.win.Items[i]
		m.track.ObserveBytes(it.Topic, &it.Envelope)
		m.item(it.Topic, &it.Envelope, now)
	}
	if m.phase == phaseWindow {
		m.window.Messages++
		m.window.Bytes += uint64(len(payload))
	}
}

// item counts one envelope on topic.
func (m *envMeter) item(topic []byte, e *envelope.Envelope, now int64) {
	if m.phase == phaseWindow {
		m.window.Items++
	}
	c := m.cycles[string(topic)]
	if e.Stale() {
		m.stale++
		if c != nil {
			c.Break()
		}
		return
	}
	if c != nil {
		if iv, ok := c.Observe(now, e.TS, e.Seq, e.Epoch); ok && m.phase == phaseWindow {
			m.jit.Record(iv, c.Period)
		}
	}
	if m.heartbeat[string(topic)] {
		return
	}
	m.lastData = now
	if m.phase == phaseWindow {
		m.lat.Record(now - e.TS)
	}
}

// open starts the measured window.
func (m *envMeter) open() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.phase = phaseWindow
	m.window = counts{}
	m.lat.Reset()
	m.jit.Reset()
	m.lostAtOpen = m.track.Totals().Lost
	m.receivedAtOpen = m.track.Totals().Received
	m.winAtOpen = m.windows.Totals().Lost
}

// received returns the envelopes received since the window opened.
func (m *envMeter) received() uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.track.Totals().Received - m.receivedAtOpen
}

// close ends the measured window and returns its counts.
func (m *envMeter) close() counts {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.phase = phaseDrain
	return m.window
}

// finalSeq is a topic's last envelope as the broker retained it.
type finalSeq struct {
	Epoch, Seq uint64
}

// lost returns the envelopes lost since the window opened, plus those
// missing at the end: for each topic of final, the envelopes between
// the last one this subscriber saw and the retained one. It also returns
// the window-stream messages lost, and the topics of final it never saw.
func (m *envMeter) lost(final map[string]finalSeq) (envelopes, windows uint64, unseen []string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	envelopes = m.track.Totals().Lost - m.lostAtOpen
	windows = m.windows.Totals().Lost - m.winAtOpen
	for topic, f := range final {
		st, ok := m.track.Topic(topic)
		switch {
		case !ok:
			unseen = append(unseen, topic)
		case st.Epoch == f.Epoch && f.Seq > st.Seq:
			envelopes += f.Seq - st.Seq
		}
	}
	return envelopes, windows, unseen
}

// lastDataAt returns the arrival time of the latest message that counts
// for the drain.
func (m *meter) lastDataAt() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.lastData
}

// histogram returns a copy of the latency histogram.
func (m *meter) histogram() *latency.Histogram {
	m.mu.Lock()
	defer m.mu.Unlock()
	h := new(latency.Histogram)
	h.Merge(m.lat)
	return h
}

// jitter returns a copy of the cyclic jitter histogram.
func (m *envMeter) jitter() *jitter.Histogram {
	m.mu.Lock()
	defer m.mu.Unlock()
	h := new(jitter.Histogram)
	h.Merge(m.jit)
	return h
}

// invalidCount returns the messages that did not parse.
func (m *meter) invalidCount() uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.invalid
}
