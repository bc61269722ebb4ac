package pipeline

import (
	"strconv"
	"strings"
	"time"

	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/envelope"
)

// OutKind says why an envelope was published.
type OutKind uint8

// Output kinds.
const (
	// KindValue: a new value, published as it arrived.
	KindValue OutKind = iota
	// KindTrailing: the latest value held back by a rate cap, published
	// when the cap's window closed (for a message with a cycle time: when
	// no fresher frame came by the grace deadline, up to one cycle later).
	KindTrailing
	// KindHeartbeat: the current value again, after a heartbeat period
	// without a publish.
	KindHeartbeat
	// KindStale: the last value flagged stale, after the signal's frames
	// stopped.
	KindStale
	// KindFlush: a value held back by a rate cap, published by Flush.
	KindFlush
	// KindRepublish: the last published state again, by Republish.
	KindRepublish
	// KindWindow: a window-stream message (Out.Signal is nil).
	KindWindow

	numKinds
)

// String names the kind as in metrics labels.
func (k OutKind) String() string {
	switch k {
	case KindValue:
		return "value"
	case KindTrailing:
		return "trailing"
	case KindHeartbeat:
		return "heartbeat"
	case KindStale:
		return "stale"
	case KindFlush:
		return "flush"
	case KindRepublish:
		return "republish"
	case KindWindow:
		return "window"
	}
	return "unknown"
}

// Out is one message to publish. The Engine reuses it: it and Payload
// are valid only during the Sink's Publish call.
type Out struct {
	// Topic to publish on; signal topics are retained, the window topic
	// is not.
	Topic string
	// Payload is the encoded envelope or window.
	Payload []byte
	// Signal is the signal published, nil for a window.
	Signal *dbc.Signal
	// Stream numbers the topic among the Engine's signal topics, from 0
	// to Engine.Streams()-1: a signal's dbc.Signal.Index, then, with {sa}
	// in the topic template, a number per signal of each J1939 source,
	// given as the source is first seen. -1 for a window. A Sink that
	// keeps something per topic indexes it by Stream.
	Stream int
	// Seq is the envelope's (or window's) seq.
	Seq uint64
	// TS is the envelope's frame timestamp (ns since the Unix epoch);
	// for a window, its start.
	TS int64
	// Kind says why it is published.
	Kind OutKind
	// Env is the envelope as published, nil for a window.
	Env *envelope.Envelope
}

// Sink receives the Engine's output. Publish is called synchronously
// from the goroutine that calls the Engine's methods.
type Sink interface {
	Publish(o *Out)
}

// SinkFunc adapts a function to Sink.
type SinkFunc func(o *Out)

// Publish calls f(o).
func (f SinkFunc) Publish(o *Out) { f(o) }

// Stats are the Engine's counters since New.
type Stats struct {
	// Frames counts frames passed to Frame.
	Frames uint64
	// Decoded counts frames of a message in the database.
	Decoded uint64
	// Unknown counts frames whose ID is not in the database.
	Unknown uint64
	// Skipped counts remote and error frames.
	Skipped uint64
	// Late counts frames behind the Engine's now (out of order, or
	// behind an Advance) by at most Config.MaxClockJump; they are
	// processed at now.
	Late uint64
	// Future counts frames more than MaxClockJump ahead of now, and Past
	// frames more than MaxClockJump behind it, that no run of
	// Config.ClockConfirm frames confirmed as a new timebase: their
	// timestamps are implausible, and they are dropped (not decoded into
	// any policy, never published).
	Future, Past uint64
	// Discontinuities counts new timebases adopted: runs of
	// ClockConfirm frames beyond MaxClockJump from now that agreed with
	// each other. Each restarted the policies' timing.
	Discontinuities uint64
	// LastOutlier is the timestamp of the latest frame counted in Future
	// or Past; LastJump is the latest discontinuity's step, new time
	// minus the clock before it (saturated at the int64 range).
	LastOutlier, LastJump int64
	// Span is the frame time the clock has covered: from the first frame
	// to now, with the steps of discontinuities left out.
	Span time.Duration
	// Values counts decoded signal values.
	Values uint64
	// Truncated counts values not decoded because the frame was short;
	// they are not published.
	Truncated uint64
	// Unpublished counts values of signals with publish: false.
	Unpublished uint64
	// Envelopes counts published envelopes by kind (window messages in
	// Envelopes[KindWindow]).
	Envelopes [numKinds]uint64
	// SuppressedCap counts values replaced by a newer one while a rate
	// cap held them back.
	SuppressedCap uint64
	// SuppressedUnchanged counts values within the on-change deadband
	// of the value last published.
	SuppressedUnchanged uint64
	// Sources counts the J1939 sources seen, a message from one source
	// address each, when the topic template has {sa}; Clashes counts
	// the signals of those sources not published because their topic
	// was already another's.
	Sources, Clashes uint64
}

// ClockSummary says which frames the clock did not take as they came,
// for a person: "clock: 3 late, 1 future dropped, 1 discontinuity",
// with only the counts that are not zero; "" when all are.
func (s Stats) ClockSummary() string {
	var parts []string
	add := func(n uint64, one, many string) {
		switch {
		case n == 1:
			parts = append(parts, "1 "+one)
		case n > 1:
			parts = append(parts, strconv.FormatUint(n, 10)+" "+many)
		}
	}
	add(s.Late, "late", "late")
	add(s.Future, "future dropped", "future dropped")
	add(s.Past, "past dropped", "past dropped")
	add(s.Discontinuities, "discontinuity", "discontinuities")
	if len(parts) == 0 {
		return ""
	}
	return "clock: " + strings.Join(parts, ", ")
}

// Published returns the number of envelopes of kind k.
func (s Stats) Published(k OutKind) uint64 {
	if k >= numKinds {
		return 0
	}
	return s.Envelopes[k]
}

// Total returns the number of signal envelopes published, windows not
// included.
func (s Stats) Total() uint64 {
	var n uint64
	for k, v := range s.Envelopes {
		if OutKind(k) != KindWindow {
			n += v
		}
	}
	return n
}

// Kinds lists every OutKind, for labelling metrics.
func Kinds() []OutKind {
	ks := make([]OutKind, numKinds)
	for i := range ks {
		ks[i] = OutKind(i)
	}
	return ks
}
