package chart

import (
	"bytes"
	"image/color"
	"math"
	"slices"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/recorder"

	"github.com/yukart/candec/internal/lab/chart/charttest"
)

// TestSeries: each series primitive draws what it is given and names it
// in the legend when named; a series gonum refuses (no points, a value
// that is not finite) is left out, the picture still drawn.
func TestSeries(t *testing.T) {
	xy := plotter.XYs{{X: 1, Y: 1}, {X: 2, Y: 3}}
	nan := plotter.XYs{{X: 1, Y: math.NaN()}}
	ring := draw.RingGlyph{}
	tests := []struct {
		name       string
		add        func(p *plot.Plot) bool // whether the primitive returned what it added
		added      bool
		texts, not []string
	}{
		{"points", func(p *plot.Plot) bool { return Points(p, xy, "pts", Colour(0), ring, vg.Points(3)) != nil }, true, []string{"pts"}, nil},
		{"points unnamed", func(p *plot.Plot) bool { return Points(p, xy, "", Colour(0), ring, vg.Points(3)) != nil }, true, nil, nil},
		{"no points", func(p *plot.Plot) bool { return Points(p, nil, "none", Colour(0), ring, vg.Points(3)) != nil }, false, nil, []string{"none"}},
		{"points not finite", func(p *plot.Plot) bool { return Points(p, nan, "nan", Colour(0), ring, vg.Points(3)) != nil }, false, nil, []string{"nan"}},
		{"line", func(p *plot.Plot) bool { return Line(p, xy, "line", Colour(1), vg.Points(2)) != nil }, true, []string{"line"}, nil},
		{"line not finite", func(p *plot.Plot) bool { return Line(p, nan, "nan", Colour(1), vg.Points(2)) != nil }, false, nil, []string{"nan"}},
		{"bars", func(p *plot.Plot) bool {
			return HBars(p, plotter.Values{1, 2}, "bars", Colour(0), vg.Points(8), 0) != nil
		}, true, []string{"bars"}, nil},
		{"bars not finite", func(p *plot.Plot) bool {
			return HBars(p, plotter.Values{math.Inf(1)}, "inf", Colour(0), vg.Points(8), 0) != nil
		}, false, nil, []string{"inf"}},
		{"labels", func(p *plot.Plot) bool {
			return Labels(p, xy, []string{"a", "b"}, vg.Points(9), draw.XCenter, draw.YTop) != nil
		}, true, []string{"a", "b"}, nil},
		{"labels too few", func(p *plot.Plot) bool {
			return Labels(p, xy, []string{"a"}, vg.Points(9), draw.XLeft, draw.YBottom) != nil
		}, false, nil, []string{"a"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := New("title", "x", "y")
			p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 0, 5, 0, 5
			if got := tc.add(p); got != tc.added {
				t.Errorf("returned a series: %v, want %v", got, tc.added)
			}
			var buf bytes.Buffer
			if err := Write(&buf, p, 4*vg.Inch, 3*vg.Inch, SVG); err != nil {
				t.Fatal(err)
			}
			texts := charttest.Check(t, buf.Bytes(), append([]string{"title", "x", "y"}, tc.texts...)...)
			for _, n := range tc.not {
				if slices.Contains(texts, n) {
					t.Errorf("the picture shows %q, of a series left out", n)
				}
			}
		})
	}
}

// TestLineDashes: a dashed line keeps its dashes; a solid one has none,
// and neither changes gonum's default line style, which every line
// starts from.
func TestLineDashes(t *testing.T) {
	p := New("", "", "")
	xy := plotter.XYs{{X: 0, Y: 0}, {X: 1, Y: 1}}
	dashed := Line(p, xy, "", Colour(2), vg.Points(1.5), vg.Points(6), vg.Points(3))
	solid := Line(p, xy, "", Colour(0), vg.Points(2))
	if !slices.Equal(dashed.Dashes, []vg.Length{vg.Points(6), vg.Points(3)}) || len(solid.Dashes) != 0 {
		t.Errorf("dashes %v and %v, want [6 3] pt and none", dashed.Dashes, solid.Dashes)
	}
	if len(plotter.DefaultLineStyle.Dashes) != 0 {
		t.Errorf("gonum's default line style now has dashes %v", plotter.DefaultLineStyle.Dashes)
	}
}

// TestBandsNarrowSpanVisible: a band spans the data area's height; one
// too narrow to see (a single bad value) is drawn 2 points wide, centred
// on its span.
func TestBandsNarrowSpanVisible(t *testing.T) {
	p := plot.New()
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 0, 100, 0, 1
	p.Add(&Bands{Spans: [][2]float64{{50, 50}, {10, 30}}, Color: Colour(1)})
	rec := &recorder.Canvas{}
	p.Draw(draw.NewCanvas(rec, 4*vg.Inch, 3*vg.Inch))
	var fills []box // in the bands' colour, not the background's
	var colour color.Color
	for _, a := range rec.Actions {
		switch a := a.(type) {
		case *recorder.SetColor:
			colour = a.Color
		case *recorder.Fill:
			if colour == Colour(1) {
				fills = append(fills, pathBox(a.Path))
			}
		}
	}
	if len(fills) != 2 {
		t.Fatalf("got %d shapes filled in the bands' colour, want 2 bands", len(fills))
	}
	narrow, wide := fills[0], fills[1]
	if w := narrow.x1 - narrow.x0; math.Abs(float64(w-vg.Points(2))) > 1e-9 {
		t.Errorf("the narrow band is %.2f pt wide, want 2", w.Points())
	}
	if w := wide.x1 - wide.x0; w < 10*vg.Points(2) {
		t.Errorf("the wide band, a fifth of the axis, is %.2f pt wide", w.Points())
	}
	if narrow.y0 != wide.y0 || narrow.y1 != wide.y1 || narrow.y1-narrow.y0 < vg.Inch {
		t.Errorf("bands span y %v–%v and %v–%v, want the data area's height, both", narrow.y0, narrow.y1, wide.y0, wide.y1)
	}
}

// TestLabelsTakeTheChartFont: a label gonum's plotter makes is in the
// chart's font, not gonum's serif default, however the packages were
// initialised (plotter copies plot's default font when it is).
func TestLabelsTakeTheChartFont(t *testing.T) {
	l, err := plotter.NewLabels(plotter.XYLabels{XYs: plotter.XYs{{}}, Labels: []string{"a"}})
	if err != nil {
		t.Fatal(err)
	}
	if f := l.TextStyle[0].Font; f.Typeface != Font.Typeface || f.Variant != Font.Variant {
		t.Errorf("a label's font is %s %s, want %s %s", f.Typeface, f.Variant, Font.Typeface, Font.Variant)
	}
}
