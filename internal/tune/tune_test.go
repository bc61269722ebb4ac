package tune

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/yukart/candec/capture"
	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/pipeline"
)

const testDBC = `VERSION ""
NS_ :
BS_:
BU_: ECU
BO_ 256 Msg: 8 ECU
 SG_ Counter : 0|8@1+ (1,0) [0|255] "" ECU
 SG_ Const : 8|8@1+ (1,0) [0|255] "" ECU
`

// captureOf writes n frames at 100 Hz: Counter rises by one each frame,
// Const stays 1.
func captureOf(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "(%d.%06d) can0 100#%02X01000000000000\n", 1000+i/100, (i%100)*10000, i%256)
	}
	return b.String()
}

func database(t *testing.T) *dbc.Database {
	t.Helper()
	f, err := dbc.Parse("test.dbc", []byte(testDBC))
	if err != nil {
		t.Fatal(err)
	}
	db, err := dbc.Compile(f)
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// source is a capture.Source of text, as the command opens one.
func source(t *testing.T, text string) capture.Source {
	t.Helper()
	src, err := capture.NewSource(strings.NewReader(text), capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return src
}

func TestAnalyze(t *testing.T) {
	pol, err := pipeline.ParsePolicy("p.yaml", []byte("defaults:\n  max_rate: 20\nrules:\n  - match: [Const]\n    on_change: true\n"))
	if err != nil {
		t.Fatal(err)
	}
	r := source(t, captureOf(1000))
	rep, err := Analyze(r, Config{DB: database(t), Policy: pol, Subscribers: 4, Window: true})
	if err != nil {
		t.Fatal(err)
	}
	secs := 9.99 // first to last frame
	near := func(what string, got, want, tol float64) {
		t.Helper()
		if math.Abs(got-want) > tol {
			t.Errorf("%s = %.3f, want %.3f ± %.3f", what, got, want, tol)
		}
	}
	if rep.Frames != 1000 {
		t.Errorf("frames = %d, want 1000", rep.Frames)
	}
	near("frames/s", rep.FramesPerS, 1000/secs, 0.01)
	if len(rep.Signals) != 2 || rep.Signals[0].Name != "Msg.Counter" || rep.Signals[1].Name != "Msg.Const" {
		t.Fatalf("signals = %+v, want Counter then Const", rep.Signals)
	}
	c, k := rep.Signals[0], rep.Signals[1]
	near("Counter frames/s", c.FramesPerS, 1000/secs, 0.01)
	near("Counter changes/s", c.ChangesPerS, 999/secs, 0.01)
	near("Counter envelopes/s (20 Hz cap)", c.EnvelopesPerS, 20, 0.3)
	near("Const changes/s", k.ChangesPerS, 0, 0)
	near("Const envelopes (on change: only the first)", k.EnvelopesPerS*secs, 1, 1e-9)
	near("total envelopes/s", rep.EnvelopesPerS, c.EnvelopesPerS+k.EnvelopesPerS, 1e-9)
	near("deliveries/s", rep.DeliveriesPerS, rep.EnvelopesPerS*4, 1e-9)
	near("share", c.Share+k.Share, 100, 1e-9)
	if rep.WindowsPerS <= 0 || rep.WindowsPerS > rep.EnvelopesPerS {
		t.Errorf("windows/s = %v, want in (0, %v]", rep.WindowsPerS, rep.EnvelopesPerS)
	}
	if got, want := c.Policy, "cap 20 Hz"; got != want {
		t.Errorf("Counter policy = %q, want %q", got, want)
	}
	if got, want := k.Policy, "cap 20 Hz, on change"; got != want {
		t.Errorf("Const policy = %q, want %q", got, want)
	}

	var buf bytes.Buffer
	if err := rep.WriteText(&buf, 1); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"1,000 frames in 10.0 s", "deliveries/s to 4 all-signal subscribers", "top 1 of 2 signals", "Msg.Counter"} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "Msg.Const") {
		t.Errorf("text lists Const beyond the top 1:\n%s", out)
	}
}

func TestAnalyzeEmpty(t *testing.T) {
	_, err := Analyze(source(t, ""), Config{DB: database(t)})
	if !errors.Is(err, ErrEmpty) {
		t.Errorf("Analyze(empty) error = %v, want ErrEmpty", err)
	}
}

func TestAnalyzeBadLine(t *testing.T) {
	_, err := Analyze(source(t, "(1.0) can0 100#00\nnonsense\n"), Config{DB: database(t)})
	var le *capture.LineError
	if !errors.As(err, &le) || le.Line != 2 {
		t.Errorf("Analyze(bad line) error = %v, want a *capture.LineError on line 2", err)
	}
}

func TestAnalyzeConfig(t *testing.T) {
	r := func() capture.Source { return source(t, captureOf(10)) }
	_, err := Analyze(r(), Config{DB: database(t), Subscribers: -5})
	if want := "tune: bad config: subscribers must be 0 (the default, 5) or more, got -5"; !errors.Is(err, ErrConfig) || err.Error() != want {
		t.Errorf("Analyze(subscribers -5) = %v, want %q", err, want)
	}
	rep, err := Analyze(r(), Config{DB: database(t), TopicTemplate: "car/{message}/{signal}"})
	if err != nil {
		t.Fatal(err)
	}
	if got := rep.Signals[0].Topic; got != "car/Msg/Counter" && got != "car/Msg/Const" {
		t.Errorf("topic %q, want car/Msg/… from the template", got)
	}
	if rep.Subscribers != DefaultSubscribers {
		t.Errorf("subscribers %d, want the default %d", rep.Subscribers, DefaultSubscribers)
	}
}

// TestAnalyzeClock: a frame stamped in 2200 is dropped and counted and
// does not stretch the duration; captures joined with time going back
// are one discontinuity, and the duration is the sum of both.
func TestAnalyzeClock(t *testing.T) {
	c := captureOf(1000) // 1000.00 … 1009.99 s
	lines := strings.SplitAfter(c, "\n")
	future := strings.Join(lines[:500], "") + "(7258118400.000000) can0 100#FF01000000000000\n" + strings.Join(lines[500:], "")
	var back strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&back, "(%d.%06d) can0 100#%02X01000000000000\n", 1+i/100, (i%100)*10000, i%256)
	}
	for _, tt := range []struct {
		name, capture                  string
		secs                           float64
		future, discontinuities, frame uint64
		text                           string
	}{
		{"2200", future, 9.99, 1, 0, 1001, "clock: 1 future dropped"},
		{"joined", c + back.String(), 19.98, 0, 1, 2000, "clock: 1 discontinuity"},
	} {
		rep, err := Analyze(source(t, tt.capture), Config{DB: database(t)})
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(rep.DurationS-tt.secs) > 1e-9 || rep.Future != tt.future || rep.Discontinuities != tt.discontinuities || rep.Frames != tt.frame {
			t.Errorf("%s: %.3f s, %d future, %d discontinuities, %d frames; want %.3f, %d, %d, %d",
				tt.name, rep.DurationS, rep.Future, rep.Discontinuities, rep.Frames, tt.secs, tt.future, tt.discontinuities, tt.frame)
		}
		var buf bytes.Buffer
		if err := rep.WriteText(&buf, 0); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(buf.String(), "\n"+tt.text+"\n") {
			t.Errorf("%s: text lacks %q:\n%s", tt.name, tt.text, buf.String())
		}
	}
}
