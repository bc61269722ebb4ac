package watch

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/eclipse/paho.golang/paho"

	"github.com/yukart/candec/envelope"
	"github.com/yukart/candec/frame"
	"github.com/yukart/candec/internal/base/defaults"
	"github.com/yukart/candec/internal/base/termtext"
	"github.com/yukart/candec/internal/lab/jitter"
	"github.com/yukart/candec/internal/lab/latency"
	"github.com/yukart/candec/rawbatch"
)

// DefaultStaleAfter is the age after which a topic is flagged old.
const DefaultStaleAfter = 5 * time.Second

// Plausibility bounds of what a message carries, counted by reason
// when a message is outside them (Summary.Implausible). A seq outside
// its bound leaves the message out: it moves no seq and counts no loss.
// A timestamp outside its bound (a publisher whose clock was never set,
// or a hostile one) gives no latency; the value still counts.
const (
	// MaxSeq bounds an envelope's and a window's seq and a raw batch's
	// frame seq (its first frame's plus its count): 2^53, 285 years of
	// a million messages a second. seq 0 is no envelope's or window's
	// (they start at 1). Within the bound, no sum of loss overflows.
	MaxSeq = 1 << 53
	// MinTS is the earliest plausible timestamp: 2000-01-01 UTC, in ns
	// since the Unix epoch.
	MinTS = 946_684_800_000_000_000
	// MaxAhead is how far after its arrival a timestamp may be: clocks
	// of two hosts differ, by less than this.
	MaxAhead = 24 * time.Hour
)

// Reasons a message is implausible, the keys of Summary.Implausible.
const (
	ReasonSeq = "seq" // seq 0 or above MaxSeq
	ReasonTS  = "ts"  // a timestamp before MinTS or more than MaxAhead after arrival
)

// MaxLast is how many characters of a topic's last value are kept.
const MaxLast = 80

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

// DefaultMaxTopics bounds the topics a Monitor follows, and apart the
// window item topics: any broker user can publish on new topics, and
// each costs about 0.7 KB here (BenchmarkObserveTopics), 1.8 KB in
// `candec watch` as a whole: 20,000 of them hold about 14 MB.
const DefaultMaxTopics = 20_000

// Config configures a Monitor.
type Config struct {
	// StaleAfter flags a topic whose last message is older; default
	// DefaultStaleAfter.
	StaleAfter time.Duration
	// MaxTopics bounds the topics followed, and apart the window item
	// topics (the signals inside windows); default DefaultMaxTopics. A
	// message on a topic beyond it, and a window item on an item topic
	// beyond it, is counted (Summary.Untracked, UntrackedItems) and
	// otherwise left out.
	MaxTopics int
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
	jit      jitter.Histogram
	first    time.Time // of the first live message
	messages uint64    // live messages
	retained uint64    // retained messages
	// restarts counts publisher restarts once each: a decoder restart
	// changes the epoch of every topic, and is one restart, not one per
	// topic. epochs holds the epochs already counted.
	restarts uint64
	epochs   map[uint64]struct{}
	// implausible counts messages outside the bounds, by reason; ahead
	// counts fresh values stamped after their arrival (latency < 0),
	// which the histogram leaves out.
	implausible map[string]uint64
	ahead       uint64
	// untracked counts the messages on topics beyond MaxTopics;
	// untrackedItems the window items on item topics beyond it, of
	// items item topics followed.
	untracked, untrackedItems uint64
	items                     int
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
	// lastTS is the newest ts of the topic's envelopes (itemTS of each
	// window item's topic): an envelope whose ts is not newer is a
	// heartbeat or a republish of a value already seen, not fresh.
	lastTS int64
	itemTS map[string]int64
	// cyc is an envelope topic's cyclic jitter; itemCyc that of each
	// item topic of a window topic. The topic shows the last and the
	// largest deviation of any of them.
	cyc                   cyclic
	itemCyc               map[string]*cyclic
	lastJitter, maxJitter time.Duration
	hasJitter             bool
	implausible           uint64
	// rate: messages counted at the previous snapshot
	prevMessages uint64
	prevAt       time.Time
	rate         float64
}

// New returns a Monitor.
func New(cfg Config) *Monitor {
	cfg.StaleAfter = defaults.Positive(cfg.StaleAfter, DefaultStaleAfter)
	cfg.MaxTopics = defaults.Positive(cfg.MaxTopics, DefaultMaxTopics)
	return &Monitor{cfg: cfg, topics: map[string]*topic{}, envs: envelope.NewTracker(), epochs: map[uint64]struct{}{}, implausible: map[string]uint64{}}
}

// Publish records a message as the MQTT client delivers it, at now: a
// retained one (MQTT v5 sets the flag on exactly those the broker sends
// because of the subscription) as ObserveRetained, any other as Observe.
// It is what `candec watch` calls for every message.
func (m *Monitor) Publish(p *paho.Publish, now time.Time) {
	if p.Retain {
		m.ObserveRetained(p.Topic, p.Payload, now)
		return
	}
	m.Observe(p.Topic, p.Payload, now)
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
		if len(m.topics) >= m.cfg.MaxTopics {
			m.untracked++
			return
		}
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
	// ns is the arrival for the latency; a retained message has none.
	ns := now.UnixNano()
	if retained {
		ns = noLatency
	}
	switch t.kind {
	case Envelope:
		m.observeEnvelope(t, payload, ns, now)
	case Window:
		m.observeWindow(t, payload, ns, now)
	case Raw:
		m.observeRaw(t, payload, ns, now)
	default:
		// Only the start of the payload is looked at: it may be large.
		t.last = lastText(termtext.Quote(string(payload[:min(len(payload), 4*MaxLast+4)])))
	}
}

// observeEnvelope takes an envelope on t: its loss and restarts, its
// value, and its latency when fresh and plausible.
func (m *Monitor) observeEnvelope(t *topic, payload []byte, ns int64, now time.Time) {
	if err := envelope.Parse(payload, &m.env); err != nil {
		t.last = lastText("(not an envelope: " + err.Error() + ")")
		return
	}
	r := implausible(m.env.Seq, m.env.TS, now)
	if r == ReasonSeq {
		m.implausibleMsg(t, r)
		t.cyc.cyc.Break()
		return
	}
	o := m.envs.Observe(t.name, &m.env)
	t.seq = m.env.Seq
	t.lost = addSat(t.lost, o.Lost)
	if o.Restart {
		t.restarts++
		m.restart(m.env.Epoch)
	}
	t.last = FormatValue(&m.env)
	t.flagStale = m.env.Stale()
	isFresh := false
	if r == ReasonTS {
		m.implausible[r]++
		t.implausible++
	} else if isFresh = fresh(&t.lastTS, &m.env); isFresh {
		m.latency(t, ns, m.env.TS)
	}
	m.cyclicJitter(t, &t.cyc, &m.env, ns, isFresh)
}

// observeWindow takes a window message on t: its loss and restarts,
// its item count, and the latency of each fresh, plausible item.
func (m *Monitor) observeWindow(t *topic, payload []byte, ns int64, now time.Time) {
	if err := envelope.ParseWindow(payload, &m.win); err != nil {
		t.last = lastText("(not a window: " + err.Error() + ")")
		return
	}
	if r := implausible(m.win.Seq, MinTS, now); r != "" {
		m.implausibleMsg(t, r)
		return
	}
	if t.windows == nil {
		t.windows = envelope.NewTracker()
	}
	o := t.windows.Observe(t.name, &envelope.Envelope{Seq: m.win.Seq, Epoch: m.win.Epoch})
	t.seq = m.win.Seq
	t.lost = addSat(t.lost, o.Lost)
	if o.Restart {
		t.restarts++
		m.restart(m.win.Epoch)
	}
	t.items += uint64(len(m.win.Items))
	t.last = strconv.Itoa(len(m.win.Items)) + " envelopes"
	if t.itemTS == nil {
		t.itemTS = map[string]int64{}
	}
	tsBad := false
	for i := range m.win.Items {
		it := &m.win.Items[i]
		c := m.itemCycle(t, it.Topic)
		if c == nil {
			m.untrackedItems++
			continue
		}
		if implausible(1, it.Envelope.TS, now) != "" {
			tsBad = true
			c.cyc.Break()
			continue
		}
		last := t.itemTS[string(it.Topic)]
		isFresh := fresh(&last, &it.Envelope)
		if isFresh {
			m.latency(t, ns, it.Envelope.TS)
		}
		if last != t.itemTS[string(it.Topic)] {
			t.itemTS[string(it.Topic)] = last
		}
		m.cyclicJitter(t, c, &it.Envelope, ns, isFresh)
	}
	if tsBad {
		m.implausible[ReasonTS]++
		t.implausible++
	}
}

// observeRaw takes a raw batch on t: its frame loss and restarts, its
// frame count, and the latency of each plausible frame.
func (m *Monitor) observeRaw(t *topic, payload []byte, ns int64, now time.Time) {
	b, err := rawbatch.Parse(payload)
	if err != nil {
		t.last = lastText("(not a raw batch: " + err.Error() + ")")
		return
	}
	if b.Seq() > MaxSeq-uint64(b.Len()) {
		m.implausibleMsg(t, ReasonSeq)
		return
	}
	lost, restarted := t.raw.Observe(b.Seq(), b.Len())
	t.seq = b.Seq()
	t.lost = addSat(t.lost, lost)
	if restarted {
		t.restarts++
		m.restarts++ // a raw batch has no epoch: each topic is its own bridge
	}
	t.items += uint64(b.Len())
	t.last = strconv.Itoa(b.Len()) + " frames"
	tsBad := false
	for i := range b.Len() {
		b.Frame(i, &m.f)
		if implausible(1, m.f.Time, now) != "" {
			tsBad = true
			continue
		}
		m.latency(t, ns, m.f.Time) // a raw frame is always fresh
	}
	if tsBad {
		m.implausible[ReasonTS]++
		t.implausible++
	}
}

// implausible returns the reason a message with this seq and
// timestamp, arrived at now, is outside the bounds; "" when it is not.
func implausible(seq uint64, ts int64, now time.Time) string {
	switch {
	case seq == 0 || seq > MaxSeq:
		return ReasonSeq
	case ts < MinTS || ts > now.Add(MaxAhead).UnixNano():
		return ReasonTS
	}
	return ""
}

// implausibleMsg counts a message left out for reason r.
func (m *Monitor) implausibleMsg(t *topic, r string) {
	m.implausible[r]++
	t.implausible++
	t.last = "(implausible " + r + ")"
}

// fresh reports whether e carries a value not seen before on its topic,
// whose newest ts so far is *last, and moves *last on: a heartbeat, a
// republish after a reconnect and a stale mark carry the ts of the frame
// their value came from (docs/envelope.md), so only an envelope with a
// newer ts that is not a stale mark is fresh. Its latency is the path's;
// theirs would be the age of the value.
func fresh(last *int64, e *envelope.Envelope) bool {
	if e.TS <= *last {
		return false
	}
	*last = e.TS
	return !e.Stale()
}

// addSat returns a + b, or the largest uint64 where that overflows.
func addSat(a, b uint64) uint64 {
	if a+b < a {
		return math.MaxUint64
	}
	return a + b
}

// lastText is text made for the last-value column: safe for a terminal
// and at most MaxLast characters.
func lastText(s string) string {
	// Cut before Clean bounds the work; Clean's escapes lengthen it.
	return termtext.Cut(termtext.Clean(termtext.Cut(s, MaxLast)), MaxLast)
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
		if len(m.epochs) < m.cfg.MaxTopics { // bounded: any user may publish epochs
			m.epochs[epoch] = struct{}{}
		}
	}
	m.restarts++
}

// latency records arrival − ts of a fresh value, where now is the
// arrival time in ns or noLatency, and ts is within the bounds. A value
// stamped after its arrival (clocks apart) is counted in ahead, not in
// the histogram.
func (m *Monitor) latency(t *topic, now, ts int64) {
	if now == noLatency {
		return
	}
	d := now - ts
	if d < 0 {
		m.ahead++
		return
	}
	m.lat.Record(d)
	t.lastLatency = time.Duration(d)
	t.maxLatency = max(t.maxLatency, time.Duration(d))
	t.hasLatency = true
}

// cyclic is one signal topic's cyclic jitter: its period, learned from
// the ts of its first fresh values (jitter.Learner), and its arrivals.
type cyclic struct {
	learn jitter.Learner
	cyc   jitter.Cycle
}

// itemCycle returns the cyclic jitter of the window item topic name of
// t, made on its first sight; nil when MaxTopics item topics are
// followed already.
func (m *Monitor) itemCycle(t *topic, name []byte) *cyclic {
	if c := t.itemCyc[string(name)]; c != nil {
		return c
	}
	if m.items >= m.cfg.MaxTopics {
		return nil
	}
	m.items++
	if t.itemCyc == nil {
		t.itemCyc = map[string]*cyclic{}
	}
	c := new(cyclic)
	t.itemCyc[string(name)] = c
	return c
}

// cyclicJitter takes envelope e of the signal topic c, shown on t, that
// arrived at now (ns; noLatency for a retained one). A fresh value
// teaches c its period and, once c is cyclic, gives the deviation of
// its arrival interval from it; anything else (a retained message, a
// heartbeat, a republish, a stale mark) breaks the cycle.
func (m *Monitor) cyclicJitter(t *topic, c *cyclic, e *envelope.Envelope, now int64, fresh bool) {
	if now == noLatency || !fresh {
		c.cyc.Break()
		return
	}
	c.cyc.Period, _ = c.learn.Observe(e.TS)
	iv, ok := c.cyc.Observe(now, e.TS, e.Seq, e.Epoch)
	if !ok {
		return
	}
	m.jit.Record(iv, c.cyc.Period)
	t.lastJitter = time.Duration(iv.Dev)
	t.maxJitter = max(t.maxJitter, t.lastJitter)
	t.hasJitter = true
}

// cyclicTopics counts the signal topics found cyclic: envelope topics
// and window item topics.
func (m *Monitor) cyclicTopics() int {
	n := 0
	for _, t := range m.topics {
		if t.cyc.cyc.Period > 0 {
			n++
		}
		for _, c := range t.itemCyc {
			if c.cyc.Period > 0 {
				n++
			}
		}
	}
	return n
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
		s += " " + head(e.Unit)
	}
	if len(e.Label) > 0 {
		s += " (" + head(e.Label) + ")"
	}
	return lastText(s)
}

// head returns the start of b as a string: enough of it for MaxLast
// characters, without copying what is cut anyway.
func head(b []byte) string { return string(b[:min(len(b), 4*MaxLast+4)]) }

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
	// Implausible counts the topic's messages outside the bounds
	// (MaxSeq, MinTS, MaxAhead).
	Implausible uint64 `json:"implausible,omitempty"`
	// LastLatency and MaxLatency are from the message's timestamp.
	LastLatency time.Duration `json:"last_latency_ns,omitempty"`
	MaxLatency  time.Duration `json:"max_latency_ns,omitempty"`
	HasLatency  bool          `json:"-"`
	// Period is a cyclic envelope topic's period, learned from the ts of
	// its first values (0: not cyclic, or not yet known; a window topic
	// carries many); LastJitter and MaxJitter the last and largest
	// deviation of an arrival interval from it (package jitter).
	Period     time.Duration `json:"period_ns,omitempty"`
	LastJitter time.Duration `json:"last_jitter_ns,omitempty"`
	MaxJitter  time.Duration `json:"max_jitter_ns,omitempty"`
	HasJitter  bool          `json:"-"`
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
			Rate: t.rate, Last: t.last, Age: age, Seq: t.seq, Lost: t.lost, Restarts: t.restarts, Implausible: t.implausible,
			LastLatency: t.lastLatency, MaxLatency: t.maxLatency, HasLatency: t.hasLatency,
			Period: time.Duration(t.cyc.cyc.Period), LastJitter: t.lastJitter, MaxJitter: t.maxJitter, HasJitter: t.hasJitter,
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
	// Implausible counts the messages outside the bounds by reason:
	// ReasonSeq (left out: no seq, no loss), ReasonTS (no latency). A
	// raw batch or window with implausible timestamps counts once under
	// ReasonTS; its plausible ones still give latency.
	Implausible map[string]uint64 `json:"implausible,omitempty"`
	// Ahead counts fresh values stamped after their arrival: the
	// publisher's clock is ahead of the watcher's. They are not in
	// Latency.
	Ahead uint64 `json:"ahead,omitempty"`
	// Untracked counts the messages on topics beyond MaxTopics, and
	// UntrackedItems the window items on item topics beyond it: left
	// out of every other figure.
	Untracked      uint64 `json:"untracked,omitempty"`
	UntrackedItems uint64 `json:"untracked_items,omitempty"`
	MaxTopics      int    `json:"max_topics"`
	// Latency is over every fresh envelope (a new ts, not a stale mark,
	// not retained; heartbeats and republishes carry an old ts) and
	// every live raw frame, in milliseconds.
	Latency latency.Summary `json:"latency_ms"`
	// Jitter is the cyclic jitter over every signal topic found cyclic
	// (Jitter.Topics of them): how far each arrival interval of a fresh
	// value after the previous one fell from the topic's period.
	Jitter jitter.Summary `json:"jitter"`
	// TopicStats lists the topics.
	TopicStats []TopicStats `json:"topic_stats"`
}

// Summary returns the summary at now.
func (m *Monitor) Summary(now time.Time) Summary {
	stats := m.Snapshot(now)
	m.mu.Lock()
	defer m.mu.Unlock()
	s := Summary{Topics: len(stats), Messages: m.messages, Retained: m.retained, Restarts: m.restarts,
		TopicStats: stats, Latency: m.lat.Summary(), Ahead: m.ahead, Jitter: m.jit.Summary(),
		Untracked: m.untracked, UntrackedItems: m.untrackedItems, MaxTopics: m.cfg.MaxTopics}
	s.Jitter.Topics = m.cyclicTopics()
	for r, n := range m.implausible {
		if s.Implausible == nil {
			s.Implausible = map[string]uint64{}
		}
		s.Implausible[r] = n
	}
	if m.messages > 0 {
		s.Duration = now.Sub(m.first)
		if s.Duration > 0 {
			s.Rate = float64(m.messages) / s.Duration.Seconds()
		}
	}
	for _, t := range stats {
		s.Lost = addSat(s.Lost, t.Lost)
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
