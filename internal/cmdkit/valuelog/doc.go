// Package valuelog writes decoded signal values as JSON lines or CSV, one
// line per value, for `candec decode` and for comparing candec with other
// decoders.
//
// Numbers, non-finite values and flags follow the rule of the envelopes
// candec publishes (docs/envelope.md), so a value reads the same in a
// decode as on its topic; docs/decode-output.md is the reference.
//
// # JSON lines
//
// Each line is an object with the frame's time in seconds ("t", exact to
// the microsecond as candump writes it, plus "ts" in nanoseconds), the
// bus interface ("bus"), the arbitration ID as a decimal integer without
// flag bits ("id"), for a J1939 message only the frame's source address
// ("sa", 0–255), "<message>.<signal>" ("signal"), the physical value
// ("value": an integer where the value is exact, otherwise a float with
// the binary noise of the scaling removed, always written with a '.' or
// an exponent; null for NaN and ±Inf, with "nonfinite": "NaN", "+Inf" or
// "-Inf"), and where they apply "unit", "label" (the value-table entry)
// and "oor": true (outside the DBC's minimum..maximum; never for NaN).
//
// # CSV
//
// The same fields as columns, in the same order (Header):
// t,ts,bus,id,signal,value,nonfinite,unit,label,oor. An empty value is a
// non-finite one (see nonfinite); oor is "true" or empty. The columns are
// fixed, so CSV has no "sa": a J1939 frame's source address is its id's
// low byte.
package valuelog
