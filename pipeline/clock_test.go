package pipeline

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/yukart/candec/envelope"
	"github.com/yukart/candec/frame"
)

// clockPolicy has what a step of the clock can break: caps with held
// values, on-change with heartbeats, stale marks.
const clockPolicy = `
defaults: {max_rate: 20, stale_cycles: 3}
rules:
  - has_values: true
    on_change: true
    heartbeat: 200ms
`

// year2200 is 2200-01-01T00:00:00Z in ns since the Unix epoch.
const year2200 = 7_258_118_400 * int64(time.Second)

// frameAt makes a frame of message id at absolute time at.
func frameAt(at int64, id uint32, raw uint16) frame.Frame {
	f := fr(0, id, raw)
	f.Time = at
	return f
}

// traffic is the test database's traffic from base+from to base+to
// (ms): Speed every 10 ms, Gear every 50 ms (changing every 500 ms),
// TempA every 100 ms.
func traffic(base, from, to int64) []frame.Frame {
	var fs []frame.Frame
	for at := from; at < to; at += 10 {
		fs = append(fs, frameAt(base+at*ms, idSpeed, uint16(at)))
		if at%50 == 0 {
			fs = append(fs, frameAt(base+at*ms, idGear, uint16(at/500%4)))
		}
		if at%100 == 0 {
			fs = append(fs, frameAt(base+at*ms, idTemp, uint16(at/100%200)))
		}
	}
	return fs
}

// runFrames feeds frames to a new engine under clockPolicy and flushes
// it at end.
func runFrames(t *testing.T, frames []frame.Frame, end int64) (*Engine, *recorder) {
	t.Helper()
	rec := &recorder{t: t}
	e, err := New(testDB(t), Config{Policies: mustPolicy(t, clockPolicy)}, rec)
	if err != nil {
		t.Fatal(err)
	}
	for i := range frames {
		e.Frame(&frames[i])
	}
	e.Flush(end)
	return e, rec
}

func insert(fs []frame.Frame, at int, more ...frame.Frame) []frame.Frame {
	out := append([]frame.Frame(nil), fs[:at]...)
	out = append(out, more...)
	return append(out, fs[at:]...)
}

func repeat(f frame.Frame, n int) []frame.Frame {
	fs := make([]frame.Frame, n)
	for i := range fs {
		fs[i] = f
		fs[i].Time += int64(i) * ms
	}
	return fs
}

// TestClockOutliers: frames far from the clock that no run of
// ClockConfirm frames confirms are dropped and counted; the envelopes
// are exactly those of the same capture without them.
func TestClockOutliers(t *testing.T) {
	base := traffic(t0, 0, 2000)
	end := t0 + 3000*ms
	_, wantRec := runFrames(t, base, end)
	want := wantRec.lines()
	wantStats, _ := runFrames(t, base, end)
	now := base[149].Time // the clock where the outliers come

	tests := []struct {
		name         string
		frames       []frame.Frame
		future, past uint64
		last         int64 // Stats.LastOutlier
	}{
		{"one frame in 2200", insert(base, 150, frameAt(year2200, idSpeed, 9999)), 1, 0, year2200},
		{"one frame at the Unix epoch", insert(base, 150, frameAt(0, idTemp, 99)), 0, 1, 0},
		{"one frame just over 10 s ahead", insert(base, 150, frameAt(now+10_001*ms, idGear, 3)), 1, 0, now + 10_001*ms},
		{"one frame just over 10 s behind", insert(base, 150, frameAt(now-10_001*ms, idSpeed, 7)), 0, 1, now - 10_001*ms},
		{"31 frames in 2200, one short of a timebase", insert(base, 150, repeat(frameAt(year2200, idSpeed, 1), 31)...), 31, 0, year2200 + 30*ms},
		{"two runs of 20 that disagree", insert(base, 150, append(repeat(frameAt(year2200, idSpeed, 1), 20), repeat(frameAt(1, idSpeed, 1), 20)...)...), 20, 20, 1 + 19*ms},
		{"one frame in 2200 last", insert(base, len(base), frameAt(year2200, idSpeed, 9999)), 1, 0, year2200},
		{"one frame in 2200 first after the first", insert(base, 1, frameAt(year2200, idSpeed, 9999)), 1, 0, year2200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, rec := runFrames(t, tt.frames, end)
			diff(t, rec.lines(), want)
			s := e.Stats()
			if s.Future != tt.future || s.Past != tt.past || s.Discontinuities != 0 || s.LastOutlier != tt.last {
				t.Errorf("future %d, past %d, discontinuities %d, last outlier %d; want %d, %d, 0, %d",
					s.Future, s.Past, s.Discontinuities, s.LastOutlier, tt.future, tt.past, tt.last)
			}
			w := wantStats.Stats()
			if s.Frames != w.Frames+s.Future+s.Past || s.Values != w.Values || s.Late != w.Late || s.Span != w.Span {
				t.Errorf("frames %d, values %d, late %d, span %s; want %d, %d, %d, %s",
					s.Frames, s.Values, s.Late, s.Span, w.Frames+s.Future+s.Past, w.Values, w.Late, w.Span)
			}
		})
	}
}

var seqRE = regexp.MustCompile(` #\d+`)

// TestClockDiscontinuity: a new timebase (a clock step, captures joined
// with time going back) restarts the policies. The envelopes are those
// of the first part run alone, less the values its final flush
// published (the second part's first values supersede them), then those
// of the second part run alone on a fresh engine, with seq going on: no
// stale marks for the step, no value held back by a cap that opened
// before it.
func TestClockDiscontinuity(t *testing.T) {
	tests := []struct {
		name  string
		shift int64 // of the second part's timebase against the first's
	}{
		{"captures joined, time back 3 h", -3 * int64(time.Hour)},
		{"clock stepped 2 h forward", 2 * int64(time.Hour)},
		{"clock stepped 11 s forward", 11 * int64(time.Second)},
		{"clock stepped 11 s back", -11 * int64(time.Second)},
		{"to the year 2200", year2200 - t0},
		{"to the Unix epoch", -t0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := traffic(t0, 0, 1000)
			b := traffic(t0+tt.shift, 0, 1000)
			aEnd, bEnd := a[len(a)-1].Time, b[len(b)-1].Time

			_, ra := runFrames(t, a, aEnd)
			_, rb := runFrames(t, b, bEnd)
			var want []string
			for _, o := range ra.outs {
				if o.kind == KindFlush {
					continue
				}
				want = append(want, seqRE.ReplaceAllString(line(o.topic, o.kind.String(), &o.env), ""))
			}
			for _, o := range rb.outs {
				want = append(want, seqRE.ReplaceAllString(line(o.topic, o.kind.String(), &o.env), ""))
			}

			e, rec := runFrames(t, append(append([]frame.Frame(nil), a...), b...), bEnd)
			var got []string
			tr := envelope.NewTracker()
			for _, o := range rec.outs {
				got = append(got, seqRE.ReplaceAllString(line(o.topic, o.kind.String(), &o.env), ""))
				if ob := tr.Observe(o.topic, &o.env); ob.Lost != 0 || ob.Duplicate || ob.Restart {
					t.Errorf("%s seq %d: %+v, want consecutive seq", o.topic, o.env.Seq, ob)
				}
			}
			diff(t, got, want)
			s := e.Stats()
			if s.Discontinuities != 1 || s.LastJump != b[0].Time-aEnd || s.Future+s.Past+s.Late != 0 {
				t.Errorf("discontinuities %d, jump %d, future %d, past %d, late %d; want 1, %d, 0, 0, 0",
					s.Discontinuities, s.LastJump, s.Future, s.Past, s.Late, b[0].Time-aEnd)
			}
			if got, want := s.Published(KindStale), uint64(0); got != want {
				t.Errorf("%d stale marks, want %d", got, want)
			}
			if want := time.Duration(aEnd-a[0].Time) + time.Duration(bEnd-b[0].Time); s.Span != want {
				t.Errorf("span %s, want %s", s.Span, want)
			}
		})
	}
}

// TestDiscontinuityStaleAfterwards: a message that does not come back
// on the new timebase is marked stale its stale_after after the step,
// not at once.
func TestDiscontinuityStaleAfterwards(t *testing.T) {
	fs := traffic(t0, 0, 1000)
	back := t0 - int64(time.Hour)
	for at := int64(0); at < 1000; at += 10 {
		fs = append(fs, frameAt(back+at*ms, idSpeed, uint16(at)))
	}
	e, rec := runFrames(t, fs, back+990*ms)
	var stale []string
	speedBefore := map[string]int64{} // newest Speed ts on the new timebase before the mark
	var speed int64
	for _, o := range rec.outs {
		if strings.HasSuffix(o.topic, "/Speed") && o.env.TS < t0 {
			speed = o.env.TS
		}
		if o.env.Flags&envelope.Stale != 0 {
			stale = append(stale, line(o.topic, o.kind.String(), &o.env))
			speedBefore[o.topic] = speed
		}
	}
	// Gear (50 ms cycle) goes stale 150 ms after the step, TempA (100 ms)
	// 300 ms after; each mark carries the last value of the old timebase.
	diff(t, stale, []string{"Gear stale 1 @950 #8 R stale", "TempA stale -31 @900 #11 stale"})
	for topic, min := range map[string]int64{"yukart/vehicle/Gear": 140, "yukart/vehicle/TempA": 290} {
		if got := (speedBefore[topic] - back) / ms; got < min {
			t.Errorf("%s marked stale after Speed @%d ms of the new timebase, want after %d ms", topic, got, min)
		}
	}
	if s := e.Stats(); s.Discontinuities != 1 {
		t.Errorf("discontinuities %d, want 1", s.Discontinuities)
	}
}

// TestClockJumpAllocs: outliers and discontinuities do not allocate.
func TestClockJumpAllocs(t *testing.T) {
	db, frames := carData(t, "yukart.dbc")
	bs, _ := batches(t, frames)
	e, err := New(db, Config{Window: &WindowConfig{}}, &countSink{})
	if err != nil {
		t.Fatal(err)
	}
	feed(e, bs, 0)
	pass := int64(0)
	allocs := testing.AllocsPerRun(4, func() {
		// Every pass jumps a day forward or back: a discontinuity.
		pass++
		feed(e, bs, (pass%2)*24*int64(time.Hour))
		var f frame.Frame
		f.Time = year2200
		e.Frame(&f) // an outlier
	})
	if allocs != 0 {
		t.Errorf("%v allocations per pass with a discontinuity and an outlier, want 0", allocs)
	}
	if s := e.Stats(); s.Discontinuities < 4 || s.Future+s.Past < 4 {
		t.Errorf("discontinuities %d, outliers %d: the test did not jump", s.Discontinuities, s.Future+s.Past)
	}
}

func TestClockConfig(t *testing.T) {
	for _, tt := range []struct {
		cfg  Config
		want string
	}{
		{Config{MaxClockJump: -time.Second}, "max clock jump -1s is negative"},
		{Config{ClockConfirm: -1}, "clock confirm -1 frames is out of range (1–4096)"},
		{Config{ClockConfirm: MaxClockConfirm + 1}, "clock confirm 4097 frames"},
	} {
		if _, err := New(testDB(t), tt.cfg, &recorder{t: t}); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("New(%+v) = %v, want an error containing %q", tt.cfg, err, tt.want)
		}
	}
	// A smaller jump limit and confirmation: 2 s ahead and 2 frames make
	// a timebase.
	rec := &recorder{t: t}
	e, err := New(testDB(t), Config{Policies: mustPolicy(t, clockPolicy), MaxClockJump: time.Second, ClockConfirm: 2}, rec)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []frame.Frame{fr(0, idSpeed, 1), fr(2000*ms, idSpeed, 2), fr(0, idSpeed, 3), fr(2000*ms, idSpeed, 4), fr(2010*ms, idSpeed, 5)} {
		e.Frame(&f)
	}
	// 0.03 is held by the cap, then superseded by 0.04 on the new
	// timebase, whose cap window opens at once.
	if s := e.Stats(); s.Future != 1 || s.Discontinuities != 1 || s.SuppressedCap != 1 {
		t.Errorf("future %d, discontinuities %d, suppressed by the cap %d; want 1, 1, 1", s.Future, s.Discontinuities, s.SuppressedCap)
	}
	diff(t, rec.lines(), []string{"Speed value 0.01 @0 #1", "Speed value 0.04 @2000 #2"})
}

// TestDiscontinuityHeldValue: a value a cap holds when the clock steps,
// of a message that does not come back, goes out at its grace deadline
// on the new timebase (1.5 cycles after the step), then its stale mark.
func TestDiscontinuityHeldValue(t *testing.T) {
	var fs []frame.Frame
	for at := int64(0); at < 100; at += 10 {
		fs = append(fs, fr(at*ms, idSpeed, uint16(at)))
	}
	back := t0 - int64(time.Hour)
	for at := int64(0); at < 400; at += 10 {
		fs = append(fs, frameAt(back+at*ms, idTemp, 50))
	}
	_, rec := runFrames(t, fs, back+400*ms)
	// When each Speed envelope went out, on the engine's clock.
	var e *Engine
	var at []int64
	e, err := New(testDB(t), Config{Policies: mustPolicy(t, clockPolicy)}, SinkFunc(func(o *Out) {
		if o.Signal.Name == "Speed" && o.Kind != KindValue {
			at = append(at, (e.Now()-back)/ms)
		}
	}))
	if err != nil {
		t.Fatal(err)
	}
	for i := range fs {
		e.Frame(&fs[i])
	}
	if len(at) != 2 || at[0] != 15 || at[1] != 30 {
		t.Errorf("Speed trailing and stale published at %v ms after the step, want [15 30]", at)
	}
	diff(t, rec.lines()[:6], []string{
		"Speed value 0.0 @0 #1",
		"Speed value 0.5 @50 #2",
		"TempA value 10 @-3600000 #1",
		"Speed trailing 0.9 @90 #3",    // at the step + 15 ms
		"Speed stale 0.9 @90 #4 stale", // at the step + 30 ms
		"TempA value 10 @-3599950 #2",  // the step + 50 ms: TempA's cap window
	})
}

// TestClockBurstThereAndBack: a batch of 40 frames stamped in 2200, as
// many as make a timebase, then the old clock again: two
// discontinuities, and publishing goes on as before on both sides.
func TestClockBurstThereAndBack(t *testing.T) {
	base := traffic(t0, 0, 2000)
	burst := make([]frame.Frame, 40)
	for i := range burst {
		burst[i] = frameAt(year2200+int64(i)*ms, idSpeed, 5000)
	}
	e, rec := runFrames(t, insert(base, 130, burst...), t0+2000*ms)
	s := e.Stats()
	if s.Discontinuities != 2 || s.Future+s.Past != 0 || s.Published(KindStale) != 0 {
		t.Errorf("discontinuities %d, outliers %d, stale marks %d; want 2, 0, 0", s.Discontinuities, s.Future+s.Past, s.Published(KindStale))
	}
	// The envelopes of the last second, long after the return, are
	// those of the run without the burst (Speed, 100 Hz capped at 20 Hz:
	// 20 values and the final flush), seq aside.
	_, plain := runFrames(t, base, t0+2000*ms)
	last := func(r *recorder) []string {
		var out []string
		for _, o := range r.outs {
			if o.env.TS >= t0+1000*ms && o.env.TS < t0+2000*ms {
				out = append(out, seqRE.ReplaceAllString(line(o.topic, o.kind.String(), &o.env), ""))
			}
		}
		return out
	}
	diff(t, last(rec), last(plain))
	if n := len(last(plain)); n < 30 {
		t.Fatalf("%d envelopes in the last second: the test proves little", n)
	}
}
