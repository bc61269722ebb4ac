package demo

import (
	"cmp"
	"fmt"
	"io"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/yukart/candec/internal/base/numfmt"
	"github.com/yukart/candec/internal/base/termtext"

	"github.com/yukart/candec/internal/cmdkit/watch"
)

// Board follows the signal topics and the decoder's status, and renders
// them. Observe runs on the MQTT client's goroutine, the rest on the
// display's.
type Board struct {
	prefix string // the signal topics' common prefix, left out of the table
	status string // the status topic

	mon *watch.Monitor // rate, last value, seq, age, loss, stale flags

	mu      sync.Mutex
	state   string // the decoder's last status
	online  chan struct{}
	once    sync.Once
	offline chan struct{}
	offOnce sync.Once
	started time.Time

	// Rates are measured over rateEvery, so that they read steadily
	// however often the board is drawn.
	rateAt time.Time
	prev   map[string]uint64 // messages per topic at rateAt
	rates  map[string]float64
	prevN  uint64
	rate   float64
}

// rateEvery is the interval rates are measured over.
const rateEvery = time.Second

// NewBoard returns a board for signal topics under prefix
// ("yukart/vehicle/") and the decoder's status topic.
func NewBoard(prefix, statusTopic string, now time.Time) *Board {
	return &Board{
		prefix:  prefix,
		status:  statusTopic,
		mon:     watch.New(watch.Config{}),
		online:  make(chan struct{}),
		offline: make(chan struct{}),
		started: now,
		rateAt:  now,
		prev:    map[string]uint64{},
		rates:   map[string]float64{},
	}
}

// Online is closed when the decoder has said "online".
func (b *Board) Online() <-chan struct{} { return b.online }

// Offline is closed when the decoder has said "offline".
func (b *Board) Offline() <-chan struct{} { return b.offline }

// Observe records a live message received at now.
func (b *Board) Observe(topic string, payload []byte, now time.Time) {
	b.observe(topic, payload, false, now)
}

// ObserveRetained records a retained message, delivered on subscription:
// a value or a status left by an earlier run. An earlier run's "online"
// or "offline" does not say this run's decoder is up or down.
func (b *Board) ObserveRetained(topic string, payload []byte, now time.Time) {
	b.observe(topic, payload, true, now)
}

func (b *Board) observe(topic string, payload []byte, retained bool, now time.Time) {
	if topic == b.status {
		b.mu.Lock()
		b.state = termtext.Clean(termtext.Cut(string(payload[:min(len(payload), 256)]), 40))
		b.mu.Unlock()
		if retained {
			return
		}
		switch string(payload) {
		case "online":
			b.once.Do(func() { close(b.online) })
		case "offline":
			b.offOnce.Do(func() { close(b.offline) })
		}
		return
	}
	if retained {
		b.mon.ObserveRetained(topic, payload, now)
		return
	}
	b.mon.Observe(topic, payload, now)
}

// Totals are the board's header figures.
type Totals struct {
	Envelopes uint64
	Rate      float64 // envelopes per second since the previous Totals
	Signals   int
	Lost      uint64
	Stale     int
	Status    string
	Elapsed   time.Duration
}

// Render writes the header and, with rows > 0, up to rows signal rows
// sorted by name; rows < 0 means all of them.
func (b *Board) Render(w io.Writer, now time.Time, rows int) Totals {
	stats := b.mon.Snapshot(now)
	t := b.totals(stats, now)
	fmt.Fprintf(w, "envelopes %s (%s/s)   signals %d   lost %s   stale %d   decoder %s   %s\n",
		numfmt.Count(t.Envelopes), numfmt.Thousands(t.Rate), t.Signals, numfmt.Count(t.Lost), t.Stale, t.Status,
		t.Elapsed.Truncate(time.Second))
	if rows == 0 {
		return t
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SIGNAL\tVALUE\tRATE/S\tSEQ\tAGE\t")
	b.mu.Lock()
	shown := 0
	for i := range stats {
		if rows > 0 && shown == rows {
			break
		}
		s := &stats[i]
		flag := ""
		if s.Stale {
			flag = "STALE"
		}
		fmt.Fprintf(tw, "%s\t%s\t%5.1f\t%6d\t%6s\t%s\n", termtext.Clean(strings.TrimPrefix(s.Topic, b.prefix)), s.Last, b.rates[s.Topic], s.Seq, watch.FormatAge(s.Age), flag)
		shown++
	}
	b.mu.Unlock()
	tw.Flush()
	if more := len(stats) - shown; more > 0 {
		fmt.Fprintf(w, "… and %d more signals (a taller terminal shows them)\n", more)
	}
	return t
}

func (b *Board) totals(stats []watch.TopicStats, now time.Time) Totals {
	var t Totals
	for i := range stats {
		t.Envelopes += stats[i].Messages
		t.Lost += stats[i].Lost
		if stats[i].Stale {
			t.Stale++
		}
	}
	t.Signals = len(stats)
	b.mu.Lock()
	defer b.mu.Unlock()
	if dt := now.Sub(b.rateAt); dt >= rateEvery {
		for i := range stats {
			s := &stats[i]
			b.rates[s.Topic] = float64(s.Messages-b.prev[s.Topic]) / dt.Seconds()
			b.prev[s.Topic] = s.Messages
		}
		b.rate = float64(t.Envelopes-b.prevN) / dt.Seconds()
		b.prevN, b.rateAt = t.Envelopes, now
	}
	t.Rate = b.rate
	t.Status = b.state
	t.Status = cmp.Or(t.Status, "not yet online")
	t.Elapsed = now.Sub(b.started)
	return t
}
