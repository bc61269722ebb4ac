package pipeline

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/envelope"
	"github.com/yukart/candec/frame"
)

const ms = int64(time.Millisecond)

// t0 is an arbitrary frame-time origin, far from zero like real
// timestamps.
const t0 = 1_760_000_000 * int64(time.Second)

// testDB has one-signal messages, so that a frame sets one value:
//
//	0x100 Fast.Speed     16 bit, 0.01 km/h, 10 ms cycle
//	0x101 Fast2.Count    16 bit integer, 10 ms cycle
//	0x200 Slow.TempA     8 bit, offset -40, degC, 100 ms cycle
//	0x201 Slow2.Gear     8 bit, value table P/R/N/D, 50 ms cycle
//	0x300 Event.Code     16 bit integer, no cycle time
func testDB(t testing.TB) *dbc.Database {
	t.Helper()
	sig := func(name string, length int, factor, offset float64, unit string) *dbc.Signal {
		return &dbc.Signal{Name: name, Start: 0, Length: length, Factor: factor, Offset: offset, Unit: unit, Min: 0, Max: 0}
	}
	msg := func(id uint32, name string, cycle time.Duration, s *dbc.Signal) *dbc.Message {
		return &dbc.Message{Name: name, ID: id, Length: 8, CycleTime: cycle, Signals: []*dbc.Signal{s}}
	}
	gear := sig("Gear", 8, 1, 0, "")
	gear.Values = []dbc.ValueDescription{{Value: 0, Label: "P"}, {Value: 1, Label: "R"}, {Value: 2, Label: "N"}, {Value: 3, Label: "D"}}
	db, err := dbc.NewDatabase([]*dbc.Message{
		msg(0x100, "Fast", 10*time.Millisecond, sig("Speed", 16, 0.01, 0, "km/h")),
		msg(0x101, "Fast2", 10*time.Millisecond, sig("Count", 16, 1, 0, "")),
		msg(0x200, "Slow", 100*time.Millisecond, sig("TempA", 8, 1, -40, "degC")),
		msg(0x201, "Slow2", 50*time.Millisecond, gear),
		msg(0x300, "Event", 0, sig("Code", 16, 1, 0, "")),
	})
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// fr makes a frame of message id at t0+at carrying raw value raw in its
// first 16 bits.
func fr(at int64, id uint32, raw uint16) frame.Frame {
	f := frame.Frame{Time: t0 + at, ID: id, Len: 8}
	binary.LittleEndian.PutUint16(f.Data[:], raw)
	return f
}

// record is one published message as a subscriber sees it.
type record struct {
	topic string
	kind  OutKind
	env   envelope.Envelope
	win   *envelope.Window
}

// recorder is a Sink that parses what it gets back with the envelope
// package, so every test also checks the bytes.
type recorder struct {
	t    testing.TB
	outs []record
}

func (r *recorder) Publish(o *Out) {
	rec := record{topic: o.Topic, kind: o.Kind}
	if o.Kind == KindWindow {
		rec.win = &envelope.Window{}
		if err := envelope.ParseWindow(o.Payload, rec.win); err != nil {
			r.t.Fatalf("window %q does not parse: %v", o.Payload, err)
		}
		for i := range rec.win.Items {
			it := &rec.win.Items[i]
			it.Topic = append([]byte(nil), it.Topic...)
			it.Envelope = detach(it.Envelope)
		}
	} else {
		if err := envelope.Parse(o.Payload, &rec.env); err != nil {
			r.t.Fatalf("envelope %q does not parse: %v", o.Payload, err)
		}
		if rec.env.Seq != o.Seq || rec.env.TS != o.TS {
			r.t.Fatalf("Out says seq %d ts %d, payload %q", o.Seq, o.TS, o.Payload)
		}
		rec.env = detach(rec.env)
	}
	r.outs = append(r.outs, rec)
}

// detach copies an envelope's strings out of the payload.
func detach(e envelope.Envelope) envelope.Envelope {
	var d envelope.Envelope
	d.Kind, d.Int, d.Uint, d.Float = e.Kind, e.Int, e.Uint, e.Float
	d.TS, d.Seq, d.Epoch, d.Flags = e.TS, e.Seq, e.Epoch, e.Flags
	d.Unit = append([]byte(nil), e.Unit...)
	d.Label = append([]byte(nil), e.Label...)
	return d
}

// lines formats the signal envelopes as "topic kind value @ms #seq
// flags", ts relative to t0, for table comparisons.
func (r *recorder) lines() []string {
	var out []string
	for _, o := range r.outs {
		if o.kind == KindWindow {
			continue
		}
		out = append(out, line(o.topic, o.kind.String(), &o.env))
	}
	return out
}

func line(topic, kind string, e *envelope.Envelope) string {
	var v string
	switch e.Kind {
	case envelope.Int:
		v = fmt.Sprint(e.Int)
	case envelope.Uint:
		v = fmt.Sprint(e.Uint)
	default:
		v = fmt.Sprint(e.Float)
		if !strings.ContainsAny(v, ".eN") && !math.IsInf(e.Float, 0) {
			v += ".0"
		}
	}
	s := fmt.Sprintf("%s %s %s @%d #%d", strings.TrimPrefix(topic, "yukart/vehicle/"), kind, v, (e.TS-t0)/ms, e.Seq)
	if len(e.Label) > 0 {
		s += " " + string(e.Label)
	}
	if e.Flags&envelope.Stale != 0 {
		s += " stale"
	}
	if e.Flags&envelope.OutOfRange != 0 {
		s += " oor"
	}
	return s
}

// step is one input of a policy table: a frame, or Advance when id is 0.
type step struct {
	at  int64 // ms after t0
	id  uint32
	raw uint16
}

func adv(at int64) step { return step{at: at} }

// run feeds steps to a new engine with the given policy YAML and returns
// what it published.
func run(t *testing.T, policy string, steps []step) (*Engine, *recorder) {
	t.Helper()
	p, err := ParsePolicy("test.yaml", []byte(policy))
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{t: t}
	e, err := New(testDB(t), Config{Policies: p}, rec)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range steps {
		if s.id == 0 {
			e.Advance(t0 + s.at*ms)
			continue
		}
		f := fr(s.at*ms, s.id, s.raw)
		e.Frame(&f)
	}
	return e, rec
}

// diff compares line lists and reports the first difference.
func diff(t *testing.T, got, want []string) {
	t.Helper()
	n := max(len(got), len(want))
	for i := range n {
		var g, w string
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if g != w {
			t.Errorf("envelope %d:\n got %q\nwant %q\nall got:\n  %s", i, g, w, strings.Join(got, "\n  "))
			return
		}
	}
}
