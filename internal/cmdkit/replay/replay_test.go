package replay

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/yukart/candec/capture"
	"github.com/yukart/candec/frame"
	"github.com/yukart/candec/rawbatch"
)

// fakeClock moves only when the replay sleeps (and by step on each Now,
// to model time passing in flood mode).
type fakeClock struct {
	now  time.Time
	step time.Duration
}

func (c *fakeClock) Now() time.Time {
	t := c.now
	c.now = c.now.Add(c.step)
	return t
}

func (c *fakeClock) SleepUntil(ctx context.Context, t time.Time) error {
	if t.After(c.now) {
		c.now = t
	}
	return ctx.Err()
}

// sent is one published batch as a subscriber reads it.
type sent struct {
	at     time.Duration // publish time after the replay's start
	seq    uint64
	offset []time.Duration // frame timestamps after the replay's start
}

type recorder struct {
	clock *fakeClock
	start time.Time
	got   []sent
	fail  bool
	after int // cancel the context after this many batches (0: never)
	stop  context.CancelFunc
}

func (r *recorder) Publish(_ context.Context, b []byte) error {
	batch, err := rawbatch.Parse(b)
	if err != nil {
		return err
	}
	s := sent{at: r.clock.now.Sub(r.start), seq: batch.Seq()}
	var f frame.Frame
	for i := range batch.Len() {
		batch.Frame(i, &f)
		s.offset = append(s.offset, time.Duration(f.Time-r.start.UnixNano()))
	}
	r.got = append(r.got, s)
	if r.after > 0 && len(r.got) == r.after {
		r.stop()
	}
	if r.fail {
		return errors.New("broker away")
	}
	return nil
}

// capLog is a capture whose frames are at these ms after 1000 s.
func capLog(ms ...int) string {
	var b strings.Builder
	for _, m := range ms {
		fmt.Fprintf(&b, "(%d.%06d) can0 123#01\n", 1000+m/1000, (m%1000)*1000)
	}
	return b.String()
}

func opener(text string) Opener {
	return func() (capture.Source, error) { return capture.NewSource(strings.NewReader(text), capture.Options{}) }
}

func play(t *testing.T, text string, opts Options, rec *recorder) Stats {
	t.Helper()
	clock := &fakeClock{now: time.Unix(1_800_000_000, 0), step: rec.clock.step}
	rec.clock, rec.start = clock, clock.now
	opts.Clock = clock
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rec.stop = cancel
	st, err := Run(ctx, opener(text), rec, opts)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func ms(v ...int) []time.Duration {
	var d []time.Duration
	for _, x := range v {
		d = append(d, time.Duration(x)*time.Millisecond)
	}
	return d
}

func TestTiming(t *testing.T) {
	text := capLog(0, 3, 7, 12, 25, 26)
	for _, tc := range []struct {
		name string
		opts Options
		want []sent
	}{
		{"own timing, 10 ms windows", Options{}, []sent{
			{ms(10)[0], 0, ms(0, 3, 7)},
			{ms(20)[0], 3, ms(12)},
			{ms(30)[0], 4, ms(25, 26)},
		}},
		{"twice as fast", Options{Speed: 2}, []sent{
			{ms(10)[0], 0, []time.Duration{0, 1500 * time.Microsecond, 3500 * time.Microsecond, 6 * time.Millisecond}},
			{ms(20)[0], 4, []time.Duration{12500 * time.Microsecond, 13 * time.Millisecond}},
		}},
		{"per frame", Options{PerFrame: true}, []sent{
			{0, 0, ms(0)}, {ms(3)[0], 1, ms(3)}, {ms(7)[0], 2, ms(7)}, {ms(12)[0], 3, ms(12)}, {ms(25)[0], 4, ms(25)}, {ms(26)[0], 5, ms(26)},
		}},
		{"first seq", Options{Window: 20 * time.Millisecond, FirstSeq: 7}, []sent{
			{ms(20)[0], 7, ms(0, 3, 7, 12)},
			{ms(40)[0], 11, ms(25, 26)},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{clock: &fakeClock{}}
			st := play(t, text, tc.opts, rec)
			if !reflect.DeepEqual(rec.got, tc.want) {
				t.Fatalf("got  %v\nwant %v", rec.got, tc.want)
			}
			if st.Frames != 6 || st.NextSeq != tc.opts.FirstSeq+6 || st.Loops != 1 {
				t.Fatalf("stats %+v; want 6 frames, next seq %d, 1 loop", st, tc.opts.FirstSeq+6)
			}
		})
	}
}

// TestLoop: the second pass starts one mean gap (5 ms) after the first
// pass's last frame, and seq goes on.
func TestLoop(t *testing.T) {
	rec := &recorder{clock: &fakeClock{}, after: 4}
	st := play(t, capLog(0, 5, 10), Options{Loop: true, PerFrame: true}, rec)
	want := []sent{{0, 0, ms(0)}, {ms(5)[0], 1, ms(5)}, {ms(10)[0], 2, ms(10)}, {ms(15)[0], 3, ms(15)}}
	if !reflect.DeepEqual(rec.got, want) {
		t.Fatalf("got  %v\nwant %v", rec.got, want)
	}
	if st.Loops != 1 || st.NextSeq != 4 {
		t.Fatalf("stats %+v; want 1 completed loop, next seq 4", st)
	}
}

// TestFlood: no waiting; a batch closes when 10 ms have passed.
func TestFlood(t *testing.T) {
	rec := &recorder{clock: &fakeClock{step: 4 * time.Millisecond}}
	st := play(t, capLog(0, 100, 200, 300, 400, 500, 600), Options{Flood: true}, rec)
	var sizes []int
	for _, s := range rec.got {
		sizes = append(sizes, len(s.offset))
	}
	// Now is read once at the start and once per frame, 4 ms apart:
	// frames at 4, 8 | 12, 16, 20 | 24, 28 ms.
	if !reflect.DeepEqual(sizes, []int{2, 3, 2}) || st.Frames != 7 {
		t.Fatalf("batch sizes %v, stats %+v; want [2 3 2] and 7 frames", sizes, st)
	}
}

func TestSkipsAndFailures(t *testing.T) {
	text := "(1000.000000) can0 123##1001122334455667788\n" + capLog(1, 2)
	rec := &recorder{clock: &fakeClock{}, fail: true}
	st := play(t, text, Options{PerFrame: true}, rec)
	if st.Skipped != 1 || st.SkippedBy[SkipFD] != 1 || st.Frames != 2 || st.Failed != 2 || st.FailedFrames != 2 || st.LastError != "broker away" || st.NextSeq != 2 {
		t.Fatalf("stats %+v; want 1 skipped (CAN FD), 2 frames in 2 failed batches, next seq 2", st)
	}
}

// TestSkipReasons: what is skipped is counted by reason, malformed lines
// (a source that skips them) included.
func TestSkipReasons(t *testing.T) {
	text := "(1000.000000) can0 123##1001122334455667788\n" +
		"not a frame\n" +
		"(1000.001000) can0 124##0\n" +
		capLog(1, 2)
	open := func() (capture.Source, error) {
		return capture.NewSource(strings.NewReader(text), capture.Options{SkipInvalid: true})
	}
	rec := &recorder{clock: &fakeClock{}}
	clock := &fakeClock{now: time.Unix(1_800_000_000, 0)}
	rec.clock, rec.start = clock, clock.now
	st, err := Run(context.Background(), open, rec, Options{PerFrame: true, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]uint64{SkipFD: 2, SkipMalformed: 1}
	if st.Skipped != 3 || !reflect.DeepEqual(st.SkippedBy, want) || st.Frames != 2 {
		t.Fatalf("got %d skipped by %v, %d frames; want 3 by %v, 2 frames", st.Skipped, st.SkippedBy, st.Frames, want)
	}
	if got, want := DescribeSkips(st.SkippedBy), "2 CAN FD frames (wire format v1 carries classic CAN only), 1 malformed line"; got != want {
		t.Errorf("DescribeSkips: got %q, want %q", got, want)
	}
}

// TestSpeedRange: speeds outside MinSpeed..MaxSpeed are refused, not
// turned into an overflow that sends everything at once.
func TestSpeedRange(t *testing.T) {
	pub := PublisherFunc(func(context.Context, []byte) error { return nil })
	for _, tc := range []struct {
		opts Options
		ok   bool
	}{
		{Options{Speed: 1e-300}, false},
		{Options{Speed: 0.0005}, false},
		{Options{Speed: 1001}, false},
		{Options{Speed: math.Inf(1)}, false},
		{Options{Speed: math.NaN()}, false},
		{Options{Speed: -1}, false},
		{Options{Speed: 0.001}, true},
		{Options{Speed: 1000}, true},
		{Options{Speed: 1e-300, Flood: true}, true},
		{Options{Window: time.Microsecond}, false},
		{Options{Window: time.Minute}, false},
		{Options{Window: -time.Millisecond}, false},
		{Options{Window: -time.Millisecond, PerFrame: true}, true},
	} {
		tc.opts.Clock = &fakeClock{}
		_, err := Run(context.Background(), opener(capLog(0, 5)), pub, tc.opts)
		if (err == nil) != tc.ok || (err != nil && !errors.Is(err, ErrOptions)) {
			t.Errorf("speed %g, window %v, flood %v, per frame %v: got %v, want ok %v",
				tc.opts.Speed, tc.opts.Window, tc.opts.Flood, tc.opts.PerFrame, err, tc.ok)
		}
	}
}

func TestErrors(t *testing.T) {
	pub := PublisherFunc(func(context.Context, []byte) error { return nil })
	clock := &fakeClock{}
	if _, err := Run(context.Background(), opener(""), pub, Options{Clock: clock}); err == nil || !strings.Contains(err.Error(), "no frames") {
		t.Errorf("empty capture: got %v, want an error saying it has no frames", err)
	}
	bad := func() (capture.Source, error) { return nil, io.ErrUnexpectedEOF }
	if _, err := Run(context.Background(), bad, pub, Options{Clock: clock}); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("open failing: got %v, want it wrapped", err)
	}
	if _, err := Run(context.Background(), opener(capLog(0)), pub, Options{Speed: -1, Clock: clock}); !errors.Is(err, ErrOptions) {
		t.Errorf("negative speed: got %v, want ErrOptions", err)
	}
	if _, err := Run(context.Background(), opener("(1.0) can0 12G#00\n"), pub, Options{Clock: clock}); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("bad line: got %v, want the capture's line error", err)
	}
}

// TestAllocsPerFrame: a replay allocates the same whether it plays 1,000
// frames or 10,000: nothing per frame.
func TestAllocsPerFrame(t *testing.T) {
	var small, big strings.Builder
	for i := range 10000 {
		line := fmt.Sprintf("(%d.%06d) can0 123#0102030405060708\n", 1000+i/1000, (i%1000)*1000)
		if i < 1000 {
			small.WriteString(line)
		}
		big.WriteString(line)
	}
	pub := PublisherFunc(func(context.Context, []byte) error { return nil })
	allocs := func(text string) float64 {
		return testing.AllocsPerRun(3, func() {
			if _, err := Run(context.Background(), opener(text), pub, Options{Clock: &fakeClock{}}); err != nil {
				t.Fatal(err)
			}
		})
	}
	a, b := allocs(small.String()), allocs(big.String())
	if b > a+2 { // the encoder's buffer may grow once or twice more
		t.Fatalf("%v allocations for 1,000 frames, %v for 10,000: want no allocation per frame", a, b)
	}
}
