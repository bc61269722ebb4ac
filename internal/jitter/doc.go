// Package jitter measures cyclic jitter at a subscriber: for a signal
// that is published on a cycle, how far each envelope's arrival interval
// falls from the signal's period, |arrival − previous arrival − period|,
// the measure a CAN tool's cyclic-frame benchmark quotes (a SYNC at
// 20 ms: jitter = |actual interval − 20 ms|).
//
// # The period
//
// A signal's period is the interval at which the decoder publishes it,
// which Period works out from the policy and the message:
//
//	period = ⌈T / C⌉ · C
//
// where C is the cycle of the signal's message (GenMsgCycleTime, or
// where the DBC has none the median interval of its frames) and T the
// rate cap's interval, 1/max_rate (0: no cap). A capped signal goes out
// with the first frame at or after the cap's window end (see
// docs/policy.md), so its envelopes are a whole number of cycles apart:
// a 100 Hz message under a 20 Hz cap every 50 ms, a 50 Hz one every
// 60 ms, not 50. Where C divides T, or C ≥ T, this is max(T, C).
//
// A subscriber that knows neither the DBC nor the policy (`candec watch`)
// learns the same period from what it receives: a Learner takes the
// median interval between the frame timestamps (ts) of a topic's first
// LearnIntervals fresh values, and calls the topic cyclic when most of
// them are within a quarter of that median. An on-change signal's
// values come when its value changes, not on a cycle, and are left out.
//
// # What is measured
//
// A Cycle follows one topic: each arrival with the seq after the
// previous one's (same epoch) gives one interval. An interval across a
// lost envelope, a restart or a stale mark gives none: loss is counted
// apart, and an interval spanning it would be a whole period off. Every
// envelope of a window-stream message arrives with the message.
//
// A Histogram keeps the deviations (ns) and each one as a share of its
// own period, in log-linear buckets (package latency: percentiles at
// most 0.8 % above the exact value, max exact). Recording allocates
// nothing.
//
// Arrivals come in the raw stream's batches (10 ms on the car), so a
// signal faster than a batch arrives several at a time: its jitter is
// up to a batch window by construction, and its share of the period is
// large. Compare such rows with themselves, before and after a change.
package jitter
