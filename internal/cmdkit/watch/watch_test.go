package watch

import (
	"bytes"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

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
		// The status topic is not periodic: no age makes it old.
		{"status old", by["status"].Old, false},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.what, c.got, c.want)
		}
	}
	s := m.Summary(now)
	if s.Topics != 4 || s.Messages != 7 || s.Lost != 3 || s.Stale != 1 || s.Old != 3 {
		t.Errorf("summary = %d topics, %d messages, %d lost, %d stale, %d old; want 4, 7, 3, 1, 3",
			s.Topics, s.Messages, s.Lost, s.Stale, s.Old)
	}
	if s.Latency.N != 6 { // 3 speed + 3 frames; a stale mark is no fresh value
		t.Errorf("latency samples = %d, want 6", s.Latency.N)
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

func envEpoch(seq, epoch uint64, ts time.Time) []byte {
	e := envelope.Envelope{TS: ts.UnixNano(), Seq: seq, Epoch: epoch}
	e.SetFloat(1)
	return envelope.AppendJSON(nil, &e)
}

// TestRetained: retained messages, delivered on subscription with values
// published long before, are not latency, rate or age: with no traffic
// the latency summary is empty and the topics show as retained, not old.
func TestRetained(t *testing.T) {
	m := New(Config{StaleAfter: 2 * time.Second})
	// Published 78 s before the watch started.
	m.ObserveRetained("v/a", envEpoch(5, 1, t0.Add(-78*time.Second)), t0)
	m.ObserveRetained("v/b", envEpoch(9, 1, t0.Add(-78*time.Second)), t0)
	now := t0.Add(10 * time.Second)
	s := m.Summary(now)
	if s.Latency.N != 0 || s.Messages != 0 || s.Retained != 2 || s.Old != 0 || s.Lost != 0 {
		t.Errorf("no traffic: got %d latency samples, %d messages, %d retained, %d old, %d lost; want 0, 0, 2, 0, 0",
			s.Latency.N, s.Messages, s.Retained, s.Old, s.Lost)
	}
	a := s.TopicStats[0]
	if !a.Retained || a.RetainedMessages != 1 || a.Seq != 5 || flags(&a) != "RETAINED" {
		t.Errorf("v/a = %+v (flags %q); want retained, seq 5, flags RETAINED", a, flags(&a))
	}
	// The publisher sends again: seq goes on from the retained one, and
	// this one is live.
	m.Observe("v/a", envEpoch(7, 1, now.Add(-2*time.Millisecond)), now)
	s = m.Summary(now)
	a = s.TopicStats[0]
	if a.Retained || a.Lost != 1 || s.Latency.N != 1 || a.LastLatency != 2*time.Millisecond || s.Messages != 1 {
		t.Errorf("after a live message: retained %v, lost %d, %d latency samples, last latency %v, %d messages; want false, 1, 1, 2ms, 1",
			a.Retained, a.Lost, s.Latency.N, a.LastLatency, s.Messages)
	}
	// Live topics age into OLD; the retained-only one does not.
	later := m.Snapshot(now.Add(3 * time.Second))
	if !later[0].Old || later[1].Old {
		t.Errorf("3 s later: v/a old %v, v/b old %v; want true, false", later[0].Old, later[1].Old)
	}
}

// TestRestartsOncePerEpoch: a decoder restart changes the epoch of every
// signal topic and is one restart, not one per topic.
func TestRestartsOncePerEpoch(t *testing.T) {
	m := New(Config{})
	topics := []string{"v/a", "v/b", "v/c"}
	for _, tp := range topics {
		m.Observe(tp, envEpoch(10, 1, t0), t0)
	}
	for _, tp := range topics { // restart into epoch 2
		m.Observe(tp, envEpoch(1, 2, t0), t0)
	}
	for _, tp := range topics {
		m.Observe(tp, envEpoch(2, 2, t0), t0)
	}
	for _, tp := range topics { // and into epoch 3
		m.Observe(tp, envEpoch(1, 3, t0), t0)
	}
	s := m.Summary(t0)
	if s.Restarts != 2 || s.Lost != 0 {
		t.Errorf("got %d restarts, %d lost; want 2, 0", s.Restarts, s.Lost)
	}
	if s.TopicStats[0].Restarts != 2 {
		t.Errorf("v/a: got %d restarts, want 2", s.TopicStats[0].Restarts)
	}
	var buf bytes.Buffer
	if err := WriteSummary(&buf, s, m.Histogram()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), ", 2 publisher restarts;") {
		t.Errorf("summary text lacks 2 publisher restarts:\n%s", buf.String())
	}
}

// TestWriteTableFit: the live table fits the terminal: no line wider
// than it, the header kept, and a line for the topics left out.
func TestWriteTableFit(t *testing.T) {
	m := New(Config{})
	for i := range 60 {
		name := "yukart/vehicle/A_rather_long_signal_name_" + strconv.Itoa(100+i)
		m.Observe(name, env(1, t0, 12345.678, "km/h", false), t0.Add(time.Millisecond))
	}
	stats := m.Snapshot(t0.Add(time.Second))
	tests := []struct {
		width, rows int
		wantLines   int
		wantMore    string
	}{
		{80, 24, 24, "… 38 more topics"},
		{80, 50, 50, "… 12 more topics"},
		{120, 100, 61, ""},
		{0, 0, 61, ""},
		{40, 2, 2, "… 60 more"},
	}
	for _, tt := range tests {
		var buf bytes.Buffer
		if err := WriteTableFit(&buf, stats, tt.width, tt.rows); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
		if len(lines) != tt.wantLines {
			t.Errorf("%dx%d: got %d lines, want %d", tt.width, tt.rows, len(lines), tt.wantLines)
		}
		if !strings.HasPrefix(lines[0], "topic") {
			t.Errorf("%dx%d: first line %q, want the header", tt.width, tt.rows, lines[0])
		}
		for i, l := range lines {
			if n := utf8.RuneCountInString(l); tt.width > 0 && n > tt.width {
				t.Errorf("%dx%d: line %d is %d wide, want at most %d: %q", tt.width, tt.rows, i, n, tt.width, l)
			}
		}
		if tt.width == 80 && !strings.Contains(lines[1], "…signal_name_100  ") {
			t.Errorf("%dx%d: first row %q, want the topic shortened from the left", tt.width, tt.rows, lines[1])
		}
		if last := lines[len(lines)-1]; tt.wantMore != "" && !strings.HasPrefix(last, tt.wantMore) {
			t.Errorf("%dx%d: last line %q, want it to start with %q", tt.width, tt.rows, last, tt.wantMore)
		}
	}
}

func TestValidateFilter(t *testing.T) {
	tests := []struct {
		filter string
		ok     bool
	}{
		{"yukart/vehicle/+", true},
		{"#", true},
		{"+/+/#", true},
		{"/", true},
		{"a/#/b", false},
		{"a#", false},
		{"a/b#", false},
		{"a+", false},
		{"a/+b/c", false},
		{"", false},
		{"a\x00b", false},
		{"a\xffb", false},
	}
	for _, tt := range tests {
		err := ValidateFilter(tt.filter)
		if (err == nil) != tt.ok {
			t.Errorf("ValidateFilter(%q) = %v, want ok %v", tt.filter, err, tt.ok)
		}
		if err != nil && !errors.Is(err, ErrFilter) {
			t.Errorf("ValidateFilter(%q) = %v, want ErrFilter", tt.filter, err)
		}
	}
}
