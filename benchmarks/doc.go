// Package bench runs candec against a real MQTT broker and measures what
// the car team's bus-bench report measured: for each scenario (a load, a
// DBC, a policy), the raw stream's and the envelopes' rates, loss and
// latency, and what each process costs in CPU.
//
// # A run
//
// Each run starts a private mosquitto (package stack) on a free port, or
// uses the broker given; then the decoder, `candec run`, as its own
// process so that its CPU is measured apart; the subscribers; and the
// replay, `candec replay`, also a process of its own, which plays the
// car's capture as raw batches stamped with their send time:
//
//	replay ──raw──▶ broker ──raw──▶ decoder ──envelopes──▶ broker ──▶ 5 envelope subscribers
//	                   └──────raw──────────────────────────────────▶ 3 raw subscribers
//
// The subscribers are goroutines of the bench process, each with its own
// MQTT connection: their CPU is the bench process's, reported as
// subscribers together. A raw subscriber checks the batch seq (exact
// frame loss) and takes each frame's latency from its timestamp; an
// envelope subscriber takes every signal (yukart/vehicle/+) or the
// window stream, checks each topic's seq (exact envelope loss) and takes
// each envelope's latency from its ts.
//
// Measuring starts only when every subscriber has received a valid
// message (the readiness gate), then after a warm-up. CPU is read from
// /proc/<pid>/stat at the window's start and end. When the window
// closes the replay stops; the bench waits until no more data arrives
// (drain_s), stops the decoder, and compares each topic's retained last
// envelope with what each subscriber saw, so loss at the very end is
// counted too.
//
// # What counts as latency
//
// Latency is the subscriber's arrival time minus the frame timestamp
// the replay stamped at send time, on one host's clock, for messages that
// arrive in the measured window. For envelopes it counts only those that
// carry a new value: stale marks and envelopes on topics whose policy has
// a heartbeat are left out, since a heartbeat republishes a value the
// subscriber already has, stamped with its original frame's time.
//
// # Cyclic jitter
//
// For each cyclic topic (a policy with neither on_change nor a
// heartbeat) an envelope subscriber takes how far each arrival interval
// falls from the topic's period (package jitter), in the window. The
// period is the decoder's: signalTopics runs the pipeline engine over
// the capture at the load's speed and takes the median interval between
// each topic's envelope timestamps, so that the cap's rounding to whole
// cycles and multiplexed signals are not counted as jitter.
package benchmarks
