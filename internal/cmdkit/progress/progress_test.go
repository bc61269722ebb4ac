package progress

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestRender(t *testing.T) {
	tests := []struct {
		s    State
		want string
	}{
		{State{Label: "car 1/3", Phase: "window", Done: 5 * time.Second, Total: 20 * time.Second, Detail: "env 4,300/s"},
			"car 1/3  window  [######..................]  5s/20s  env 4,300/s"},
		{State{Label: "car 1/3", Phase: "drain"}, "car 1/3  drain"},
		{State{Label: "x", Done: 30 * time.Second, Total: 20 * time.Second}, "x  [########################]  30s/20s"},
		{State{Label: "x", Done: -time.Second, Total: 20 * time.Second}, "x  [........................]  -1s/20s"},
	}
	for _, tt := range tests {
		if got := Render(tt.s, DefaultWidth); got != tt.want {
			t.Errorf("Render(%+v) = %q, want %q", tt.s, got, tt.want)
		}
	}
}

func TestNotTerminalPrintsPhaseChangesOnly(t *testing.T) {
	var buf bytes.Buffer
	b := New(&buf, false)
	now := time.Unix(0, 0)
	for i := range 50 {
		phase := "warm-up"
		if i >= 10 {
			phase = "window"
		}
		b.Update(now.Add(time.Duration(i)*time.Second), State{Label: "car", Phase: phase, Done: time.Duration(i) * time.Second, Total: time.Minute})
	}
	if got, want := buf.String(), "car  warm-up\ncar  window\n"; got != want {
		t.Errorf("output = %q, want %q", got, want)
	}
}

func TestTerminalRedrawsInPlace(t *testing.T) {
	var buf bytes.Buffer
	b := New(&buf, true)
	now := time.Unix(0, 0)
	b.Update(now, State{Label: "car", Phase: "window", Detail: "long detail text"})
	b.Update(now.Add(10*time.Millisecond), State{Label: "car", Phase: "window", Detail: "skipped"}) // too soon
	b.Update(now.Add(200*time.Millisecond), State{Label: "car", Phase: "window", Detail: "short"})
	out := buf.String()
	if strings.Contains(out, "skipped") {
		t.Errorf("redrew within 100 ms: %q", out)
	}
	if strings.Contains(out, "\n") {
		t.Errorf("terminal output has a newline: %q", out)
	}
	// The shorter line pads over the longer one.
	if want := "\rcar  window  short" + strings.Repeat(" ", len("long detail text")-len("short")); !strings.HasSuffix(out, want) {
		t.Errorf("output = %q, want suffix %q", out, want)
	}
	buf.Reset()
	b.Clear()
	if got := buf.String(); !strings.HasPrefix(got, "\r ") || !strings.HasSuffix(got, " \r") {
		t.Errorf("Clear = %q, want the bar erased, the cursor back at the line's start", got)
	}
}
