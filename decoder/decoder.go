package decoder

import (
	"encoding/binary"
	"math"
	"math/bits"

	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/frame"
)

// Stats counts the frames a Decoder has seen. The counters are plain
// fields: a Decoder belongs to one goroutine, which may read them at any
// time between calls to Decode.
type Stats struct {
	// Frames counts every frame passed to Decode.
	Frames uint64
	// Decoded counts frames of a message in the database, short ones
	// included.
	Decoded uint64
	// Unknown counts frames whose ID and format are not in the database.
	Unknown uint64
	// Short counts decoded frames with fewer data bytes than the
	// message's DBC length.
	Short uint64
	// Skipped counts remote and error frames, which carry no signals.
	Skipped uint64
}

// Decoder decodes frames of the messages of one database. Build it once
// with New; Decode then never allocates when the caller's buffer is large
// enough. A Decoder is not safe for concurrent use (it keeps counters
// and multiplexer scratch space); use one per goroutine.
type Decoder struct {
	// Stats are the decoder's counters.
	Stats Stats

	std [2048]*plan // 11-bit IDs: direct lookup
	ext map[uint32]*plan
	// pgn holds the J1939 messages by PGN, consulted only for a 29-bit
	// frame whose ID is not in ext; nil when the database has none, so
	// that other databases pay one nil check on unknown frames only.
	pgn        map[uint32]*plan
	maxSignals int
	// swRaw and swOK hold the raw values of the multiplexer switches
	// decoded so far in the current frame, by slot.
	swRaw []uint64
	swOK  []bool
}

// New compiles a decoding plan for every message of db. A nil db gives a
// decoder that knows no messages.
func New(db *dbc.Database) *Decoder {
	d := &Decoder{ext: map[uint32]*plan{}}
	if db == nil {
		return d
	}
	switches := 0
	for _, m := range db.Messages {
		// Mirror dbc.Database.Message: standard IDs above 0x7FF are not
		// on any bus, so they are not looked up.
		p := compile(m)
		switch {
		case m.Extended:
			d.ext[m.ID] = p
		case m.ID < uint32(len(d.std)):
			d.std[m.ID] = p
		}
		if p.j1939 {
			if d.pgn == nil {
				d.pgn = map[uint32]*plan{}
			}
			// The first of a PGN, as dbc.Database.MessageByPGN.
			if _, ok := d.pgn[m.PGN()]; !ok {
				d.pgn[m.PGN()] = p
			}
		}
		d.maxSignals = max(d.maxSignals, len(m.Signals))
		switches = max(switches, p.switches)
	}
	d.swRaw = make([]uint64, switches)
	d.swOK = make([]bool, switches)
	return d
}

// MaxSignals returns the largest number of values Decode can return for
// one frame: a buffer of this capacity never grows.
func (d *Decoder) MaxSignals() int { return d.maxSignals }

// find returns the plan of f's message, as Decode looks it up (a data
// frame), or nil.
func (d *Decoder) find(f *frame.Frame) *plan {
	if f.Flags&frame.Extended == 0 {
		if f.ID < uint32(len(d.std)) {
			return d.std[f.ID]
		}
		return nil
	}
	if p := d.ext[f.ID]; p != nil || d.pgn == nil {
		return p
	}
	return d.pgn[dbc.PGN(f.ID)]
}

// Decode decodes frame f into values appended to buf[:0] and returns the
// frame's message with the values, in the message's signal order. It
// allocates only when cap(buf) is smaller than the message's signal
// count (see MaxSignals).
//
// A 29-bit frame whose ID is not in the database matches the J1939
// message with its PGN (see dbc.PGN), if any; values of a J1939 message
// carry the frame's source address (Value.SA, flag J1939).
//
// A frame whose ID is not in the database, a remote frame and an error
// frame return a nil message and no values; they are counted in Stats,
// never an error. Multiplexed signals that are not selected are left
// out; signals that do not fit in a short frame are returned flagged
// Truncated (see the package documentation).
func (d *Decoder) Decode(f *frame.Frame, buf []Value) (*dbc.Message, []Value) {
	d.Stats.Frames++
	if f.Flags&(frame.Remote|frame.Error) != 0 {
		d.Stats.Skipped++
		return nil, buf[:0]
	}
	var p *plan
	if f.Flags&frame.Extended == 0 {
		if f.ID < uint32(len(d.std)) {
			p = d.std[f.ID]
		}
	} else {
		p = d.ext[f.ID]
		if p == nil && d.pgn != nil {
			p = d.pgn[dbc.PGN(f.ID)]
		}
	}
	if p == nil {
		d.Stats.Unknown++
		return nil, buf[:0]
	}
	d.Stats.Decoded++
	n := min(int(f.Len), frameMax)
	if n < p.length {
		d.Stats.Short++
	}
	if cap(buf) < len(p.sigs) {
		buf = make([]Value, 0, d.maxSignals)
	}
	buf = buf[:len(p.sigs)]
	if !p.muxed && n >= p.need {
		p.decodeAll(&f.Data, buf)
	} else {
		buf = buf[:d.decodeSome(p, &f.Data, n, buf)]
	}
	if p.j1939 {
		setSource(buf, uint8(f.ID))
	}
	return p.msg, buf
}

// setSource marks the values of a J1939 frame with its source address,
// the ID's low byte. Other frames never come here: their values' SA is
// left as it was and their flags say it means nothing.
func setSource(vals []Value, sa uint8) {
	for i := range vals {
		vals[i].SA = sa
		vals[i].Flags |= J1939
	}
}

// decodeAll is the fast path: no multiplexing and every signal fits.
func (p *plan) decodeAll(data *[frameMax]byte, out []Value) {
	sigs := p.sigs
	out = out[:len(sigs)]
	for i := range sigs {
		sp, v := &sigs[i], &out[i]
		if !sp.fast {
			sp.convert(sp.extract(data), v)
			continue
		}
		// sp.decode by hand: the call costs a fifth of the time.
		w := binary.LittleEndian.Uint64(data[sp.off:])
		if sp.bigEndian {
			w = bits.ReverseBytes64(w)
		}
		x := w << (sp.lsh & 63)
		raw := x >> (sp.rsh & 63)
		if sp.signed {
			raw = uint64(int64(x) >> (sp.rsh & 63))
		}
		phys := float64(float64(int64(raw))*sp.factor) + sp.offset
		fl := sp.flags
		if phys < sp.min || phys > sp.max {
			fl |= OutOfRange
		}
		setValue(v, sp.sig, raw, int64(raw)*sp.ifactor+sp.ioffset, phys, fl)
	}
}

// decode writes the signal's value in data to v. decodeAll has a copy
// of it inlined; TestFastPathMatchesGeneral keeps the two in step.
func (sp *sigPlan) decode(data *[frameMax]byte, v *Value) {
	if !sp.fast {
		sp.convert(sp.extract(data), v)
		return
	}
	// extract and convert, inlined for the common integer signal.
	w := binary.LittleEndian.Uint64(data[sp.off:])
	if sp.bigEndian {
		w = bits.ReverseBytes64(w)
	}
	x := w << (sp.lsh & 63)
	raw := x >> (sp.rsh & 63)
	if sp.signed {
		raw = uint64(int64(x) >> (sp.rsh & 63))
	}
	phys := float64(float64(int64(raw))*sp.factor) + sp.offset
	fl := sp.flags
	if phys < sp.min || phys > sp.max {
		fl |= OutOfRange
	}
	// For scaled signals ifactor and ioffset are 0, so Int is 0.
	setValue(v, sp.sig, raw, int64(raw)*sp.ifactor+sp.ioffset, phys, fl)
}

// decodeSome decodes a frame of n bytes that has multiplexed signals or
// may be too short for some signals, and returns the number of values
// written to out.
func (d *Decoder) decodeSome(p *plan, data *[frameMax]byte, n int, out []Value) int {
	raws, oks := d.swRaw[:p.switches], d.swOK[:p.switches]
	clear(oks)
	k := 0
	for i := range p.sigs {
		sp := &p.sigs[i]
		if sp.muxSlot >= 0 {
			// Decoded only when its switch was decoded in this frame
			// and selects it; noSwitch is past the end of oks.
			s := int(sp.muxSlot)
			if s >= len(oks) || !oks[s] || !sp.selected(raws[s]) {
				continue
			}
		}
		v := &out[k]
		k++
		if int(sp.need) > n {
			setValue(v, sp.sig, 0, 0, math.NaN(), Truncated)
			continue
		}
		sp.decode(data, v)
		if sp.slot >= 0 {
			raws[sp.slot], oks[sp.slot] = v.Raw, true
		}
	}
	return k
}

// extract returns the signal's raw bits from data, sign-extended for
// signed signals (see sigPlan for the shifts).
func (sp *sigPlan) extract(data *[frameMax]byte) uint64 {
	var w uint64
	switch {
	case sp.wide:
		w = sp.wideWord(data)
	case sp.bigEndian:
		w = binary.BigEndian.Uint64(data[sp.off:])
	default:
		w = binary.LittleEndian.Uint64(data[sp.off:])
	}
	w <<= sp.lsh & 63
	if sp.signed {
		return uint64(int64(w) >> (sp.rsh & 63))
	}
	return w >> (sp.rsh & 63)
}

// wideWord assembles a signal that spans nine bytes into a word with the
// signal's LSB at bit 0 (bits above the signal are dropped by the shifts
// in extract).
func (sp *sigPlan) wideWord(data *[frameMax]byte) uint64 {
	off := int(sp.off)
	next := uint64(data[off+8])
	if sp.bigEndian {
		hi := binary.BigEndian.Uint64(data[off:])
		// In the 72-bit big-endian number hi·2⁸ + next the LSB is
		// r bits up from the bottom.
		_, last, _ := span(sp.sig)
		r := uint(71 - (last - 8*off))
		return hi<<(8-r) | next>>r
	}
	lo := binary.LittleEndian.Uint64(data[off:])
	b := uint(sp.sig.Start - 8*off)
	return lo>>b | next<<(64-b)
}

// convert writes the value of raw to v.
//
// The explicit float64 conversions around products keep the compiler
// from fusing multiply and add (allowed on some architectures), so the
// result is the correctly rounded raw×factor, then +offset, as other
// decoders compute it.
func (sp *sigPlan) convert(raw uint64, v *Value) {
	var (
		i    int64
		phys float64
		fl   Flags
	)
	switch sp.mode {
	case modeScaled:
		phys = float64(float64(int64(raw))*sp.factor) + sp.offset
	case modeExact:
		i = int64(raw)*sp.ifactor + sp.ioffset
		phys = float64(i)
		fl = Exact
	case modeFloat32:
		phys = float64(float64(math.Float32frombits(uint32(raw)))*sp.factor) + sp.offset
		fl = Float
	case modeFloat64:
		phys = float64(math.Float64frombits(raw)*sp.factor) + sp.offset
		fl = Float
	default:
		i, phys, fl = sp.physSlow(raw)
	}
	// NaN is no point on the scale, so it is not out of range (the
	// comparisons are false for it); ±Inf beyond Min..Max is. Every
	// writer of values (decode's output, the envelopes) takes this flag.
	if sp.ranged && (phys < sp.min || phys > sp.max) {
		fl |= OutOfRange
	}
	setValue(v, sp.sig, raw, i, phys, fl)
}

// setValue writes a value field by field: a composite literal is built on
// the stack and copied, and the copy's wide loads stall on the narrow
// stores just made (store forwarding), tripling the cost of a decode.
func setValue(v *Value, s *dbc.Signal, raw uint64, i int64, phys float64, fl Flags) {
	v.Signal = s
	v.Raw = raw
	v.Int = i
	v.Phys = phys
	v.Flags = fl
}

// physSlow handles modeSlow: an integral factor and offset whose result
// may overflow int64 (checked exactly; the value is Exact when it fits),
// and unsigned 64-bit raw values.
func (sp *sigPlan) physSlow(raw uint64) (int64, float64, Flags) {
	neg := sp.signed && int64(raw) < 0
	if sp.integral {
		if !sp.signed && raw > math.MaxInt64 && sp.islow == 1 && sp.oslow == 0 {
			return int64(raw), float64(raw), Exact | Unsigned
		}
		if i, ok := mulAdd(raw, neg, sp.islow, sp.oslow); ok {
			return i, float64(i), Exact
		}
	}
	x := float64(raw)
	if sp.signed {
		x = float64(int64(raw))
	}
	return 0, float64(x*sp.factor) + sp.offset, 0
}

// mulAdd returns r×f + o, where r is raw read as signed when neg says it
// is negative and as unsigned otherwise, and whether the result fits in
// int64. It works on magnitudes so that no intermediate overflows.
func mulAdd(raw uint64, neg bool, f, o int64) (int64, bool) {
	m := raw
	if neg {
		m = -raw
	}
	fm, fneg := abs(f)
	hi, p := bits.Mul64(m, fm)
	if hi != 0 {
		return 0, false // |r×f| ≥ 2⁶⁴ > MaxInt64 + |o|
	}
	pneg := neg != fneg
	om, oneg := abs(o)
	var s uint64
	var sneg bool
	switch {
	case pneg == oneg:
		s, sneg = p+om, pneg
		if s < p {
			return 0, false
		}
	case p >= om:
		s, sneg = p-om, pneg
	default:
		s, sneg = om-p, oneg
	}
	if sneg {
		if s > 1<<63 {
			return 0, false
		}
		return int64(-s), true
	}
	if s > math.MaxInt64 {
		return 0, false
	}
	return int64(s), true
}

// abs returns the magnitude of x and whether x is negative.
func abs(x int64) (uint64, bool) {
	if x < 0 {
		return -uint64(x), true
	}
	return uint64(x), false
}
