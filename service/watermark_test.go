package service

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/yukart/candec/frame"
)

// TestWatermark: when frames stop, the engine's clock follows the wall
// clock from the last frame, clock_lag behind, so that the trailing
// value of a burst and the stale marks come out; while less than the lag
// has passed, nothing moves.
func TestWatermark(t *testing.T) {
	s, err := New(testConfig(t, "mqtt://127.0.0.1:1"), loadTestDB(t), nil, prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	s.out.setConnected(true)
	wall := time.Unix(1_900_000_000, 0)
	s.now = func() time.Time { return wall }
	ts := int64(1_700_000_000_000_000_000) // frame time need not be wall time
	// A burst: 0 goes out at once, 1…4 are held by the 20 Hz cap.
	var fs []frame.Frame
	for i := range 5 {
		fs = append(fs, motorFrame(ts+int64(i)*int64(time.Millisecond), uint16(i), 0))
	}
	s.handleBatch(batch(t, 0, fs), DefaultRawTopic)
	taken := func() []msg {
		var ms []msg
		for {
			m, ok := s.out.take(nil)
			if !ok {
				return ms
			}
			ms = append(ms, m)
		}
	}
	if got := len(taken()); got != 2 {
		t.Fatalf("after the burst: %d envelopes, want 2 (Speed and Torque, first values)", got)
	}
	last := ts + 4*int64(time.Millisecond)
	for _, tc := range []struct {
		after time.Duration // wall time since the burst
		want  string        // what comes out
	}{
		{50 * time.Millisecond, ""},                                   // inside the lag: the clock stays
		{150 * time.Millisecond, "Speed trailing 4, Torque trailing"}, // 50 ms of frame time later: the cap's window closed
		{380 * time.Millisecond, ""},                                  // 280 ms of frame time: not yet stale (stale_after is 300ms)
		{500 * time.Millisecond, "Speed stale, Torque stale"},
	} {
		wall = time.Unix(1_900_000_000, 0).Add(tc.after)
		s.advance()
		var got string
		for _, m := range taken() {
			if got != "" {
				got += ", "
			}
			got += m.topic[len("yukart/vehicle/"):] + " " + m.kind.String()
			if m.kind.String() == "trailing" && m.topic == "yukart/vehicle/Speed" {
				got += " " + string(m.payload[len(`{"value":`)])
				if m.ts != last {
					t.Errorf("trailing Speed has ts %d, want the last frame's %d", m.ts, last)
				}
			}
		}
		if got != tc.want {
			t.Errorf("%v after the burst: got %q, want %q (engine now %d ms after the last frame)", tc.after, got, tc.want, (s.engine.Now()-last)/1e6)
		}
	}
}
