package service

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
	"github.com/yukart/candec/internal/testkit/brokertest"
	"github.com/yukart/candec/pipeline"
)

// readCapture reads the first d of frame time of a candump log.
func readCapture(t testing.TB, path string, d time.Duration) []frame.Frame {
	t.Helper()
	r, err := capture.Open(path, capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var fs []frame.Frame
	for {
		var f frame.Frame
		err := r.Next(&f)
		if errors.Is(err, io.EOF) {
			return fs
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(fs) > 0 && f.Time-fs[0].Time >= int64(d) {
			return fs
		}
		fs = append(fs, f)
	}
}

// TestOfflineLiveEquivalence: the same frames give the same envelopes
// (topic, payload: value, ts, seq, flags) through the pipeline offline
// and through the live service over mosquitto. It plays the first 5 s of
// testdata/idle.log as 10 ms batches under the built-in default policy
// (rate caps, on-change with heartbeats, stale marks).
//
// The clock lag is 1 s here instead of 100 ms: the batches are sent
// back to back, not in real time, and a pause of the test process longer
// than the lag would let the watermark overtake frames still in flight,
// which is the one case where live and offline may differ (see the
// package documentation). The watermark still moves the live clock after
// the last batch, and the offline run ends at the same time.
func TestOfflineLiveEquivalence(t *testing.T) {
	frames := readCapture(t, "../testdata/idle.log", 5*time.Second)
	equivalence(t, frames)
}

// TestOfflineLiveEquivalenceClockJumps: the clock guard decides the same
// live and offline. The capture is 3 s of testdata/idle.log with one
// frame stamped in the year 2200 in the middle (dropped), then the same
// 3 s again 3 h earlier (captures joined: a discontinuity).
func TestOfflineLiveEquivalenceClockJumps(t *testing.T) {
	part := readCapture(t, "../testdata/idle.log", 3*time.Second)
	var frames []frame.Frame
	frames = append(frames, part[:len(part)/2]...)
	wild := part[len(part)/2]
	wild.Time = 7_258_118_400 * int64(time.Second)
	frames = append(frames, wild)
	frames = append(frames, part[len(part)/2:]...)
	for _, f := range part {
		f.Time -= 3 * int64(time.Hour)
		frames = append(frames, f)
	}
	r := equivalence(t, frames)
	st := r.engine.Stats()
	if st.Future != 1 || st.Past != 0 || st.Discontinuities != 1 {
		t.Errorf("engine: future %d, past %d, discontinuities %d; want 1, 0, 1", st.Future, st.Past, st.Discontinuities)
	}
	if f, d := counter(t, r.m.clock.future), counter(t, r.m.clock.discontinuities); f != 1 || d != 1 {
		t.Errorf("metrics: future %v, discontinuities %v; want 1, 1", f, d)
	}
}

// equivalence plays frames through the live service and offline and
// requires the same envelopes; it returns the stopped service.
func equivalence(t *testing.T, frames []frame.Frame) *running {
	t.Helper()
	db, err := dbc.Load("../testdata/yukart.dbc")
	if err != nil {
		t.Fatal(err)
	}

	b := brokertest.Start(t)
	sub := brokertest.Connect(t, b.URL)
	sub.Subscribe("yukart/vehicle/+", DefaultStatusTopic)
	cfg := testConfig(t, b.URL)
	cfg.Policy = "" // the built-in default
	cfg.ClockLag = time.Second
	r := startService(t, cfg, db)
	r.waitConnected(t, sub)

	pub := brokertest.Connect(t, b.URL)
	shadow := play(t, r, pub, db, frames)
	r.stop(t)
	final := r.engine.Now() // Run has returned: the engine is ours
	if n := counter(t, r.m.coalesced); n != 0 {
		t.Fatalf("%v envelopes coalesced in the outbox; the comparison needs every one", n)
	}
	var published float64
	for _, c := range r.m.published {
		published += counter(t, c)
	}
	msgs := sub.WaitFor("every envelope and offline", func(m []brokertest.Message) bool {
		var n int
		for _, x := range m {
			if strings.HasPrefix(x.Topic, "yukart/vehicle/") {
				n++
			}
		}
		return float64(n) == published && statuses(m)[len(statuses(m))-1] == StatusOffline
	})
	var live []brokertest.Message
	for _, m := range msgs {
		if strings.HasPrefix(m.Topic, "yukart/vehicle/") {
			live = append(live, m)
		}
	}
	var first envelope.Envelope
	if err := envelope.Parse(live[0].Payload, &first); err != nil {
		t.Fatal(err)
	}

	// Offline: the same frames, the same epoch, the same end, through
	// the very calls decode --policy makes: the frames as a capture read
	// by capture.NewSource, pipeline.RunOffline with a LineWriter, its
	// tail the time the live clock ran on after the last frame (the
	// shadow engine's clock is the offline one).
	if final < shadow.Now() {
		t.Fatalf("live clock %d ended before the frames' %d", final, shadow.Now())
	}
	var capt bytes.Buffer
	cw := capture.NewWriter(&capt)
	for i := range frames {
		if err := cw.Write(&frames[i], "can0"); err != nil {
			t.Fatal(err)
		}
	}
	if err := cw.Flush(); err != nil {
		t.Fatal(err)
	}
	src, err := capture.NewSource(&capt, capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var lines bytes.Buffer
	lw := pipeline.NewLineWriter(&lines)
	e, err := pipeline.New(db, pipeline.Config{Epoch: first.Epoch}, lw)
	if err != nil {
		t.Fatal(err)
	}
	res, err := pipeline.RunOffline(context.Background(), src, e, pipeline.OfflineOptions{Tail: time.Duration(final - shadow.Now()), Stop: lw.Err})
	if err == nil {
		err = lw.Flush()
	}
	if err != nil || res.Frames != len(frames) || res.End != final {
		t.Fatalf("offline: %d of %d frames, end %d (live %d), error %v", res.Frames, len(frames), res.End, final, err)
	}
	type env struct {
		topic   string
		payload []byte
	}
	var offline []env
	for _, l := range bytes.SplitAfter(lines.Bytes(), []byte("\n")) {
		if topic, payload, ok := bytes.Cut(bytes.TrimSuffix(l, []byte("\n")), []byte(" ")); ok {
			offline = append(offline, env{string(topic), payload})
		}
	}

	st := e.Stats()
	kinds := map[pipeline.OutKind]uint64{}
	for _, k := range pipeline.Kinds() {
		if n := st.Published(k); n > 0 {
			kinds[k] = n
		}
	}
	if kinds[pipeline.KindValue] == 0 || kinds[pipeline.KindTrailing]+kinds[pipeline.KindFlush] == 0 || kinds[pipeline.KindHeartbeat] == 0 {
		t.Fatalf("offline envelopes by kind %v: the test wants values, trailing values and heartbeats", kinds)
	}
	if len(live) != len(offline) {
		t.Fatalf("live published %d envelopes, offline %d", len(live), len(offline))
	}
	// Per topic the order is the publish order; across topics the broker
	// may interleave differently, so compare topic by topic.
	liveBy, offBy := map[string][][]byte{}, map[string][][]byte{}
	for _, m := range live {
		liveBy[m.Topic] = append(liveBy[m.Topic], m.Payload)
	}
	for _, o := range offline {
		offBy[o.topic] = append(offBy[o.topic], o.payload)
	}
	for tp, want := range offBy {
		got := liveBy[tp]
		for i := range want {
			if i >= len(got) || !bytes.Equal(got[i], want[i]) {
				var g []byte
				if i < len(got) {
					g = got[i]
				}
				t.Fatalf("%s envelope %d:\n live    %s\n offline %s", tp, i, g, want[i])
			}
		}
	}
	t.Logf("%d frames, %d envelopes on %d topics, equal live and offline; by kind %v", len(frames), len(offline), len(offBy), kinds)
	return r
}

// play sends frames to the service as a bridge would, in 10 ms batches,
// each once the service has run the one before. The shadow engine it
// returns ran the same frames: its clock is an offline run's.
func play(t *testing.T, r *running, pub *brokertest.Client, db *dbc.Database, frames []frame.Frame) *pipeline.Engine {
	t.Helper()
	// A shadow engine says how many frames the service will have
	// accounted for (decoded, unknown, or dropped by the clock guard)
	// once it has run a batch: frames held to confirm a new timebase
	// are not, yet.
	shadow, err := pipeline.New(db, pipeline.Config{}, pipeline.SinkFunc(func(*pipeline.Out) {}))
	if err != nil {
		t.Fatal(err)
	}
	var seq uint64
	for start := 0; start < len(frames); {
		// 10 ms batches; a frame whose time goes back starts a new one.
		end := start
		for end < len(frames) && frames[end].Time >= frames[start].Time && frames[end].Time < frames[start].Time+int64(10*time.Millisecond) {
			end++
		}
		for i := start; i < end; i++ {
			shadow.Frame(&frames[i])
		}
		st := shadow.Stats()
		want := float64(st.Decoded + st.Unknown + st.Future + st.Past)
		pub.Publish(DefaultRawTopic, batch(t, seq, frames[start:end]), false)
		waitUntil(t, "batch decoded and published", func() bool {
			got := counter(t, r.m.decoded) + counter(t, r.m.unknownID) + counter(t, r.m.clock.future) + counter(t, r.m.clock.past)
			return got >= want && r.out.len() == 0
		})
		seq += uint64(end - start)
		start = end
	}
	return shadow
}
