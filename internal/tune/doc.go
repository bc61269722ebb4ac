// Package tune answers, on a desk, what a policy costs the broker: it
// runs a capture through the same pipeline engine as the service and
// `candec decode --policy`, offline, and counts per signal the frames
// that carry it, how often its value changes and the envelopes the
// policy publishes; then the totals, the deliveries for N subscribers
// (each envelope is delivered once per subscriber that takes every
// signal), and the signals that cost the most.
//
// Time is the capture's: the counts are what the live service would
// publish for the same frames. The engine's clock guard applies as in
// the service: frames with implausible timestamps are dropped and
// counted, joined captures are discontinuities, and the duration the
// rates are per is the time the clock covered, jumps left out.
//
// # Fidelity
//
// The same run measures what the policy loses, on the pipeline's own
// output: the run's source decodes every frame it passes to the engine
// (the truth), and the engine's sink takes every envelope (what a
// subscriber sees: the last published value, held until the next).
// Per signal (Fidelity): the time-weighted RMS and the largest error
// held, in the unit, as a fraction of the range (the DBC's, or the
// robust observed one where the DBC gives none or an implausible one)
// and in resolutions (the factor); for each change that
// leaves the subscriber's view by more than the deadband, the time until
// an envelope at least as new was published (p50, p99, max; a change
// undone before it was published waits for nothing); for states
// (IsState), the transitions into a value no envelope carried; and the
// heartbeats and stale marks, counted apart. Report.TotalError sums the
// RMS errors as fractions of the range: one number to make small.
//
// # Judgement
//
// Values are compared at the signal's resolution (half its factor; a
// millionth of a float's value), in the error and the transitions
// alike. Checksums and rolling counters (housekeeping: by a word of the
// name in any case, or by a counter's steps) are reported but in no
// total, and the optimizer does not publish them unless kept. A DBC
// range beyond what the signal's bits carry, or 1000 times what a
// signal that moved showed, gives way to the robust observed range. See
// "How a signal is judged" in docs/tuning.md.
//
// # The chart
//
// Report.Chart draws the same figures for a person: each signal's
// envelopes/s before the policy (ValuesPerS: every decoded value, as a
// decoder without a policy would publish it) and after, and the
// deliveries/s they add up to against a budget, by default the report's
// comfortable ComfortableDeliveriesPerS.
package tune
