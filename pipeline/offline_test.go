package pipeline

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/yukart/candec/capture"
	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/envelope"
	"github.com/yukart/candec/frame"
)

// frameSource is a capture.Source over frames, their times shifted by
// shift. If err is set, Next returns it in place of frame errAt. With
// laps > 1 it plays the frames that many times, each lap later by span.
type frameSource struct {
	frames []frame.Frame
	shift  int64
	i      int
	errAt  int
	err    error
	laps   int
	span   int64
}

func (s *frameSource) Next(f *frame.Frame) error {
	if s.err != nil && s.i == s.errAt {
		return s.err
	}
	if s.i >= len(s.frames) {
		if s.laps <= 1 {
			return io.EOF
		}
		s.laps--
		s.i, s.shift = 0, s.shift+s.span
	}
	*f = s.frames[s.i]
	f.Time += s.shift
	s.i++
	return nil
}

func (s *frameSource) Interface(uint8) string { return "can0" }
func (s *frameSource) Skipped() int           { return 0 }

var _ capture.Source = (*frameSource)(nil)

// byHand is what RunOffline must do, written out: every frame, then
// Advance and Flush at the clock plus the tail.
func byHand(t *testing.T, db *dbc.Database, cfg Config, frames []frame.Frame, tail time.Duration) ([]string, time.Duration) {
	t.Helper()
	sink := &byteSink{}
	e, err := New(db, cfg, sink)
	if err != nil {
		t.Fatal(err)
	}
	for i := range frames {
		e.Frame(&frames[i])
	}
	span := e.Stats().Span
	end := e.Now() + int64(tail)
	e.Advance(end)
	e.Flush(end)
	return sink.out, span
}

// TestRunOffline: a capture read to its end, or cut short by a bad line,
// a read error or an interrupt, gives the messages of the frames read,
// flushed at the clock plus the tail, and an error that says why it was
// cut.
func TestRunOffline(t *testing.T) {
	db, frames := carData(t, "yukart.dbc")
	frames = withGaps(frames)
	cfg := Config{Window: &WindowConfig{}}
	errRead := errors.New("disk on fire")
	bad := &capture.LineError{Line: 1001, Text: "(1.0) can0 0A0#ZZ", Msg: "column 16: invalid hex digit"}
	for _, tc := range []struct {
		name      string
		tail      time.Duration
		errAt     int // the source fails here (with err)
		err       error
		cancelled bool // ctx is cancelled from the start
		frames    int  // frames read, and the capture cut there
		wantErr   []error
	}{
		{name: "whole", frames: len(frames)},
		{name: "whole with tail", tail: 5 * time.Second, frames: len(frames)},
		{name: "bad line", tail: time.Second, errAt: 1000, err: bad, frames: 1000, wantErr: []error{bad}},
		{name: "read error", errAt: 1000, err: errRead, frames: 1000, wantErr: []error{errRead}},
		{name: "interrupted", cancelled: true, frames: checkEvery, wantErr: []error{ErrInterrupted, context.Canceled}},
		{name: "read error after interrupt", cancelled: true, errAt: 10, err: errRead, frames: 10, wantErr: []error{ErrInterrupted, context.Canceled}},
		{name: "end before interrupt is seen", cancelled: true, errAt: 10, err: io.EOF, frames: 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.cancelled {
				cancel()
			}
			sink := &byteSink{}
			e, err := New(db, cfg, sink)
			if err != nil {
				t.Fatal(err)
			}
			src := &frameSource{frames: frames, errAt: tc.errAt, err: tc.err}
			res, err := RunOffline(ctx, src, e, OfflineOptions{Tail: tc.tail})
			for _, w := range tc.wantErr {
				if !errors.Is(err, w) {
					t.Errorf("got error %v, want one that is %v", err, w)
				}
			}
			if tc.wantErr == nil && err != nil {
				t.Errorf("got error %v, want none", err)
			}
			want, span := byHand(t, db, cfg, frames[:tc.frames], tc.tail)
			if res.Frames != tc.frames || res.Span != span {
				t.Errorf("got %d frames over %s, want %d over %s", res.Frames, res.Span, tc.frames, span)
			}
			if wantEnd := frames[tc.frames-1].Time + int64(tc.tail); res.End != wantEnd {
				t.Errorf("got end %d, want %d", res.End, wantEnd)
			}
			if len(sink.out) != len(want) {
				t.Errorf("got %d messages, want %d", len(sink.out), len(want))
			}
			for i := range min(len(sink.out), len(want)) {
				if sink.out[i] != want[i] {
					t.Fatalf("message %d:\n got %q\nwant %q", i, sink.out[i], want[i])
				}
			}
		})
	}
}

func TestRunOfflineBadTail(t *testing.T) {
	e, err := New(testDB(t), Config{}, &countSink{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = RunOffline(context.Background(), &frameSource{}, e, OfflineOptions{Tail: -time.Second})
	if !errors.Is(err, ErrTail) {
		t.Errorf("got error %v, want ErrTail", err)
	}
}

// failWriter fails every write.
type failWriter struct{ n int }

var errFull = errors.New("no space left on device")

func (w *failWriter) Write(p []byte) (int, error) { w.n++; return 0, errFull }

// TestRunOfflineStop: a broken output ends the run at once, without the
// final flush, and the write error is the run's.
func TestRunOfflineStop(t *testing.T) {
	db, frames := carData(t, "yukart.dbc")
	fw := &failWriter{}
	lw := NewLineWriter(fw)
	e, err := New(db, Config{}, lw)
	if err != nil {
		t.Fatal(err)
	}
	res, err := RunOffline(context.Background(), &frameSource{frames: frames}, e, OfflineOptions{Stop: lw.Err})
	if !errors.Is(err, errFull) || !errors.Is(lw.Flush(), errFull) {
		t.Errorf("got error %v, want %v", err, errFull)
	}
	if res.Frames == 0 || res.Frames == len(frames) || res.End != 0 {
		t.Errorf("got %d of %d frames read, end %d; want the run ended at the first failed write, before the end", res.Frames, len(frames), res.End)
	}
	if s := e.Stats(); s.Published(KindFlush) != 0 {
		t.Errorf("got %d flushed values after the write error, want none", s.Published(KindFlush))
	}
	if fw.n != 1 {
		t.Errorf("got %d writes, want 1: nothing more after the error", fw.n)
	}
}

// TestLineWriter: one "topic payload" line per message, in order.
func TestLineWriter(t *testing.T) {
	db, frames := carData(t, "yukart.dbc")
	var buf bytes.Buffer
	lw := NewLineWriter(&buf)
	e, err := New(db, Config{}, lw)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := RunOffline(context.Background(), &frameSource{frames: frames[:500]}, e, OfflineOptions{Stop: lw.Err}); err != nil {
		t.Fatal(err)
	}
	if err := lw.Flush(); err != nil {
		t.Fatal(err)
	}
	want, _ := byHand(t, db, Config{}, frames[:500], 0)
	got := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if lw.Lines() != len(want) || strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got %d lines (%d counted), want %d:\n%s", len(got), lw.Lines(), len(want), buf.String())
	}
	var env envelope.Envelope
	for _, l := range got {
		_, payload, _ := strings.Cut(l, " ")
		if err := envelope.Parse([]byte(payload), &env); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
	}
}

// offlinePass runs the car capture through a warm engine again, later
// by one more span each time.
type offlinePass struct {
	src  frameSource
	eng  *Engine
	opts OfflineOptions
}

// newOfflinePass plays the first n frames of the car capture (all if
// n is 0).
func newOfflinePass(t testing.TB, dbcName string, cfg Config, n int) *offlinePass {
	db, frames := carData(t, dbcName)
	if n > 0 {
		frames = frames[:n]
	}
	lw := NewLineWriter(io.Discard)
	e, err := New(db, cfg, lw)
	if err != nil {
		t.Fatal(err)
	}
	// Whole seconds, so that every lap cuts the same windows and the
	// warm-up grew every buffer.
	span := (frames[len(frames)-1].Time-frames[0].Time)/int64(time.Second)*int64(time.Second) + int64(2*time.Second)
	p := &offlinePass{src: frameSource{frames: frames, span: span}, eng: e, opts: OfflineOptions{Tail: time.Second, Stop: lw.Err}}
	p.run(t, 1) // warm up: every signal and topic seen, buffers grown
	return p
}

// run plays the capture laps times in one RunOffline.
func (p *offlinePass) run(t testing.TB, laps int) {
	p.src.i, p.src.laps, p.src.shift = 0, laps, p.src.shift+p.src.span
	if _, err := RunOffline(context.Background(), &p.src, p.eng, p.opts); err != nil {
		t.Fatal(err)
	}
}

// TestRunOfflineAllocs: a run allocates once, whatever its length: the
// frame the source writes into escapes through the Source interface.
// Per frame it allocates nothing.
func TestRunOfflineAllocs(t *testing.T) {
	for _, tc := range []struct {
		dbc string
		cfg Config
	}{
		{"yukart.dbc", Config{}},
		{"yukart.dbc", Config{Window: &WindowConfig{}}},
		{"mix8.dbc", Config{Policies: mustPolicy(t, "")}},
	} {
		p := newOfflinePass(t, tc.dbc, tc.cfg, 4000)
		for _, laps := range []int{1, 3} {
			if n := testing.AllocsPerRun(1, func() { p.run(t, laps) }); n > 1 {
				t.Errorf("%s (window %v): %v allocations per run of %d frames, want at most 1", tc.dbc, tc.cfg.Window != nil, n, laps*len(p.src.frames))
			}
		}
	}
}

// BenchmarkPipelineOffline measures decode --policy's path short of the
// capture parser: RunOffline on the car capture (played again and again,
// later each time) under the default policy, the messages written as
// lines to io.Discard. One op is one frame.
func BenchmarkPipelineOffline(b *testing.B) {
	for _, name := range []string{"yukart.dbc", "mix8.dbc"} {
		b.Run(strings.TrimSuffix(name, ".dbc"), func(b *testing.B) {
			p := newOfflinePass(b, name, Config{}, 0)
			// b.N frames in one run: the run's one allocation is
			// spread over them, as over a capture.
			src := &p.src
			src.i, src.shift = 0, src.shift+src.span
			src.laps = b.N/len(src.frames) + 1
			limited := &limitSource{frameSource: src, n: b.N}
			b.ReportAllocs()
			b.ResetTimer()
			res, err := RunOffline(context.Background(), limited, p.eng, p.opts)
			b.StopTimer()
			if err != nil || res.Frames != b.N {
				b.Fatalf("got %d frames, error %v; want %d", res.Frames, err, b.N)
			}
		})
	}
}

// limitSource ends its frameSource after n frames.
type limitSource struct {
	*frameSource
	n int
}

func (s *limitSource) Next(f *frame.Frame) error {
	if s.n == 0 {
		return io.EOF
	}
	s.n--
	return s.frameSource.Next(f)
}
