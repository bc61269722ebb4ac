package valuelog

import (
	"bytes"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/decoder"
	"github.com/yukart/candec/envelope"
	"github.com/yukart/candec/frame"
)

// tidyText is what appendScaled must write: the general path.
func tidyText(f, scale float64) string {
	return string(envelope.AppendFloat(nil, decoder.TidyScaled(f, scale)))
}

func TestAppendScaled(t *testing.T) {
	for _, c := range []struct {
		f    float64
		dec  int
		want string
	}{
		{7 * 0.1, 1, "0.7"},
		{250 * 0.1, 1, "25.0"},
		{-3 * 0.01, 2, "-0.03"},
		{1 * 0.0001, 4, "0.0001"},
		{1 * 0.00001, 5, "1e-05"},            // the exponent form, by the general path
		{999999.9, 1, "999999.9"},            // the largest without an exponent
		{1234567 * 0.5, 1, "617283.5"},       // a factor of 0.5 tidies at one decimal
		{12345678 * 0.1, 1, "1.2345678e+06"}, // exponent form
		{-0.04, 1, "-0.0"},                   // rounds to -0: the sign shows
		{0.04, 1, "0.0"},
		{math.Ldexp(1, 60), 1, "1.152921504606847e+18"}, // too large to round: as it is
		{123 * 0.001, 3, "0.123"},
		{100, 0, "100.0"},
		{-5e-4, 4, "-0.0005"},
	} {
		scale := math.Pow10(c.dec)
		got := string(appendScaled(nil, c.f, scale, c.dec))
		if got != c.want {
			t.Errorf("appendScaled(%v, 1e%d) = %s, want %s", c.f, c.dec, got, c.want)
		}
		if ref := tidyText(c.f, scale); got != ref {
			t.Errorf("appendScaled(%v, 1e%d) = %s, the general path writes %s", c.f, c.dec, got, ref)
		}
	}
}

// TestAppendScaledAgrees compares appendScaled with the general path on
// values as the decoder makes them, raw × factor + offset, for decimal
// factors and offsets of every scale and raw values of every size.
func TestAppendScaledAgrees(t *testing.T) {
	factors := []float64{0.1, 0.01, 0.001, 0.0001, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9,
		0.5, 0.25, 0.125, 0.05, 0.02, 0.3, 0.7, 0.03125, 0.0625, 1.5, 2.5, 0.004, 0.0390625,
		0.00390625, 0.015625, 0.1 / 3, 1, 10, 100}
	offsets := []float64{0, -40, 0.5, -0.5, -273.15, 1000, -0.001, 12.34, 1e-9}
	r := rand.New(rand.NewPCG(1, 2))
	n := 0
	for _, factor := range factors {
		for _, offset := range offsets {
			scale := decoder.ScaleDecimals(factor, offset)
			if scale == 0 {
				continue
			}
			dec := 0
			for p := scale; p >= 10; p /= 10 {
				dec++
			}
			for bits := 1; bits <= 64; bits++ {
				for range 40 {
					raw := int64(r.Uint64() >> (64 - bits))
					if r.IntN(2) == 0 {
						raw = -raw
					}
					f := float64(raw)*factor + offset
					n++
					if got, want := string(appendScaled(nil, f, scale, dec)), tidyText(f, scale); got != want {
						t.Fatalf("raw %d × %v + %v = %v: appendScaled writes %s, the general path %s", raw, factor, offset, f, got, want)
					}
				}
			}
		}
	}
	t.Logf("%d values agree", n)
}

func FuzzAppendScaled(f *testing.F) {
	f.Add(0.7, uint8(1))
	f.Add(-273.15, uint8(2))
	f.Add(1e-5, uint8(5))
	f.Add(999999.95, uint8(2))
	f.Fuzz(func(t *testing.T, x float64, dec uint8) {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return
		}
		d := int(dec % 10)
		scale := math.Pow10(d)
		if got, want := string(appendScaled(nil, x, scale, d)), tidyText(x, scale); got != want {
			t.Fatalf("appendScaled(%v, 1e%d) = %s, the general path writes %s", x, d, got, want)
		}
	})
}

// textDB is a message of signals of every kind the writer tells apart,
// indexed as a Database indexes them.
func textDB() (*dbc.Message, []*dbc.Signal) {
	m := &dbc.Message{Name: "MSG", ID: 0x123, Length: 8}
	odd := &dbc.Message{Name: `Odd,"name"`, ID: 0x124, Length: 8}
	sigs := []*dbc.Signal{
		{Name: "Exact", Factor: 1, Unit: "rpm"},
		{Name: "Tenth", Factor: 0.1, Offset: -40, Unit: "°C"},
		{Name: "Label", Factor: 1, Values: []dbc.ValueDescription{{Value: 1, Label: "on"}, {Value: 2, Label: `say "D", now`}}},
		{Name: "F32", Type: dbc.Float32, Factor: 1, Unit: "m/s"},
		{Name: "Third", Factor: 1.0 / 3},
		{Name: "Tiny", Factor: 1e-7, Unit: "a,b"},
		{Name: "Huge", Factor: 1e6},
	}
	for i, s := range sigs {
		s.Index, s.Message = 10+i, m
	}
	m.Signals = sigs
	q := &dbc.Signal{Name: "Q", Message: odd, Factor: 0.5, Unit: "x\ny", Index: 3}
	odd.Signals = []*dbc.Signal{q}
	return m, append(sigs, q)
}

// randomValue is a value of s as the decoder could make it.
func randomValue(r *rand.Rand, s *dbc.Signal) decoder.Value {
	v := decoder.Value{Signal: s}
	switch r.IntN(12) {
	case 0:
		v.Phys = math.NaN()
		v.Flags = decoder.Float
		return v
	case 1:
		v.Phys = math.Inf(1 - 2*r.IntN(2))
		v.Flags = decoder.Float | decoder.OutOfRange
		return v
	case 2:
		v.Flags |= decoder.Truncated
		v.Phys = math.NaN()
		return v
	}
	raw := int64(r.Uint64() >> r.IntN(64))
	if r.IntN(3) == 0 {
		raw = -raw
	}
	if r.IntN(4) == 0 {
		raw = int64(r.IntN(4))
	}
	v.Raw = uint64(raw)
	switch {
	case s.Type == dbc.Float32:
		v.Phys = float64(math.Float32frombits(uint32(raw)))
		v.Flags |= decoder.Float
	case s.Factor == 1 && s.Offset == 0:
		v.Int, v.Phys = raw, float64(raw)
		v.Flags |= decoder.Exact
		if r.IntN(5) == 0 {
			v.Flags |= decoder.Unsigned
		}
	default:
		v.Phys = float64(raw)*s.Factor + s.Offset
	}
	if r.IntN(5) == 0 {
		v.Flags |= decoder.OutOfRange
	}
	if r.IntN(6) == 0 {
		v.Flags |= decoder.J1939
		v.SA = uint8(r.Uint32())
	}
	return v
}

// TestWriterText checks that the lines Write makes from each message's
// text are those the reference formatting (appendJSON, appendCSV) makes
// value by value, on random values of signals of every kind.
func TestWriterText(t *testing.T) {
	_, sigs := textDB()
	r := rand.New(rand.NewPCG(3, 4))
	for _, format := range []Format{JSON, CSV} {
		var got bytes.Buffer
		var want []byte
		if format == CSV {
			want = append(want, Header...)
		}
		w := NewWriter(&got, format)
		for i := range 20000 {
			s := sigs[r.IntN(len(sigs))]
			f := &frame.Frame{Time: r.Int64N(4e18) - 2e18, ID: s.Message.ID}
			iface := []string{"can0", "vcan,1", `a"b`}[r.IntN(3)]
			var vals []decoder.Value
			for range r.IntN(5) {
				// The values of a frame are of one message.
				vals = append(vals, randomValue(r, s.Message.Signals[r.IntN(len(s.Message.Signals))]))
			}
			if err := w.Write(f, iface, vals); err != nil {
				t.Fatal(err)
			}
			for j := range vals {
				if vals[j].Flags&decoder.Truncated != 0 {
					continue
				}
				if format == CSV {
					want = appendCSV(want, f, iface, &vals[j])
				} else {
					want = appendJSON(want, f, iface, &vals[j])
				}
			}
			if i%1000 == 0 {
				if err := w.Flush(); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want) {
			g, wl := strings.Split(got.String(), "\n"), strings.Split(string(want), "\n")
			for i := range min(len(g), len(wl)) {
				if g[i] != wl[i] {
					t.Fatalf("format %d, line %d:\ngot  %s\nwant %s", format, i+1, g[i], wl[i])
				}
			}
			t.Fatalf("format %d: %d lines, want %d", format, len(g), len(wl))
		}
	}
}

// TestWriterAllocs pins Write at no allocation once each message has
// been seen.
func TestWriterAllocs(t *testing.T) {
	m, _ := textDB()
	r := rand.New(rand.NewPCG(5, 6))
	var vals []decoder.Value
	for _, s := range m.Signals {
		v := randomValue(r, s)
		v.Flags &^= decoder.Truncated
		vals = append(vals, v)
	}
	f := &frame.Frame{Time: 1_500_000_000_000_000_000, ID: m.ID}
	for _, format := range []Format{JSON, CSV} {
		w := NewWriter(discard{}, format)
		w.Write(f, "can0", vals)
		if n := testing.AllocsPerRun(1000, func() { w.Write(f, "can0", vals) }); n != 0 {
			t.Errorf("format %d: %v allocations per Write, want 0", format, n)
		}
	}
}

// discard is io.Discard without its ReaderFrom.
type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
