package tune

import (
	"fmt"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/yukart/candec/internal/base/defaults"
	"github.com/yukart/candec/internal/base/numfmt"
	"github.com/yukart/candec/internal/lab/chart"
)

// ComfortableDeliveriesPerS is the deliveries/s up to which the report's
// broker stayed comfortable: "up to ~22,000 deliveries/s it stays under
// half a core with p99 near 30 ms". It is the default budget of the chart.
const ComfortableDeliveriesPerS = 22000

// ChartConfig says what the chart shows beside the report's figures.
type ChartConfig struct {
	// Policy names the policy in the title ("": the default policy).
	Policy string
	// Budget is the deliveries/s the broker may take; 0 means
	// ComfortableDeliveriesPerS.
	Budget float64
}

// logSpread is the ratio of the largest to the smallest rate above which
// the per-signal panel goes to a log axis: past it, a linear axis shows
// the slow signals as nothing.
const logSpread = 20

// Chart draws the report for a person deciding on a policy, in three
// panels, the first two over the same x axis, every signal ranked
// costliest first:
//
//   - per signal, envelopes/s before the policy (every decoded value, as
//     a decoder without a policy would publish them) and after it, on a
//     log axis when the rates spread wide;
//   - the same signals added up as deliveries/s (envelopes/s ×
//     subscribers), before and after, against the budget: where the
//     "after" line ends is what the broker takes, and where "before"
//     crosses the budget is how many signals would fit uncapped;
//   - per signal, its RMS error (% of range) against its deliveries/s:
//     what the policy loses for what it saves.
//
// The budget is a total, so it is drawn only on the middle panel, whose
// axis is deliveries/s; on the per-signal axis it would mean nothing.
// The text report names the signals; the chart shows their shape.
//
// It returns the picture and the size it is drawn at.
func (r *Report) Chart(cfg ChartConfig) (chart.Drawer, vg.Length, vg.Length) {
	cfg.Budget = defaults.Positive(cfg.Budget, ComfortableDeliveriesPerS)
	rows := r.chartRows()
	return chart.Stack{Plots: []*plot.Plot{r.perSignal(rows, cfg.Policy), r.cumulative(rows, cfg.Budget), r.errorCost()}},
		8 * vg.Inch, 11 * vg.Inch
}

// errorCost is the third panel: each published signal's RMS error (% of
// its range) against its deliveries/s, what the policy loses for what
// it saves.
func (r *Report) errorCost() *plot.Plot {
	p := chart.New("Per signal: RMS error against cost", fmt.Sprintf("deliveries/s (envelopes/s × %d subscribers)", r.Subscribers),
		"RMS error, % of range")
	var xy plotter.XYs
	ymax := 0.0
	for _, s := range r.Signals {
		xy = append(xy, plotter.XY{X: s.EnvelopesPerS * float64(r.Subscribers), Y: s.Fidelity.RMSRange * 100})
		ymax = math.Max(ymax, s.Fidelity.RMSRange*100)
	}
	chart.Points(p, xy, fmt.Sprintf("a signal (total error %.3g)", r.TotalError), chart.Colour(0), draw.CircleGlyph{}, vg.Points(3))
	p.X.Min, p.Y.Min, p.Y.Max = 0, 0, math.Max(ymax, 1e-9)*1.4
	p.X.Tick.Marker = chart.ThousandsTicks{}
	p.Y.Tick.Marker = chart.PlainTicks{}
	chart.LegendAt(p, true, false)
	p.Add(plotter.NewGrid())
	return p
}

// row is one signal of the chart: before and after the policy, in
// envelopes/s.
type row struct {
	name          string
	before, after float64
	published     bool
}

// chartRows returns every signal, published ones in the report's order
// (costliest first), then those the policy leaves out.
func (r *Report) chartRows() []row {
	out := make([]row, 0, len(r.Signals)+len(r.Unpublished))
	for _, s := range r.Signals {
		out = append(out, row{s.Name, s.FramesPerS, s.EnvelopesPerS, true})
	}
	for _, s := range r.Unpublished {
		out = append(out, row{s.Name, s.FramesPerS, 0, false})
	}
	return out
}

// perSignal is the upper panel: each signal's envelopes/s before and
// after, x its rank.
func (r *Report) perSignal(rows []row, policy string) *plot.Plot {
	title := "Envelopes/s per signal, before and after the default policy"
	if policy != "" {
		title = fmt.Sprintf("Envelopes/s per signal, before and after the policy %s", policy)
	}
	p := chart.New(title, "", "envelopes/s per signal")
	lo, hi := math.Inf(1), 0.0
	for _, rw := range rows {
		for _, v := range []float64{rw.before, rw.after} {
			if v > 0 {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
	}
	if hi == 0 { // nothing carried: an empty but valid scale
		lo, hi = 1, 10
	}
	log := hi/lo > logSpread
	if log {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = chart.LogTicks{}
		// Down to the power of ten below the slowest; up to five times
		// the fastest, room for the legend above the points.
		p.Y.Min, p.Y.Max = math.Pow(10, math.Floor(math.Log10(lo))), hi*5
		p.Y.Label.Text += "\n(log scale)"
	} else {
		p.Y.Min, p.Y.Max = 0, hi*1.4
		p.Y.Tick.Marker = chart.PlainTicks{}
	}
	var before, after, dropped plotter.XYs
	for i, rw := range rows {
		x := float64(i + 1)
		if rw.before > 0 {
			before = append(before, plotter.XY{X: x, Y: rw.before})
		}
		switch {
		case !rw.published:
			dropped = append(dropped, plotter.XY{X: x, Y: p.Y.Min})
		case rw.after > 0 || !log:
			after = append(after, plotter.XY{X: x, Y: rw.after})
		default: // nothing published has no place on a log axis
			dropped = append(dropped, plotter.XY{X: x, Y: p.Y.Min})
		}
	}
	chart.Points(p, before, "before: every decoded value (no policy)", chart.Colour(1), draw.RingGlyph{}, vg.Points(3))
	chart.Points(p, after, "after: what the policy publishes", chart.Colour(0), draw.CircleGlyph{}, vg.Points(3))
	chart.Points(p, dropped, "after: nothing published", chart.Colour(3), draw.CrossGlyph{}, vg.Points(3))
	p.X.Min, p.X.Max = 0, math.Max(float64(len(rows)), 1)+1
	p.X.Tick.Marker = chart.PlainTicks{}
	chart.LegendAt(p, true, false)
	p.Add(plotter.NewGrid())
	return p
}

// cumulative is the lower panel: deliveries/s added up signal by signal
// in the upper panel's order, before and after, and the budget.
func (r *Report) cumulative(rows []row, budget float64) *plot.Plot {
	subs := float64(r.Subscribers)
	p := chart.New(fmt.Sprintf("Deliveries/s to %d all-signal subscribers, added up signal by signal", r.Subscribers),
		"signals, costliest first",
		fmt.Sprintf("deliveries/s\n(envelopes/s × %d subscribers)", r.Subscribers))
	before := make(plotter.XYs, 0, len(rows)+1)
	after := make(plotter.XYs, 0, len(rows)+1)
	before = append(before, plotter.XY{})
	after = append(after, plotter.XY{})
	var b, a float64
	for i, rw := range rows {
		b += rw.before * subs
		a += rw.after * subs
		before = append(before, plotter.XY{X: float64(i + 1), Y: b})
		after = append(after, plotter.XY{X: float64(i + 1), Y: a})
	}
	// The same x axis as the panel above; headroom over the highest
	// line for the legend.
	p.X.Min, p.X.Max = 0, math.Max(float64(len(rows)), 1)+1
	p.Y.Min, p.Y.Max = 0, math.Max(math.Max(b, a), budget)*1.5

	budgetLine(p, plotter.XYs{{X: 0, Y: budget}, {X: p.X.Max, Y: budget}}, budget)
	chart.Line(p, before, fmt.Sprintf("before: %s deliveries/s", numfmt.Thousands(b)), chart.Colour(1), vg.Points(2))
	chart.Line(p, after, fmt.Sprintf("after: %s deliveries/s (%.0f %% of the budget)", numfmt.Thousands(a), a/budget*100), chart.Colour(0), vg.Points(2))
	p.X.Tick.Marker = chart.PlainTicks{}
	p.Y.Tick.Marker = chart.ThousandsTicks{}
	chart.LegendAt(p, true, true)
	p.Add(plotter.NewGrid())
	return p
}

// budgetLine draws the budget, budget deliveries/s, as a dashed line
// through xy.
func budgetLine(p *plot.Plot, xy plotter.XYs, budget float64) {
	chart.Line(p, xy, fmt.Sprintf("budget: %s deliveries/s", numfmt.Thousands(budget)), chart.Colour(2), vg.Points(1.5), vg.Points(6), vg.Points(3))
}
