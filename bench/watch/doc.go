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
// Time is passed in: Observe takes the arrival time and Snapshot the
// time of the view, so the Monitor is tested without sleeping.
package watch
