package decoder

import (
	"math"
	"strings"
	"testing"

	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/frame"
)

// want is an expected value: the signal's name, raw bits, exact integer
// (checked when flags has Exact), physical value and flags.
type want struct {
	name  string
	raw   uint64
	i     int64
	phys  float64
	flags Flags
}

// check compares decoded values with the expected ones, in order.
func check(t *testing.T, got []Value, wants []want) {
	t.Helper()
	if len(got) != len(wants) {
		names := make([]string, len(got))
		for i := range got {
			names[i] = got[i].Signal.Name
		}
		t.Fatalf("got %d values %v, want %d", len(got), names, len(wants))
	}
	for i, w := range wants {
		v := got[i]
		if v.Signal.Name != w.name {
			t.Errorf("value %d: got signal %s, want %s", i, v.Signal.Name, w.name)
			continue
		}
		if v.Raw != w.raw {
			t.Errorf("%s: got raw %#x, want %#x", w.name, v.Raw, w.raw)
		}
		if v.Flags != w.flags {
			t.Errorf("%s: got flags %05b, want %05b", w.name, v.Flags, w.flags)
		}
		if w.flags&Exact != 0 && v.Int != w.i {
			t.Errorf("%s: got int %d, want %d", w.name, v.Int, w.i)
		}
		if !samePhys(v.Phys, w.phys) {
			t.Errorf("%s: got phys %v, want %v", w.name, v.Phys, w.phys)
		}
	}
}

// samePhys compares physical values at 1e-12 relative (the hand-computed
// values are written as decimals), NaN equal to NaN.
func samePhys(got, want float64) bool {
	if math.IsNaN(want) {
		return math.IsNaN(got)
	}
	return got == want || math.Abs(got-want) <= 1e-12*math.Max(1, math.Abs(want))
}

func TestDecodeVectors(t *testing.T) {
	f32 := func(s *dbc.Signal) *dbc.Signal { s.Type = dbc.Float32; return s }
	f64 := func(s *dbc.Signal) *dbc.Signal { s.Type = dbc.Float64; return s }
	ranged := func(s *dbc.Signal, lo, hi float64) *dbc.Signal { s.Min, s.Max = lo, hi; return s }
	tests := []struct {
		name string
		sigs []*dbc.Signal
		len  int // DBC length (8 when zero)
		data []byte
		want []want
	}{
		{
			name: "intel 12 bits across a byte boundary",
			sigs: []*dbc.Signal{intel("a", 4, 12, false, 1, 0)},
			data: []byte{0xA5, 0xBC, 0, 0, 0, 0, 0, 0},
			want: []want{{"a", 0xBCA, 0xBCA, 0xBCA, Exact}},
		},
		{
			name: "motorola 12 bits from bit 7",
			sigs: []*dbc.Signal{motorola("a", 7, 12, false, 1, 0)},
			data: []byte{0xAB, 0xCD, 0, 0, 0, 0, 0, 0},
			want: []want{{"a", 0xABC, 0xABC, 0xABC, Exact}},
		},
		{
			name: "motorola 13 bits over three bytes, scaled",
			// MSB byte 0 bit 3: 4 bits of byte 0, all of byte 1, bit 7 of byte 2.
			sigs: []*dbc.Signal{motorola("a", 3, 13, false, 0.1, -40)},
			data: []byte{0x5A, 0x3C, 0x80, 0xFF, 0, 0, 0, 0},
			want: []want{{"a", 0x1479, 0, 0x1479*0.1 - 40, 0}},
		},
		{
			name: "intel signed 17 bits over three bytes",
			sigs: []*dbc.Signal{intel("a", 20, 17, true, 0.5, 10)},
			data: []byte{0xFF, 0xFF, 0x7F, 0xFC, 0x1C, 0xFE, 0, 0},
			want: []want{{"a", uint64(1<<64 - 12345), 0, -12345*0.5 + 10, 0}},
		},
		{
			name: "motorola signed 3 bits, integral scaling",
			sigs: []*dbc.Signal{motorola("a", 10, 3, true, 2, 1)},
			data: []byte{0xFF, 0xFD, 0, 0, 0, 0, 0, 0}, // byte 1 bits 2..0 = 101
			want: []want{{"a", uint64(1<<64 - 3), -5, -5, Exact}},
		},
		{
			name: "1-bit signals get factor and offset",
			sigs: []*dbc.Signal{intel("hi", 63, 1, false, 2, -1), motorola("lo", 0, 1, false, 0.5, 0), intel("neg", 1, 1, true, 1, 0)},
			data: []byte{0x03, 0, 0, 0, 0, 0, 0, 0x80},
			want: []want{{"hi", 1, 1, 1, Exact}, {"lo", 1, 0, 0.5, 0}, {"neg", 1<<64 - 1, -1, -1, Exact}},
		},
		{
			name: "float32 both byte orders",
			sigs: []*dbc.Signal{f32(intel("le", 32, 32, false, 1, 0)), f32(motorola("be", 7, 32, false, 2, 1))},
			data: []byte{0x40, 0x60, 0x00, 0x00, 0x00, 0x00, 0x60, 0x40},
			want: []want{{"le", 0x40600000, 0, 3.5, Float}, {"be", 0x40600000, 0, 8, Float}},
		},
		{
			name: "float64 intel",
			sigs: []*dbc.Signal{f64(intel("pi", 0, 64, false, 1, 0))},
			data: []byte{0x18, 0x2D, 0x44, 0x54, 0xFB, 0x21, 0x09, 0x40},
			want: []want{{"pi", math.Float64bits(math.Pi), 0, math.Pi, Float}},
		},
		{
			name: "float64 motorola NaN stays NaN and is not out of range",
			sigs: []*dbc.Signal{ranged(f64(motorola("nan", 7, 64, false, 1, 0)), -1, 1)},
			data: []byte{0x7F, 0xF8, 0, 0, 0, 0, 0, 1},
			want: []want{{"nan", 0x7FF8000000000001, 0, math.NaN(), Float}},
		},
		{
			name: "float64 infinity beyond the range is out of it",
			sigs: []*dbc.Signal{ranged(f64(intel("inf", 0, 64, false, 1, 0)), -1, 1)},
			data: []byte{0, 0, 0, 0, 0, 0, 0xF0, 0x7F},
			want: []want{{"inf", 0x7FF0000000000000, 0, math.Inf(1), Float | OutOfRange}},
		},
		{
			name: "unsigned 64 bits beyond int64",
			sigs: []*dbc.Signal{intel("u", 0, 64, false, 1, 0)},
			data: []byte{0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF},
			want: []want{{"u", 1<<64 - 2, -2, 18446744073709551614, Exact | Unsigned}},
		},
		{
			name: "unsigned 64 bits within int64",
			sigs: []*dbc.Signal{motorola("u", 7, 64, false, 1, 0)},
			data: []byte{0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF},
			want: []want{{"u", math.MaxInt64, math.MaxInt64, math.MaxInt64, Exact}},
		},
		{
			name: "unsigned 64 bits with offset back into int64",
			sigs: []*dbc.Signal{intel("u", 0, 64, false, 1, -(1 << 62))},
			data: []byte{0, 0, 0, 0, 0, 0, 0, 0x80},
			want: []want{{"u", 1 << 63, 1 << 62, 1 << 62, Exact}},
		},
		{
			name: "signed 64 bits, factor overflows int64: float only",
			sigs: []*dbc.Signal{motorola("s", 7, 64, true, 4, 0), intel("t", 0, 0, false, 1, 0)},
			data: []byte{0x80, 0, 0, 0, 0, 0, 0, 0},
			// t has length 0: it never fits and is always Truncated.
			want: []want{{"s", 1 << 63, 0, -(1 << 65), 0}, {"t", 0, 0, math.NaN(), Truncated}},
		},
		{
			name: "signed 64 bits, negative factor near the int64 edge",
			sigs: []*dbc.Signal{motorola("s", 7, 64, true, -1, -1)},
			data: []byte{0x80, 0, 0, 0, 0, 0, 0, 0},
			// -(-2^63) - 1 = 2^63 - 1.
			want: []want{{"s", 1 << 63, math.MaxInt64, math.MaxInt64, Exact}},
		},
		{
			name: "nine-byte intel signal",
			sigs: []*dbc.Signal{intel("w", 4, 64, false, 1, 0)},
			len:  12,
			data: []byte{0x10, 0xEF, 0xCD, 0xAB, 0x89, 0x67, 0x45, 0x23, 0x01, 0, 0, 0},
			want: []want{{"w", 0x123456789ABCDEF1, 0x123456789ABCDEF1, 0x123456789ABCDEF1, Exact}},
		},
		{
			name: "nine-byte motorola signed signal",
			sigs: []*dbc.Signal{motorola("w", 3, 64, true, 1, 0)},
			len:  12,
			data: []byte{0xF9, 0x23, 0x45, 0x67, 0x89, 0xAB, 0xCD, 0xEF, 0x1F, 0, 0, 0},
			want: []want{{"w", 0x923456789ABCDEF1, -0x6DCBA98765432110 + 1, -0x6DCBA98765432110 + 1, Exact}},
		},
		{
			name: "CAN FD: signals in the last bytes of 64",
			sigs: []*dbc.Signal{
				intel("le", 480, 12, false, 1, 0),    // byte 60, low nibble of 61
				motorola("be", 503, 16, false, 1, 0), // bytes 62-63
				intel("top", 508, 4, false, 1, 0),    // high nibble of byte 63
				intel("first", 0, 8, false, 1, 0),
			},
			len:  64,
			data: append(append([]byte{0x42}, make([]byte, 59)...), 0xEC, 0xFB, 0xBE, 0xEF),
			want: []want{
				{"le", 0xBEC, 0xBEC, 0xBEC, Exact},
				{"be", 0xBEEF, 0xBEEF, 0xBEEF, Exact},
				{"top", 0xE, 0xE, 0xE, Exact},
				{"first", 0x42, 0x42, 0x42, Exact},
			},
		},
		{
			name: "range flagged, never clamped; no range when min >= max",
			sigs: []*dbc.Signal{
				ranged(intel("over", 0, 8, false, 1, 0), 0, 100),
				ranged(intel("in", 8, 8, false, 1, 0), 0, 255),
				ranged(intel("under", 16, 8, true, 0.5, 0), -10, 10),
				ranged(intel("nomax", 24, 8, false, 1, 0), 0, 0),
				ranged(intel("inverted", 32, 8, false, 1, 0), 10, 1),
			},
			data: []byte{150, 255, 0xE0, 200, 200, 0, 0, 0},
			want: []want{
				{"over", 150, 150, 150, Exact | OutOfRange},
				{"in", 255, 255, 255, Exact},
				{"under", uint64(1<<64 - 32), 0, -16, OutOfRange},
				{"nomax", 200, 200, 200, Exact},
				{"inverted", 200, 200, 200, Exact},
			},
		},
		{
			// Raw 7 × 0.1 is 0.7000000000000001, written 0.7: in a
			// range that ends at 0.7. The range is that of the values as
			// written, on the grid of the factor's decimals.
			name: "range of the value as written",
			sigs: []*dbc.Signal{
				ranged(intel("top", 0, 8, true, 0.1, 0), -0.7, 0.7),
				ranged(intel("bottom", 8, 8, true, 0.1, 0), -0.7, 0.7),
				ranged(intel("past", 16, 8, true, 0.1, 0), -0.7, 0.7),
				ranged(intel("offgrid", 24, 8, false, 0.1, 0), 0, 0.75),
				ranged(intel("offgrid2", 32, 8, false, 0.1, 0), 0.25, 1),
				ranged(intel("offgrid3", 40, 8, false, 0.1, 0), 0.25, 1),
			},
			data: []byte{7, 0xF9, 8, 8, 2, 3, 0, 0},
			want: []want{
				{"top", 7, 0, 7 * 0.1, 0},
				{"bottom", uint64(1<<64 - 7), 0, -7 * 0.1, 0},
				{"past", 8, 0, 8 * 0.1, OutOfRange},
				{"offgrid", 8, 0, 8 * 0.1, OutOfRange},
				{"offgrid2", 2, 0, 2 * 0.1, OutOfRange},
				{"offgrid3", 3, 0, 3 * 0.1, 0},
			},
		},
		{
			name: "long payload decodes from its first bytes",
			sigs: []*dbc.Signal{intel("a", 0, 16, false, 1, 0)},
			len:  2,
			data: []byte{0x34, 0x12, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF},
			want: []want{{"a", 0x1234, 0x1234, 0x1234, Exact}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := tt.len
			if n == 0 {
				n = 8
			}
			m := message("M", 0x123, n, tt.sigs...)
			d := New(database(t, m))
			gotMsg, got := d.Decode(frameOf(0x123, tt.data...), nil)
			if gotMsg != m {
				t.Fatalf("got message %v, want %s", gotMsg, m.Name)
			}
			check(t, got, tt.want)
			if d.Stats.Short != 0 {
				t.Errorf("got %d short frames, want 0", d.Stats.Short)
			}
		})
	}
}

func TestDecodeShortFrame(t *testing.T) {
	m := message("M", 0x10, 8,
		intel("a", 0, 16, false, 1, 0),
		motorola("b", 23, 16, false, 1, 0), // bytes 2-3
		intel("c", 28, 8, false, 1, 0),     // bits 28..35: needs byte 4
		intel("d", 48, 16, false, 1, 0),
	)
	d := New(database(t, m))
	buf := make([]Value, 0, d.MaxSignals())
	_, got := d.Decode(frameOf(0x10, 0x34, 0x12, 0xAB, 0xCD), buf)
	check(t, got, []want{
		{"a", 0x1234, 0x1234, 0x1234, Exact},
		{"b", 0xABCD, 0xABCD, 0xABCD, Exact},
		{"c", 0, 0, math.NaN(), Truncated},
		{"d", 0, 0, math.NaN(), Truncated},
	})
	// A frame that is short of the DBC length but holds every signal.
	m2 := message("N", 0x11, 8, intel("a", 0, 8, false, 1, 0))
	d2 := New(database(t, m2))
	_, got = d2.Decode(frameOf(0x11, 7), buf)
	check(t, got, []want{{"a", 7, 7, 7, Exact}})
	if d.Stats.Short != 1 || d2.Stats.Short != 1 {
		t.Errorf("got short counts %d and %d, want 1 and 1", d.Stats.Short, d2.Stats.Short)
	}
}

func TestDecodeMultiplexing(t *testing.T) {
	// Simple: sw selects a (0) or b (1, 2); c is always there.
	sw := intel("sw", 0, 8, false, 1, 0)
	simple := message("Simple", 0x100, 8,
		sw,
		muxed(intel("a", 8, 8, false, 1, 0), sw, one(0)),
		muxed(intel("b", 8, 16, true, 1, 0), sw, one(1), one(2)),
		intel("c", 56, 8, false, 1, 0),
	)
	// Extended: top selects inner (1) and d (4..6); inner, itself a
	// switch, selects e on 2..3 or 10..12.
	top := motorola("top", 7, 8, false, 1, 0)
	inner := muxed(intel("inner", 8, 8, false, 1, 0), top, one(1))
	inner.Multiplexer = true
	extended := message("Extended", 0x200, 8,
		top, inner,
		muxed(intel("e", 16, 16, false, 0.5, 0), inner, dbc.MuxRange{Lo: 2, Hi: 3}, dbc.MuxRange{Lo: 10, Hi: 12}),
		muxed(intel("d", 16, 8, false, 1, 0), top, dbc.MuxRange{Lo: 4, Hi: 6}),
		intel("tail", 32, 8, false, 1, 0),
	)
	d := New(database(t, simple, extended))
	tests := []struct {
		name string
		f    *frame.Frame
		want []want
	}{
		{"simple branch 0", frameOf(0x100, 0, 7, 0, 0, 0, 0, 0, 9), []want{
			{"sw", 0, 0, 0, Exact}, {"a", 7, 7, 7, Exact}, {"c", 9, 9, 9, Exact}}},
		{"simple branch 2", frameOf(0x100, 2, 0xFF, 0xFF, 0, 0, 0, 0, 9), []want{
			{"sw", 2, 2, 2, Exact}, {"b", 1<<64 - 1, -1, -1, Exact}, {"c", 9, 9, 9, Exact}}},
		{"simple unknown value loses only its signals", frameOf(0x100, 5, 7, 0, 0, 0, 0, 0, 9), []want{
			{"sw", 5, 5, 5, Exact}, {"c", 9, 9, 9, Exact}}},
		{"extended inner selects e by second range", frameOf(0x200, 1, 11, 0x10, 0x00, 3), []want{
			{"top", 1, 1, 1, Exact}, {"inner", 11, 11, 11, Exact}, {"e", 0x10, 0, 8, 0}, {"tail", 3, 3, 3, Exact}}},
		{"extended inner value selects nothing", frameOf(0x200, 1, 5, 0x10, 0x00, 3), []want{
			{"top", 1, 1, 1, Exact}, {"inner", 5, 5, 5, Exact}, {"tail", 3, 3, 3, Exact}}},
		{"extended top selects d, inner absent so e absent", frameOf(0x200, 5, 2, 0x10, 0x00, 3), []want{
			{"top", 5, 5, 5, Exact}, {"d", 0x10, 0x10, 0x10, Exact}, {"tail", 3, 3, 3, Exact}}},
		{"switch truncated: its signals are left out", frameOf(0x200, 1), []want{
			{"top", 1, 1, 1, Exact}, {"inner", 0, 0, math.NaN(), Truncated}, {"tail", 0, 0, math.NaN(), Truncated}}},
		{"selected signal truncated", frameOf(0x200, 1, 2, 0x10), []want{
			{"top", 1, 1, 1, Exact}, {"inner", 2, 2, 2, Exact}, {"e", 0, 0, math.NaN(), Truncated}, {"tail", 0, 0, math.NaN(), Truncated}}},
	}
	buf := make([]Value, 0, d.MaxSignals())
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, got := d.Decode(tt.f, buf)
			check(t, got, tt.want)
		})
	}
}

func TestDecodeSwitchAfterItsSignals(t *testing.T) {
	// The dbc package orders switches first; a hand-made message that
	// does not must not decode the signal on a stale switch value.
	sw := intel("sw", 0, 8, false, 1, 0)
	other := intel("other", 0, 8, false, 1, 0) // a switch of no message
	m := message("M", 1, 8,
		muxed(intel("early", 8, 8, false, 1, 0), sw, one(1)),
		sw,
		muxed(intel("orphan", 16, 8, false, 1, 0), other, one(1)),
	)
	lone := message("Lone", 2, 8, intel("plain", 0, 8, false, 1, 0), muxed(intel("orphan", 16, 8, false, 1, 0), other, one(1)))
	d := New(database(t, m, lone))
	_, got := d.Decode(frameOf(1, 1, 2, 3, 0, 0, 0, 0, 0), nil)
	check(t, got, []want{{"sw", 1, 1, 1, Exact}})
	_, got = d.Decode(frameOf(2, 1, 2, 3, 0, 0, 0, 0, 0), nil)
	check(t, got, []want{{"plain", 1, 1, 1, Exact}})
}

func TestDecodeStats(t *testing.T) {
	std := message("Std", 0x123, 2, intel("a", 0, 8, false, 1, 0))
	ext := message("Ext", 0x123, 2, intel("b", 8, 8, false, 1, 0))
	ext.Extended = true
	high := message("High", 0x1FFFFFFF, 1, intel("c", 0, 8, false, 1, 0))
	high.Extended = true
	d := New(database(t, std, ext, high))
	buf := make([]Value, 0, d.MaxSignals())
	tests := []struct {
		name string
		f    frame.Frame
		want *dbc.Message
	}{
		{"standard", frame.Frame{ID: 0x123, Len: 2}, std},
		{"extended, same number", frame.Frame{ID: 0x123, Len: 2, Flags: frame.Extended}, ext},
		{"29-bit", frame.Frame{ID: 0x1FFFFFFF, Len: 1, Flags: frame.Extended}, high},
		{"unknown standard", frame.Frame{ID: 0x124, Len: 2}, nil},
		{"unknown extended", frame.Frame{ID: 0x7FF, Len: 2, Flags: frame.Extended}, nil},
		{"standard ID out of range", frame.Frame{ID: 0x1FFFFFFF, Len: 2}, nil},
		{"remote", frame.Frame{ID: 0x123, Flags: frame.Remote}, nil},
		{"error", frame.Frame{ID: 0x123, Len: 8, Flags: frame.Error}, nil},
		{"short", frame.Frame{ID: 0x123, Len: 1}, std},
	}
	for _, tt := range tests {
		m, vals := d.Decode(&tt.f, buf)
		if m != tt.want {
			t.Errorf("%s: got message %v, want %v", tt.name, m, tt.want)
		}
		if tt.want == nil && len(vals) != 0 {
			t.Errorf("%s: got %d values, want none", tt.name, len(vals))
		}
	}
	want := Stats{Frames: 9, Decoded: 4, Unknown: 3, Short: 1, Skipped: 2}
	if d.Stats != want {
		t.Errorf("got stats %+v, want %+v", d.Stats, want)
	}
}

func TestDecodeGrowsSmallBuffer(t *testing.T) {
	m := message("M", 1, 8, intel("a", 0, 8, false, 1, 0), intel("b", 8, 8, false, 1, 0))
	d := New(database(t, m))
	buf := make([]Value, 1) // capacity too small
	_, got := d.Decode(frameOf(1, 1, 2), buf)
	check(t, got, []want{{"a", 1, 1, 1, Exact}, {"b", 2, 2, 2, Exact}})
	if cap(got) < d.MaxSignals() {
		t.Errorf("got capacity %d, want at least %d", cap(got), d.MaxSignals())
	}
}

func TestNewNilDatabase(t *testing.T) {
	d := New(nil)
	if m, vals := d.Decode(frameOf(1, 1), nil); m != nil || len(vals) != 0 {
		t.Errorf("got %v, %d values, want nil, 0", m, len(vals))
	}
	if d.MaxSignals() != 0 || d.Stats.Unknown != 1 {
		t.Errorf("got MaxSignals %d and %d unknown, want 0 and 1", d.MaxSignals(), d.Stats.Unknown)
	}
}

func TestDecodeAllocs(t *testing.T) {
	sw := intel("sw", 0, 8, false, 1, 0)
	db := database(t,
		benchMessage(),
		message("Mux", 0x200, 8, sw, muxed(intel("a", 8, 8, false, 1, 0), sw, one(1)), muxed(intel("b", 8, 8, false, 1, 0), sw, dbc.MuxRange{Lo: 2, Hi: 4}, one(9))),
		message("FD", 0x300, 64, motorola("w", 3, 64, true, 1, 0), intel("u", 100, 64, false, 1, 0), intel("x", 500, 12, true, 0.1, 0)),
	)
	d := New(db)
	buf := make([]Value, 0, d.MaxSignals())
	frames := []*frame.Frame{
		benchFrame(),
		frameOf(0x200, 1, 2, 3, 4, 5, 6, 7, 8),
		frameOf(0x200, 9, 2),
		frameOf(0x100, 1, 2, 3), // short
		{ID: 0x300, Len: 64, Flags: frame.FD},
		frameOf(0x7FF, 1),
	}
	for _, f := range frames {
		allocs := testing.AllocsPerRun(1000, func() { _, buf = d.Decode(f, buf) })
		if allocs != 0 {
			t.Errorf("frame %03X: got %v allocations per Decode, want 0", f.ID, allocs)
		}
	}
}

func TestMulAdd(t *testing.T) {
	tests := []struct {
		raw  uint64
		neg  bool
		f, o int64
		want int64
		ok   bool
	}{
		{5, false, 3, 2, 17, true},
		{1 << 63, true, 1, 0, math.MinInt64, true},
		{1 << 63, true, -1, 0, 0, false},
		{1 << 63, true, -1, -1, math.MaxInt64, true},
		{1 << 63, false, 1, -1, math.MaxInt64, true},
		{1<<64 - 1, false, 1, math.MinInt64, math.MaxInt64, true},
		{1<<64 - 1, false, 2, 0, 0, false},
		{1 << 63, false, 2, 0, 0, false}, // 2^64: the high word is 1, the low 0
		{1 << 62, false, 2, 0, 0, false},
		{1 << 62, false, -2, 0, math.MinInt64, true},
		{1 << 62, false, -2, -1, 0, false},
		{math.MaxInt64, false, 1, 1, 0, false},
		{uint64(1<<64 - 7), true, 0, -3, -3, true},
	}
	for _, tt := range tests {
		got, ok := mulAdd(tt.raw, tt.neg, tt.f, tt.o)
		if got != tt.want || ok != tt.ok {
			t.Errorf("mulAdd(%#x, %v, %d, %d): got %d, %v, want %d, %v", tt.raw, tt.neg, tt.f, tt.o, got, ok, tt.want, tt.ok)
		}
	}
}

func TestSpanRejectsBadLayouts(t *testing.T) {
	for _, s := range []*dbc.Signal{
		intel("zero", 0, 0, false, 1, 0),
		intel("long", 0, 65, false, 1, 0),
		intel("neg", -1, 8, false, 1, 0),
		intel("past", 508, 8, false, 1, 0),
		motorola("past", 506, 8, false, 1, 0),
		intel("far", 4096, 1, false, 1, 0),
	} {
		if _, _, ok := span(s); ok {
			t.Errorf("%s start %d length %d: got ok, want rejected", s.Name, s.Start, s.Length)
		}
		var data [frameMax]byte
		if err := EncodeRaw(s, data[:], 1); err == nil || !strings.HasPrefix(err.Error(), "decoder: ") {
			t.Errorf("EncodeRaw %s: got error %v, want ErrLayout", s.Name, err)
		}
	}
}
