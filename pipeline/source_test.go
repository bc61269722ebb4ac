package pipeline

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/frame"
)

// j1939DB has a J1939 message with two signals and a plain one:
//
//	0x0CF004FE EEC1.Torque  8 bit integer, %    (J1939, 100 ms cycle)
//	0x0CF004FE EEC1.Speed  16 bit from bit 8, rpm
//	0x123      Gear.Gear    8 bit integer
func j1939DB(t testing.TB) *dbc.Database {
	t.Helper()
	eec1 := &dbc.Message{Name: "EEC1", ID: 0x0CF004FE, Extended: true, J1939: true, Length: 8, CycleTime: 100 * time.Millisecond,
		Signals: []*dbc.Signal{
			{Name: "Torque", Start: 0, Length: 8, Factor: 1, Unit: "%"},
			{Name: "Speed", Start: 8, Length: 16, Factor: 1, Unit: "rpm"},
		}}
	gear := &dbc.Message{Name: "Gear", ID: 0x123, Length: 8, Signals: []*dbc.Signal{{Name: "Gear", Length: 8, Factor: 1}}}
	db, err := dbc.NewDatabase([]*dbc.Message{eec1, gear})
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// eec1 makes an EEC1 frame from source address sa (priority 3) at
// t0+at ms, torque tq and speed sp.
func eec1(at int64, sa uint8, tq uint8, sp uint16) frame.Frame {
	f := frame.Frame{Time: t0 + at*ms, ID: 0x0CF00400 | uint32(sa), Len: 8, Flags: frame.Extended}
	f.Data[0] = tq
	binary.LittleEndian.PutUint16(f.Data[1:], sp)
	return f
}

func newSourceEngine(t *testing.T, tmpl, policy string) (*Engine, *recorder) {
	t.Helper()
	p, err := ParsePolicy("test.yaml", []byte(policy))
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{t: t}
	e, err := New(j1939DB(t), Config{TopicTemplate: tmpl, Policies: p}, rec)
	if err != nil {
		t.Fatal(err)
	}
	return e, rec
}

// TestSourcesKeepTheirOwnState: with {sa}, each source address of a
// J1939 message is a stream of its own: its own topics and seq, its own
// cap windows, its own staleness, and a flush and a republish each.
func TestSourcesKeepTheirOwnState(t *testing.T) {
	e, rec := newSourceEngine(t, "truck/{sa}/{message}/{signal}",
		"defaults: {max_rate: 0}\nrules:\n  - match: EEC1.Speed\n    max_rate: 10\n    stale_after: 250ms")
	for _, f := range []frame.Frame{
		eec1(0, 0x00, 10, 1000),
		eec1(5, 0x17, 20, 2000), // another source: published at once, not held by 00's cap
		eec1(50, 0x00, 11, 1001),
		eec1(55, 0x17, 21, 2001),
		eec1(100, 0x00, 12, 1002), // 00's cap window ends: this one supersedes 1001
		eec1(200, 0x00, 13, 1003),
	} {
		e.Frame(&f)
	}
	g := &frame.Frame{Time: t0 + 210*ms, ID: 0x123, Len: 8}
	e.Frame(g)
	e.Advance(t0 + 400*ms) // 17 stopped at 55: its trailing value at 205, stale at 305; 00 goes on
	e.Republish()
	e.Flush(t0 + 400*ms)
	diff(t, rec.lines(), []string{
		"truck/00/EEC1/Torque value 10 @0 #1",
		"truck/00/EEC1/Speed value 1000 @0 #1",
		"truck/17/EEC1/Torque value 20 @5 #1",
		"truck/17/EEC1/Speed value 2000 @5 #1",
		"truck/00/EEC1/Torque value 11 @50 #2",
		"truck/17/EEC1/Torque value 21 @55 #2",
		"truck/00/EEC1/Torque value 12 @100 #3",
		"truck/00/EEC1/Speed value 1002 @100 #2",
		"truck/00/EEC1/Torque value 13 @200 #4",
		"truck/00/EEC1/Speed value 1003 @200 #3",
		"truck/17/EEC1/Speed trailing 2001 @55 #2", // its grace deadline: 55 + 1.5 cycles
		"truck/na/Gear/Gear value 0 @210 #1",
		"truck/17/EEC1/Speed stale 2001 @55 #3 stale",
		"truck/na/Gear/Gear republish 0 @210 #2",
		"truck/00/EEC1/Torque republish 13 @200 #5",
		"truck/00/EEC1/Speed republish 1003 @200 #4",
		"truck/17/EEC1/Torque republish 21 @55 #3",
		"truck/17/EEC1/Speed republish 2001 @55 #4 stale",
	})
	if got := e.Stats().Sources; got != 2 {
		t.Errorf("Stats.Sources = %d, want 2", got)
	}
	want := []string{"truck/na/Gear/Gear", "truck/00/EEC1/Torque", "truck/00/EEC1/Speed", "truck/17/EEC1/Torque", "truck/17/EEC1/Speed"}
	if got := e.Topics(); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("Topics = %q, want %q", got, want)
	}
}

// TestSourcesWithoutSA: a template without {sa} keeps one state per
// signal, whatever the source: two sources share a topic and a cap.
func TestSourcesWithoutSA(t *testing.T) {
	e, rec := newSourceEngine(t, "truck/{signal}", "defaults: {max_rate: 10}\nrules:\n  - match: EEC1.Torque\n    publish: false")
	for _, f := range []frame.Frame{eec1(0, 0x00, 0, 1000), eec1(5, 0x17, 0, 2000), eec1(100, 0x00, 0, 1001)} {
		e.Frame(&f)
	}
	diff(t, rec.lines(), []string{
		"truck/Speed value 1000 @0 #1",
		"truck/Speed value 1001 @100 #2", // 2000 was held, then superseded
	})
	if got := e.Stats().Sources; got != 0 {
		t.Errorf("Stats.Sources = %d, want 0", got)
	}
}

// TestSourceTopicClash: names can be made to meet a source's topic; that
// source's signal is then not published, and counted, while the signal
// that had the topic goes on.
func TestSourceTopicClash(t *testing.T) {
	// {message}{sa}{signal}: Mna + AB + _x is M + na + AB_x.
	j := &dbc.Message{Name: "Mna", ID: 0x18FF0000, Extended: true, J1939: true, Length: 8, Signals: []*dbc.Signal{{Name: "_x", Length: 8, Factor: 1}}}
	p := &dbc.Message{Name: "M", ID: 0x100, Length: 8, Signals: []*dbc.Signal{{Name: "AB_x", Length: 8, Factor: 1}}}
	db, err := dbc.NewDatabase([]*dbc.Message{j, p})
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{t: t}
	e, err := New(db, Config{TopicTemplate: "{message}{sa}{signal}"}, rec)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []frame.Frame{
		{Time: t0, ID: 0x100, Len: 8, Data: [64]byte{1}},
		{Time: t0 + ms, ID: 0x18FF00AB, Len: 8, Flags: frame.Extended, Data: [64]byte{2}},
		{Time: t0 + 2*ms, ID: 0x18FF00AC, Len: 8, Flags: frame.Extended, Data: [64]byte{3}},
	} {
		e.Frame(&f)
	}
	diff(t, rec.lines(), []string{"MnaAB_x value 1 @0 #1", "MnaAC_x value 3 @2 #1"})
	if s := e.Stats(); s.Clashes != 1 || s.Sources != 2 {
		t.Errorf("Stats: Clashes %d, Sources %d; want 1 and 2", s.Clashes, s.Sources)
	}
}

// TestSourceTemplateClash: two J1939 signals that the template gives the
// same topic on every source are refused at New, as any clash.
func TestSourceTemplateClash(t *testing.T) {
	db := j1939DB(t)
	_, err := New(db, Config{TopicTemplate: "truck/{sa}/{message}"}, &recorder{t: t})
	if !errors.Is(err, ErrTopic) || !strings.Contains(err.Error(), `EEC1.Torque and EEC1.Speed → "truck/{sa}/EEC1"`) {
		t.Errorf("got %v, want ErrTopic naming both signals", err)
	}
}

// TestSourcesSetPolicies: a new policy applies to every source of a
// signal, and is counted once per signal.
func TestSourcesSetPolicies(t *testing.T) {
	e, rec := newSourceEngine(t, "truck/{sa}/{signal}", "defaults: {max_rate: 0}")
	for _, f := range []frame.Frame{eec1(0, 0x00, 1, 1), eec1(0, 0x17, 1, 1)} {
		e.Frame(&f)
	}
	p, err := ParsePolicy("new.yaml", []byte("defaults: {max_rate: 0}\nrules:\n  - match: EEC1.Torque\n    publish: false\n  - match: EEC1.Speed\n    on_change: true"))
	if err != nil {
		t.Fatal(err)
	}
	ch, err := e.SetPolicies(p)
	if err != nil {
		t.Fatal(err)
	}
	if want := (PolicyChanges{Changed: 2, Unpublished: 1}); ch != want {
		t.Errorf("SetPolicies = %+v, want %+v", ch, want)
	}
	for _, f := range []frame.Frame{eec1(10, 0x00, 2, 1), eec1(10, 0x17, 2, 2), eec1(20, 0x33, 2, 5)} {
		e.Frame(&f)
	}
	diff(t, rec.lines(), []string{
		"truck/00/Torque value 1 @0 #1",
		"truck/00/Speed value 1 @0 #1",
		"truck/17/Torque value 1 @0 #1",
		"truck/17/Speed value 1 @0 #1",
		"truck/17/Speed value 2 @10 #2", // 00's speed did not change
		"truck/33/Speed value 5 @20 #1", // a source first seen after the change has the new policy
	})
}

// TestSourcesWindowTopic: a source's topic that is the window stream's
// is not published.
func TestSourcesWindowTopic(t *testing.T) {
	rec := &recorder{t: t}
	e, err := New(j1939DB(t), Config{TopicTemplate: "t/{sa}/{signal}", Window: &WindowConfig{Topic: "t/05/Speed", Period: 10 * time.Millisecond}}, rec)
	if err != nil {
		t.Fatal(err)
	}
	f := eec1(0, 0x05, 1, 1)
	e.Frame(&f)
	if got := e.Stats().Clashes; got != 1 {
		t.Errorf("Clashes = %d, want 1", got)
	}
	if got := e.Topics(); len(got) != 2 || got[1] != "t/05/Torque" {
		t.Errorf("Topics = %q, want t/na/Gear and t/05/Torque", got)
	}
}

// TestSourcesNoAllocs: once a source has been seen, its frames do not
// allocate.
func TestSourcesNoAllocs(t *testing.T) {
	e, _ := newSourceEngine(t, "truck/{sa}/{signal}", "defaults: {max_rate: 20, stale_after: 1s}")
	fs := []frame.Frame{eec1(0, 0x00, 1, 1), eec1(0, 0x17, 1, 1)}
	for i := range fs {
		e.Frame(&fs[i])
	}
	at := int64(0)
	allocs := testing.AllocsPerRun(200, func() {
		at += 10
		for i := range fs {
			fs[i].Time = t0 + at*ms
			fs[i].Data[0]++
			e.Frame(&fs[i])
		}
	})
	if allocs != 0 {
		t.Errorf("%.1f allocations per round, want 0", allocs)
	}
}

// BenchmarkSources runs EEC1 frames from four sources, with {sa} (a
// state per source) and without (one state for all).
func BenchmarkSources(b *testing.B) {
	for _, tmpl := range []string{"truck/{sa}/{signal}", "truck/{signal}"} {
		b.Run(tmpl, func(b *testing.B) {
			p, err := ParsePolicy("test.yaml", []byte("defaults: {max_rate: 20, stale_after: 1s}"))
			if err != nil {
				b.Fatal(err)
			}
			e, err := New(j1939DB(b), Config{TopicTemplate: tmpl, Policies: p}, &countSink{})
			if err != nil {
				b.Fatal(err)
			}
			var f frame.Frame
			n := int64(0)
			b.ReportAllocs()
			for b.Loop() {
				n++
				f = eec1(n, uint8(n&3)*0x11, uint8(n), uint16(n))
				e.Frame(&f)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/frame")
		})
	}
}
