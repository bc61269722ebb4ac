// Package numfmt formats the numbers candec's tables print: counts with
// thousands separators, CPU shares and latencies in milliseconds, the way
// the bus-bench report writes them.
package numfmt

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Thousands formats v rounded to an integer with thousands separators:
// 16300 → "16,300".
func Thousands(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return fmt.Sprint(v)
	}
	// 'f' writes any float in full, where an int64 would overflow.
	s := strconv.FormatFloat(math.Round(v), 'f', 0, 64)
	if s == "-0" {
		s = "0"
	}
	if rest, neg := strings.CutPrefix(s, "-"); neg {
		return "-" + group(rest)
	}
	return group(s)
}

// group puts thousands separators into the digits s.
func group(s string) string {
	var out []byte
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	return string(out)
}

// Count formats a count: "0", or the count with separators.
func Count(n uint64) string { return group(strconv.FormatUint(n, 10)) }

// Pct formats a CPU share: "22 %", "0.9 %".
func Pct(v float64) string {
	if v < 10 {
		return fmt.Sprintf("%.1f %%", v)
	}
	return fmt.Sprintf("%.0f %%", v)
}

// Ms formats a latency in milliseconds with the precision the report
// uses: "0.31", "8.7", "13", "1,472".
func Ms(v float64) string {
	switch {
	case v < 1:
		return fmt.Sprintf("%.2f", v)
	case v < 10:
		return fmt.Sprintf("%.1f", v)
	}
	return Thousands(v)
}
