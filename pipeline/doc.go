// Package pipeline moves decoded signal values to per-signal topics
// under a policy: rate caps that publish the first fresh frame after
// each window and never lose a burst's final value (a trailing edge),
// on-change with deadbands and heartbeats, staleness marks, and
// an optional window stream. It turns frames into envelope bytes and
// hands them to a Sink; it knows nothing about MQTT.
//
// # Time is the frames' time
//
// Every decision uses frame timestamps. The Engine's "now" is the
// latest frame time it has seen; Advance moves it on when frames stop
// (for trailing values, heartbeats and stale marks). A deadline fires
// before the first frame whose timestamp is past it, or on Advance past
// it, and the envelope it publishes carries the value's own frame
// timestamp. So the envelopes of a topic (value, ts, seq) depend only on
// the frames, not on when Advance is called, provided that Advance(w) is
// only called once no frame older than w can arrive: the offline
// decoder and the live service publish the same envelopes.
//
// # Clock jumps
//
// One frame with a wild timestamp (a bridge's clock glitch, a year-2200
// frame) must not move the clock: every cap window would stay closed
// behind it and every stale timer fire at once. A genuine step of the
// frames' clock (a bridge restart, an NTP step, two captures joined
// with time going back) must be followed at once. So a frame more than
// Config.MaxClockJump (default 10 s) ahead of now or behind it is held,
// not applied:
//
//   - If the next frame is within MaxClockJump of now again, the held
//     frames were outliers: they are dropped, never decoded into a
//     policy nor published, and counted in Stats.Future or Stats.Past.
//     The envelopes are exactly those of the same frames without them.
//   - If Config.ClockConfirm frames (default 32) in a row are each within
//     MaxClockJump of the newest of them, they are a new timebase: a
//     discontinuity (Stats.Discontinuities). The timers restart at the
//     earliest held frame, as if every signal had been published one cap
//     period before it, every value a cap holds back had come at it and
//     every message had just sent a frame; then the held frames run in
//     the order they came. So the next value of each signal goes out at
//     once (and supersedes a held one, as after any cap window; a held
//     value whose message does not come back goes out at its grace
//     deadline), the step itself marks nothing stale (a message that
//     does not come back is marked stale its stale_after after the
//     step), and seq goes on: subscribers see no restart.
//   - Frames still held when Flush is called are dropped as outliers.
//
// So frames of two clocks mixed in one stream do not make the clock
// flap: it stays on the timebase it has, and the other clock's frames
// are dropped and counted, unless ClockConfirm of them come in a row.
//
// A frame behind now by at most MaxClockJump is late, as before: counted
// in Stats.Late and run at now (its values go through the policies with
// their own timestamps; it does not move the clock).
//
// The rule is the same live and offline. Live, the service's watermark
// moves the clock on while frames pause, so only a step of the frames'
// clock is a jump; offline a capture's gap longer than MaxClockJump is
// one too (nothing tells it from a step), where the service would have
// published stale marks and heartbeats during the pause. A live caller
// derives its watermark from Latest, which outliers do not move.
//
// # Offline
//
// RunOffline is the one driver of an Engine on a capture: it reads every
// frame of a Source (one method, Next: a capture.Source is one), runs
// it through the Engine on the frames' clock, lets time run on by an
// optional tail and flushes, which is what the live service publishes
// for the same frames when stopped at that time. decode --policy, tune and the tests that hold the live service
// to the offline run all call it. With a LineWriter as the Engine's Sink
// it writes the messages as "topic payload" lines:
//
//	lw := pipeline.NewLineWriter(w)
//	eng, err := pipeline.New(db, cfg, lw)
//	...
//	res, err := pipeline.RunOffline(ctx, src, eng, pipeline.OfflineOptions{Tail: tail, Stop: lw.Err})
//	...
//	err = lw.Flush()
//
// A capture cut short (a malformed line, a read error, an interrupt)
// ends the run as its end would: what the caps hold is flushed, so the
// messages are those of the capture cut at that point, and the error
// says why it was not read to its end.
//
// # Policies
//
// Policies come from a YAML file (see LoadPolicy and docs/policy.md) or
// the built-in DefaultPolicy, resolved once per signal at New.
// SetPolicies swaps them in a running Engine at its current time (the
// service does on SIGHUP): the epoch stays and every topic's seq goes on
// with no gap and no repeat; a value a cap holds is carried into the new
// policy (or flushed, for a signal no longer published), never lost;
// deadlines the new policy has already passed fire at once, those it
// moves later or removes do not fire; a newly published signal's first
// value goes out at once with the next seq of its topic.
//
// # J1939 sources
//
// A J1939 message matches frames from any source address (see package
// decoder). With {sa} in Config.TopicTemplate, the Engine keeps such a
// message per source: the first frame from a source address makes that
// source's state, a copy of the message's signals with their policies
// and the topics of that address, and from then on the source is a
// stream of its own, with its own seq, cap windows, heartbeats,
// staleness, flush and republish. New checks the template with {sa}
// left in, so two signals that would share a topic on every source are
// refused there; a topic that names make meet on one source only is not
// published (Stats.Clashes). Out.Stream numbers each topic, so that a
// Sink can keep a queue per topic. Without {sa}, all sources of a
// signal feed its one state.
//
// # Cost
//
// Per-signal state lives in flat slices indexed by dbc.Signal.Index
// (J1939 sources' after them) and deadlines in an indexed min-heap, so
// Frame and Advance do not allocate in steady state (a J1939 source's
// first frame makes its state once) and Advance is cheap when nothing is
// due.
package pipeline
