package decoder

import (
	"errors"
	"fmt"
	"math"

	"github.com/yukart/candec/dbc"
)

// Errors of the encoders.
var (
	// ErrLayout reports a signal whose bits do not fit in a CAN FD frame
	// (a start bit or length the decoder can never decode).
	ErrLayout = errors.New("decoder: signal layout outside 64 bytes")
	// ErrShortData reports a data slice too short for the signal.
	ErrShortData = errors.New("decoder: data too short for signal")
	// ErrRawRange reports a physical value that no raw value of the
	// signal's length represents. EncodePhys has then written the
	// nearest raw value (saturated), except for NaN, where it writes
	// nothing.
	ErrRawRange = errors.New("decoder: value outside the signal's raw range")
)

// EncodeRaw writes the low Length bits of raw into data at the signal's
// position, leaving the other bits of data as they are. Signed raw values
// are given in two's complement (uint64(int64 value)); float signals take
// their IEEE bits. It is the exact inverse of Decode's extraction, for
// tests and capture generators, and not tuned for speed.
func EncodeRaw(s *dbc.Signal, data []byte, raw uint64) error {
	first, last, ok := span(s)
	if !ok {
		return fmt.Errorf("%w: %s start %d length %d", ErrLayout, name(s), s.Start, s.Length)
	}
	if last>>3 >= len(data) {
		return fmt.Errorf("%w: %s needs %d bytes, have %d", ErrShortData, name(s), last>>3+1, len(data))
	}
	// Bit k of raw (k = 0 is the LSB) sits at linear bit first+k for
	// Intel and at last−k for Motorola (see span for the numbering).
	for k := range s.Length {
		bit := byte(raw >> k & 1)
		var i, b int
		if s.Order == dbc.BigEndian {
			x := last - k
			i, b = x>>3, 7-x&7
		} else {
			x := first + k
			i, b = x>>3, x&7
		}
		data[i] = data[i]&^(1<<b) | bit<<b
	}
	return nil
}

// EncodePhys writes the raw value that represents the physical value phys
// and returns it. For integer signals the raw value is
// (phys − Offset) / Factor rounded to the nearest integer (halves away
// from zero); a result outside the raw range of the signal's length and
// sign is saturated to the nearest end, written, and reported with an
// error wrapping ErrRawRange. For float signals the raw value is the
// IEEE bits of (phys − Offset) / Factor (float32 rounds to nearest).
//
// With Factor 0 every raw value decodes to Offset: raw 0 is written, with
// ErrRawRange unless phys is Offset. Physical values pass through
// float64, so 64-bit integers beyond 2⁵³ lose precision: use EncodeRaw
// for those.
func EncodePhys(s *dbc.Signal, data []byte, phys float64) (uint64, error) {
	if _, _, ok := span(s); !ok {
		return 0, fmt.Errorf("%w: %s start %d length %d", ErrLayout, name(s), s.Start, s.Length)
	}
	x := phys - s.Offset
	if s.Factor != 0 {
		x /= s.Factor
	} else {
		x = 0 // every raw value decodes to Offset
	}
	var raw uint64
	var rangeErr error
	switch s.Type {
	case dbc.Float32:
		raw = uint64(math.Float32bits(float32(x)))
	case dbc.Float64:
		raw = math.Float64bits(x)
	default:
		if math.IsNaN(x) {
			return 0, fmt.Errorf("%w: %s = NaN", ErrRawRange, name(s))
		}
		var saturated bool
		raw, saturated = toRaw(math.Round(x), s.Length, s.Signed)
		if saturated || (s.Factor == 0 && phys != s.Offset) {
			rangeErr = fmt.Errorf("%w: %s = %g (wrote raw %d)", ErrRawRange, name(s), phys, rawInt(raw, s))
		}
	}
	if err := EncodeRaw(s, data, raw); err != nil {
		return 0, err
	}
	return raw, rangeErr
}

// toRaw converts the integer r to an n-bit raw value, saturating at the
// ends of the range, and returns it in two's complement (sign-extended
// to 64 bits for signed signals, as Decode returns it).
func toRaw(r float64, n int, signed bool) (raw uint64, saturated bool) {
	if signed {
		lo, hi := -math.Ldexp(1, n-1), math.Ldexp(1, n-1) // hi is exclusive
		switch {
		case r < lo:
			return uint64(int64(-1) << (n - 1)), true
		case r >= hi:
			return uint64(1)<<(n-1) - 1, true
		}
		return uint64(int64(r)), false
	}
	hi := math.Ldexp(1, n) // exclusive
	switch {
	case r < 0:
		return 0, true
	case r >= hi:
		return math.MaxUint64 >> (64 - n), true
	}
	return uint64(r), false
}

// rawInt formats raw as the signal's integer for messages.
func rawInt(raw uint64, s *dbc.Signal) any {
	if s.Signed {
		return int64(raw)
	}
	return raw
}

// name returns the signal's full name, or its bare name when it belongs
// to no message yet.
func name(s *dbc.Signal) string {
	if s.Message == nil {
		return s.Name
	}
	return s.FullName()
}
