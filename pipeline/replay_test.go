package pipeline

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/yukart/candec/capture"
	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/envelope"
	"github.com/yukart/candec/frame"
	"github.com/yukart/candec/rawbatch"
)

// carData loads the car's DBC and capture from testdata.
func carData(t testing.TB, dbcName string) (*dbc.Database, []frame.Frame) {
	t.Helper()
	db, err := dbc.Load("../testdata/" + dbcName)
	if err != nil {
		t.Fatal(err)
	}
	r, err := capture.Open("../testdata/idle.log", capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var frames []frame.Frame
	for {
		var fr frame.Frame
		if err := r.Next(&fr); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		frames = append(frames, fr)
	}
	if len(frames) == 0 {
		t.Fatal("idle.log has no frames")
	}
	return db, frames
}

// withGaps cuts frames out of a capture so that staleness, heartbeats
// and trailing values after quiet periods all happen: every frame
// between 5 s and 6 s, and message 0x0A0 between 10 s and 12 s.
func withGaps(frames []frame.Frame) []frame.Frame {
	start := frames[0].Time
	var out []frame.Frame
	for _, f := range frames {
		at := time.Duration(f.Time - start)
		if at >= 5*time.Second && at < 6*time.Second {
			continue
		}
		if f.ID == 0x0A0 && at >= 10*time.Second && at < 12*time.Second {
			continue
		}
		out = append(out, f)
	}
	return out
}

// byteSink keeps every message as "topic payload".
type byteSink struct{ out []string }

func (s *byteSink) Publish(o *Out) { s.out = append(s.out, o.Topic+" "+string(o.Payload)) }

// replay runs frames through a new engine and returns its messages.
// With advances nil it is the offline decoder (RunOffline, time moving
// only with the frames); otherwise, between frames, it calls Advance at
// the times advances returns (each at most the next frame's time, as a
// live service's watermark would be). Both end 5 s after the last frame.
func replay(t *testing.T, db *dbc.Database, cfg Config, frames []frame.Frame, advances func(prev, next int64) []int64) []string {
	t.Helper()
	const tail = 5 * time.Second
	sink := &byteSink{}
	e, err := New(db, cfg, sink)
	if err != nil {
		t.Fatal(err)
	}
	if advances == nil {
		if _, err := RunOffline(context.Background(), &frameSource{frames: frames}, e, OfflineOptions{Tail: tail}); err != nil {
			t.Fatal(err)
		}
		return sink.out
	}
	prev := frames[0].Time
	for i := range frames {
		f := &frames[i]
		for _, w := range advances(prev, f.Time) {
			e.Advance(w)
		}
		e.Frame(f)
		prev = f.Time
	}
	end := prev + int64(tail)
	for _, w := range advances(prev, end) {
		e.Advance(w)
	}
	e.Advance(end)
	e.Flush(end)
	return sink.out
}

// TestOfflineEqualsLive is the equivalence the service relies on: the
// same frames give the same messages, byte for byte and in the same
// order, whether time moves only with frames (the offline decoder) or is
// also advanced by a clock between frames (the live service), however
// often and wherever that clock ticks.
func TestOfflineEqualsLive(t *testing.T) {
	db, frames := carData(t, "yukart.dbc")
	frames = withGaps(frames)
	policy, err := ParsePolicy("test", []byte(`
defaults: {max_rate: 20, stale_cycles: 3}
rules:
  - has_values: true
    on_change: true
    heartbeat: 1s
  - unit: degC
    on_change: true
    deadband: 0.5
    heartbeat: 700ms
  - match: "WSS_*"
    max_rate: 7
    on_change: true
    deadband_pct: 2
    heartbeat: 300ms
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, enc := range []envelope.Encoding{envelope.JSON, envelope.Msgpack} {
		cfg := Config{Policies: policy, Encoding: enc, Epoch: 1, Window: &WindowConfig{Period: 10 * time.Millisecond}}
		offline := replay(t, db, cfg, frames, nil)
		rng := rand.New(rand.NewPCG(1, 2))
		clocks := map[string]func(prev, next int64) []int64{
			"every frame": func(_, next int64) []int64 { return []int64{next} },
			"1 ms ticks": func(prev, next int64) []int64 {
				var ws []int64
				for w := prev - prev%int64(time.Millisecond) + int64(time.Millisecond); w <= next; w += int64(time.Millisecond) {
					ws = append(ws, w)
				}
				return ws
			},
			"random": func(prev, next int64) []int64 {
				var ws []int64
				for range rng.IntN(3) {
					ws = append(ws, prev+rng.Int64N(next-prev+1))
				}
				return ws // unsorted: an Advance backwards does nothing
			},
		}
		for name, clock := range clocks {
			live := replay(t, db, cfg, frames, clock)
			if len(live) != len(offline) {
				t.Errorf("%s, clock %s: %d messages live, %d offline", enc, name, len(live), len(offline))
			}
			for i := range min(len(live), len(offline)) {
				if live[i] != offline[i] {
					t.Errorf("%s, clock %s: message %d differs:\n live    %q\n offline %q", enc, name, i, live[i], offline[i])
					break
				}
			}
		}
		// The test must see every kind of output, or it proves little.
		seen := map[string]bool{}
		for _, m := range offline {
			switch {
			case strings.HasPrefix(m, DefaultWindowTopic):
				seen["window"] = true
			case strings.Contains(m, `"stale":true`) || strings.Contains(m, "\xa5stale\xc3"):
				seen["stale"] = true
			}
		}
		if !seen["window"] || !seen["stale"] {
			t.Errorf("%s: offline output lacks windows or stale marks: %v", enc, seen)
		}
	}
}

// TestCarPolicyKinds checks, on the car capture with gaps, that the
// default policy produces each kind of envelope and that seq on every
// topic rises by exactly 1, counted by the subscriber's Tracker.
func TestCarPolicyKinds(t *testing.T) {
	db, frames := carData(t, "yukart.dbc")
	frames = withGaps(frames)
	sink := &trackSink{t: t, tr: envelope.NewTracker()}
	e, err := New(db, Config{Epoch: 5}, sink)
	if err != nil {
		t.Fatal(err)
	}
	for i := range frames {
		e.Frame(&frames[i])
	}
	e.Advance(frames[len(frames)-1].Time + int64(2*time.Second))
	e.Republish()
	s := e.Stats()
	for _, k := range []OutKind{KindValue, KindTrailing, KindHeartbeat, KindStale, KindRepublish} {
		if s.Published(k) == 0 {
			t.Errorf("no %s envelopes on the car capture", k)
		}
	}
	tot := sink.tr.Totals()
	if tot.Lost != 0 || tot.Duplicates != 0 || tot.Restarts != 0 || tot.Received != s.Total() {
		t.Errorf("tracker totals %+v, want %d received, none lost, duplicated or restarted", tot, s.Total())
	}
	if s.Unknown != 0 || s.Decoded != uint64(len(frames)) {
		t.Errorf("decoded %d of %d frames, %d unknown", s.Decoded, len(frames), s.Unknown)
	}
	t.Logf("%d frames, %d values → %d envelopes (%.1f%%): %v; suppressed cap %d, unchanged %d",
		len(frames), s.Values, s.Total(), 100*float64(s.Total())/float64(s.Values), s.Envelopes, s.SuppressedCap, s.SuppressedUnchanged)
}

type trackSink struct {
	t   *testing.T
	tr  *envelope.Tracker
	env envelope.Envelope
}

func (s *trackSink) Publish(o *Out) {
	if err := envelope.Parse(o.Payload, &s.env); err != nil {
		s.t.Fatalf("%s: %v", o.Payload, err)
	}
	s.tr.Observe(o.Topic, &s.env)
}

// batches cuts a capture into raw batches of 10 ms, as the bridge sends
// them, and returns them with the capture's span: adding it to every
// timestamp replays the capture again, later.
func batches(t testing.TB, frames []frame.Frame) ([][]byte, int64) {
	var out [][]byte
	var seq uint64
	for i := 0; i < len(frames); {
		j := i
		for j < len(frames) && frames[j].Time < frames[i].Time+int64(10*time.Millisecond) {
			j++
		}
		b, err := rawbatch.AppendBatch(nil, seq, frames[i:j])
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
		seq += uint64(j - i)
		i = j
	}
	span := frames[len(frames)-1].Time - frames[0].Time + int64(10*time.Millisecond)
	return out, span
}

// feed runs raw batches through e with time shifted by shift: the whole
// service path short of MQTT (parse, decode, policy, envelope bytes).
func feed(e *Engine, bs [][]byte, shift int64) int {
	var f frame.Frame
	n := 0
	for _, b := range bs {
		batch, err := rawbatch.Parse(b)
		if err != nil {
			panic(err)
		}
		for i := range batch.Len() {
			batch.Frame(i, &f)
			f.Time += shift
			e.Frame(&f)
		}
		n += batch.Len()
	}
	return n
}

type countSink struct{ n, bytes int }

func (s *countSink) Publish(o *Out) { s.n++; s.bytes += len(o.Payload) }

func TestPipelineAllocs(t *testing.T) {
	for _, tc := range []struct {
		dbc    string
		policy *PolicyFile
		window *WindowConfig
	}{
		{"yukart.dbc", nil, nil},
		{"yukart.dbc", nil, &WindowConfig{}},
		{"mix8.dbc", mustPolicy(t, ""), nil},
	} {
		db, frames := carData(t, tc.dbc)
		bs, span := batches(t, frames)
		e, err := New(db, Config{Policies: tc.policy, Window: tc.window}, &countSink{})
		if err != nil {
			t.Fatal(err)
		}
		pass := 0
		feed(e, bs, 0) // warm up: every signal and topic seen, buffers grown
		pass++
		allocs := testing.AllocsPerRun(2, func() {
			feed(e, bs, int64(pass)*span)
			pass++
		})
		if allocs != 0 {
			t.Errorf("%s (window %v): %v allocations per pass of %d frames, want 0", tc.dbc, tc.window != nil, allocs, len(frames))
		}
		adv := testing.AllocsPerRun(100, func() {
			e.Advance(e.Now() + int64(time.Millisecond))
		})
		if adv != 0 {
			t.Errorf("%s: Advance allocates %v times, want 0", tc.dbc, adv)
		}
	}
}

func mustPolicy(t testing.TB, src string) *PolicyFile {
	p, err := ParsePolicy("inline", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// BenchmarkPipeline measures the service's in-process path on the car
// capture: raw batch parse → decode → policy → envelope bytes, with the
// MQTT write left out. One op is one frame (ns/frame is exact, ns/op is
// rounded to whole batches).
func BenchmarkPipeline(b *testing.B) {
	cases := []struct {
		name, dbc string
		policy    string // "" = the default policy
		window    bool
		enc       envelope.Encoding
	}{
		{"yukart/default", "yukart.dbc", "", false, envelope.JSON},
		{"yukart/default/msgpack", "yukart.dbc", "", false, envelope.Msgpack},
		{"yukart/default/window", "yukart.dbc", "", true, envelope.JSON},
		{"yukart/nocap", "yukart.dbc", "{}", false, envelope.JSON},
		{"mix8/nocap", "mix8.dbc", "{}", false, envelope.JSON},
		{"mix8/nocap/msgpack", "mix8.dbc", "{}", false, envelope.Msgpack},
		{"mix8/default", "mix8.dbc", "", false, envelope.JSON},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			db, frames := carData(b, c.dbc)
			bs, span := batches(b, frames)
			cfg := Config{Encoding: c.enc}
			if c.policy != "" {
				cfg.Policies = mustPolicy(b, c.policy)
			}
			if c.window {
				cfg.Window = &WindowConfig{}
			}
			sink := &countSink{}
			e, err := New(db, cfg, sink)
			if err != nil {
				b.Fatal(err)
			}
			feed(e, bs, 0) // warm up
			before := e.Stats()
			sink.n = 0
			var f frame.Frame
			shift, k, done := span, 0, 0
			b.ReportAllocs()
			b.ResetTimer()
			for done < b.N {
				batch, err := rawbatch.Parse(bs[k])
				if err != nil {
					b.Fatal(err)
				}
				for i := range batch.Len() {
					batch.Frame(i, &f)
					f.Time += shift
					e.Frame(&f)
				}
				done += batch.Len()
				if k++; k == len(bs) {
					k, shift = 0, shift+span
				}
			}
			b.StopTimer()
			s := e.Stats()
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(done), "ns/frame")
			b.ReportMetric(float64(s.Values-before.Values)/float64(done), "values/frame")
			b.ReportMetric(float64(sink.n)/float64(done), "envelopes/frame")
		})
	}
}
