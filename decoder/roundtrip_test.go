package decoder

import (
	"math"
	"math/big"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/frame"
)

// randomRaw draws a raw value of n bits, often an edge of the range.
func randomRaw(r *rand.Rand, n int) uint64 {
	mask := ^uint64(0) >> (64 - n)
	switch r.IntN(6) {
	case 0:
		return 0
	case 1:
		return mask
	case 2:
		return 1 << (n - 1) // the most negative signed value
	case 3:
		return mask >> 1 // the most positive signed value
	}
	return r.Uint64() & mask
}

// signExtend is what Decode returns as Raw for the n-bit value u.
func signExtend(s *dbc.Signal, u uint64) uint64 {
	if s.Signed && s.Type == dbc.Integer && s.Length < 64 && u>>(s.Length-1)&1 == 1 {
		return u | ^uint64(0)<<s.Length
	}
	return u
}

// exactPhys returns raw × factor + offset computed exactly, and whether
// factor and offset are integers.
func exactPhys(s *dbc.Signal, raw uint64) (*big.Float, bool) {
	x := new(big.Float).SetPrec(512)
	if s.Signed {
		x.SetInt64(int64(raw))
	} else {
		x.SetUint64(raw)
	}
	x.Mul(x, big.NewFloat(s.Factor))
	x.Add(x, big.NewFloat(s.Offset))
	return x, s.Factor == math.Trunc(s.Factor) && s.Offset == math.Trunc(s.Offset)
}

// TestRoundTrip encodes random raw values into random layouts with
// EncodeRaw, decodes them, and checks every value against an independent
// reference: the bit walker for Raw, exact arithmetic for Int and Phys.
func TestRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	lengths := []int{1, 2, 3, 5, 8, 8, 8, 12, 16, 20, 24, 32, 48, 64, 64}
	for trial := range 2000 {
		length := lengths[r.IntN(len(lengths))]
		sigs := layout(r, length, 1+r.IntN(12))
		for _, s := range sigs {
			if r.IntN(3) == 0 {
				s.Min, s.Max = -100*r.Float64(), 100*r.Float64()
			}
		}
		m := message("M", 0x42, length, sigs...)
		d := New(database(t, m))
		f := &frame.Frame{ID: 0x42, Len: uint8(length)}
		for i := range length {
			f.Data[i] = byte(r.Uint32())
		}
		raws := make([]uint64, len(sigs))
		for i, s := range sigs {
			raws[i] = randomRaw(r, s.Length)
			if err := EncodeRaw(s, f.Data[:length], raws[i]); err != nil {
				t.Fatalf("trial %d: EncodeRaw %s: %v", trial, s.Name, err)
			}
		}
		_, vals := d.Decode(f, nil)
		if len(vals) != len(sigs) {
			t.Fatalf("trial %d: got %d values, want %d", trial, len(vals), len(sigs))
		}
		for i, v := range vals {
			s := sigs[i]
			where := func() string {
				return s.Name + layoutString(s)
			}
			if want := signExtend(s, raws[i]); v.Raw != want || v.Raw != refRaw(s, f.Data[:]) {
				t.Fatalf("trial %d %s: got raw %#x, want %#x (walker %#x)", trial, where(), v.Raw, want, refRaw(s, f.Data[:]))
			}
			checkPhys(t, s, &v)
			// NaN is not out of range; ±Inf beyond it is. An integer
			// signal's value is in range by its value as written.
			x := v.Phys
			if v.Flags&Float == 0 {
				x = Tidy(&v)
			}
			wantOut := s.Min < s.Max && (x < s.Min || x > s.Max)
			if got := v.Flags&OutOfRange != 0; got != wantOut {
				t.Fatalf("trial %d %s: got flags %05b for %v in [%v, %v]", trial, where(), v.Flags, v.Phys, s.Min, s.Max)
			}
			if s.Type == dbc.Integer && s.Length <= 32 {
				var data [frameMax]byte
				raw, err := EncodePhys(s, data[:], v.Phys)
				if err != nil || raw != v.Raw || refRaw(s, data[:]) != v.Raw {
					t.Fatalf("trial %d %s: EncodePhys(%v) got raw %#x, %v, want %#x", trial, where(), v.Phys, raw, err, v.Raw)
				}
			}
		}
	}
}

// checkPhys checks one decoded value's Phys, Int and flags against exact
// arithmetic.
func checkPhys(t *testing.T, s *dbc.Signal, v *Value) {
	t.Helper()
	if s.Type != dbc.Integer {
		x := math.Float64frombits(v.Raw)
		if s.Type == dbc.Float32 {
			x = float64(math.Float32frombits(uint32(v.Raw)))
		}
		want := float64(x*s.Factor) + s.Offset
		if v.Flags&^OutOfRange != Float || !samePhys(v.Phys, want) {
			t.Fatalf("%s: got %v flags %05b, want %v Float", s.Name, v.Phys, v.Flags, want)
		}
		return
	}
	exact, integral := exactPhys(s, v.Raw)
	want, _ := exact.Float64()
	// Two roundings at most: raw × factor, then + offset.
	scale := math.Abs(float64(int64(v.Raw)))*math.Abs(s.Factor) + math.Abs(s.Offset)
	if !s.Signed {
		scale = float64(v.Raw)*math.Abs(s.Factor) + math.Abs(s.Offset)
	}
	if math.Abs(v.Phys-want) > 0x1p-51*scale {
		t.Fatalf("%s: got phys %v, want %v", s.Name, v.Phys, want)
	}
	i, acc := exact.Int64()
	fitsInt := integral && acc == big.Exact
	unsigned := integral && !s.Signed && v.Raw > math.MaxInt64 && s.Factor == 1 && s.Offset == 0
	switch {
	case unsigned:
		if v.Flags&^OutOfRange != Exact|Unsigned || v.Uint() != v.Raw {
			t.Fatalf("%s: raw %#x: got flags %05b, want Exact|Unsigned", s.Name, v.Raw, v.Flags)
		}
	case fitsInt:
		if v.Flags&^OutOfRange != Exact || v.Int != i || v.Phys != float64(i) {
			t.Fatalf("%s: raw %#x: got int %d phys %v flags %05b, want %d Exact", s.Name, v.Raw, v.Int, v.Phys, v.Flags, i)
		}
	default:
		if v.Flags&^OutOfRange != 0 {
			t.Fatalf("%s: raw %#x: got flags %05b, want none", s.Name, v.Raw, v.Flags)
		}
	}
}

func layoutString(s *dbc.Signal) string {
	order := "@1"
	if s.Order == dbc.BigEndian {
		order = "@0"
	}
	sign := "+"
	if s.Signed {
		sign = "-"
	}
	return " " + itoa(s.Start) + "|" + itoa(s.Length) + order + sign + " type " + itoa(int(s.Type))
}

func itoa(i int) string { return strconv.Itoa(i) }

// TestFastPathMatchesGeneral checks that the inlined loop of decodeAll,
// decodeSome and the general extract+convert agree on every signal.
func TestFastPathMatchesGeneral(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	for trial := range 500 {
		length := []int{8, 64}[r.IntN(2)]
		sigs := layout(r, length, 1+r.IntN(10))
		for _, s := range sigs {
			if r.IntN(2) == 0 {
				s.Min, s.Max = -1000*r.Float64(), 1000*r.Float64()
			}
		}
		d := New(database(t, message("M", 1, length, sigs...)))
		p := d.std[1]
		var data [frameMax]byte
		for i := range length {
			data[i] = byte(r.Uint32())
		}
		fast := make([]Value, len(sigs))
		some := make([]Value, len(sigs))
		p.decodeAll(&data, fast)
		if n := d.decodeSome(p, &data, length, some); n != len(sigs) {
			t.Fatalf("trial %d: decodeSome got %d values, want %d", trial, n, len(sigs))
		}
		for i := range p.sigs {
			var general Value
			p.sigs[i].convert(p.sigs[i].extract(&data), &general)
			if !sameValue(fast[i], general) || !sameValue(some[i], general) {
				t.Fatalf("trial %d %s: got fast %+v, some %+v, want %+v", trial, sigs[i].Name+layoutString(sigs[i]), fast[i], some[i], general)
			}
		}
	}
}

// sameValue compares values, NaN equal to NaN.
func sameValue(a, b Value) bool {
	return a.Signal == b.Signal && a.Raw == b.Raw && a.Int == b.Int && a.Flags == b.Flags &&
		(a.Phys == b.Phys || math.IsNaN(a.Phys) && math.IsNaN(b.Phys))
}

// FuzzDecode decodes arbitrary frames against a database of awkward
// layouts (multiplexed, nine-byte, CAN FD, past 64 bytes) and checks
// every value that is not Truncated against the bit walker.
func FuzzDecode(f *testing.F) {
	r := rand.New(rand.NewPCG(9, 9))
	sw := intel("sw", 0, 3, false, 1, 0)
	inner := muxed(motorola("inner", 15, 4, false, 1, 0), sw, one(1), dbc.MuxRange{Lo: 4, Hi: 6})
	msgs := []*dbc.Message{
		message("Mux", 0x10, 8, sw, inner,
			muxed(intel("a", 16, 20, true, 0.5, 1), inner, one(3)),
			muxed(motorola("b", 23, 9, false, 1, 0), sw, one(2)),
			intel("c", 40, 24, false, 3, -7)),
		message("FD", 0x11, 64, motorola("w", 3, 64, true, 1, 0), intel("u", 68, 64, false, 1, 0), intel("bad", 510, 8, false, 1, 0)),
	}
	for i := range 6 {
		length := []int{8, 64}[i%2]
		msgs = append(msgs, message("R"+itoa(i), uint32(0x20+i), length, layout(r, length, 12)...))
	}
	ext := message("Ext", 0x10, 8, intel("x", 0, 64, true, 1, 0))
	ext.Extended = true
	msgs = append(msgs, ext)
	db, err := dbc.NewDatabase(msgs)
	if err != nil {
		f.Fatal(err)
	}
	d := New(db)
	buf := make([]Value, 0, d.MaxSignals())
	f.Add(uint16(0x10), uint8(0), uint8(8), []byte{1, 0x30, 0xFF, 0xFF, 0xFF, 1, 2, 3})
	f.Add(uint16(0x10), uint8(0), uint8(2), []byte{4, 0x30})
	f.Add(uint16(0x11), uint8(frame.FD), uint8(64), make([]byte, 64))
	f.Add(uint16(0x10), uint8(frame.Extended), uint8(8), []byte{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF})
	f.Add(uint16(0x22), uint8(frame.Remote), uint8(0), []byte{})
	f.Fuzz(func(t *testing.T, id uint16, flags uint8, n uint8, data []byte) {
		fr := &frame.Frame{ID: uint32(id), Flags: frame.Flags(flags), Len: n}
		copy(fr.Data[:], data)
		m, vals := d.Decode(fr, buf)
		if m == nil {
			if len(vals) != 0 {
				t.Fatalf("got %d values without a message", len(vals))
			}
			return
		}
		if len(vals) > d.MaxSignals() {
			t.Fatalf("got %d values, more than MaxSignals %d", len(vals), d.MaxSignals())
		}
		for _, v := range vals {
			s := v.Signal
			_, last, ok := span(s)
			fits := ok && last/8 < min(int(n), frameMax)
			if v.Flags&Truncated != 0 {
				if fits || !math.IsNaN(v.Phys) || v.Raw != 0 {
					t.Fatalf("%s: Truncated but fits in %d bytes (raw %#x, phys %v)", s.Name, n, v.Raw, v.Phys)
				}
				continue
			}
			if !fits {
				t.Fatalf("%s: decoded from %d bytes, does not fit", s.Name, n)
			}
			if want := refRaw(s, fr.Data[:]); v.Raw != want {
				t.Fatalf("%s: got raw %#x, want %#x", s.Name, v.Raw, want)
			}
		}
	})
}
