package tune

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/yukart/candec/internal/base/numfmt"
)

// AtCost is the optimizer's least error at a worst-recording cost of at
// most d deliveries per second: the last point of its path within d
// (the least-cost start when none is).
func (p *Plan) AtCost(d float64) Point {
	best := p.Curve[0]
	for _, c := range p.Curve {
		if c.Deliveries <= d*(1+1e-9) {
			best = c
		}
	}
	return best
}

// BestUniform is the uniform cap with the least error whose worst
// recording is within the budget, and false when none is.
func (p *Plan) BestUniform() (Point, bool) {
	var best Point
	found := false
	for _, u := range p.Uniform {
		if u.Deliveries <= p.Budget && (!found || u.Error < best.Error) {
			best, found = u, true
		}
	}
	return best, found
}

// WriteText writes the plan for a person: whether the budget is met,
// the comparisons, then the top signals by deliveries (all when top ≤ 0).
func (p *Plan) WriteText(w io.Writer, top int) error {
	met := "met"
	if !p.Met {
		met = "NOT met: the least-cost policy is written"
	}
	fmt.Fprintf(w, "budget: %s deliveries/s to %d subscribers: %s\n", numfmt.Thousands(p.Budget), p.Subscribers, met)
	for i, c := range p.Captures {
		fmt.Fprintf(w, "  %s: %s deliveries/s\n", c, numfmt.Thousands(p.Deliveries[i]))
	}
	line := func(what string, pt Point) {
		fmt.Fprintf(w, "%-34s total error %-8.4g at %8s deliveries/s, %d enum transitions missed\n",
			what+":", pt.Error, numfmt.Thousands(pt.Deliveries), pt.MissedEnum)
	}
	line("optimized", Point{Deliveries: p.Worst, Error: p.TotalError, MissedEnum: p.MissedEnum})
	line("base policy", p.Base)
	line("optimized at the base's cost", p.AtCost(p.Base.Deliveries))
	if u, ok := p.BestUniform(); ok {
		line("best uniform cap ("+u.Name+")", u)
		line("optimized at that cap's cost", p.AtCost(u.Deliveries))
	}
	ch := slices.Clone(p.Choices)
	slices.SortStableFunc(ch, func(a, b Choice) int { return cmpDesc(slices.Max(a.Deliveries), slices.Max(b.Deliveries)) })
	n := len(ch)
	if top > 0 && top < n {
		n = top
	}
	fmt.Fprintf(w, "\ntop %d of %d signals by deliveries/s:\n", n, len(ch))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "signal\tdeliveries/s\trms error\tpolicy\tpinned\t")
	for _, c := range ch[:n] {
		fmt.Fprintf(tw, "%s\t%.1f\t%s\t%s\t%s\t\n", c.Signal, slices.Max(c.Deliveries), pct(c.Error), c.Text, strings.Join(c.Pins, ", "))
	}
	return tw.Flush()
}

func cmpDesc(a, b float64) int {
	switch {
	case a > b:
		return -1
	case a < b:
		return 1
	}
	return 0
}
