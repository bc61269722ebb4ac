package chart

import (
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// The series a chart draws. Each adds itself to p (and to its legend
// when named) and returns what it added, for a caller to restyle, or
// nil when gonum refuses the data (a value that is not finite): a
// series that cannot be drawn is left out, not the picture.

// Points adds xy as a scatter of colour c, glyphs of shape and radius r,
// named in the legend unless name is "". Nothing is added for no points.
func Points(p *plot.Plot, xy plotter.XYs, name string, c color.Color, shape draw.GlyphDrawer, r vg.Length) *plotter.Scatter {
	if len(xy) == 0 {
		return nil
	}
	sc, err := plotter.NewScatter(xy)
	if err != nil {
		return nil
	}
	sc.GlyphStyle = draw.GlyphStyle{Color: c, Radius: r, Shape: shape}
	p.Add(sc)
	if name != "" {
		p.Legend.Add(name, sc)
	}
	return sc
}

// Line adds xy as a line of colour c and width w, named in the legend
// unless name is ""; dashes, if any, alternate drawn and blank lengths
// (a budget, a boundary). Set StepStyle on the result for steps.
func Line(p *plot.Plot, xy plotter.XYs, name string, c color.Color, w vg.Length, dashes ...vg.Length) *plotter.Line {
	l, err := plotter.NewLine(xy)
	if err != nil {
		return nil
	}
	l.Color, l.Width, l.Dashes = c, w, append(l.Dashes, dashes...)
	p.Add(l)
	if name != "" {
		p.Legend.Add(name, l)
	}
	return l
}

// HBars adds vals as horizontal bars of colour c and thickness w, the
// i-th at y = i moved up by offset, named in the legend.
func HBars(p *plot.Plot, vals plotter.Values, name string, c color.Color, w, offset vg.Length) *plotter.BarChart {
	b, err := plotter.NewBarChart(vals, w)
	if err != nil {
		return nil
	}
	b.Horizontal, b.Offset, b.Color, b.LineStyle.Width = true, offset, c, 0
	p.Add(b)
	p.Legend.Add(name, b)
	return b
}

// Labels adds texts at xy, each at size and aligned to its point by xa
// and ya (draw.XLeft, draw.YBottom: gonum's default); nothing unless
// there is a point for each text.
func Labels(p *plot.Plot, xy plotter.XYs, texts []string, size vg.Length, xa draw.XAlignment, ya draw.YAlignment) *plotter.Labels {
	if len(xy) != len(texts) { // gonum would panic
		return nil
	}
	l, err := plotter.NewLabels(plotter.XYLabels{XYs: xy, Labels: texts})
	if err != nil {
		return nil
	}
	for i := range l.TextStyle {
		l.TextStyle[i].Font.Size, l.TextStyle[i].XAlign, l.TextStyle[i].YAlign = size, xa, ya
	}
	p.Add(l)
	return l
}

// Bands shades spans of the x axis, each [from, to], over the whole
// height of the data area: a region a chart names, or where a signal had
// no values. A span too narrow to see is drawn 2 points wide. As a
// legend entry it is a shaded box.
type Bands struct {
	Spans [][2]float64
	Color color.Color
}

// Plot draws the bands.
func (b *Bands) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	for _, sp := range b.Spans {
		x0, x1 := trX(sp[0]), trX(sp[1])
		if x1-x0 < vg.Points(2) {
			mid := (x0 + x1) / 2
			x0, x1 = mid-vg.Points(1), mid+vg.Points(1)
		}
		c.FillPolygon(b.Color, c.ClipPolygonXY([]vg.Point{{X: x0, Y: c.Min.Y}, {X: x1, Y: c.Min.Y}, {X: x1, Y: c.Max.Y}, {X: x0, Y: c.Max.Y}}))
	}
}

// Thumbnail draws the bands' legend entry: a shaded box.
func (b *Bands) Thumbnail(c *draw.Canvas) {
	c.FillPolygon(b.Color, []vg.Point{{X: c.Min.X, Y: c.Min.Y}, {X: c.Max.X, Y: c.Min.Y}, {X: c.Max.X, Y: c.Max.Y}, {X: c.Min.X, Y: c.Max.Y}})
}
