package decoder

import (
	"math/rand/v2"
	"testing"

	"go.einride.tech/can"
	"go.einride.tech/can/pkg/descriptor"

	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/frame"
)

// benchMessage is an 8-byte frame of 8 signals, like a motor controller
// status: Intel and Motorola, signed, two flags, scaled and exact.
//
//	byte   0        1        2        3        4        5        6        7
//	     [ rpm (Intel 16)  ][ torque (Intel s12)][gear][ voltage (Mot 10) ...
//	     ... ][ current (Motorola s14)     ][temp (Mot 6)|ready|brake]
func benchMessage() *dbc.Message {
	return message("Motor", 0x100, 8,
		&dbc.Signal{Name: "rpm", Start: 0, Length: 16, Factor: 0.25, Min: 0, Max: 16000},
		&dbc.Signal{Name: "torque", Start: 16, Length: 12, Signed: true, Factor: 0.1, Min: -200, Max: 200},
		&dbc.Signal{Name: "gear", Start: 28, Length: 4, Factor: 1},
		&dbc.Signal{Name: "voltage", Start: 39, Length: 10, Order: dbc.BigEndian, Factor: 0.1, Min: 0, Max: 100},
		&dbc.Signal{Name: "current", Start: 45, Length: 14, Order: dbc.BigEndian, Signed: true, Factor: 0.05, Min: -400, Max: 400},
		&dbc.Signal{Name: "brake", Start: 56, Length: 1, Factor: 1},
		&dbc.Signal{Name: "ready", Start: 57, Length: 1, Factor: 1},
		&dbc.Signal{Name: "temp", Start: 63, Length: 6, Order: dbc.BigEndian, Factor: 2, Offset: -40, Min: -40, Max: 80},
	)
}

func benchFrame() *frame.Frame {
	return frameOf(0x100, 0x10, 0x27, 0x9C, 0x3F, 0xA5, 0x5A, 0xC3, 0x81)
}

// einrideSignals are benchMessage's signals as einride descriptors.
func einrideSignals() []*descriptor.Signal {
	m := benchMessage()
	out := make([]*descriptor.Signal, len(m.Signals))
	for i, s := range m.Signals {
		out[i] = &descriptor.Signal{
			Name: s.Name, Start: uint8(s.Start), Length: uint8(s.Length),
			IsBigEndian: s.Order == dbc.BigEndian, IsSigned: s.Signed,
			Scale: s.Factor, Offset: s.Offset, Min: s.Min, Max: s.Max,
		}
	}
	return out
}

var (
	sinkF float64
	sinkU uint64
)

// BenchmarkDecode8Signals decodes one 8-signal 8-byte frame.
func BenchmarkDecode8Signals(b *testing.B) {
	d := New(database(b, benchMessage()))
	f := benchFrame()
	buf := make([]Value, 0, d.MaxSignals())
	b.ReportAllocs()
	for b.Loop() {
		_, buf = d.Decode(f, buf)
	}
	sinkF = buf[0].Phys
}

// BenchmarkEinrideUnmarshalPhysical8Signals computes the same 8 physical
// values with einride's descriptor.Signal.UnmarshalPhysical.
func BenchmarkEinrideUnmarshalPhysical8Signals(b *testing.B) {
	sigs := einrideSignals()
	var data can.Data
	copy(data[:], benchFrame().Data[:8])
	b.ReportAllocs()
	for b.Loop() {
		for _, s := range sigs {
			sinkF += s.UnmarshalPhysical(data)
		}
	}
}

// BenchmarkEinrideBits8Signals is einride's bare bit extraction of the 8
// signals: no sign, scaling or range, for reference.
func BenchmarkEinrideBits8Signals(b *testing.B) {
	sigs := einrideSignals()
	var data can.Data
	copy(data[:], benchFrame().Data[:8])
	b.ReportAllocs()
	for b.Loop() {
		for _, s := range sigs {
			if s.IsBigEndian {
				sinkU += data.UnsignedBitsBigEndian(s.Start, s.Length)
			} else {
				sinkU += data.UnsignedBitsLittleEndian(s.Start, s.Length)
			}
		}
	}
}

// BenchmarkDecodeCapture decodes a generated capture of 27 messages at
// car-like rates; one op is one frame.
func BenchmarkDecodeCapture(b *testing.B) {
	db, frames := capture(b, 4000)
	d := New(db)
	buf := make([]Value, 0, d.MaxSignals())
	values := 0
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		_, buf = d.Decode(&frames[i], buf)
		values += len(buf)
		if i++; i == len(frames) {
			i = 0
		}
	}
	b.ReportMetric(float64(values)/float64(b.N), "values/frame")
}

// capture builds a database of 27 messages (random layouts of 3 to 8
// signals, a multiplexed one with a cascaded switch, a 29-bit one, a
// CAN FD one) and n frames of random payloads drawn at rates from 2 to
// 100 Hz, with an unknown ID and a short frame now and then.
func capture(tb testing.TB, n int) (*dbc.Database, []frame.Frame) {
	tb.Helper()
	r := rand.New(rand.NewPCG(1, 2))
	var msgs []*dbc.Message
	var weights []int
	rates := []int{100, 100, 100, 100, 100, 50, 50, 50, 50, 50, 20, 20, 20, 20, 10, 10, 10, 10, 10, 5, 5, 5, 5, 2, 2, 2}
	for i, rate := range rates {
		length := 8
		if i == 7 {
			length = 64
		}
		m := message("M"+string(rune('A'+i)), uint32(0x100+0x10*i), length, layout(r, length, 3+r.IntN(6))...)
		if i == 3 {
			m.ID, m.Extended = 0x18FEF100, true
		}
		msgs = append(msgs, m)
		weights = append(weights, rate)
	}
	// Cells by index: 4 branches of 3 cells, the last branch with a
	// second switch.
	idx := intel("index", 0, 4, false, 1, 0)
	sigs := []*dbc.Signal{idx}
	for b := range 4 {
		for c := range 3 {
			sigs = append(sigs, muxed(intel("cell"+string(rune('0'+3*b+c)), 8+16*c, 16, false, 0.001, 0), idx, one(uint64(b))))
		}
	}
	sub := muxed(intel("sub", 4, 4, false, 1, 0), idx, one(3))
	sub.Multiplexer = true
	sigs = append(sigs, sub, muxed(intel("balance", 56, 8, false, 1, 0), sub, dbc.MuxRange{Lo: 0, Hi: 7}))
	msgs = append(msgs, message("Cells", 0x400, 8, sigs...))
	weights = append(weights, 40)

	db := database(tb, msgs...)
	total := 0
	for _, w := range weights {
		total += w
	}
	frames := make([]frame.Frame, n)
	for i := range frames {
		f := &frames[i]
		f.Time = int64(i) * 1_100_000
		w := r.IntN(total)
		k := 0
		for w >= weights[k] {
			w -= weights[k]
			k++
		}
		m := msgs[k]
		f.ID, f.Len = m.ID, uint8(m.Length)
		if m.Extended {
			f.Flags = frame.Extended
		}
		if m.Length > 8 {
			f.Flags |= frame.FD
		}
		switch r.IntN(100) {
		case 0:
			f.ID = 0x7E8 // not in the database
		case 1:
			f.Len = uint8(r.IntN(m.Length))
		}
		for j := range int(f.Len) {
			f.Data[j] = byte(r.Uint32())
		}
	}
	return db, frames
}
