// Package valuelog writes decoded signal values as JSON lines or CSV, one
// line per value, for `candec decode` and for comparing candec with other
// decoders.
//
// # JSON lines
//
// Each line is an object with the frame's time in seconds ("t", exact to
// the microsecond as candump writes it, plus "ts" in nanoseconds), the
// arbitration ID as a decimal integer without flag bits ("id"), the bus
// interface ("bus"), "<message>.<signal>" ("signal"), the physical value
// ("value": an integer where the DBC's factor and offset are integers,
// otherwise a float; the strings "NaN", "Infinity" and "-Infinity" for
// IEEE specials), and where they apply "unit", "label" (the value-table
// entry) and "flags" (["out_of_range"]).
//
// # CSV
//
// The same fields as columns: t,ts,bus,id,signal,value,unit,label,flags.
package valuelog
