// Package envelope defines the message candec publishes for each signal
// value, in JSON or MessagePack, and gives subscribers what they need to
// read it: Parse for both encodings, a Tracker that counts loss and
// restarts per topic, and ParseWindow for the optional window stream.
//
// # Schema
//
// An envelope is a map with these keys (docs/envelope.md has the full
// reference with examples):
//
//	value      the physical value: an integer when exact, else a float;
//	           null in JSON for NaN and ±Inf, with "nonfinite" saying which
//	unit       the DBC unit, omitted when empty
//	label      the value-table label of the value, omitted when none
//	ts         the CAN frame's timestamp, ns since the Unix epoch
//	seq        per topic, rises by exactly 1 for each envelope published
//	epoch      the publisher's restart id; a new epoch restarts seq
//	oor        true when the value is outside the DBC's range
//	stale      true when the message's frames stopped; value is the last one
//	nonfinite  "NaN", "+Inf" or "-Inf", with "value": null (candec writes
//	           it in JSON only: MessagePack carries the float64; Parse
//	           reads it in either encoding)
//
// # Cost
//
// AppendJSON and AppendMsgpack append to a caller's buffer and never
// allocate once it has grown. Parse and ParseWindow never allocate in
// steady state: Unit, Label and window topics are sub-slices of the
// payload (valid while the payload is), except when JSON escapes force a
// copy into the Envelope's own reusable scratch space.
//
// # Loss and restarts
//
// Seq starts at 1 when the publisher starts and rises by exactly 1 per
// envelope on each topic. A gap is loss; the same seq again is a
// duplicate (a retained message redelivered); a new epoch is a publisher
// restart, after which seq starts again at 1. Tracker does this
// bookkeeping.
package envelope
