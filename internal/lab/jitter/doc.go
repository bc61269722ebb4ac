// Package jitter measures cyclic jitter at a subscriber: for a signal
// that is published on a cycle, how far each envelope's arrival interval
// falls from the signal's period, |arrival − previous arrival − period|,
// the measure a CAN tool's cyclic-frame benchmark quotes (a SYNC at
// 20 ms: jitter = |actual interval − 20 ms|).
//
// # The period
//
// A signal's period is the interval at which the decoder publishes it:
// the median interval between the frame timestamps (ts) of its
// envelopes. On paper a capped signal is published every
//
//	⌈T / C⌉ · C
//
// where C is its message's cycle (GenMsgCycleTime) and T the cap's
// interval, 1/max_rate: the first frame at or after the cap's window end
// goes out (docs/policy.md), so a 100 Hz message under a 20 Hz cap every
// 50 ms, max(T, C) wherever C divides T. A real bus does not keep to
// paper: when the frames come a hair faster than C, the frame due at the
// window's end comes just before it and the next one goes out, so the
// car's idle capture gives the 100 Hz messages every 60 ms and the 20 Hz
// ones every 100 ms under the default 20 Hz cap; and a multiplexed
// signal comes once per round of its multiplexor. Measured from that
// nominal period, all of this would read as jitter: a constant 10, 50 or
// 350 ms that no path caused and no change of the path moves. So the
// period is what the decoder does with these frames, not what the DBC
// says.
//
// The bench knows it before the run: it runs the decoder's engine, with
// the scenario's DBC and policy, over the capture at the load's speed.
// A subscriber that knows neither (`candec watch`) learns it: a Learner
// takes the median interval between the ts of a topic's first
// LearnIntervals fresh values, and calls the topic cyclic when at least
// three quarters of them are within a quarter of that median. A signal
// published on change is not cyclic: the bench leaves out the topics
// whose policy has on_change or a heartbeat; the Learner finds their
// intervals irregular.
//
// # What is measured
//
// A Cycle follows one topic: each arrival with the seq after the
// previous one's (same epoch) gives one interval. An interval across a
// lost envelope, a restart or a stale mark gives none: loss is counted
// apart, and an interval spanning it would be a whole period off. Every
// envelope of a window-stream message arrives with the message.
//
// Beside the deviation from the period, each Interval carries the
// path's part: |arrival interval − ts interval|, what happened to the
// interval between the frames and the subscriber, without the frames'
// own irregularity and the cap's choice between two frames, which the ts
// carry already.
//
// A Histogram keeps the deviations (ns), each one as a share of its own
// period, and the path's parts, in log-linear buckets (package latency: percentiles at
// most 0.8 % above the exact value, max exact). Recording allocates
// nothing.
//
// Arrivals come in the raw stream's batches (10 ms on the car), so a
// signal faster than a batch arrives several at a time: its jitter is
// up to a batch window by construction, and its share of the period is
// large. Compare such rows with themselves, before and after a change.
package jitter
