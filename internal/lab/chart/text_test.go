package chart

import (
	"math"
	"os"
	"testing"

	"golang.org/x/image/font"
	"golang.org/x/image/font/sfnt"
	"golang.org/x/image/math/fixed"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/recorder"
)

// box is the extent of something drawn, in points.
type box struct{ x0, x1, y0, y1 vg.Length }

func (a box) overlaps(b box) bool {
	return a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1
}

// drawn returns the boxes of the unrotated texts and of the filled or
// stroked shapes (legend markers, lines) that rec holds, texts measured
// as DejaVu Sans draws them.
func drawn(rec *recorder.Canvas) (texts, shapes []box, names []string) {
	rotated := 0
	var stack []int
	for _, a := range rec.Actions {
		switch a := a.(type) {
		case *recorder.Push:
			stack = append(stack, rotated)
		case *recorder.Pop:
			rotated, stack = stack[len(stack)-1], stack[:len(stack)-1]
		case *recorder.Rotate:
			if a.Angle != 0 {
				rotated++
			}
		case *recorder.FillString:
			if rotated > 0 {
				continue
			}
			asc := dejavuLength(dejavuAscent, a.Size)
			texts = append(texts, box{a.Point.X, a.Point.X + TextWidth(a.String, a.Size), a.Point.Y, a.Point.Y + asc})
			names = append(names, a.String)
		case *recorder.Fill:
			shapes = append(shapes, pathBox(a.Path))
		case *recorder.Stroke:
			shapes = append(shapes, pathBox(a.Path))
		}
	}
	return texts, shapes, names
}

func pathBox(p vg.Path) box {
	b := box{vg.Length(math.Inf(1)), vg.Length(math.Inf(-1)), vg.Length(math.Inf(1)), vg.Length(math.Inf(-1))}
	for _, c := range p {
		if c.Type == vg.CloseComp {
			continue
		}
		r := c.Radius
		b.x0, b.x1 = min(b.x0, c.Pos.X-r), max(b.x1, c.Pos.X+r)
		b.y0, b.y1 = min(b.y0, c.Pos.Y-r), max(b.y1, c.Pos.Y+r)
	}
	return b
}

// TestLegendTextClearOfMarkers: laid out for DejaVu Sans, the widest
// common sans-serif and the one a Linux viewer of an SVG draws with, no
// legend text runs into a legend marker, the legend on either side.
func TestLegendTextClearOfMarkers(t *testing.T) {
	for _, left := range []bool{true, false} {
		p := New("", "", "")
		LegendAt(p, true, left)
		s, _ := plotter.NewScatter(plotter.XYs{{X: 1, Y: 1}})
		s.GlyphStyle = draw.GlyphStyle{Color: Colour(0), Radius: vg.Points(3.5), Shape: draw.CircleGlyph{}}
		l, _ := plotter.NewLine(plotter.XYs{{X: 0, Y: 0}, {X: 1, Y: 1}})
		p.Legend.Add("before: every decoded value (no policy)", s)
		p.Legend.Add("after: what the policy publishes", l)
		p.Legend.Add("window stream (every signal, one message per window)", s)
		p.Legend.Add("WWW mmm ±×µ…—", l)
		rec := &recorder.Canvas{}
		p.Legend.Draw(draw.NewCanvas(rec, 8*vg.Inch, 3*vg.Inch))
		texts, shapes, names := drawn(rec)
		if len(texts) != 4 || len(shapes) < 4 {
			t.Fatalf("left %v: got %d texts and %d shapes, want 4 and 4 or more", left, len(texts), len(shapes))
		}
		for i, tb := range texts {
			for _, sb := range shapes {
				if tb.overlaps(sb) {
					t.Errorf("left %v: %q (x %.1f–%.1f pt in DejaVu Sans) overlaps its marker at x %.1f–%.1f pt", left, names[i], tb.x0.Points(), tb.x1.Points(), sb.x0.Points(), sb.x1.Points())
				}
			}
		}
	}
}

// TestAxisTextInsideCanvas: tick labels at the ends of the axes, and
// long category labels, lie inside the picture in DejaVu Sans: none is
// cut at an edge.
func TestAxisTextInsideCanvas(t *testing.T) {
	p := New("Deliveries per scenario", "deliveries/s (messages × 5 envelope subscribers)", "")
	p.X.Min, p.X.Max = 0, 150
	p.X.Tick.Marker = PlainTicks{}
	p.Y.Min, p.Y.Max = 0, 2
	p.Y.Tick.Marker = plot.ConstantTicks([]plot.Tick{{Value: 0, Label: "car-3-50hz"}, {Value: 1, Label: "fullbus-yukart-default-window"}, {Value: 2, Label: "WWWWWWWWWWWWWWWWWW"}})
	const w, h = 5 * vg.Inch, 3 * vg.Inch
	rec := &recorder.Canvas{}
	p.Draw(draw.NewCanvas(rec, w, h))
	texts, _, names := drawn(rec)
	if len(texts) < 5 {
		t.Fatalf("got %d texts, want the title, the x label and the ticks", len(texts))
	}
	for i, b := range texts {
		if b.x0 < 0 || b.x1 > w {
			t.Errorf("%q spans x %.1f–%.1f pt, outside the picture's 0–%.1f", names[i], b.x0.Points(), b.x1.Points(), w.Points())
		}
	}
}

// TestTextWidthIsDejaVu: where DejaVu Sans is installed, TextWidth is
// its width without kerning: never less than the font draws, and no more
// than a tenth above (a kerned pair such as "AV" or "To").
func TestTextWidthIsDejaVu(t *testing.T) {
	b, err := os.ReadFile("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")
	if err != nil {
		t.Skip("DejaVu Sans not installed:", err)
	}
	f, err := sfnt.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	var buf sfnt.Buffer
	const size = 10
	ppem := fixed.I(size)
	for _, s := range []string{"before: every decoded value (no policy)", "fullbus-yukart-default-window", "25,000", "±×µ…— Wa", "AVATAR To"} {
		var got fixed.Int26_6
		prev := sfnt.GlyphIndex(0)
		for i, r := range s {
			g, err := f.GlyphIndex(&buf, r)
			if err != nil {
				t.Fatal(err)
			}
			if i > 0 {
				k, _ := f.Kern(&buf, prev, g, ppem, font.HintingNone)
				got += k
			}
			a, err := f.GlyphAdvance(&buf, g, ppem, font.HintingNone)
			if err != nil {
				t.Fatal(err)
			}
			got += a
			prev = g
		}
		real := float64(got) / 64
		est := TextWidth(s, vg.Points(size)).Points()
		if est < real-0.01 || est > real*1.10 {
			t.Errorf("%q: TextWidth %.2f pt, DejaVu Sans draws %.2f pt; want at least that and at most 10%% more (kerning)", s, est, real)
		}
	}
}
