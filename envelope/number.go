package envelope

import "strconv"

// AppendFloat appends a finite float as an envelope's JSON carries it:
// the shortest form that parses back to the same float64, with ".0"
// added when that form looks like an integer, so that it reads back as a
// float. Other writers of decoded values (candec decode) use it so that
// a number reads the same everywhere.
func AppendFloat(dst []byte, f float64) []byte {
	n := len(dst)
	dst = strconv.AppendFloat(dst, f, 'g', -1, 64)
	for _, c := range dst[n:] {
		if c == '.' || c == 'e' {
			return dst
		}
	}
	return append(dst, ".0"...)
}

// NonFinite returns the "nonfinite" text of f: "NaN", "+Inf" or "-Inf",
// or "" for a finite f.
func NonFinite(f float64) string {
	switch {
	case f-f == 0: // finite: ±Inf - ±Inf and NaN - NaN are NaN
		return ""
	case f != f:
		return "NaN"
	case f > 0:
		return "+Inf"
	}
	return "-Inf"
}
