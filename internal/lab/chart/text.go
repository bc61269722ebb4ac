package chart

import (
	"math"
	"strings"

	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
)

//go:generate go run gen_dejavu.go /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf

// WideText is the text handler of every chart: it lays text out for DejaVu
// Sans, the widest of the common sans-serif fonts and the one a Linux
// viewer of an SVG falls back to, while the text is drawn (in a PNG) or
// named (in an SVG) as Font.
//
// An SVG names its font and does not embed it, so the viewer's font
// decides how wide a text is drawn. Laid out for Liberation Sans, a
// text drawn in DejaVu Sans is about a tenth wider: a right-aligned
// legend entry runs over its marker and a long axis label is cut at the
// edge. Laid out for DejaVu Sans, every box is wide enough for it, and a
// narrower font (Liberation Sans, Arial, Helvetica) leaves a little room
// to spare. A text starts where DejaVu Sans would put it, whatever the
// alignment, so a narrower font never reaches past the box either.
type WideText struct{ text.Plain }

// newWideText returns the handler over gonum's font cache.
func newWideText() WideText { return WideText{text.Plain{Fonts: font.DefaultCache}} }

// Extents returns the font's extents, made as tall as DejaVu Sans's.
func (h WideText) Extents(fnt font.Font) font.Extents {
	e := h.Plain.Extents(fnt)
	asc, desc := dejavuLength(dejavuAscent, fnt.Size), dejavuLength(dejavuDescent, fnt.Size)
	if asc > e.Ascent {
		e.Height += asc - e.Ascent
		e.Ascent = asc
	}
	if desc > e.Descent {
		e.Height += desc - e.Descent
		e.Descent = desc
	}
	return e
}

// Box returns the text's box as DejaVu Sans fills it.
func (h WideText) Box(txt string, fnt font.Font) (width, height, depth vg.Length) {
	e := h.Extents(fnt)
	return TextWidth(txt, fnt.Size), e.Ascent, e.Descent
}

// Draw draws txt as text.Plain does, but aligned by its DejaVu Sans
// width.
func (h WideText) Draw(c vg.Canvas, txt string, sty text.Style, pt vg.Point) {
	txt = strings.TrimRight(txt, "\n")
	if len(txt) == 0 {
		return
	}
	fnt := h.Fonts.Lookup(sty.Font, sty.Font.Size)
	c.SetColor(sty.Color)
	if sty.Rotation != 0 {
		c.Push()
		c.Rotate(sty.Rotation)
	}
	sin64, cos64 := math.Sincos(sty.Rotation)
	cos, sin := vg.Length(cos64), vg.Length(sin64)
	pt.X, pt.Y = pt.Y*sin+pt.X*cos, pt.Y*cos-pt.X*sin
	lines := h.Lines(txt)
	sty.Handler = h
	pt.Y += sty.Height(txt)*vg.Length(sty.YAlign) - h.Extents(sty.Font).Ascent
	for i, line := range lines {
		xoffs := vg.Length(sty.XAlign) * TextWidth(line, sty.Font.Size)
		n := vg.Length(len(lines) - i)
		c.FillString(fnt, pt.Add(vg.Point{X: xoffs, Y: n * sty.Font.Size}), line)
	}
	if sty.Rotation != 0 {
		c.Pop()
	}
}

// TextWidth is how wide txt is in DejaVu Sans at size, without kerning
// (which only narrows it). A character DejaVu Sans lacks counts one em,
// as wide as its widest letters.
func TextWidth(txt string, size vg.Length) vg.Length {
	units := 0
	for _, r := range txt {
		switch w, ok := dejavuOther[r]; {
		case r >= ' ' && r <= '~':
			units += int(dejavuASCII[r-' '])
		case ok:
			units += int(w)
		default:
			units += dejavuUnitsPerEm
		}
	}
	return dejavuLength(units, size)
}

func dejavuLength(units int, size vg.Length) vg.Length {
	return vg.Length(units) * size / dejavuUnitsPerEm
}
