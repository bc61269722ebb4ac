package tune

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/yukart/candec/internal/base/numfmt"
	"github.com/yukart/candec/internal/lab/chart"
)

// Chart draws the plan for a person weighing a budget, in two panels:
//
//   - the error–budget curve: total error against the worst capture's
//     deliveries/s for the optimizer at every budget (its path), each
//     uniform cap and the base policy, with the budget as a line and
//     the plan marked;
//   - per signal, error against cost: each signal's deliveries/s and
//     RMS error (% of range) under the plan and under the base policy.
//
// It returns the picture and the size it is drawn at.
func (p *Plan) Chart() (chart.Drawer, vg.Length, vg.Length) {
	return chart.Stack{Plots: []*plot.Plot{p.curveChart(), p.signalChart()}}, 8 * vg.Inch, 8 * vg.Inch
}

func (p *Plan) curveChart() *plot.Plot {
	c := chart.New(fmt.Sprintf("Total error against cost, %d all-signal subscribers", p.Subscribers),
		"deliveries/s on the worst capture", "total error\n(sum of RMS error / range)")
	var path, uni plotter.XYs
	xmax, ymax := p.Budget, 0.0
	for _, pt := range p.Curve {
		path = append(path, plotter.XY{X: pt.Deliveries, Y: pt.Error})
		ymax = max(ymax, pt.Error)
	}
	for _, u := range p.Uniform {
		uni = append(uni, plotter.XY{X: u.Deliveries, Y: u.Error})
		xmax, ymax = max(xmax, u.Deliveries), max(ymax, u.Error)
	}
	slices.SortFunc(uni, func(a, b plotter.XY) int { return cmpDesc(b.X, a.X) })
	xmax, ymax = max(xmax, p.Base.Deliveries, p.Worst), max(ymax, p.Base.Error)
	// The path past the largest cost shown adds nothing but a flat line.
	path = append(path[:0:0], clipPath(path, xmax*1.1)...)
	chart.Line(c, path, "optimized, at every budget", chart.Colour(0), vg.Points(2))
	chart.Line(c, uni, "uniform caps ("+capRange(p.Uniform)+")", chart.Colour(1), vg.Points(2))
	chart.Points(c, uni, "", chart.Colour(1), draw.RingGlyph{}, vg.Points(3))
	chart.Points(c, plotter.XYs{{X: p.Base.Deliveries, Y: p.Base.Error}},
		fmt.Sprintf("base policy: %.3g at %s", p.Base.Error, numfmt.Thousands(p.Base.Deliveries)), chart.Colour(3), draw.SquareGlyph{}, vg.Points(3))
	chart.Points(c, plotter.XYs{{X: p.Worst, Y: p.TotalError}},
		fmt.Sprintf("the plan: %.3g at %s", p.TotalError, numfmt.Thousands(p.Worst)), chart.Colour(0), draw.CircleGlyph{}, vg.Points(3))
	c.X.Min, c.X.Max = 0, xmax*1.1
	c.Y.Min, c.Y.Max = 0, math.Max(ymax, 1e-9)*1.6
	budgetLine(c, plotter.XYs{{X: p.Budget, Y: 0}, {X: p.Budget, Y: c.Y.Max}}, p.Budget)
	c.X.Tick.Marker = chart.ThousandsTicks{}
	c.Y.Tick.Marker = chart.PlainTicks{}
	chart.LegendAt(c, true, false)
	c.Add(plotter.NewGrid())
	return c
}

// clipPath is path up to x, with the point at x where it crosses it.
func clipPath(path plotter.XYs, x float64) plotter.XYs {
	for i, pt := range path {
		if pt.X > x {
			return append(path[:i:i], plotter.XY{X: x, Y: path[max(i-1, 0)].Y})
		}
	}
	return path
}

func capRange(u []Point) string {
	if len(u) == 0 {
		return "none"
	}
	return u[len(u)-1].Name + " to " + u[0].Name
}

func (p *Plan) signalChart() *plot.Plot {
	c := chart.New("Per signal: error against cost, the plan and the base policy",
		"deliveries/s on the worst capture", "RMS error, % of range")
	var plan, base plotter.XYs
	ymax := 0.0
	for _, ch := range p.Choices {
		if ch.Policy.Publish {
			plan = append(plan, plotter.XY{X: slices.Max(ch.Deliveries), Y: ch.Error * 100})
		}
		if ch.BaseDeliveries > 0 || ch.BaseError > 0 {
			base = append(base, plotter.XY{X: ch.BaseDeliveries, Y: ch.BaseError * 100})
		}
		ymax = max(ymax, ch.Error*100, ch.BaseError*100)
	}
	chart.Points(c, base, "base policy", chart.Colour(1), draw.RingGlyph{}, vg.Points(3))
	chart.Points(c, plan, "the plan", chart.Colour(0), draw.CircleGlyph{}, vg.Points(3))
	c.Y.Min, c.Y.Max = 0, math.Max(ymax, 1e-9)*1.4
	c.X.Min = 0
	c.X.Tick.Marker = chart.ThousandsTicks{}
	c.Y.Tick.Marker = chart.PlainTicks{}
	chart.LegendAt(c, true, false)
	c.Add(plotter.NewGrid())
	return c
}
