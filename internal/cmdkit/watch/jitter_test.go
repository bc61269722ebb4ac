package watch

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/yukart/candec/envelope"
	"github.com/yukart/candec/internal/lab/jitter"
)

// cyclicArrivals follow 16 values of a 50 ms signal: the 17th teaches
// the period (the 16th interval of their ts) and gives the first
// deviation; then 4, 0 and 10 ms; a stale mark and a heartbeat in
// between give none.
var cyclicArrivals = []struct {
	seq    uint64
	ts, at time.Duration // after t0
	stale  bool
}{
	{seq: 17, ts: 800 * time.Millisecond, at: 803 * time.Millisecond},                // the period is known: 0
	{seq: 18, ts: 850 * time.Millisecond, at: 853 * time.Millisecond},                // 0
	{seq: 19, ts: 900 * time.Millisecond, at: 907 * time.Millisecond},                // 4 ms late
	{seq: 20, ts: 900 * time.Millisecond, at: 990 * time.Millisecond},                // a heartbeat (old ts): breaks
	{seq: 21, ts: 950 * time.Millisecond, at: 1040 * time.Millisecond},               // after the break: none
	{seq: 22, ts: 1000 * time.Millisecond, at: 1090 * time.Millisecond},              // 0
	{seq: 23, ts: 1050 * time.Millisecond, at: 1130 * time.Millisecond},              // 10 ms early
	{seq: 24, ts: 1050 * time.Millisecond, at: 1500 * time.Millisecond, stale: true}, // stale mark: breaks
	{seq: 25, ts: 1600 * time.Millisecond, at: 1602 * time.Millisecond},              // none
}

func TestCyclicJitter(t *testing.T) {
	m := New(Config{})
	// The retained value, then 16 live values 50 ms apart, arriving 3 ms
	// after their ts: no deviation can be measured before the period is
	// known.
	m.ObserveRetained("v/Speed", env(1, t0.Add(-time.Hour), 1, "", false), t0)
	for i := range 16 {
		ts := t0.Add(time.Duration(i) * 50 * time.Millisecond)
		m.Observe("v/Speed", env(uint64(i+1), ts, 1, "", false), ts.Add(3*time.Millisecond))
	}
	if s := m.Summary(t0.Add(time.Second)); s.Jitter.N != 0 {
		t.Fatalf("jitter before the period is learned: %+v, want none", s.Jitter)
	}
	for _, a := range cyclicArrivals {
		m.Observe("v/Speed", env(a.seq, t0.Add(a.ts), 1, "", a.stale), t0.Add(a.at))
	}
	// An on-change signal: values at irregular times are not cyclic.
	gaps := []time.Duration{10, 30, 10, 80, 20, 200, 10, 40}
	at := t0
	for i := range 20 {
		at = at.Add(gaps[i%len(gaps)] * time.Millisecond)
		m.Observe("v/Gear", env(uint64(i+1), at, float64(i), "", false), at.Add(time.Millisecond))
	}
	s := m.Summary(t0.Add(2 * time.Second))
	// Deviations 0, 0, 4, 0, 10 ms of 50: p50 (the 3rd) 0, max 10 ms,
	// 20 %.
	if j := s.Jitter; j.N != 5 || j.Topics != 1 || j.P50 != 0 || j.Max != 10 || j.MaxPct != 20 {
		t.Errorf("summary jitter = %+v, want 5 intervals of 1 cyclic topic, p50 0, max 10 ms (20 %%)", j)
	}
	by := map[string]TopicStats{}
	for _, st := range s.TopicStats {
		by[st.Topic] = st
	}
	if st := by["v/Speed"]; st.Period != 50*time.Millisecond || st.MaxJitter != 10*time.Millisecond || st.LastJitter != 10*time.Millisecond || !st.HasJitter {
		t.Errorf("v/Speed: period %v, jitter %v / %v; want 50ms, 10ms / 10ms", st.Period, st.LastJitter, st.MaxJitter)
	}
	if st := by["v/Gear"]; st.Period != 0 || st.HasJitter {
		t.Errorf("v/Gear (on change): period %v, jitter %v; want none", st.Period, st.MaxJitter)
	}
	var buf bytes.Buffer
	if err := WriteTable(&buf, s.TopicStats); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "10.0 / 10.0 of 50.0") {
		t.Errorf("table lacks v/Speed's jitter:\n%s", buf.String())
	}
	buf.Reset()
	if err := WriteSummary(&buf, s, m.Histogram()); err != nil {
		t.Fatal(err)
	}
	if want := "cyclic jitter, |arrival interval − period| of 1 cyclic topics: p50 0.000 ms (0.0 % of the period), p99 10.000 ms (20.0 %), max 10.000 ms (20.0 %) over 5 intervals"; !strings.Contains(buf.String(), want) {
		t.Errorf("summary lacks %q:\n%s", want, buf.String())
	}
}

// TestWindowJitter checks cyclic jitter per item topic of a window
// topic: every item arrives with its window.
func TestWindowJitter(t *testing.T) {
	w := envelope.NewWindowEncoder(envelope.JSON)
	m := New(Config{})
	// v/a every 20 ms of ts, in windows that arrive 20 ms apart: the
	// 17th teaches the period and gives a deviation of 0, the 18th 0,
	// the 19th, 26 ms after the one before, 6 ms.
	arrival := t0
	for i := range jitter.LearnIntervals + 3 {
		ts := t0.UnixNano() + int64(i)*20e6
		w.Reset(ts, ts+1e7)
		e := envelope.Envelope{TS: ts, Seq: uint64(i + 1), Epoch: 1}
		w.Add("v/a", &e)
		gap := 20 * time.Millisecond
		if i == jitter.LearnIntervals+2 {
			gap = 26 * time.Millisecond
		}
		arrival = arrival.Add(gap)
		m.Observe("win", w.Append(nil, uint64(i+1), 1), arrival)
	}
	s := m.Summary(arrival)
	if j := s.Jitter; j.N != 3 || j.Topics != 1 || j.P50 != 0 || j.Max != 6 || j.MaxPct != 30 {
		t.Errorf("jitter = %+v, want 3 intervals of 1 cyclic topic, p50 0, max 6 ms (30 %%)", j)
	}
	if st := s.TopicStats[0]; st.MaxJitter != 6*time.Millisecond || st.Period != 0 {
		t.Errorf("window topic: jitter %v, period %v; want 6ms and none (its items have their own)", st.MaxJitter, st.Period)
	}
}
