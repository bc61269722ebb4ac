// Package numfmt formats the numbers candec's tables print: counts with
// thousands separators, CPU shares and latencies in milliseconds, the way
// the bus-bench report writes them.
package numfmt

import (
	"fmt"
	"math"
)

// Thousands formats v rounded to an integer with thousands separators:
// 16300 → "16,300".
func Thousands(v float64) string {
	n := int64(math.Round(v))
	neg := n < 0
	if neg {
		n = -n
	}
	s := fmt.Sprint(n)
	var out []byte
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	if neg {
		return "-" + string(out)
	}
	return string(out)
}

// Count formats a count: "0", or the count with separators.
func Count(n uint64) string { return Thousands(float64(n)) }

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
