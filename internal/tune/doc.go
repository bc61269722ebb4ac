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
// # The chart
//
// Report.Chart draws the same figures for a person: each signal's
// envelopes/s before the policy (ValuesPerS: every decoded value, as a
// decoder without a policy would publish it) and after, and the
// deliveries/s they add up to against a budget, by default the report's
// comfortable ComfortableDeliveriesPerS.
package tune
