package decoder

import (
	"math/rand/v2"
	"testing"

	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/frame"
)

// Test helpers: databases built by hand, and a reference bit walker that
// follows DBC's numbering one bit at a time, independent of the plan's
// word shifts.

// intel and motorola build an integer signal.
func intel(name string, start, length int, signed bool, factor, offset float64) *dbc.Signal {
	return &dbc.Signal{Name: name, Start: start, Length: length, Order: dbc.LittleEndian, Signed: signed, Factor: factor, Offset: offset}
}

func motorola(name string, start, length int, signed bool, factor, offset float64) *dbc.Signal {
	return &dbc.Signal{Name: name, Start: start, Length: length, Order: dbc.BigEndian, Signed: signed, Factor: factor, Offset: offset}
}

// muxed marks s as selected by sw on the given raw value ranges.
func muxed(s, sw *dbc.Signal, ranges ...dbc.MuxRange) *dbc.Signal {
	s.Mux = &dbc.Mux{Switch: sw, Ranges: ranges}
	return s
}

// one is the range of the single multiplexer value v.
func one(v uint64) dbc.MuxRange { return dbc.MuxRange{Lo: v, Hi: v} }

// message builds a message with the given signals.
func message(name string, id uint32, length int, sigs ...*dbc.Signal) *dbc.Message {
	return &dbc.Message{Name: name, ID: id, Length: length, Signals: sigs}
}

// database indexes messages or fails the test.
func database(t testing.TB, msgs ...*dbc.Message) *dbc.Database {
	t.Helper()
	db, err := dbc.NewDatabase(msgs)
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// frameOf builds a standard frame with the given payload.
func frameOf(id uint32, data ...byte) *frame.Frame {
	f := &frame.Frame{ID: id, Len: uint8(len(data))}
	copy(f.Data[:], data)
	return f
}

// walk returns the data bit numbers (bit b of byte i is 8i+b) of the
// signal from LSB to MSB, stepping as DBC defines: Intel counts up from
// the start bit; Motorola starts at the MSB and counts down within a
// byte, then continues at bit 7 of the next byte.
func walk(s *dbc.Signal) []int {
	bits := make([]int, s.Length)
	if s.Order == dbc.LittleEndian {
		for k := range bits {
			bits[k] = s.Start + k
		}
		return bits
	}
	pos := s.Start
	for k := s.Length - 1; k >= 0; k-- {
		bits[k] = pos
		if pos%8 == 0 {
			pos += 15
		} else {
			pos--
		}
	}
	return bits
}

// refRaw extracts the signal's raw value bit by bit, sign-extended for
// signed integers.
func refRaw(s *dbc.Signal, data []byte) uint64 {
	var raw uint64
	for k, b := range walk(s) {
		raw |= uint64(data[b/8]>>(b%8)&1) << k
	}
	if s.Signed && s.Type == dbc.Integer && s.Length < 64 && raw>>(s.Length-1)&1 == 1 {
		raw |= ^uint64(0) << s.Length
	}
	return raw
}

// layout places up to n random non-overlapping signals in a payload of
// length bytes: random byte order, length (1–64), sign, type and
// scaling. Signals that find no free place are left out.
func layout(r *rand.Rand, length, n int) []*dbc.Signal {
	used := make([]bool, 8*length)
	factors := []float64{1, 1, 1, 0.1, 0.25, 2, -3, 0.001, 1e-7, 100}
	offsets := []float64{0, 0, 0, -40, 100, 0.5, -1e4}
	var sigs []*dbc.Signal
	for i := range n {
		for try := 0; try < 20; try++ {
			s := &dbc.Signal{
				Name:   "s" + string(rune('A'+i%26)) + string(rune('a'+try)),
				Length: 1 + r.IntN(min(64, 8*length)),
				Order:  dbc.ByteOrder(r.IntN(2)),
				Signed: r.IntN(2) == 0,
				Factor: factors[r.IntN(len(factors))],
				Offset: offsets[r.IntN(len(offsets))],
			}
			switch r.IntN(8) {
			case 0:
				s.Type, s.Length, s.Signed = dbc.Float32, 32, false
			case 1:
				s.Type, s.Length, s.Signed = dbc.Float64, 64, false
			case 2:
				s.Length = 1 + r.IntN(3) // many short signals, like flags
			}
			if s.Length > 8*length {
				continue
			}
			s.Start = r.IntN(8 * length)
			if !fits(s, used) {
				continue
			}
			for _, b := range walk(s) {
				used[b] = true
			}
			sigs = append(sigs, s)
			break
		}
	}
	return sigs
}

// fits reports whether the signal lies inside the payload on free bits.
func fits(s *dbc.Signal, used []bool) bool {
	pos := s.Start
	for k := 0; k < s.Length; k++ {
		if pos < 0 || pos >= len(used) || used[pos] {
			return false
		}
		if s.Order == dbc.LittleEndian {
			pos++
		} else if pos%8 == 0 {
			pos += 15
		} else {
			pos--
		}
	}
	return true
}
