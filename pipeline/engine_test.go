package pipeline

import (
	"cmp"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/decoder"
	"github.com/yukart/candec/envelope"
)

const (
	idSpeed = 0x100
	idCount = 0x101
	idTemp  = 0x200
	idGear  = 0x201
	idCode  = 0x300
)

// every returns frames of message id from start to end (ms, inclusive)
// every period ms, the value given by v(at).
func every(id uint32, start, end, period int64, v func(at int64) uint16) []step {
	var s []step
	for at := start; at <= end; at += period {
		s = append(s, step{at: at, id: id, raw: v(at)})
	}
	return s
}

func join(parts ...[]step) []step {
	var s []step
	for _, p := range parts {
		s = append(s, p...)
	}
	return s
}

func constant(v uint16) func(int64) uint16 { return func(int64) uint16 { return v } }
func asValue(at int64) uint16              { return uint16(at) }

func TestPolicyTables(t *testing.T) {
	tests := []struct {
		name   string
		policy string
		steps  []step
		want   []string
	}{
		{
			name:   "no policy publishes every value",
			policy: ``,
			steps:  every(idCount, 0, 20, 10, asValue),
			want:   []string{"Count value 0 @0 #1", "Count value 10 @10 #2", "Count value 20 @20 #3"},
		},
		{
			name:   "cap on the beat: values at window ends go out at once",
			policy: `defaults: {max_rate: 20}`,
			steps:  join(every(idCount, 0, 120, 10, asValue), []step{adv(300)}),
			want: []string{
				"Count value 0 @0 #1", "Count value 50 @50 #2", "Count value 100 @100 #3",
				// The last value of the burst is not swallowed: it goes
				// out when the window closes, with its own timestamp.
				"Count trailing 120 @120 #4",
			},
		},
		{
			name:   "cap with jitter: the first frame after the window end, trailing edge when frames stop",
			policy: `defaults: {max_rate: 20}`,
			steps: []step{
				{0, idCount, 0}, {11, idCount, 11}, {22, idCount, 22}, {33, idCount, 33}, {44, idCount, 44},
				{55, idCount, 55}, {66, idCount, 66}, adv(106),
				// After a quiet period the first value goes out at once.
				{300, idCount, 300}, {301, idCount, 301},
			},
			want: []string{
				"Count value 0 @0 #1",
				"Count value 55 @55 #2",    // window 0–50 closed; the frame at 55 supersedes 44
				"Count trailing 66 @66 #3", // window 55–105 closed, no frame by 66+15: Advance(106)
				"Count value 300 @300 #4",  // quiet since 105: at once
			},
		},
		{
			name:   "cap: a fresh frame after the window end supersedes the held value",
			policy: `defaults: {max_rate: 12.5}`, // 80 ms windows; Gear cycles at 50 ms
			steps:  join(every(idGear, 0, 250, 50, asValue), []step{adv(324), {324, idCode, 1}, adv(326)}),
			want: []string{
				"Gear value 0 @0 #1 P",
				// 50 is held; the window ends at 80; the frame at 100
				// comes before the grace deadline (50+75) and goes out
				// at once: every capped envelope is fresh.
				"Gear value 100 @100 #2", "Gear value 200 @200 #3",
				"Code value 1 @324 #1",
				// The frames stopped: 250 goes out at its grace deadline,
				// 250+50+25 = 325, as trailing.
				"Gear trailing 250 @250 #4",
			},
		},
		{
			name:   "cap: the message stops, the held value goes out at the grace deadline",
			policy: `defaults: {max_rate: 20}`,
			steps: []step{
				{0, idCount, 0}, {10, idCount, 10}, {20, idCount, 20}, {30, idCount, 30}, {45, idCount, 45},
				adv(60), {60, idCode, 1}, adv(61),
				// The next window is timed from the trailing publish at 60.
				{100, idCount, 100}, {110, idCount, 110},
			},
			want: []string{
				"Count value 0 @0 #1",
				// Not at the window end (50): the next frame was due by
				// 45+10+5 = 60; it did not come, so 45 goes out then.
				"Code value 1 @60 #1",
				"Count trailing 45 @45 #2",
				// 100 is inside the window 60–110 and held; 110 ends it.
				"Count value 110 @110 #3",
			},
		},
		{
			name:   "cap: a signal without a cycle time trails at the window end",
			policy: `defaults: {max_rate: 20}`,
			steps:  []step{{0, idCode, 0}, {10, idCode, 10}, {40, idCode, 40}, {50, idCount, 1}, {51, idCount, 2}},
			want: []string{
				"Code value 0 @0 #1",
				"Count value 1 @50 #1",
				"Code trailing 40 @40 #2", // due at 50: before the frame at 51
			},
		},
		{
			name:   "cap: trailing value waits for time to pass the window end",
			policy: `defaults: {max_rate: 10}`,
			steps:  []step{{0, idCount, 1}, {30, idCount, 2}, adv(100), adv(101)},
			want:   []string{"Count value 1 @0 #1", "Count trailing 2 @30 #2"},
		},
		{
			name:   "on change without deadband: equal values suppressed",
			policy: `defaults: {on_change: true}`,
			steps:  []step{{0, idCount, 5}, {10, idCount, 5}, {20, idCount, 6}, {30, idCount, 6}, {40, idCount, 5}},
			want:   []string{"Count value 5 @0 #1", "Count value 6 @20 #2", "Count value 5 @40 #3"},
		},
		{
			name:   "on change, absolute deadband (a change equal to it is suppressed)",
			policy: `defaults: {on_change: true, deadband: 5}`,
			steps: []step{
				{0, idCount, 100}, {10, idCount, 104}, {20, idCount, 106}, {30, idCount, 110},
				{40, idCount, 111}, {50, idCount, 100},
			},
			want: []string{"Count value 100 @0 #1", "Count value 106 @20 #2", "Count value 100 @50 #3"},
		},
		{
			name:   "on change, relative deadband against the last value published",
			policy: `defaults: {on_change: true, deadband_pct: 10}`,
			steps: []step{
				{0, idCount, 100}, {10, idCount, 109}, {20, idCount, 111}, {30, idCount, 122}, {40, idCount, 123},
			},
			want: []string{"Count value 100 @0 #1", "Count value 111 @20 #2", "Count value 123 @40 #3"},
		},
		{
			name:   "heartbeat with frames: the current value every second",
			policy: `defaults: {on_change: true, heartbeat: 1s}`,
			steps:  join(every(idCount, 0, 2000, 100, constant(7)), []step{adv(3500)}),
			want: []string{
				"Count value 7 @0 #1", "Count heartbeat 7 @1000 #2", "Count heartbeat 7 @2000 #3",
				// Frames stopped (no staleness configured): the heartbeat
				// repeats the last value with its own timestamp.
				"Count heartbeat 7 @2000 #4",
			},
		},
		{
			name:   "heartbeat counts from the last publish, change or not",
			policy: `defaults: {on_change: true, heartbeat: 1s}`,
			steps:  []step{{0, idCount, 1}, {600, idCount, 2}, {1000, idCount, 2}, {1500, idCount, 2}, {1600, idCount, 2}},
			want:   []string{"Count value 1 @0 #1", "Count value 2 @600 #2", "Count heartbeat 2 @1600 #3"},
		},
		{
			name:   "stale after frames stop, cleared at once by the next frame",
			policy: `defaults: {on_change: true, stale_after: 30ms}`,
			steps:  join(every(idCount, 0, 100, 10, constant(5)), []step{adv(200), adv(500), {600, idCount, 5}, {610, idCount, 5}}),
			want: []string{
				"Count value 5 @0 #1",
				"Count stale 5 @100 #2 stale",
				"Count value 5 @600 #3",
			},
		},
		{
			name:   "stale is from stale_cycles times the DBC cycle time",
			policy: `defaults: {on_change: true, stale_cycles: 3}`,
			steps:  []step{{0, idCount, 5}, {30, idCount, 5}, {61, idCount, 5}, adv(1000)},
			want: []string{
				// 30 ms apart is not longer than 3 × 10 ms; 31 ms is.
				"Count value 5 @0 #1", "Count stale 5 @30 #2 stale", "Count value 5 @61 #3", "Count stale 5 @61 #4 stale",
			},
		},
		{
			name:   "stale_cycles leaves signals without a cycle time alone; stale_default covers them",
			policy: "defaults: {stale_cycles: 3}\nrules:\n  - match: Code\n    stale_default: 200ms",
			steps:  []step{{0, idCount, 1}, {0, idCode, 2}, adv(1000)},
			want:   []string{"Count value 1 @0 #1", "Code value 2 @0 #1", "Count stale 1 @0 #2 stale", "Code stale 2 @0 #2 stale"},
		},
		{
			name:   "stale drops a value the cap held back, and publishes it",
			policy: `defaults: {max_rate: 1, stale_after: 100ms}`,
			steps:  []step{{0, idCount, 1}, {50, idCount, 2}, adv(1000)},
			want:   []string{"Count value 1 @0 #1", "Count stale 2 @50 #2 stale"},
		},
		{
			name:   "cap and on change: a held value that is undone is not published",
			policy: `defaults: {max_rate: 20, on_change: true}`,
			steps:  []step{{0, idCount, 1}, {10, idCount, 2}, {20, idCount, 1}, adv(1000)},
			want:   []string{"Count value 1 @0 #1"},
		},
		{
			name:   "publish false",
			policy: "rules:\n  - match: Count\n    publish: false",
			steps:  []step{{0, idCount, 1}, {0, idGear, 3}},
			want:   []string{"Gear value 3 @0 #1 D"},
		},
		{
			name:   "labels from the value table",
			policy: `defaults: {on_change: true}`,
			steps:  []step{{0, idGear, 0}, {50, idGear, 3}, {100, idGear, 9}},
			want:   []string{"Gear value 0 @0 #1 P", "Gear value 3 @50 #2 D", "Gear value 9 @100 #3"},
		},
		{
			name:   "unknown IDs and other signals do not disturb",
			policy: `defaults: {max_rate: 20}`,
			steps:  []step{{0, idCount, 1}, {5, 0x7ff, 0}, {10, idTemp, 60}, {20, idCount, 2}, adv(60)},
			want:   []string{"Count value 1 @0 #1", "TempA value 20 @10 #1", "Count trailing 2 @20 #2"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, rec := run(t, tt.policy, tt.steps)
			diff(t, rec.lines(), tt.want)
		})
	}
}

func TestStats(t *testing.T) {
	steps := join(every(idCount, 0, 110, 10, asValue), []step{{0, 0x7ff, 0}, adv(300)})
	steps = append(steps, every(idGear, 400, 600, 50, constant(1))...)
	e, _ := run(t, "defaults: {max_rate: 20, stale_after: 100ms}\nrules:\n  - has_values: true\n    on_change: true\n    max_rate: 0", steps)
	s := e.Stats()
	f := s
	f.Envelopes = [numKinds]uint64{}
	want := Stats{Frames: 18, Decoded: 17, Unknown: 1, Late: 1, Values: 17, SuppressedCap: 8, SuppressedUnchanged: 4, Span: 600 * time.Millisecond}
	if f != want {
		t.Errorf("Stats = %+v, want %+v", f, want)
	}
	for k, n := range map[OutKind]uint64{KindValue: 1 + 2 + 1, KindTrailing: 1, KindStale: 1} {
		if got := s.Published(k); got != n {
			t.Errorf("Published(%s) = %d, want %d", k, got, n)
		}
	}
	if got := s.Total(); got != 6 {
		t.Errorf("Total = %d, want 6", got)
	}
}

func TestFlushAndRepublish(t *testing.T) {
	e, rec := run(t, `defaults: {max_rate: 10, stale_after: 1s}`, []step{
		{0, idCount, 1}, {10, idCount, 2}, {0, idGear, 3},
	})
	e.Republish()
	e.Flush(t0 + 20*ms)
	e.Flush(t0 + 30*ms) // nothing left
	diff(t, rec.lines(), []string{
		"Count value 1 @0 #1",
		"Gear value 3 @0 #1 D",
		// After a reconnect: the retained state again, next seq.
		"Count republish 1 @0 #2",
		"Gear republish 3 @0 #2 D",
		// At shutdown: the value the cap held back.
		"Count flush 2 @10 #3",
	})
}

func TestAdvanceBeforeFramesAndBackwards(t *testing.T) {
	_, rec := run(t, `defaults: {stale_after: 10ms}`, []step{adv(-5000), {0, idCount, 1}, adv(-100), adv(5), adv(11)})
	diff(t, rec.lines(), []string{"Count value 1 @0 #1", "Count stale 1 @0 #2 stale"})
}

func TestLateFrames(t *testing.T) {
	e, rec := run(t, `defaults: {max_rate: 20}`, []step{{100, idCount, 1}, {90, idCount, 2}, adv(200)})
	diff(t, rec.lines(), []string{"Count value 1 @100 #1", "Count trailing 2 @90 #2"})
	if got := e.Stats().Late; got != 1 {
		t.Errorf("Late = %d, want 1", got)
	}
}

func TestTopics(t *testing.T) {
	db := testDB(t)
	tests := []struct {
		template string
		want     string // topic of Fast.Speed, or an error substring
	}{
		{"", "yukart/vehicle/Speed"},
		{"car/{bus}/{message}/{signal}", "car/can2/Fast/Speed"},
		{"car/{signl}", `unknown placeholder "{signl}"`},
		{"car/{signal", "unclosed {"},
		{"car/+/{signal}", "wildcard"},
		{"car/\n{signal}", "control character"},
		{"car/\x1b[2J{signal}", "control character"},
		{"car/\u009b{signal}", "control character"},
		{"car/all", "the same topic"},
		{"car/{message}/{signal}/x", "car/Fast/Speed/x"},
	}
	for _, tt := range tests {
		rec := &recorder{t: t}
		e, err := New(db, Config{TopicTemplate: tt.template, Bus: 2}, rec)
		if err != nil {
			if !strings.Contains(err.Error(), tt.want) || !errors.Is(err, ErrTopic) {
				t.Errorf("template %q: error %v, want one containing %q", tt.template, err, tt.want)
			}
			continue
		}
		if got := e.Topics()[0]; got != tt.want {
			t.Errorf("template %q: topic %q, want %q", tt.template, got, tt.want)
		}
	}
}

func TestTopicCollisionNamesBoth(t *testing.T) {
	m1 := &dbc.Message{Name: "A", ID: 1, Length: 8, Signals: []*dbc.Signal{{Name: "Counter", Length: 4, Factor: 1}}}
	m2 := &dbc.Message{Name: "B", ID: 2, Length: 8, Signals: []*dbc.Signal{{Name: "Counter", Length: 4, Factor: 1}}}
	db, err := dbc.NewDatabase([]*dbc.Message{m1, m2})
	if err != nil {
		t.Fatal(err)
	}
	_, err = New(db, Config{}, &recorder{t: t})
	if err == nil || !strings.Contains(err.Error(), "A.Counter and B.Counter") || !strings.Contains(err.Error(), `"yukart/vehicle/Counter"`) {
		t.Errorf("New = %v, want an error naming A.Counter, B.Counter and the topic", err)
	}
	// Not publishing one of them resolves it.
	p, err := ParsePolicy("p.yaml", []byte("rules:\n  - match: B.Counter\n    publish: false\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := New(db, Config{Policies: p}, &recorder{t: t}); err != nil {
		t.Errorf("New with B.Counter unpublished: %v", err)
	}
}

// TestTopicCollisionListsAll: one error names every clash, so that a
// user can fix them all at once.
func TestTopicCollisionListsAll(t *testing.T) {
	var msgs []*dbc.Message
	for i, name := range []string{"A", "B", "C"} {
		msgs = append(msgs, &dbc.Message{Name: name, ID: uint32(i + 1), Length: 8, Signals: []*dbc.Signal{
			{Name: "Counter", Length: 4, Factor: 1},
			{Name: "Checksum" + name[:0], Start: 8, Length: 8, Factor: 1},
			{Name: "Only" + name, Start: 16, Length: 8, Factor: 1},
		}})
	}
	db, err := dbc.NewDatabase(msgs)
	if err != nil {
		t.Fatal(err)
	}
	_, err = New(db, Config{}, &recorder{t: t})
	want := `pipeline: bad topic: template "yukart/vehicle/{signal}" gives more than one signal the same topic on 2 topics (6 signals); ` +
		`put {message} in the template or set publish: false for all but one signal of each: ` +
		`A.Counter, B.Counter and C.Counter → "yukart/vehicle/Counter"; A.Checksum, B.Checksum and C.Checksum → "yukart/vehicle/Checksum"`
	if err == nil || err.Error() != want {
		t.Errorf("New = %v\nwant %s", err, want)
	}
}

func TestEnvelopeContents(t *testing.T) {
	p, _ := ParsePolicy("p", nil)
	rec := &recorder{t: t}
	e, err := New(testDB(t), Config{Policies: p, Epoch: 99, Encoding: envelope.Msgpack}, rec)
	if err != nil {
		t.Fatal(err)
	}
	f := fr(0, idSpeed, 1234)
	e.Frame(&f)
	f = fr(0, idTemp, 250) // 210 °C: the DBC range is Min 0, Max 0, so no range applies
	e.Frame(&f)
	got := rec.outs
	if len(got) != 2 {
		t.Fatalf("got %d envelopes, want 2", len(got))
	}
	sp := got[0].env
	if sp.Kind != envelope.Float || sp.Float != 1234*0.01 || string(sp.Unit) != "km/h" || sp.Epoch != 99 || sp.TS != t0 || sp.Seq != 1 {
		t.Errorf("Speed envelope %+v, want float 12.34 km/h epoch 99 ts t0 seq 1", sp)
	}
	tp := got[1].env
	if tp.Kind != envelope.Int || tp.Int != 210 || string(tp.Unit) != "degC" {
		t.Errorf("TempA envelope %+v, want exact int 210 degC", tp)
	}
}

func TestOutOfRangeFlag(t *testing.T) {
	db := testDB(t)
	db.Signals[1].Min, db.Signals[1].Max = 0, 100 // Fast2.Count
	rec := &recorder{t: t}
	p, _ := ParsePolicy("p", nil)
	e, err := New(db, Config{Policies: p}, rec)
	if err != nil {
		t.Fatal(err)
	}
	for _, raw := range []uint16{50, 150} {
		f := fr(0, idCount, raw)
		e.Frame(&f)
	}
	diff(t, rec.lines(), []string{"Count value 50 @0 #1", "Count value 150 @0 #2 oor"})
}

func TestWindowStream(t *testing.T) {
	p, err := ParsePolicy("p", []byte(`defaults: {max_rate: 50}`))
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{t: t}
	e, err := New(testDB(t), Config{Policies: p, Window: &WindowConfig{}, Epoch: 7}, rec)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []step{{0, idCount, 1}, {3, idSpeed, 100}, {5, idCount, 2}, {25, idSpeed, 200}, {27, idCount, 4}} {
		f := fr(s.at*ms, s.id, s.raw)
		e.Frame(&f)
	}
	e.Advance(t0 + 100*ms)
	var got []string
	for _, o := range rec.outs {
		if o.kind != KindWindow {
			continue
		}
		w := o.win
		if o.topic != DefaultWindowTopic || w.Epoch != 7 || w.End-w.Start != 10*ms {
			t.Errorf("window on %q epoch %d span %d, want %q epoch 7 span 10 ms", o.topic, w.Epoch, w.End-w.Start, DefaultWindowTopic)
		}
		s := []string{}
		for _, it := range w.Items {
			s = append(s, line(string(it.Topic), "", &it.Envelope))
		}
		got = append(got, strings.Join(append([]string{fmt.Sprintf("#%d @%d", w.Seq, (w.Start-t0)/ms)}, s...), " | "))
	}
	diff(t, got, []string{
		"#1 @0 | Count  1 @0 #1 | Speed  1.0 @3 #1",
		// The cap held 2 (at 5 ms) until 20 ms: it belongs to the window
		// in which it was published, not the one of its timestamp.
		"#2 @20 | Count  2 @5 #2 | Speed  2.0 @25 #2",
		"#3 @40 | Count  4 @27 #3",
	})
	if n := e.Stats().Published(KindWindow); n != 3 {
		t.Errorf("windows published = %d, want 3", n)
	}
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		cfg  Config
		want string
	}{
		{Config{Encoding: 9}, "unknown encoding"},
		{Config{Window: &WindowConfig{Period: -time.Second}}, "negative"},
		{Config{Window: &WindowConfig{Topic: "a/#"}}, "wildcard"},
		{Config{Window: &WindowConfig{Topic: "yukart/vehicle/Speed"}}, "also a signal topic"},
	}
	for _, tt := range tests {
		_, err := New(testDB(t), tt.cfg, &recorder{t: t})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("New(%+v) = %v, want an error containing %q", tt.cfg, err, tt.want)
		}
	}
	if _, err := New(nil, Config{}, &recorder{t: t}); !errors.Is(err, ErrConfig) {
		t.Errorf("New(nil db) = %v, want ErrConfig", err)
	}
}

func TestTidyValues(t *testing.T) {
	tests := []struct {
		name           string
		typ            dbc.ValueType
		factor, offset float64
		phys, want     float64
	}{
		{"tenths", dbc.Integer, 0.1, 0, 7 * 0.1, 0.7},
		{"tenths negative", dbc.Integer, 0.1, 0, 23 * -0.1, -2.3},
		{"offset", dbc.Integer, 0.01, -40.5, 1234*0.01 - 40.5, -28.16},
		{"half steps", dbc.Integer, 0.005, 0, 3 * 0.005, 0.015},
		{"no decimal form", dbc.Integer, 1.0 / 3, 0, 1.0 / 3, 1.0 / 3},
		{"float32 shortest", dbc.Float32, 1, 0, float64(float32(0.0972878)), 0.0972878},
		{"float32 scaled left alone", dbc.Float32, 0.5, 0, float64(float32(0.1)) * 0.5, float64(float32(0.1)) * 0.5},
		{"float64 left alone", dbc.Float64, 1, 0, 0.1 + 0.2, 0.1 + 0.2},
		{"huge left alone", dbc.Integer, 0.001, 0, 1e300, 1e300},
	}
	for _, tt := range tests {
		// The engine applies decoder.Tidy in two steps, as New,
		// setSample and publish do: the scale worked out once, the
		// float32 form only on publish. Together they must give what
		// decoder.Tidy gives decode's output.
		s := sigState{}
		switch tt.typ {
		case dbc.Integer:
			s.decimals = decoder.ScaleDecimals(tt.factor, tt.offset)
		case dbc.Float32:
			s.f32 = tt.factor == 1 && tt.offset == 0
		}
		got := decoder.TidyScaled(tt.phys, s.decimals)
		if s.f32 {
			got = decoder.Shortest32(got)
		}
		v := decoder.Value{Signal: &dbc.Signal{Type: tt.typ, Factor: tt.factor, Offset: tt.offset}, Phys: tt.phys}
		if tt.typ != dbc.Integer {
			v.Flags = decoder.Float
		}
		if want := decoder.Tidy(&v); got != tt.want || want != tt.want {
			t.Errorf("%s: engine tidies %v to %v, decoder.Tidy to %v, want %v", tt.name, tt.phys, got, want, tt.want)
		}
	}
}

// TestCapNeverExceeded feeds jittered, bursty frames of messages with
// and without a cycle time and checks, from the engine time of every
// publish, that no signal ever gets two envelopes less than 1/max_rate
// apart, that the final value of every burst is published, that an
// envelope published by a frame carries that frame's timestamp, and that
// a value is published as trailing only when its message's next frame
// was more than a cycle late.
func TestCapNeverExceeded(t *testing.T) {
	const interval = 50 * ms // max_rate 20
	rng := rand.New(rand.NewPCG(1, 2))
	type msg struct {
		id     uint32
		period int64 // ms
	}
	msgs := []msg{{idCount, 10}, {idSpeed, 10}, {idGear, 50}, {idCode, 7}}
	var steps []step
	for _, m := range msgs {
		at := int64(0)
		for at < 5000 {
			steps = append(steps, step{at: at, id: m.id, raw: uint16(rng.IntN(1000))})
			at += m.period + rng.Int64N(m.period/2+1) - m.period/4
			if rng.IntN(40) == 0 {
				at += rng.Int64N(300) // the sender pauses
			}
		}
	}
	slices.SortStableFunc(steps, func(a, b step) int { return cmp.Compare(a.at, b.at) })
	steps = append(steps, adv(10_000))
	frames := map[uint32][]int64{} // frame times by message, ascending
	for _, s := range steps {
		frames[s.id] = append(frames[s.id], t0+s.at*ms)
	}

	p, err := ParsePolicy("test.yaml", []byte(`defaults: {max_rate: 20}`))
	if err != nil {
		t.Fatal(err)
	}
	var e *Engine
	lastAt := map[string]int64{}
	lastVal := map[string]float64{}
	var fresh, trailing int
	e, err = New(testDB(t), Config{Policies: p}, SinkFunc(func(o *Out) {
		at := e.now // deadlines fire with now at the deadline
		if prev, ok := lastAt[o.Topic]; ok && at-prev < interval {
			t.Errorf("%s: %s at %d ms, %d ms after the previous one, want at least 50", o.Topic, o.Kind, (at-t0)/ms, (at-prev)/ms)
		}
		lastAt[o.Topic] = at
		switch o.Kind {
		case KindValue:
			fresh++
			if o.TS != at {
				t.Errorf("%s: value published at %d ms carries ts %d ms, want its frame's", o.Topic, (at-t0)/ms, (o.TS-t0)/ms)
			}
		case KindTrailing:
			trailing++
			ts := frames[o.Signal.Message.ID]
			i, _ := slices.BinarySearch(ts, o.TS+1)
			if c := int64(o.Signal.Message.CycleTime); c > 0 && i < len(ts) && ts[i] <= o.TS+c {
				t.Errorf("%s: trailing %d ms published at %d ms, but the next frame came on time at %d ms", o.Topic, (o.TS-t0)/ms, (at-t0)/ms, (ts[i]-t0)/ms)
			}
		}
		lastVal[o.Topic] = o.Env.Float + float64(o.Env.Int)
	}))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{}
	for _, s := range steps {
		if s.id == 0 {
			e.Advance(t0 + s.at*ms)
			continue
		}
		f := fr(s.at*ms, s.id, s.raw)
		e.Frame(&f)
		for _, sig := range e.db.Signals {
			if sig.Message.ID == s.id {
				want[e.sigs[sig.Index].topic] = e.sigs[sig.Index].last.float()
			}
		}
	}
	for topic, v := range want {
		if got := lastVal[topic]; got != v {
			t.Errorf("%s: last value published %v, want the final value %v", topic, got, v)
		}
	}
	if fresh == 0 || trailing == 0 {
		t.Errorf("got %d values and %d trailing values, want some of each", fresh, trailing)
	}
}
