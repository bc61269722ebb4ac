package decoder

import "github.com/yukart/candec/dbc"

// Flags qualify a decoded value.
type Flags uint8

// Value flags.
const (
	// OutOfRange marks a physical value outside the DBC's Min..Max (where
	// Min < Max), an integer signal's as Tidy writes it: never NaN, which
	// is no point on the scale, but ±Inf beyond the range. The value is
	// kept as decoded, never clamped.
	OutOfRange Flags = 1 << iota
	// Exact marks a value whose physical value is an exact integer: the
	// signal is an integer with integral Factor and Offset, and Int holds
	// the physical value (within int64; see Value.Uint for large
	// unsigned values).
	Exact
	// Unsigned marks an Exact value that must be read as uint64 (Uint):
	// an unsigned raw value with Factor 1 and Offset 0 that does not fit
	// in int64.
	Unsigned
	// Float marks a value decoded from IEEE float32 or float64 bits.
	Float
	// Truncated marks a signal that does not fit in a frame shorter than
	// the DBC's length: it was not decoded, Phys is NaN and Raw is 0.
	Truncated
	// J1939 marks a value of a J1939 parameter group (dbc.Message.J1939):
	// SA holds the source address of its frame. Without it SA means
	// nothing.
	J1939
)

// Value is one decoded signal of one frame.
type Value struct {
	// Signal is the compiled signal this value belongs to.
	Signal *dbc.Signal
	// Raw is the raw bits as extracted: zero-extended for unsigned
	// signals, sign-extended (two's complement) for signed ones, the IEEE
	// bits for floats.
	Raw uint64
	// Int is the exact physical value when Flags has Exact (for an
	// Unsigned value, the same bits as Raw: use Uint); 0 otherwise.
	Int int64
	// Phys is the physical value raw × factor + offset, always set (NaN
	// for a Truncated value).
	Phys float64
	// Flags qualify the value.
	Flags Flags
	// SA is the source address (the ID's low byte) of the frame of a
	// J1939 value (Flags has J1939), whatever ID of its PGN the frame
	// had. It sits in what was padding: Value is no larger for it.
	SA uint8
}

// Uint returns the exact physical value as uint64 for an Exact,
// Unsigned value.
func (v *Value) Uint() uint64 { return v.Raw }
