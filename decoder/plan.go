package decoder

import (
	"math"

	"github.com/yukart/candec/dbc"
)

// A plan is a message compiled for decoding: everything that can be
// worked out from the DBC alone is worked out once, in New, so that
// decoding a frame is loads, shifts and one multiply-add per signal.
type plan struct {
	msg  *dbc.Message
	sigs []sigPlan
	// length is the DBC's length in bytes; a shorter frame is counted
	// as short.
	length int
	// need is the number of data bytes that every signal fits in: a
	// frame at least this long takes the fast path.
	need int
	// switches is the number of multiplexer switches, each with a slot
	// in Decoder.swRaw.
	switches int
	// muxed is true when some signal is multiplexed: such frames take
	// the general path.
	muxed bool
	// j1939 is true for a J1939 message: its values carry the frame's
	// source address.
	j1939 bool
}

// sigPlan is one signal's compiled extraction and scaling.
//
// Extraction loads the 8 data bytes at off as one word (little-endian for
// Intel, big-endian for Motorola), so that the signal's bits are
// contiguous in it, then shifts left by lsh to drop the bits above the
// signal and right by rsh = 64 − Length, arithmetically for signed
// signals, to drop the bits below and extend the sign:
//
//	Intel, Start 13, Length 12, off 0 (word bit i is data bit i):
//
//	  63                    25 24          13 12                0
//	  +-----------------------+--------------+-------------------+
//	  |       above           |    signal    |      below        |
//	  +-----------------------+--------------+-------------------+
//	  << lsh = 64−13−12 = 39, then >> rsh = 52
//
//	Motorola, Start 13 (byte 1 bit 5, the MSB), Length 12, off 0: in the
//	big-endian word, data byte 0 is the top byte and the signal runs from
//	linear bit 10 (MSB) to 21 (LSB), counting from the word's top:
//
//	  63      54 53          42 41                               0
//	  +---------+--------------+----------------------------------+
//	  | above   |    signal    |              below               |
//	  +---------+--------------+----------------------------------+
//	  << lsh = 10, then >> rsh = 52
//
// A signal of 58 bits or more that starts mid-byte spans 9 bytes and
// cannot sit in one 8-byte word; it is marked wide and assembled from the
// word and the ninth byte (rare, and off the common path).
type sigPlan struct {
	// The fields read by the fast loop of decodeAll come first, so that
	// they share one cache line.
	sig *dbc.Signal
	// factor and offset are the DBC's; ifactor and ioffset the same as
	// integers in modeExact, 0 otherwise (so that the fast loop computes
	// Int as 0).
	factor, offset   float64
	ifactor, ioffset int64
	// min and max are the DBC range, or ±Inf when it has none.
	min, max float64
	// off is the byte offset of the loaded word.
	off       uint8
	lsh, rsh  uint8
	bigEndian bool
	signed    bool
	// fast marks an integer signal in one word whose value the inlined
	// loop of decodeAll computes: modeScaled, or modeExact, where the
	// float64 formula is exact too; flags is then Exact or 0.
	fast  bool
	flags Flags

	// need is the number of bytes the signal needs (one past its last
	// byte), or noFit.
	need     uint8
	mode     mode
	wide     bool
	ranged   bool
	integral bool
	// islow and oslow are factor and offset as integers in modeSlow
	// when integral.
	islow, oslow int64
	// muxSlot is the slot of the switch that selects this signal, or -1;
	// slot is this signal's own slot when it is a switch, or -1.
	muxSlot, slot int32
	// muxLo and muxHi are the single range of a simple multiplexed
	// signal; ranges is used when there are several (multiRange).
	multiRange   bool
	muxLo, muxHi uint64
	ranges       []dbc.MuxRange
}

// noFit is the need of a signal that fits in no frame (a DBC layout past
// 64 bytes or a length outside 1–64): it is always reported Truncated.
const noFit = 255

// mode is how a signal's raw value becomes a physical value.
type mode uint8

const (
	// modeScaled: phys = raw × factor + offset in float64.
	modeScaled mode = iota
	// modeExact: integral factor and offset whose results stay below
	// 2^53 in magnitude for any raw value of the signal's length, so
	// that int64 and float64 arithmetic are both exact.
	modeExact
	// modeFloat32 and modeFloat64: IEEE bits, then scaled.
	modeFloat32
	modeFloat64
	// modeSlow: the cases that need care (integral factor or offset that
	// may overflow int64, unsigned 64-bit raw values); see physSlow.
	modeSlow
)

// compile builds the plan for message m.
func compile(m *dbc.Message) *plan {
	p := &plan{msg: m, length: m.Length, sigs: make([]sigPlan, len(m.Signals)), j1939: m.J1939 && m.Extended}
	slots := map[*dbc.Signal]int32{}
	for _, s := range m.Signals {
		if s.Mux != nil && s.Mux.Switch != nil {
			slots[s.Mux.Switch] = -1 // a switch; slot assigned below
		}
	}
	seen := map[*dbc.Signal]bool{}
	for i, s := range m.Signals {
		sp := &p.sigs[i]
		compileLayout(sp, s)
		compileScaling(sp, s)
		sp.fast = !sp.wide && sp.need != noFit && (sp.mode == modeScaled || sp.mode == modeExact)
		if sp.mode == modeExact {
			sp.flags = Exact
		}
		sp.slot, sp.muxSlot = -1, -1
		if _, ok := slots[s]; ok {
			sp.slot = int32(p.switches)
			slots[s] = sp.slot
			p.switches++
		}
		if s.Mux != nil {
			compileMux(sp, s, slots, seen)
			p.muxed = true
		}
		seen[s] = true
		if int(sp.need) > p.need {
			p.need = int(sp.need)
		}
	}
	return p
}

// compileLayout works out where the signal's bits are and how to shift
// them out.
func compileLayout(sp *sigPlan, s *dbc.Signal) {
	sp.sig = s
	sp.bigEndian = s.Order == dbc.BigEndian
	sp.signed = s.Signed && s.Type == dbc.Integer
	first, last, ok := span(s)
	if !ok {
		sp.need = noFit
		return
	}
	n := s.Length
	sp.need = uint8(last>>3 + 1)
	sp.rsh = uint8(64 - n)
	off := min(first>>3, 56)
	sp.off = uint8(off)
	if last-8*off > 63 {
		// Nine bytes: the word at off plus the byte after it.
		sp.wide = true
		sp.lsh = sp.rsh
		return
	}
	if sp.bigEndian {
		sp.lsh = uint8(first - 8*off)
	} else {
		sp.lsh = uint8(64 - (first - 8*off) - n)
	}
}

// span returns the first and last bit of the signal in linear numbering:
// for Intel, data bit i is bit i%8 of byte i/8 and first is the LSB; for
// Motorola, linear bit 0 is the most significant bit of byte 0 and first
// is the MSB. ok is false when the signal does not fit in 64 bytes.
func span(s *dbc.Signal) (first, last int, ok bool) {
	if s.Length < 1 || s.Length > 64 || s.Start < 0 || s.Start >= 8*frameMax {
		return 0, 0, false
	}
	first = s.Start
	if s.Order == dbc.BigEndian {
		first = s.Start&^7 + 7 - s.Start&7
	}
	last = first + s.Length - 1
	return first, last, last < 8*frameMax
}

// frameMax is the largest payload in bytes (CAN FD).
const frameMax = 64

// compileScaling chooses the signal's mode and range check.
func compileScaling(sp *sigPlan, s *dbc.Signal) {
	sp.factor, sp.offset = s.Factor, s.Offset
	sp.ranged = s.Min < s.Max
	sp.min, sp.max = math.Inf(-1), math.Inf(1) // no range: nothing is out
	if sp.ranged {
		sp.min, sp.max = s.Min, s.Max
	}
	switch s.Type {
	case dbc.Float32:
		sp.mode = modeFloat32
		return
	case dbc.Float64:
		sp.mode = modeFloat64
		return
	}
	if sp.ranged {
		sp.min, sp.max = tidyRange(s.Min, s.Max, ScaleDecimals(s.Factor, s.Offset))
	}
	if isInt64(s.Factor) && isInt64(s.Offset) {
		sp.integral = true
		// |raw| < 2^Length, so |raw × factor + offset| stays below
		// 2^53 when this bound does: no int64 overflow, and the float64
		// formula gives the same value exactly.
		bound := math.Abs(s.Factor)*math.Ldexp(1, s.Length) + math.Abs(s.Offset)
		if bound < 1<<53 {
			sp.mode = modeExact
			sp.ifactor, sp.ioffset = int64(s.Factor), int64(s.Offset)
		} else {
			sp.mode = modeSlow
			sp.islow, sp.oslow = int64(s.Factor), int64(s.Offset)
		}
		return
	}
	if !sp.signed && s.Length == 64 {
		sp.mode = modeSlow // float64(int64(raw)) would be wrong past 2^63
		return
	}
	sp.mode = modeScaled
}

// tidyRange returns the bounds to compare an integer signal's Phys with,
// so that it is out of range exactly when its value as written (Tidy,
// on the grid of 1/scale) lies outside min..max: raw 7 × factor 0.1 is
// 0.7000000000000001, written 0.7, and within a range that ends at 0.7.
// A written value v is above max when it is above the last grid point
// at or below max, that is, when Phys is past that point by half a step
// or more; and alike below min. Without a grid (scale 0), or bounds too
// large to round, the range is min..max as it is.
func tidyRange(lo, hi, scale float64) (float64, float64) {
	if scale == 0 || math.Abs(lo*scale) >= 1<<53 || math.Abs(hi*scale) >= 1<<53 {
		return lo, hi
	}
	grid := func(x float64, toward func(float64) float64) float64 {
		if nearInt(x) {
			return math.Round(x)
		}
		return toward(x)
	}
	return (grid(lo*scale, math.Ceil) - 0.5) / scale, (grid(hi*scale, math.Floor) + 0.5) / scale
}

// isInt64 reports whether x is an integer that int64 holds exactly.
func isInt64(x float64) bool {
	return x == math.Trunc(x) && x >= -(1<<63) && x < 1<<63
}

// compileMux records which switch selects the signal and on which values.
// A switch that is not an earlier signal of the same message can never
// have been decoded first, so the signal is never decoded (the dbc
// package orders switches first, so this is only a guard).
func compileMux(sp *sigPlan, s *dbc.Signal, slots map[*dbc.Signal]int32, seen map[*dbc.Signal]bool) {
	sw := s.Mux.Switch
	slot, ok := slots[sw]
	if sw == nil || !ok || !seen[sw] || slot < 0 {
		sp.muxSlot = noSwitch
		return
	}
	sp.muxSlot = slot
	switch len(s.Mux.Ranges) {
	case 0:
		// Selected by no value: an empty range.
		sp.muxLo, sp.muxHi = 1, 0
	case 1:
		sp.muxLo, sp.muxHi = s.Mux.Ranges[0].Lo, s.Mux.Ranges[0].Hi
	default:
		sp.multiRange = true
		sp.ranges = s.Mux.Ranges
	}
}

// noSwitch is the muxSlot of a multiplexed signal whose switch cannot be
// decoded before it.
const noSwitch = math.MaxInt32

// selected reports whether the multiplexer value v selects the signal.
func (sp *sigPlan) selected(v uint64) bool {
	if !sp.multiRange {
		return v >= sp.muxLo && v <= sp.muxHi
	}
	for _, r := range sp.ranges {
		if v >= r.Lo && v <= r.Hi {
			return true
		}
	}
	return false
}
