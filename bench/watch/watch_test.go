package watch

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/yukart/candec/envelope"
	"github.com/yukart/candec/frame"
	"github.com/yukart/candec/rawbatch"
)

var t0 = time.Unix(1_760_000_000, 0)

func env(seq uint64, ts time.Time, v float64, unit string, stale bool) []byte {
	e := envelope.Envelope{TS: ts.UnixNano(), Seq: seq, Epoch: 1, Unit: []byte(unit)}
	e.SetFloat(v)
	if stale {
		e.Flags |= envelope.Stale
	}
	return envelope.AppendJSON(nil, &e)
}

func TestMonitor(t *testing.T) {
	m := New(Config{StaleAfter: 2 * time.Second})
	// Speed: seq 1, 2, 5 (3 and 4 lost), 3 ms latency each.
	for i, seq := range []uint64{1, 2, 5} {
		at := t0.Add(time.Duration(i) * 100 * time.Millisecond)
		m.Observe("v/Speed", env(seq, at, 10+float64(i), "km/h", false), at.Add(3*time.Millisecond))
	}
	// Temp: flagged stale, and then silent for 3 s.
	m.Observe("v/Temp", env(1, t0, 21.5, "degC", true), t0.Add(time.Millisecond))
	// Raw: two batches with one frame lost between them.
	b1, _ := rawbatch.AppendBatch(nil, 0, []frame.Frame{{Time: t0.UnixNano(), ID: 1, Len: 1}, {Time: t0.UnixNano(), ID: 2, Len: 1}})
	b2, _ := rawbatch.AppendBatch(nil, 3, []frame.Frame{{Time: t0.UnixNano(), ID: 1, Len: 1}})
	m.Observe("can/raw", b1, t0.Add(5*time.Millisecond))
	m.Observe("can/raw", b2, t0.Add(10*time.Millisecond))
	m.Observe("status", []byte("online"), t0)

	now := t0.Add(3 * time.Second)
	stats := m.Snapshot(now)
	if len(stats) != 4 {
		t.Fatalf("got %d topics, want 4", len(stats))
	}
	by := map[string]TopicStats{}
	for _, s := range stats {
		by[s.Topic] = s
	}
	checks := []struct {
		what      string
		got, want any
	}{
		{"speed kind", by["v/Speed"].Kind, Envelope},
		{"speed messages", by["v/Speed"].Messages, uint64(3)},
		{"speed lost", by["v/Speed"].Lost, uint64(2)},
		{"speed seq", by["v/Speed"].Seq, uint64(5)},
		{"speed last", by["v/Speed"].Last, "12 km/h"},
		{"speed latency", by["v/Speed"].LastLatency, 3 * time.Millisecond},
		{"speed old", by["v/Speed"].Old, true},
		{"temp stale", by["v/Temp"].Stale, true},
		{"raw kind", by["can/raw"].Kind, Raw},
		{"raw lost", by["can/raw"].Lost, uint64(1)},
		{"raw seq", by["can/raw"].Seq, uint64(3)},
		{"raw items", by["can/raw"].Items, uint64(3)},
		{"raw max latency", by["can/raw"].MaxLatency, 10 * time.Millisecond},
		{"status kind", by["status"].Kind, Text},
		{"status last", by["status"].Last, `"online"`},
		{"status age", by["status"].Age, 3 * time.Second},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.what, c.got, c.want)
		}
	}
	s := m.Summary(now)
	if s.Topics != 4 || s.Messages != 7 || s.Lost != 3 || s.Stale != 1 || s.Old != 4 {
		t.Errorf("summary = %d topics, %d messages, %d lost, %d stale, %d old; want 4, 7, 3, 1, 4",
			s.Topics, s.Messages, s.Lost, s.Stale, s.Old)
	}
	if s.Latency.N != 7 { // 3 speed + 1 temp + 3 frames
		t.Errorf("latency samples = %d, want 7", s.Latency.N)
	}

	var buf bytes.Buffer
	if err := WriteTable(&buf, stats); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "v/Temp") || !strings.Contains(buf.String(), "STALE OLD") {
		t.Errorf("table lacks the stale temperature:\n%s", buf.String())
	}
	buf.Reset()
	if err := WriteSummary(&buf, s, m.Histogram()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "4 topics, 7 messages") || !strings.Contains(buf.String(), "lost 3") {
		t.Errorf("summary text:\n%s", buf.String())
	}
}

func TestRate(t *testing.T) {
	m := New(Config{})
	for i := range 50 {
		at := t0.Add(time.Duration(i) * 20 * time.Millisecond)
		m.Observe("v/x", env(uint64(i+1), at, 1, "", false), at)
	}
	stats := m.Snapshot(t0.Add(time.Second))
	if got := stats[0].Rate; got != 50 {
		t.Errorf("rate = %v, want 50", got)
	}
	// A second snapshot soon after keeps the rate of the last interval.
	if got := m.Snapshot(t0.Add(time.Second + 10*time.Millisecond))[0].Rate; got != 50 {
		t.Errorf("rate 10 ms later = %v, want 50", got)
	}
	if got := m.Snapshot(t0.Add(2 * time.Second))[0].Rate; got != 0 {
		t.Errorf("rate after a silent second = %v, want 0", got)
	}
}

func TestWindowTopic(t *testing.T) {
	w := envelope.NewWindowEncoder(envelope.JSON)
	msg := func(seq uint64) []byte {
		w.Reset(t0.UnixNano(), t0.UnixNano()+1e7)
		e := envelope.Envelope{TS: t0.UnixNano(), Seq: seq}
		w.Add("v/a", &e)
		w.Add("v/b", &e)
		return w.Append(nil, seq, 1)
	}
	m := New(Config{})
	m.Observe("win", msg(1), t0.Add(time.Millisecond))
	m.Observe("win", msg(3), t0.Add(2*time.Millisecond))
	st := m.Snapshot(t0.Add(time.Second))[0]
	if st.Kind != Window || st.Lost != 1 || st.Items != 4 || st.Last != "2 envelopes" || st.Seq != 3 {
		t.Errorf("window topic = %+v, want kind window, 1 lost, 4 items, last \"2 envelopes\", seq 3", st)
	}
}

func TestFormatAge(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{0, "0s"},
		{12345 * time.Microsecond, "12ms"},
		{3449 * time.Millisecond, "3.4s"},
		{299600 * time.Millisecond, "5m0s"},
	}
	for _, tt := range tests {
		if got := FormatAge(tt.d); got != tt.want {
			t.Errorf("FormatAge(%v): got %q, want %q", tt.d, got, tt.want)
		}
	}
}

func TestFormatValue(t *testing.T) {
	e := envelope.Envelope{Label: []byte("DRIVE")}
	e.SetInt(3)
	if got, want := FormatValue(&e), "3 (DRIVE)"; got != want {
		t.Errorf("FormatValue = %q, want %q", got, want)
	}
	e = envelope.Envelope{Unit: []byte("V")}
	e.SetFloat(3.3)
	if got, want := FormatValue(&e), "3.3 V"; got != want {
		t.Errorf("FormatValue = %q, want %q", got, want)
	}
}
