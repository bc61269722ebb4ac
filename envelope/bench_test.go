package envelope

import (
	"testing"

	gojson "github.com/goccy/go-json"
	"github.com/vmihailenco/msgpack/v5"
)

// typical is an envelope as candec publishes most of them.
var typical = Envelope{Kind: Float, Float: 48.37, Unit: []byte("km/h"), TS: 1760000000123456789, Seq: 123456, Epoch: 1760000000000000000}

var labelled = Envelope{Kind: Int, Int: 4, Label: []byte("Drive"), TS: 1760000000123456789, Seq: 77, Epoch: 1760000000000000000, Flags: Stale}

func TestAllocs(t *testing.T) {
	jb := AppendJSON(nil, &typical)
	mb := AppendMsgpack(nil, &typical)
	jl := AppendJSON(nil, &labelled)
	var w WindowEncoder
	w.Reset(0, 10)
	w.Add("yukart/vehicle/Speed", &typical)
	w.Add("yukart/vehicle/Gear", &labelled)
	wb := w.Append(nil, 1, 2)
	var win Window
	buf := make([]byte, 0, 4096)
	var e Envelope
	tr := NewTracker()
	tr.Observe("t", &typical)
	topic := []byte("t")
	tests := []struct {
		name string
		f    func()
	}{
		{"AppendJSON", func() { buf = AppendJSON(buf[:0], &typical) }},
		{"AppendMsgpack", func() { buf = AppendMsgpack(buf[:0], &typical) }},
		{"ParseJSON", func() { _ = Parse(jb, &e) }},
		{"ParseJSONLabel", func() { _ = Parse(jl, &e) }},
		{"ParseMsgpack", func() { _ = Parse(mb, &e) }},
		{"ParseWindow", func() { _ = ParseWindow(wb, &win) }},
		{"WindowAdd", func() { w.Reset(0, 10); w.Add("yukart/vehicle/Speed", &typical); buf = w.Append(buf[:0], 1, 2) }},
		{"TrackerObserve", func() { tr.Observe("t", &typical) }},
		{"TrackerObserveBytes", func() { tr.ObserveBytes(topic, &typical) }},
	}
	for _, tt := range tests {
		tt.f()
		if n := testing.AllocsPerRun(100, tt.f); n != 0 {
			t.Errorf("%s: %v allocations per run, want 0", tt.name, n)
		}
	}
}

func BenchmarkAppendJSON(b *testing.B) {
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendJSON(buf[:0], &typical)
	}
}

func BenchmarkAppendMsgpack(b *testing.B) {
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendMsgpack(buf[:0], &typical)
	}
}

func BenchmarkParse(b *testing.B) {
	for _, enc := range []Encoding{JSON, Msgpack} {
		for _, tc := range []struct {
			name string
			env  *Envelope
		}{{"float", &typical}, {"label", &labelled}} {
			p := Append(enc, nil, tc.env)
			b.Run(enc.String()+"/"+tc.name, func(b *testing.B) {
				var e Envelope
				b.ReportAllocs()
				b.SetBytes(int64(len(p)))
				for b.Loop() {
					if err := Parse(p, &e); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

func BenchmarkParseWindow(b *testing.B) {
	for _, enc := range []Encoding{JSON, Msgpack} {
		w := NewWindowEncoder(enc)
		w.Reset(0, 10)
		for range 50 {
			w.Add("yukart/vehicle/WSS_SpeedFL", &typical)
		}
		p := w.Append(nil, 1, 1)
		b.Run(enc.String(), func(b *testing.B) {
			var win Window
			b.ReportAllocs()
			b.ReportMetric(50, "envelopes/op")
			for b.Loop() {
				if err := ParseWindow(p, &win); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkTrackerObserve(b *testing.B) {
	tr := NewTracker()
	e := typical
	b.ReportAllocs()
	for b.Loop() {
		e.Seq++
		tr.Observe("yukart/vehicle/WSS_SpeedFL", &e)
	}
}

// BenchmarkParseLibraries decodes the same envelopes with goccy/go-json
// and vmihailenco/msgpack into the struct a subscriber would declare, so
// that the cost of the general-purpose libraries stands beside Parse in
// one run (they are the reference the encoders are tested against).
func BenchmarkParseLibraries(b *testing.B) {
	p := AppendJSON(nil, &typical)
	b.Run("goccy-json/float", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(p)))
		for b.Loop() {
			var ref jsonRef
			if err := gojson.Unmarshal(p, &ref); err != nil {
				b.Fatal(err)
			}
		}
	})
	m := AppendMsgpack(nil, &typical)
	b.Run("vmihailenco-msgpack/float", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(m)))
		for b.Loop() {
			var ref msgpackRef
			if err := msgpack.Unmarshal(m, &ref); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// msgpackRef is the schema as a subscriber would declare it for
// vmihailenco/msgpack.
type msgpackRef struct {
	Value any    `msgpack:"value"`
	Unit  string `msgpack:"unit"`
	Label string `msgpack:"label"`
	TS    int64  `msgpack:"ts"`
	Seq   uint64 `msgpack:"seq"`
	Epoch uint64 `msgpack:"epoch"`
	OOR   bool   `msgpack:"oor"`
	Stale bool   `msgpack:"stale"`
}
