package watch

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/yukart/candec/envelope"
	"github.com/yukart/candec/frame"
	"github.com/yukart/candec/internal/latency"
	"github.com/yukart/candec/rawbatch"
)

// DefaultStaleAfter is the age after which a topic is flagged old.
const DefaultStaleAfter = 5 * time.Second

// Kind is what a topic carries.
type Kind uint8

// Kinds of topics.
const (
	// Text: neither an envelope, a window nor a raw batch.
	Text Kind = iota
	// Envelope: per-signal envelopes.
	Envelope
	// Window: window-stream messages.
	Window
	// Raw: raw batches.
	Raw
)

// String names the kind.
func (k Kind) String() string {
	switch k {
	case Envelope:
		return "envelope"
	case Window:
		return "window"
	case Raw:
		return "raw"
	}
	return "text"
}

// MarshalText writes the kind's name.
func (k Kind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// UnmarshalText reads a kind's name, so that a summary written as JSON
// reads back.
func (k *Kind) UnmarshalText(b []byte) error {
	for _, c := range []Kind{Text, Envelope, Window, Raw} {
		if c.String() == string(b) {
			*k = c
			return nil
		}
	}
	return fmt.Errorf("watch: unknown kind %q", b)
}

// Config configures a Monitor.
type Config struct {
	// StaleAfter flags a topic whose last message is older; default
	// DefaultStaleAfter.
	StaleAfter time.Duration
}

// Monitor follows every topic it is given messages of. It is safe for
// concurrent use: Observe runs on the MQTT client's goroutine, Snapshot
// on the display's.
type Monitor struct {
	cfg Config

	mu       sync.Mutex
	topics   map[string]*topic
	envs     *envelope.Tracker
	lat      latency.Histogram
	first    time.Time // of the first live message
	messages uint64    // live messages
	retained uint64    // retained messages
	// restarts counts publisher restarts once each: a decoder restart
	// changes the epoch of every topic, and is one restart, not one per
	// topic. epochs holds the epochs already counted.
	restarts uint64
	epochs   map[uint64]struct{}
	// scratch for parsing
	env envelope.Envelope
	win envelope.Window
	f   frame.Frame
}

type topic struct {
	name        string
	kind        Kind
	messages    uint64 // live messages
	retained    uint64 // retained messages
	bytes       uint64
	items       uint64 // envelopes in windows, frames in raw batches
	lastArrival time.Time
	lastLive    time.Time // zero until a live message arrives
	isRetained  bool      // the last message was a retained one
	last        string
	flagStale   bool
	seq         uint64 // the last message's
	lost        uint64
	restarts    uint64
	lastLatency time.Duration
	maxLatency  time.Duration
	hasLatency  bool
	raw         rawbatch.SeqTracker
	windows     *envelope.Tracker
	// rate: messages counted at the previous snapshot
	prevMessages uint64
	prevAt       time.Time
	rate         float64
}

// New returns a Monitor.
func New(cfg Config) *Monitor {
	if cfg.StaleAfter <= 0 {
		cfg.StaleAfter = DefaultStaleAfter
	}
	return &Monitor{cfg: cfg, topics: map[string]*topic{}, envs: envelope.NewTracker(), epochs: map[uint64]struct{}{}}
}

// Observe records a live message on name that arrived at now.
func (m *Monitor) Observe(name string, payload []byte, now time.Time) {
	m.observe(name, payload, false, now)
}

// ObserveRetained records a retained message: one the broker delivered
// because the watch subscribed (MQTT v5 sets the retain flag on exactly
// those), published at some unknown time before. It counts for the
// topic's value and seq, but not for latency, rate or age: the time since
// its timestamp says how old the value is, not how slow the path is.
func (m *Monitor) ObserveRetained(name string, payload []byte, now time.Time) {
	m.observe(name, payload, true, now)
}

func (m *Monitor) observe(name string, payload []byte, retained bool, now time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.topics[name]
	if t == nil {
		t = &topic{name: name, kind: detect(payload), prevAt: now}
		m.topics[name] = t
	}
	if retained {
		m.retained++
		t.retained++
	} else {
		if m.messages == 0 {
			m.first = now
		}
		m.messages++
		t.messages++
		t.lastLive = now
	}
	t.isRetained = retained
	t.bytes += uint64(len(payload))
	t.lastArrival = now
	ns := now.UnixNano()
	if retained {
		ns = noLatency
	}
	switch t.kind {
	case Envelope:
		if err := envelope.Parse(payload, &m.env); err != nil {
			t.last = "(not an envelope: " + err.Error() + ")"
			return
		}
		o := m.envs.Observe(name, &m.env)
		t.seq = m.env.Seq
		t.lost += o.Lost
		if o.Restart {
			t.restarts++
			m.restart(m.env.Epoch)
		}
		t.last = FormatValue(&m.env)
		t.flagStale = m.env.Stale()
		m.latency(t, ns, m.env.TS)
	case Window:
		if err := envelope.ParseWindow(payload, &m.win); err != nil {
			t.last = "(not a window: " + err.Error() + ")"
			return
		}
		if t.windows == nil {
			t.windows = envelope.NewTracker()
		}
		o := t.windows.Observe(name, &envelope.Envelope{Seq: m.win.Seq, Epoch: m.win.Epoch})
		t.seq = m.win.Seq
		t.lost += o.Lost
		if o.Restart {
			t.restarts++
			m.restart(m.win.Epoch)
		}
		t.items += uint64(len(m.win.Items))
		t.last = strconv.Itoa(len(m.win.Items)) + " envelopes"
		for i := range m.win.Items {
			m.latency(t, ns, m.win.Items[i].Envelope.TS)
		}
	case Raw:
		b, err := rawbatch.Parse(payload)
		if err != nil {
			t.last = "(not a raw batch: " + err.Error() + ")"
			return
		}
		lost, restarted := t.raw.Observe(b.Seq(), b.Len())
		t.seq = b.Seq()
		t.lost += lost
		if restarted {
			t.restarts++
			m.restarts++ // a raw batch has no epoch: each topic is its own bridge
		}
		t.items += uint64(b.Len())
		t.last = strconv.Itoa(b.Len()) + " frames"
		for i := range b.Len() {
			b.Frame(i, &m.f)
			m.latency(t, ns, m.f.Time)
		}
	default:
		s := string(payload)
		if len(s) > 40 {
			s = s[:40] + "…"
		}
		t.last = strconv.Quote(s)
	}
}

// noLatency marks a message whose latency is not measured.
const noLatency = math.MinInt64

// restart counts a publisher restart into epoch once, however many
// topics tell of it. Without an epoch (0) nothing tells two topics'
// restarts apart, so each counts.
func (m *Monitor) restart(epoch uint64) {
	if epoch != 0 {
		if _, seen := m.epochs[epoch]; seen {
			return
		}
		m.epochs[epoch] = struct{}{}
	}
	m.restarts++
}

// latency records arrival − ts, where now is the arrival time in ns or
// noLatency.
func (m *Monitor) latency(t *topic, now, ts int64) {
	if now == noLatency {
		return
	}
	d := now - ts
	m.lat.Record(d)
	t.lastLatency = time.Duration(d)
	t.maxLatency = max(t.maxLatency, time.Duration(d))
	t.hasLatency = true
}

// detect tells what a payload is by trying each parser.
func detect(p []byte) Kind {
	var e envelope.Envelope
	if envelope.Parse(p, &e) == nil {
		return Envelope
	}
	var w envelope.Window
	if envelope.ParseWindow(p, &w) == nil {
		return Window
	}
	if _, err := rawbatch.Parse(p); err == nil {
		return Raw
	}
	return Text
}

// FormatValue writes an envelope's value the way a person reads it:
// "1510 rpm", "3 (DRIVE)", "12.5 °C".
func FormatValue(e *envelope.Envelope) string {
	var s string
	switch e.Kind {
	case envelope.Int:
		s = strconv.FormatInt(e.Int, 10)
	case envelope.Uint:
		s = strconv.FormatUint(e.Uint, 10)
	default:
		s = strconv.FormatFloat(e.Float, 'g', 6, 64)
	}
	if len(e.Unit) > 0 {
		s += " " + string(e.Unit)
	}
	if len(e.Label) > 0 {
		s += " (" + string(e.Label) + ")"
	}
	return s
}

// TopicStats is one topic in a snapshot.
type TopicStats struct {
	Topic string `json:"topic"`
	Kind  Kind   `json:"kind"`
	// Messages received live, and Items inside all messages (frames,
	// window envelopes).
	Messages uint64 `json:"messages"`
	Items    uint64 `json:"items,omitempty"`
	// RetainedMessages counts the retained messages the broker delivered
	// on subscription; Retained is true while the last message is one,
	// that is, until the topic's publisher sends again.
	RetainedMessages uint64 `json:"retained_messages,omitempty"`
	Retained         bool   `json:"retained,omitempty"`
	// Rate is messages per second since the previous snapshot.
	Rate float64 `json:"rate"`
	// Last is the last value, formatted.
	Last string `json:"last"`
	// Age is the time since the last message.
	Age time.Duration `json:"age_ns"`
	// Seq is the last message's sequence number (an envelope's or
	// window's seq, a raw batch's first frame); 0 for text.
	Seq uint64 `json:"seq,omitempty"`
	// Lost and Restarts come from seq.
	Lost     uint64 `json:"lost"`
	Restarts uint64 `json:"restarts,omitempty"`
	// LastLatency and MaxLatency are from the message's timestamp.
	LastLatency time.Duration `json:"last_latency_ns,omitempty"`
	MaxLatency  time.Duration `json:"max_latency_ns,omitempty"`
	HasLatency  bool          `json:"-"`
	// Stale is true when the last envelope was flagged stale; Old when
	// the last live message is older than Config.StaleAfter. Old applies
	// only to envelope, window and raw topics that have had a live
	// message: a text topic (the decoder's status) is not sent
	// periodically, and a topic known only from its retained message
	// shows as Retained instead.
	Stale bool `json:"stale,omitempty"`
	Old   bool `json:"old,omitempty"`
}

// Snapshot returns every topic's state at now, sorted by topic, and
// starts the next rate interval.
func (m *Monitor) Snapshot(now time.Time) []TopicStats {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]TopicStats, 0, len(m.topics))
	for _, t := range m.topics {
		if dt := now.Sub(t.prevAt); dt >= 100*time.Millisecond {
			t.rate = float64(t.messages-t.prevMessages) / dt.Seconds()
			t.prevMessages, t.prevAt = t.messages, now
		}
		age := now.Sub(t.lastArrival)
		periodic := t.kind != Text && !t.lastLive.IsZero()
		out = append(out, TopicStats{
			Topic: t.name, Kind: t.kind, Messages: t.messages, Items: t.items,
			RetainedMessages: t.retained, Retained: t.isRetained,
			Rate: t.rate, Last: t.last, Age: age, Seq: t.seq, Lost: t.lost, Restarts: t.restarts,
			LastLatency: t.lastLatency, MaxLatency: t.maxLatency, HasLatency: t.hasLatency,
			Stale: t.flagStale, Old: periodic && now.Sub(t.lastLive) > m.cfg.StaleAfter,
		})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Topic < out[j].Topic })
	return out
}

// Summary is the whole watch in a few figures.
type Summary struct {
	// Topics seen; live Messages and Retained ones (delivered on
	// subscription); Duration from the first live message to now.
	Topics   int           `json:"topics"`
	Messages uint64        `json:"messages"`
	Retained uint64        `json:"retained"`
	Duration time.Duration `json:"duration_ns"`
	// Rate is messages per second over Duration.
	Rate float64 `json:"rate"`
	// Lost sums every topic's seq loss; Restarts counts publisher
	// restarts, each once: a new epoch on every signal topic is one
	// decoder restart.
	Lost     uint64 `json:"lost"`
	Restarts uint64 `json:"restarts"`
	// Stale and Old count topics flagged so at the end.
	Stale int `json:"stale"`
	Old   int `json:"old"`
	// Latency is over every envelope and frame, in milliseconds.
	Latency latency.Summary `json:"latency_ms"`
	// TopicStats lists the topics.
	TopicStats []TopicStats `json:"topic_stats"`
}

// Summary returns the summary at now.
func (m *Monitor) Summary(now time.Time) Summary {
	stats := m.Snapshot(now)
	m.mu.Lock()
	defer m.mu.Unlock()
	s := Summary{Topics: len(stats), Messages: m.messages, Retained: m.retained, Restarts: m.restarts,
		TopicStats: stats, Latency: m.lat.Summary()}
	if m.messages > 0 {
		s.Duration = now.Sub(m.first)
		if s.Duration > 0 {
			s.Rate = float64(m.messages) / s.Duration.Seconds()
		}
	}
	for _, t := range stats {
		s.Lost += t.Lost
		if t.Stale {
			s.Stale++
		}
		if t.Old {
			s.Old++
		}
	}
	return s
}

// Histogram returns a copy of the latency histogram over every message.
func (m *Monitor) Histogram() *latency.Histogram {
	m.mu.Lock()
	defer m.mu.Unlock()
	h := new(latency.Histogram)
	h.Merge(&m.lat)
	return h
}

// flags formats a topic's flags column.
func flags(t *TopicStats) string {
	var f []string
	if t.Stale {
		f = append(f, "STALE")
	}
	if t.Old {
		f = append(f, "OLD")
	}
	if t.Retained {
		f = append(f, "RETAINED")
	}
	return strings.Join(f, " ")
}

// ms formats a duration in milliseconds for the table.
func ms(d time.Duration) string {
	return fmt.Sprintf("%.1f", float64(d)/1e6)
}
