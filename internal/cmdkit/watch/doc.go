// Package watch is the debugging view of what a broker carries: per
// topic, the message rate, the last value, its age, loss from seq gaps,
// latency from the timestamp inside the message, and stale flags; and a
// summary when the watch ends. `candec watch` prints it live.
//
// A Monitor recognises each message by its content: an envelope (JSON
// or MessagePack), a window-stream message, a raw batch, or anything
// else, shown as text (the decoder's status topic, for instance).
// Envelopes' loss is counted per topic from seq, windows' from the
// window seq, raw batches' from the frame seq; latency is the arrival
// time minus the envelope's ts (or each frame's timestamp), which is
// only meaningful when publisher and watcher share a clock.
//
// Retained messages, the ones a broker delivers because of the
// subscription (MQTT v5 sets the retain flag on exactly those), go
// through ObserveRetained: they set a topic's value and seq, but count
// neither for latency (their timestamp says how old the value is, not how
// slow the path is) nor for rate or age, and the topic shows RETAINED
// until its publisher sends again.
//
// A decoder restart changes the epoch of every signal topic: it counts as
// one publisher restart in the summary, however many topics tell of it
// (see docs/envelope.md). Old (the stale limit) applies to envelope,
// window and raw topics only: a text topic such as the decoder's status
// is not sent periodically.
//
// # Latency from fresh values only
//
// Latency is the arrival time minus the timestamp of a fresh value. A
// heartbeat, a republish after a reconnect and a stale mark carry the
// ts of the frame their value came from (docs/envelope.md): their
// arrival minus ts is the value's age, not the path's delay, so an
// envelope counts only when its ts is newer than every earlier one on
// its topic (for a window, its item's topic) and it is not a stale
// mark; retained messages never count. Every live raw frame counts. A
// fresh value stamped after its arrival (the publisher's clock ahead)
// is counted apart (Summary.Ahead), not in the histogram.
//
// # Cyclic jitter
//
// For a signal published on a cycle, how far each arrival interval
// falls from its period (package jitter). The watch knows neither the
// DBC nor the policy, so each signal topic (and each item topic of a
// window topic) learns its period from the ts of its first
// jitter.LearnIntervals fresh values: their median interval, if most
// are near it; a topic published on change is not cyclic. A fresh value
// whose seq follows the previous one's gives |arrival interval −
// period|; a retained message, a heartbeat, a republish or a stale mark
// breaks the cycle. TopicStats shows a topic's period and its last and
// largest deviation, Summary.Jitter the percentiles over every cyclic
// topic and those of the path's part, |arrival interval − ts interval|.
//
// # A bound on the topics
//
// Any user of the broker can publish on new topics. A Monitor follows
// at most Config.MaxTopics topics, and as many window item topics
// (DefaultMaxTopics: 20,000); a message beyond the bound is counted
// (Summary.Untracked, UntrackedItems) and moves no other figure, so
// its memory is bounded whatever is published.
//
// # Plausibility bounds
//
// A message is implausible, and counted by reason in
// Summary.Implausible and per topic, when its seq is 0 or above MaxSeq
// (2^53; a raw batch: its first frame's seq plus its count), or its
// timestamp is before MinTS (2000-01-01) or more than MaxAhead (24 h)
// after its arrival. An implausible seq leaves the message out: it
// moves no seq and counts no loss, so no hostile seq makes loss
// overflow or go negative. An implausible timestamp gives no latency
// (a bridge whose clock was never set still shows its values). Loss
// sums saturate at the largest uint64.
//
// # Outside text
//
// Topics, units, labels and text payloads come from the network: they
// are shown through termtext (control characters escaped), and a
// topic's last value is cut to MaxLast characters.
//
// WriteTableFit fits the live table to a terminal: topics shortened from
// the left and rows cut to its width, the header kept, and "… N more
// topics" when they do not fit its height. ValidateFilter checks a topic filter before a broker sees it.
//
// Time is passed in: Observe takes the arrival time and Snapshot the
// time of the view, so the Monitor is tested without sleeping.
package watch
