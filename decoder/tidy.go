package decoder

import (
	"math"
	"strconv"
	"unsafe"

	"github.com/yukart/candec/dbc"
)

// Tidy returns v's physical value as candec writes it, with the binary
// noise of raw × factor + offset removed: a scaled integer signal is
// rounded to the decimal places of its factor and offset (factor 0.1,
// raw 7 gives 0.7, not 0.7000000000000001), and an IEEE float32 signal
// without scaling gives the float64 nearest to its shortest decimal
// form. Exact values, float64 signals and non-finite values are
// returned as they are.
//
// It is the number rule of the published envelopes, for every writer of
// decoded values (decode's JSON and CSV too), so that the same frame
// gives the same number everywhere.
func Tidy(v *Value) float64 {
	s := v.Signal
	switch {
	case s == nil || v.Flags&Exact != 0:
		return v.Phys
	case v.Flags&Float != 0:
		if s.Type == dbc.Float32 && s.Factor == 1 && s.Offset == 0 {
			return Shortest32(v.Phys)
		}
		return v.Phys
	}
	return TidyScaled(v.Phys, ScaleDecimals(s.Factor, s.Offset))
}

// TidyScaled rounds f to the decimal places given by scale (10^d, from
// ScaleDecimals); a scale of 0, or a value too large to round exactly,
// leaves f as it is.
func TidyScaled(f, scale float64) float64 {
	if scale > 0 {
		if x := f * scale; math.Abs(x) < 1<<53 {
			return math.Round(x) / scale
		}
	}
	return f
}

// Shortest32 returns the float64 nearest to the shortest decimal form of
// a float32 value.
func Shortest32(f float64) float64 {
	var buf [32]byte
	b := strconv.AppendFloat(buf[:0], f, 'g', -1, 32)
	if g, err := strconv.ParseFloat(unsafe.String(&b[0], len(b)), 64); err == nil {
		return g
	}
	return f
}

// ScaleDecimals returns 10^d for the fewest decimal places d (at most 9)
// that write factor and offset exactly, or 0 when there are none.
func ScaleDecimals(factor, offset float64) float64 {
	p := 1.0
	for range 10 {
		if nearInt(factor*p) && nearInt(offset*p) {
			return p
		}
		p *= 10
	}
	return 0
}

// nearInt reports whether x is an integer but for binary noise:
// products like 0.1 × 10 miss one by a few units in the last place. The
// tolerance is relative only: a product below one half, such as a
// factor of 1e-7 before it is scaled, is an integer only if it is 0.
func nearInt(x float64) bool {
	return math.Abs(x-math.Round(x)) <= math.Abs(x)*1e-14
}
