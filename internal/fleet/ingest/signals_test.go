package ingest

import (
	"math"
	"testing"

	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/decoder"
	"github.com/yukart/candec/envelope"
)

// TestValueFromEnvelope: an envelope becomes the decoder.Value that a
// decode of its frame gave: exact integers, floats as sent, oor, and the
// raw value behind a scaled signal's label.
func TestValueFromEnvelope(t *testing.T) {
	m := &dbc.Message{Name: "M", ID: 0x100}
	labelled := &dbc.Signal{Name: "Mode", Message: m, Type: dbc.Integer, Length: 8, Factor: 0.5, Offset: -10,
		Values: []dbc.ValueDescription{{Value: 20, Label: "Zero"}, {Value: 24, Label: "Two"}}}
	plain := &dbc.Signal{Name: "Speed", Message: m, Type: dbc.Integer, Length: 16, Factor: 1, Signed: true}
	ieee := &dbc.Signal{Name: "Temp", Message: m, Type: dbc.Float32, Length: 32, Factor: 1}
	tab, _, err := newSignalTable(DefaultSignalPrefix, []Bus{{DB: &dbc.Database{Signals: []*dbc.Signal{labelled, plain, ieee}}}})
	if err != nil {
		t.Fatal(err)
	}
	env := func(set func(*envelope.Envelope)) *envelope.Envelope { e := &envelope.Envelope{}; set(e); return e }
	cases := []struct {
		sig   string
		e     *envelope.Envelope
		flags decoder.Flags
		phys  float64
		raw   uint64
		label string
	}{
		{"Speed", env(func(e *envelope.Envelope) { e.SetInt(-5) }), decoder.Exact, -5, uint64(1<<64 - 5), ""},
		{"Speed", env(func(e *envelope.Envelope) { e.SetInt(7); e.Flags = envelope.OutOfRange }), decoder.Exact | decoder.OutOfRange, 7, 7, ""},
		{"Temp", env(func(e *envelope.Envelope) { e.SetFloat(21.5) }), decoder.Float, 21.5, 0, ""},
		{"Temp", env(func(e *envelope.Envelope) { e.SetFloat(math.Inf(1)) }), decoder.Float, math.Inf(1), 0, ""},
		{"Mode", env(func(e *envelope.Envelope) { e.SetFloat(0) }), 0, 0, 20, "Zero"},
		{"Mode", env(func(e *envelope.Envelope) { e.SetFloat(2) }), 0, 2, 24, "Two"},
		{"Mode", env(func(e *envelope.Envelope) { e.SetFloat(0.5) }), 0, 0.5, 21, ""},
	}
	for _, tc := range cases {
		si := tab[DefaultSignalPrefix+tc.sig]
		var v decoder.Value
		si.value(tc.e, &v)
		if v.Signal != si.s || v.Flags != tc.flags || v.Phys != tc.phys || v.Raw != tc.raw {
			t.Errorf("%s %+v: got flags %v phys %v raw %d, want %v %v %d", tc.sig, *tc.e, v.Flags, v.Phys, v.Raw, tc.flags, tc.phys, tc.raw)
		}
		if l, _ := si.s.Label(int64(v.Raw)); si.labelled && l != tc.label {
			t.Errorf("%s %v: label %q, want %q", tc.sig, tc.phys, l, tc.label)
		}
	}
}

// TestSharedSignalNameSkipped: two signals of one name share the car's
// topic; which one a value is cannot be known, so the topic maps to
// none (its items are skipped, reason signal).
func TestSharedSignalNameSkipped(t *testing.T) {
	a := &dbc.Signal{Name: "X", Message: &dbc.Message{Name: "A"}}
	b := &dbc.Signal{Name: "X", Message: &dbc.Message{Name: "B"}}
	tab, ambiguous, err := newSignalTable(DefaultSignalPrefix, []Bus{{DB: &dbc.Database{Signals: []*dbc.Signal{a}}}, {Interface: "can1", DB: &dbc.Database{Signals: []*dbc.Signal{b}}}})
	if err != nil {
		t.Fatal(err)
	}
	if si, ok := tab[DefaultSignalPrefix+"X"]; !ok || si != nil || len(ambiguous) != 1 {
		t.Errorf("got %v, %v, ambiguous %q; want nil for the shared name", si, ok, ambiguous)
	}
}

// TestMatchVehicle: the vehicle is the level of the filter's first +.
func TestMatchVehicle(t *testing.T) {
	cases := []struct {
		filter, topic, vehicle string
		ok                     bool
	}{
		{"fleet/+/yukart/window", "fleet/kart01/yukart/window", "kart01", true},
		{"fleet/+/yukart/window", "fleet//yukart/window", "", true},
		{"fleet/+/yukart/window", "fleet/kart01/yukart/window/x", "", false},
		{"fleet/+/yukart/window", "fleet/kart01/yukart", "", false},
		{"fleet/+/yukart/window", "other/kart01/yukart/window", "", false},
		{"fleet/+/#", "fleet/kart02/yukart/window", "kart02", true},
		{"fleet/+/#", "fleet/kart02", "kart02", true},
		{"+/window", "kart03/window", "kart03", true},
	}
	for _, tc := range cases {
		lvl, err := vehicleLevel(tc.filter)
		if err != nil {
			t.Fatal(err)
		}
		v, ok := matchVehicle(filterLevels{levels: splitLevels(tc.filter), vehicle: lvl}, tc.topic)
		if v != tc.vehicle || ok != tc.ok {
			t.Errorf("%s on %s: got %q %v, want %q %v", tc.filter, tc.topic, v, ok, tc.vehicle, tc.ok)
		}
	}
	for _, bad := range []string{"fleet/#", "fleet/kart01/window", "$share/g/fleet/+/w", "fleet/a+/w"} {
		if _, err := vehicleLevel(bad); err == nil {
			t.Errorf("filter %q accepted", bad)
		}
	}
}

// TestSeqSet: a set of ranges, built in any order, holds what was added
// and nothing else.
func TestSeqSet(t *testing.T) {
	var s seqSet
	added := map[uint64]bool{}
	for _, x := range []uint64{5, 6, 7, 1, 3, 2, 10, 9, 4, 8, 100, 50, 51, 49, 7, 1} {
		if got, want := s.Add(x), !added[x]; got != want {
			t.Errorf("Add(%d): got %v, want %v", x, got, want)
		}
		added[x] = true
	}
	for x := range uint64(110) {
		if s.Has(x) != added[x] {
			t.Errorf("Has(%d): got %v, want %v", x, s.Has(x), added[x])
		}
	}
	if got := s.Ranges(); len(got) != 3 || got[0] != [2]uint64{1, 10} || got[1] != [2]uint64{49, 51} || got[2] != [2]uint64{100, 100} {
		t.Errorf("ranges %v", got)
	}
	if s.Len() != uint64(len(added)) {
		t.Errorf("Len %d, want %d", s.Len(), len(added))
	}
}

// FuzzSeqSet: against a map, for any sequence of adds.
func FuzzSeqSet(f *testing.F) {
	f.Add([]byte{5, 1, 3, 2, 4, 200, 7})
	f.Fuzz(func(t *testing.T, b []byte) {
		var s seqSet
		ref := map[uint64]bool{}
		for _, x := range b {
			if s.Add(uint64(x)) == ref[uint64(x)] {
				t.Fatalf("Add(%d) disagrees with the map", x)
			}
			ref[uint64(x)] = true
		}
		for x := range uint64(256) {
			if s.Has(x) != ref[x] {
				t.Fatalf("Has(%d) disagrees", x)
			}
		}
		r := s.Ranges()
		for i := 1; i < len(r); i++ {
			if r[i][0] <= r[i-1][1]+1 {
				t.Fatalf("ranges %v not disjoint and apart", r)
			}
		}
	})
}

// Len returns how many seqs the set holds.
func (s *seqSet) Len() uint64 {
	var n uint64
	for _, r := range s.r {
		n += r[1] - r[0] + 1
	}
	return n
}
