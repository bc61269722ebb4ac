package chart

import (
	"bytes"
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/yukart/candec/internal/base/numfmt"
)

// Errors.
var (
	// ErrFormat: the output's name ends in neither .svg nor .png.
	ErrFormat = errors.New("chart: unknown picture format")
)

// Format is a picture format.
type Format string

// Formats.
const (
	SVG Format = "svg"
	PNG Format = "png"
)

// FormatOf returns the format a file name asks for by its extension.
func FormatOf(name string) (Format, error) {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".svg":
		return SVG, nil
	case ".png":
		return PNG, nil
	}
	return "", fmt.Errorf("%w: %s (want a name ending in .svg or .png)", ErrFormat, name)
}

// Palette is the series colours, in order: distinct in print and for the
// common colour-vision deficiencies (Okabe and Ito's palette).
var Palette = []color.Color{
	color.RGBA{0x00, 0x72, 0xB2, 0xff}, // blue
	color.RGBA{0xD5, 0x5E, 0x00, 0xff}, // vermilion
	color.RGBA{0x00, 0x9E, 0x73, 0xff}, // bluish green
	color.RGBA{0xCC, 0x79, 0xA7, 0xff}, // reddish purple
	color.RGBA{0xE6, 0x9F, 0x00, 0xff}, // orange
	color.RGBA{0x56, 0xB4, 0xE9, 0xff}, // sky blue
	color.RGBA{0xF0, 0xE4, 0x42, 0xff}, // yellow
	color.Black,
}

// Colour returns the i-th series colour, wrapping round the palette.
func Colour(i int) color.Color { return Palette[i%len(Palette)] }

// Light returns c at a quarter of its strength over white: for regions
// and "before" bars that must not hide what is drawn over them.
func Light(c color.Color, alpha uint8) color.Color {
	r, g, b, _ := c.RGBA()
	return color.NRGBA{uint8(r >> 8), uint8(g >> 8), uint8(b >> 8), alpha}
}

// Font is the typeface gonum measures and draws a PNG's text with: a
// sans-serif reads better at a chart's small sizes than gonum's default
// serif. Layout does not rely on its widths: see WideText.
var Font = font.Font{Typeface: "Liberation", Variant: "Sans"}

// svgFamily is what an SVG's font-family becomes. The SVG names its
// fonts rather than embed one (that would add 400 KB to each chart);
// DejaVu Sans comes first because the layout is made for its widths
// (WideText), then the narrower fonts a viewer without it has.
const svgFamily = "font-family:'DejaVu Sans','Liberation Sans',Arial,Helvetica,sans-serif;"

func init() {
	// Texts take their font and handler from plot.DefaultFont and
	// plot.DefaultTextHandler when they are made, labels from
	// plotter.DefaultFont (a copy of plot's, taken when plotter is
	// initialised, before this), so all three are set once, before any.
	plot.DefaultFont = Font
	plotter.DefaultFont = Font
	plot.DefaultTextHandler = newWideText()
}

// New returns a plot with candec's look: a title, labelled axes, a
// light grid drawn under the data, and a legend at the top left.
func New(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = vg.Points(13)
	p.Title.Padding = vg.Points(6)
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.X.Label.TextStyle.Font.Size = vg.Points(11)
	p.Y.Label.TextStyle.Font.Size = vg.Points(11)
	p.X.Tick.Label.Font.Size = vg.Points(10)
	p.Y.Tick.Label.Font.Size = vg.Points(10)
	p.Legend.Top = true
	p.Legend.Left = true
	p.Legend.TextStyle.Font.Size = vg.Points(10)
	p.Legend.Padding = vg.Points(3)
	return p
}

// LegendAt puts p's legend in a corner of the data area. gonum lines a
// right-hand legend up with the canvas, not the data area, and draws its
// thumbnails past the last tick; a small offset keeps them inside.
func LegendAt(p *plot.Plot, top, left bool) {
	p.Legend.Top, p.Legend.Left = top, left
	p.Legend.XOffs, p.Legend.YOffs = 0, 0
	if !left {
		p.Legend.XOffs = -vg.Points(8)
	}
	if !top {
		p.Legend.YOffs = vg.Points(4)
	}
}

// Write renders c at width × height in format f to w.
//
// gonum panics on some data (a log axis over a zero); Write turns a
// panic into an error, so a bad figure fails the picture, not the
// command.
func Write(w io.Writer, c Drawer, width, height vg.Length, f Format) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("chart: %v", r)
		}
	}()
	switch f {
	case SVG:
		s := vgsvg.New(width, height)
		c.Draw(draw.New(s))
		var buf bytes.Buffer
		if _, err := s.WriteTo(&buf); err != nil {
			return err
		}
		_, err := w.Write(bytes.ReplaceAll(buf.Bytes(), []byte("font-family:Liberation Sans;"), []byte(svgFamily)))
		return err
	case PNG:
		// 144 dpi: sharp on a high-density screen, still small.
		img := vgimg.NewWith(vgimg.UseWH(width, height), vgimg.UseDPI(144),
			vgimg.UseBackgroundColor(color.White))
		c.Draw(draw.New(img))
		_, err := vgimg.PngCanvas{Canvas: img}.WriteTo(w)
		return err
	}
	return fmt.Errorf("%w: %q", ErrFormat, f)
}

// Drawer is something that draws itself on a canvas: a *plot.Plot, or
// Stack for plots one above the other.
type Drawer interface {
	Draw(c draw.Canvas)
}

// Stack draws plots one above the other, each given an equal share of
// the height, their x axes aligned. With LegendWidth set, each plot's
// legend goes in a strip of that width on the right, beside its panel
// rather than over its data.
type Stack struct {
	Plots       []*plot.Plot
	LegendWidth vg.Length
}

// Draw draws the plots.
func (s Stack) Draw(c draw.Canvas) {
	if len(s.Plots) == 0 {
		return
	}
	main := c
	main.Max.X -= s.LegendWidth
	rows := make([][]*plot.Plot, len(s.Plots))
	for i, p := range s.Plots {
		rows[i] = []*plot.Plot{p}
	}
	t := draw.Tiles{Rows: len(s.Plots), Cols: 1, PadY: vg.Points(4), PadTop: vg.Points(2), PadBottom: vg.Points(2)}
	canvases := plot.Align(rows, t, main)
	for i, p := range s.Plots {
		if s.LegendWidth <= 0 {
			p.Draw(canvases[i][0])
			continue
		}
		l := p.Legend
		p.Legend = plot.NewLegend()
		p.Draw(canvases[i][0])
		p.Legend = l
		lc := canvases[i][0]
		lc.Min.X, lc.Max.X = main.Max.X+vg.Points(6), c.Max.X
		if p.Title.Text != "" { // below the title, level with the data
			lc.Max.Y -= p.Title.TextStyle.Rectangle(p.Title.Text).Size().Y + p.Title.Padding
		}
		l.Top, l.Left, l.XOffs, l.YOffs = true, true, 0, 0
		l.Draw(lc)
	}
}

// PlainTicks label about six round values between lo and hi as short
// numbers ("5", "2.5", not "25.00"), with unlabelled ticks between.
type PlainTicks struct{}

// Ticks returns the ticks between lo and hi.
func (PlainTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) {
		return []plot.Tick{{Value: lo, Label: strconv.FormatFloat(lo, 'g', 6, 64)}}
	}
	raw := (hi - lo) / 6
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	var ts []plot.Tick
	minor := step / 5
	for v := math.Ceil(lo/minor) * minor; v <= hi+minor/1e6; v += minor {
		t := plot.Tick{Value: v}
		if r := math.Round(v / step); math.Abs(v/step-r) < 1e-6 {
			t.Value = r * step
			t.Label = strconv.FormatFloat(t.Value, 'g', 6, 64)
		}
		ts = append(ts, t)
	}
	return ts
}

// LogTicks mark each power of ten and 2 and 5 between, labelled as
// plain numbers ("2", "50", "1,000"), which a reader takes in faster
// than gonum's default 10^n.
type LogTicks struct{}

// Ticks returns the ticks between lo and hi.
func (LogTicks) Ticks(lo, hi float64) []plot.Tick {
	var out []plot.Tick
	// Over more than three decades, 2 and 5 are marked but unlabelled:
	// their labels would run into each other.
	wide := math.Log10(hi/lo) > 3
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
		for _, m := range []float64{1, 2, 5} {
			v := m * math.Pow(10, e)
			if v < lo*0.999 || v > hi*1.001 {
				continue
			}
			t := plot.Tick{Value: v}
			if m == 1 || !wide {
				t.Label = numfmt.Thousands(v)
				if v < 1 {
					t.Label = strconv.FormatFloat(v, 'g', -1, 64)
				}
			}
			out = append(out, t)
		}
	}
	return out
}

// ThousandsTicks are gonum's default ticks labelled with thousands
// separators ("25,000", not "25000.00").
type ThousandsTicks struct{}

// Ticks returns the ticks between lo and hi.
func (ThousandsTicks) Ticks(lo, hi float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(lo, hi)
	for i := range ts {
		if ts[i].Label != "" {
			ts[i].Label = numfmt.Thousands(ts[i].Value)
		}
	}
	return ts
}
