package progress

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// DefaultWidth is the bar's width in cells.
const DefaultWidth = 24

// redrawEvery limits redraws on a terminal.
const redrawEvery = 100 * time.Millisecond

// Bar is a progress line on a writer, usually stderr. It is not safe for
// concurrent use.
type Bar struct {
	w     io.Writer
	tty   bool
	width int

	drawn     bool
	lastDraw  time.Time
	lastPhase string
	lastLen   int
}

// New returns a bar on w; tty says whether w is a terminal that
// understands carriage returns.
func New(w io.Writer, tty bool) *Bar { return &Bar{w: w, tty: tty, width: DefaultWidth} }

// State is what the bar shows.
type State struct {
	// Label names the task ("car-8-50hz 4/14").
	Label string
	// Phase names the step ("warm-up", "window", "drain").
	Phase string
	// Done and Total measure the step; Total 0 shows no bar.
	Done, Total time.Duration
	// Detail is free text after the bar (live rates).
	Detail string
}

// Render returns the line for s, without a line ending.
func Render(s State, width int) string {
	var b strings.Builder
	b.WriteString(s.Label)
	if s.Phase != "" {
		b.WriteString("  ")
		b.WriteString(s.Phase)
	}
	if s.Total > 0 {
		frac := min(max(float64(s.Done)/float64(s.Total), 0), 1)
		full := int(frac * float64(width))
		fmt.Fprintf(&b, "  [%s%s]  %v/%v", strings.Repeat("#", full), strings.Repeat(".", width-full),
			s.Done.Truncate(time.Second), s.Total.Truncate(time.Second))
	}
	if s.Detail != "" {
		b.WriteString("  ")
		b.WriteString(s.Detail)
	}
	return b.String()
}

// Update shows s at time now. On a terminal it redraws the line (at most
// every 100 ms unless the phase changed); elsewhere it prints a line
// only when the label or phase changes.
func (b *Bar) Update(now time.Time, s State) {
	phase := s.Label + "\x00" + s.Phase
	changed := phase != b.lastPhase
	b.lastPhase = phase
	if !b.tty {
		if changed {
			fmt.Fprintln(b.w, Render(State{Label: s.Label, Phase: s.Phase, Detail: s.Detail}, b.width))
		}
		return
	}
	if !changed && b.drawn && now.Sub(b.lastDraw) < redrawEvery {
		return
	}
	line := Render(s, b.width)
	pad := max(b.lastLen-len(line), 0)
	fmt.Fprintf(b.w, "\r%s%s", line, strings.Repeat(" ", pad))
	b.drawn, b.lastDraw, b.lastLen = true, now, len(line)
}

// Clear erases the bar from a terminal, so that ordinary output can
// follow; the next Update draws it again.
func (b *Bar) Clear() {
	if b.tty && b.drawn {
		fmt.Fprintf(b.w, "\r%s\r", strings.Repeat(" ", b.lastLen))
	}
	b.drawn, b.lastLen, b.lastPhase = false, 0, ""
}
