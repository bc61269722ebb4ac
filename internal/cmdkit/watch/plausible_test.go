package watch

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"

	"github.com/yukart/candec/envelope"
	"github.com/yukart/candec/frame"
	"github.com/yukart/candec/rawbatch"
)

// envAt is an envelope of epoch 1 with the given seq, ts and flags.
func envAt(seq uint64, ts int64, flags envelope.Flags) []byte {
	e := envelope.Envelope{TS: ts, Seq: seq, Epoch: 1, Flags: flags}
	e.SetFloat(1)
	return envelope.AppendJSON(nil, &e)
}

// TestLatencyFreshOnly: heartbeats, republishes and stale marks carry
// the ts of the frame their value came from, so their arrival minus ts
// is the value's age, not the path's latency: only fresh values count.
// The decoder here takes 10 ms; the heartbeats come 1.6 s after their
// frame.
func TestLatencyFreshOnly(t *testing.T) {
	m := New(Config{})
	frameTS := t0.UnixNano()
	// The retained value, then live: a fresh value 10 ms after its frame,
	// two heartbeats of it (same ts, later seq), a stale mark, and a new
	// value.
	m.Publish(&paho.Publish{Topic: "v/a", Payload: envAt(4, frameTS-int64(time.Second), 0), Retain: true}, t0)
	m.Publish(&paho.Publish{Topic: "v/a", Payload: envAt(5, frameTS, 0)}, t0.Add(10*time.Millisecond))
	m.Publish(&paho.Publish{Topic: "v/a", Payload: envAt(6, frameTS, 0)}, t0.Add(1609*time.Millisecond))
	m.Publish(&paho.Publish{Topic: "v/a", Payload: envAt(7, frameTS, 0)}, t0.Add(2609*time.Millisecond))
	m.Publish(&paho.Publish{Topic: "v/a", Payload: envAt(8, frameTS, envelope.Stale)}, t0.Add(3*time.Second))
	m.Publish(&paho.Publish{Topic: "v/a", Payload: envAt(9, frameTS+int64(4*time.Second), 0)}, t0.Add(4*time.Second+10*time.Millisecond))
	// A heartbeat whose retained value came first is not fresh either.
	m.Publish(&paho.Publish{Topic: "v/b", Payload: envAt(2, frameTS, 0), Retain: true}, t0)
	m.Publish(&paho.Publish{Topic: "v/b", Payload: envAt(3, frameTS, 0)}, t0.Add(900*time.Millisecond))
	// Window items: the same rule per item topic.
	w := envelope.NewWindowEncoder(envelope.JSON)
	win := func(seq uint64, ts int64, flags envelope.Flags) []byte {
		w.Reset(ts, ts+1e7)
		e := envelope.Envelope{TS: ts, Seq: seq, Epoch: 1, Flags: flags}
		w.Add("v/c", &e)
		return w.Append(nil, seq, 1)
	}
	m.Publish(&paho.Publish{Topic: "win", Payload: win(1, frameTS, 0)}, t0.Add(10*time.Millisecond))
	m.Publish(&paho.Publish{Topic: "win", Payload: win(2, frameTS, 0)}, t0.Add(1500*time.Millisecond))
	m.Publish(&paho.Publish{Topic: "win", Payload: win(3, frameTS, envelope.Stale)}, t0.Add(2500*time.Millisecond))

	s := m.Summary(t0.Add(5 * time.Second))
	if s.Latency.N != 3 || s.Latency.Max != 10 {
		t.Errorf("latency: got %d samples, max %v ms; want 3 fresh values, max 10 ms", s.Latency.N, s.Latency.Max)
	}
	if s.Lost != 0 || s.Messages != 9 || s.Retained != 2 {
		t.Errorf("got %d lost, %d messages, %d retained; want 0, 9, 2", s.Lost, s.Messages, s.Retained)
	}
}

// TestImplausible: a seq or ts no publisher sends is counted by reason;
// such a seq moves nothing (no loss of 2^64), such a ts gives no
// latency (none negative); a value stamped after its arrival is counted
// apart from the latency.
func TestImplausible(t *testing.T) {
	m := New(Config{})
	ts := t0.UnixNano()
	obs := func(topic string, payload []byte, at time.Duration) {
		m.Publish(&paho.Publish{Topic: topic, Payload: payload}, t0.Add(at))
	}
	obs("v/a", envAt(1, ts, 0), time.Millisecond)
	obs("v/a", envAt(math.MaxUint64, ts+1, 0), 2*time.Millisecond) // seq
	obs("v/a", envAt(1<<53+1, ts+2, 0), 3*time.Millisecond)        // seq
	obs("v/a", envAt(0, ts+3, 0), 4*time.Millisecond)              // seq
	obs("v/a", envAt(2, math.MinInt64, 0), 5*time.Millisecond)     // ts
	obs("v/a", envAt(2, -1, 0), 5*time.Millisecond)                // ts
	obs("v/a", envAt(2, math.MaxInt64, 0), 5*time.Millisecond)     // ts
	obs("v/a", envAt(2, ts+int64(25*time.Hour), 0), 5*time.Millisecond)
	// Plausible, but stamped 1 s after its arrival: clocks apart.
	obs("v/a", envAt(2, ts+int64(time.Second), 0), 6*time.Millisecond)
	// A raw batch whose seq would pass 2^64, then one with a frame
	// stamped in 1969 next to a good one.
	hostile, _ := rawbatch.AppendBatch(nil, math.MaxUint64-1, []frame.Frame{{Time: ts, ID: 1, Len: 1}})
	obs("can/raw", hostile, time.Millisecond)
	mixed, _ := rawbatch.AppendBatch(nil, 5, []frame.Frame{{Time: -5, ID: 1, Len: 1}, {Time: ts, ID: 2, Len: 1}})
	obs("can/raw", mixed, 2*time.Millisecond)

	s := m.Summary(t0.Add(time.Second))
	want := map[string]uint64{ReasonSeq: 4, ReasonTS: 5}
	for r, n := range want {
		if s.Implausible[r] != n {
			t.Errorf("implausible %s: got %d, want %d (all: %v)", r, s.Implausible[r], n, s.Implausible)
		}
	}
	if s.Lost != 0 {
		t.Errorf("lost: got %d, want 0", s.Lost)
	}
	if s.Ahead != 1 || s.Latency.N != 2 || s.Latency.Max != 2 {
		t.Errorf("got %d ahead, %d latency samples, max %v ms; want 1, 2 (the first envelope, the good frame), 2 ms",
			s.Ahead, s.Latency.N, s.Latency.Max)
	}
	var buf bytes.Buffer
	if err := WriteTable(&buf, s.TopicStats); err != nil {
		t.Fatal(err)
	}
	if err := WriteSummary(&buf, s, m.Histogram()); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"implausible messages (seq: left out; ts: no latency): 4 seq, 5 ts", "1 fresh values stamped after their arrival", "0 (7 implausible)", "0 (2 implausible)"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "--") || strings.Contains(out, "lost -") {
		t.Errorf("output has a negative count:\n%s", out)
	}
}

// TestOutputSafe: an envelope's unit and label, a topic and a text
// payload reach the table escaped and cut.
func TestOutputSafe(t *testing.T) {
	m := New(Config{})
	e := envelope.Envelope{TS: t0.UnixNano(), Seq: 1, Epoch: 1, Unit: []byte("°C\x1b]0;pwned\x07"), Label: []byte("\x1b[2J" + strings.Repeat("x", 1<<20))}
	e.SetInt(3)
	m.Observe("v/\x1b[31mred", envelope.AppendJSON(nil, &e), t0)
	m.Observe("status", []byte("\x1b[2J\u009b"+strings.Repeat("y", 1<<20)), t0)
	var buf bytes.Buffer
	if err := WriteTable(&buf, m.Snapshot(t0)); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if strings.ContainsAny(out, "\x1b\x07\u009b") {
		t.Errorf("a control character reaches the terminal:\n%.500q", out)
	}
	for _, want := range []string{`v/\x1b[31mred`, `°C\x1b]0;pwned\a (\x1b[2Jxxx`, `"\x1b[2J\u009byyy`} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %s:\n%.500s", want, out)
		}
	}
	if len(out) > 2000 {
		t.Errorf("table of two topics is %d bytes, want the values cut", len(out))
	}
}
