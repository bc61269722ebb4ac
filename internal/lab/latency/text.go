package latency

import (
	"fmt"
	"io"
	"strings"
)

// DistributionQuantiles are the rows of WriteDistribution.
var DistributionQuantiles = []float64{0.10, 0.25, 0.50, 0.75, 0.90, 0.95, 0.99, 0.999}

// barWidth is the length of the longest bar of WriteHistogram.
const barWidth = 60

// WriteHistogram writes a text histogram of h in rows equal-width bins
// from the smallest to the largest sample, each row the bin's lower
// bound in milliseconds, its count and a bar:
//
//	0.029 ms [689  ] |∎∎∎∎∎∎∎∎∎∎∎∎∎∎∎∎∎∎∎∎∎∎∎∎∎∎∎∎∎∎∎
//	0.087 ms [37   ] |∎∎
//
// Samples are placed by their bucket's midpoint, so a bin edge is as
// precise as the histogram (see the package comment). An empty histogram
// writes one line saying so.
func (h *Histogram) WriteHistogram(w io.Writer, rows int) error {
	if h.n == 0 {
		_, err := fmt.Fprintln(w, "    (no samples)")
		return err
	}
	rows = max(rows, 1)
	lo, hi := h.min, h.max
	width := (hi - lo) / int64(rows)
	if width == 0 {
		rows, width = 1, 1
	}
	bins := make([]uint64, rows)
	for i, c := range h.counts {
		if c == 0 {
			continue
		}
		mid := midpoint(i)
		mid = min(max(mid, lo), hi)
		b := int((mid - lo) / width)
		bins[min(b, rows-1)] += c
	}
	var top uint64
	for _, c := range bins {
		top = max(top, c)
	}
	countWidth := len(fmt.Sprint(top))
	for i, c := range bins {
		bar := int(float64(c) / float64(top) * barWidth)
		from := lo + int64(i)*width
		if _, err := fmt.Fprintf(w, "  %9.3f ms [%-*d] |%s\n", float64(from)/1e6, countWidth, c, strings.Repeat("∎", bar)); err != nil {
			return err
		}
	}
	return nil
}

// midpoint returns the middle value of bucket i.
func midpoint(i int) int64 {
	if i < 1<<subBits {
		return int64(i)
	}
	lo := highest(i-1) + 1
	return lo + (highest(i)-lo)/2
}

// WriteDistribution writes the percentile table of h, one row per
// DistributionQuantiles entry, then the largest sample:
//
//	50% in under 0.052 ms
//	99% in under 0.608 ms
func (h *Histogram) WriteDistribution(w io.Writer) error {
	if h.n == 0 {
		_, err := fmt.Fprintln(w, "    (no samples)")
		return err
	}
	for _, q := range DistributionQuantiles {
		if _, err := fmt.Fprintf(w, "  %6s in under %.3f ms\n", percent(q), float64(h.Quantile(q))/1e6); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintf(w, "  %6s %.3f ms (%d samples)\n", "max", float64(h.max)/1e6, h.n)
	return err
}

// percent formats a quantile as a percentage without trailing zeros:
// 0.5 → "50%", 0.999 → "99.9%".
func percent(q float64) string {
	s := fmt.Sprintf("%.1f", q*100)
	s = strings.TrimSuffix(s, ".0")
	return s + "%"
}
