package plot

import (
	"fmt"
	"image/color"
	"math"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/yukart/candec/internal/lab/chart"
)

// maxPoints is how many points a raw line keeps: more than a picture's
// width shows, few enough that an SVG of a long drive stays small.
const maxPoints = 3000

// Panel is one panel of the picture: the signals of one unit, or one
// signal with a value table.
type Panel struct {
	// Unit is the panel's unit ("" for none).
	Unit string
	// Series are its signals.
	Series []*Series
	// Steps is set for a value-table signal's panel.
	Steps bool
}

// Panels groups d's series: one panel per unit, in the order the units
// first appear, and one for each signal with a value table (its labels
// are its y axis, which it cannot share).
func (d *Data) Panels() []Panel {
	var out []Panel
	byUnit := map[string]int{}
	for _, s := range d.Series {
		if len(s.Signal.Values) > 0 {
			out = append(out, Panel{Unit: s.Signal.Unit, Series: []*Series{s}, Steps: true})
			continue
		}
		i, ok := byUnit[s.Signal.Unit]
		if !ok {
			i = len(out)
			byUnit[s.Signal.Unit] = i
			out = append(out, Panel{Unit: s.Signal.Unit})
		}
		out[i].Series = append(out[i].Series, s)
	}
	return out
}

// Chart returns the picture of d and its size: the panels one above the
// other, their time axes aligned.
func (d *Data) Chart() (chart.Drawer, vg.Length, vg.Length) {
	panels := d.Panels()
	stack := chart.Stack{LegendWidth: 2.4 * vg.Inch}
	end := 0.0
	for _, s := range d.Series {
		if n := len(s.Raw); n > 0 {
			end = math.Max(end, s.Raw[n-1].T)
		}
	}
	for i, pn := range panels {
		x := ""
		if i == len(panels)-1 {
			x = "time since the first frame (s)"
		}
		title := ""
		if i == 0 {
			title = "Signals"
			if d.Policy != "" {
				title = "Signals, raw and as published under " + d.Policy
			}
		}
		p := chart.New(title, x, yLabel(pn))
		p.X.Min, p.X.Max = 0, math.Max(end, 1e-3)
		for j, s := range pn.Series {
			c := chart.Colour(j)
			if pn.Steps {
				c = chart.Colour(i % len(chart.Palette))
			}
			addSeries(p, s, c, pn.Steps)
		}
		if pn.Steps {
			p.Y.Tick.Marker = labelTicks(pn.Series[0])
			pad := 0.5
			lo, hi := rangeOf(pn.Series[0].Raw)
			p.Y.Min, p.Y.Max = lo-pad, hi+pad
		}
		p.Legend.TextStyle.Font.Size = vg.Points(9)
		p.X.Tick.Marker = chart.PlainTicks{}
		p.Add(plotter.NewGrid())
		stack.Plots = append(stack.Plots, p)
	}
	h := vg.Length(len(panels))*2*vg.Inch + 0.6*vg.Inch
	return stack, 10 * vg.Inch, h
}

// addSeries draws series s on p in colour c: its raw values as a line
// (stepped for a value table's signal), the gaps where values are NaN
// or ±Inf shaded, and the published points over them.
func addSeries(p *gplot.Plot, s *Series, c color.Color, steps bool) {
	name := s.Signal.Name
	// A NaN or ±Inf value is no point on the axis: the line
	// breaks there, and the gap is shaded, so that a reader sees
	// values are missing rather than a line drawn across them.
	segs, gaps, bad := split(s.Raw)
	var bands *chart.Bands
	if bad > 0 {
		bands = &chart.Bands{Spans: gaps, Color: chart.Light(c, 60)}
		p.Add(bands) // under the lines
	}
	lc := c
	if s.Published != nil {
		// Under a policy the raw line is the background the published
		// points are read against.
		lc = chart.Light(c, 110)
	}
	var raw *plotter.Line
	for _, seg := range segs {
		l := chart.Line(p, xys(decimate(seg, max(3, maxPoints*len(seg)/len(s.Raw)))), "", lc, vg.Points(1))
		if l != nil && steps {
			l.StepStyle = plotter.PostStep
		}
		if raw == nil {
			raw = l
		}
	}
	if s.Published != nil {
		name += " (raw)"
	}
	if raw != nil {
		p.Legend.Add(name, raw)
	}
	if bands != nil {
		p.Legend.Add(fmt.Sprintf("  %d NaN/±Inf: gaps shaded", bad), bands)
	}
	if s.Published != nil {
		// Not chart.Points: a policy that published nothing still has
		// its legend entry, "published: 0 points".
		pub, err := plotter.NewScatter(xys(s.Published))
		if err == nil {
			pub.GlyphStyle = draw.GlyphStyle{Color: c, Radius: vg.Points(1.8), Shape: draw.CircleGlyph{}}
			p.Add(pub)
			p.Legend.Add(fmt.Sprintf("  published: %d points", len(s.Published)), pub)
		}
	}
}

// yLabel names a panel's y axis: the unit, or the value-table signal.
func yLabel(pn Panel) string {
	if pn.Steps {
		return pn.Series[0].Signal.Name
	}
	if pn.Unit == "" {
		return "(no unit)"
	}
	return pn.Unit
}

// labelTicks marks a value-table signal's labelled values that its
// values reach, or fall between, with their labels.
func labelTicks(s *Series) gplot.Ticker {
	lo, hi := rangeOf(s.Raw)
	var ts []gplot.Tick
	for _, v := range s.Signal.Values {
		if f := float64(v.Value); f >= lo-0.5 && f <= hi+0.5 {
			ts = append(ts, gplot.Tick{Value: f, Label: fmt.Sprintf("%s (%d)", v.Label, v.Value)})
		}
	}
	if len(ts) == 0 {
		return gplot.DefaultTicks{}
	}
	return gplot.ConstantTicks(ts)
}

func rangeOf(ps []Point) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, p := range ps {
		if !math.IsNaN(p.V) && !math.IsInf(p.V, 0) {
			lo, hi = math.Min(lo, p.V), math.Max(hi, p.V)
		}
	}
	if lo > hi {
		return 0, 1
	}
	return lo, hi
}

// split cuts ps at its values that are not finite (NaN, ±Inf): the runs
// of finite points between them, the time spans the cuts leave (from the
// last finite point before to the first after, or to the bad point
// itself at either end), and how many points were cut.
func split(ps []Point) (segs [][]Point, gaps [][2]float64, bad int) {
	start := 0
	gapFrom := math.NaN() // start of the open gap; NaN: none open
	for i, p := range ps {
		if finite(p.V) {
			if !math.IsNaN(gapFrom) {
				gaps = append(gaps, [2]float64{gapFrom, p.T})
				gapFrom = math.NaN()
			}
			continue
		}
		bad++
		if i > start {
			segs = append(segs, ps[start:i])
		}
		start = i + 1
		if math.IsNaN(gapFrom) {
			gapFrom = p.T
			if i > 0 {
				gapFrom = ps[i-1].T
			}
		}
	}
	if start < len(ps) {
		segs = append(segs, ps[start:])
	}
	if !math.IsNaN(gapFrom) {
		gaps = append(gaps, [2]float64{gapFrom, ps[len(ps)-1].T})
	}
	return segs, gaps, bad
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

func xys(ps []Point) plotter.XYs {
	out := make(plotter.XYs, 0, len(ps))
	for _, p := range ps {
		if !math.IsNaN(p.V) && !math.IsInf(p.V, 0) {
			out = append(out, plotter.XY{X: p.T, Y: p.V})
		}
	}
	return out
}

// decimate keeps at most about n points of ps: in each bucket of
// consecutive points its first, lowest and highest, in time order, so a
// spike survives and a step keeps its edge.
func decimate(ps []Point, n int) []Point {
	if len(ps) <= n || n < 3 {
		return ps
	}
	per := (len(ps) + n/3 - 1) / (n / 3)
	out := make([]Point, 0, n+3)
	for i := 0; i < len(ps); i += per {
		b := ps[i:min(i+per, len(ps))]
		lo, hi := 0, 0
		for j := range b {
			if b[j].V < b[lo].V {
				lo = j
			}
			if b[j].V > b[hi].V {
				hi = j
			}
		}
		keep := []int{0, lo, hi}
		if lo > hi {
			keep[1], keep[2] = hi, lo
		}
		last := -1
		for _, k := range keep {
			if k != last {
				out = append(out, b[k])
				last = k
			}
		}
	}
	return append(out, ps[len(ps)-1])
}
