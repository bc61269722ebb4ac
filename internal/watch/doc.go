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
// WriteTableFit fits the live table to a terminal: topics shortened from
// the left and rows cut to its width, the header kept, and "… N more
// topics" when they do not fit its height. ValidateFilter checks a topic filter before a broker sees it.
//
// Time is passed in: Observe takes the arrival time and Snapshot the
// time of the view, so the Monitor is tested without sleeping.
package watch
