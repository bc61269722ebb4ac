package valuelog

import (
	"math"
	"strconv"

	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/decoder"
	"github.com/yukart/candec/envelope"
	"github.com/yukart/candec/frame"
)

// msgText is the text of a message's signals in one format, made once
// so that writing a line copies it rather than quoting names again.
type msgText struct {
	msg  *dbc.Message
	base int       // the lowest Signal.Index of the message
	sigs []sigText // by Signal.Index − base
}

// sigText is one signal's text around its value, and the scale that
// tidies it (decoder.Tidy, worked out once).
type sigText struct {
	sig *dbc.Signal
	// head comes before the value: `,"signal":"M.S","value":` in JSON,
	// `M.S,` in CSV.
	head []byte
	// unit comes after the value: `,"unit":"u"` (or nothing) in JSON;
	// in CSV, after the nonfinite field, `,u,`.
	unit []byte
	// scale is decoder.ScaleDecimals of the factor and offset, 10^dec;
	// 0 when there is none.
	scale float64
	dec   int
}

func newMsgText(m *dbc.Message, f Format) *msgText {
	t := &msgText{msg: m}
	if len(m.Signals) == 0 {
		return t
	}
	lo, hi := m.Signals[0].Index, m.Signals[0].Index
	size := 0
	for _, s := range m.Signals {
		lo, hi = min(lo, s.Index), max(hi, s.Index)
		size += 2*(len(m.Name)+len(s.Name)+len(s.Unit)) + 32
	}
	t.base, t.sigs = lo, make([]sigText, hi-lo+1)
	// Every text of the message in one allocation: the message's first
	// line then costs a few allocations whatever its signals.
	arena := make([]byte, 0, size)
	cut := func(from int) []byte { return arena[from:len(arena):len(arena)] }
	for _, s := range m.Signals {
		st := &t.sigs[s.Index-lo]
		if st.sig != nil {
			continue // two signals of one index (not from a Database): the first has text
		}
		st.sig = s
		at := len(arena)
		if f == CSV {
			if csvPlain(m.Name) && csvPlain(s.Name) {
				arena = append(append(append(arena, m.Name...), '.'), s.Name...)
			} else {
				arena = appendCSVField(arena, m.Name+"."+s.Name)
			}
			arena = append(arena, ',')
			st.head = cut(at)
			at = len(arena)
			arena = append(appendCSVField(append(arena, ','), s.Unit), ',')
			st.unit = cut(at)
		} else {
			arena = appendQuotedName(append(arena, `,"signal":`...), m.Name, s.Name)
			arena = append(arena, `,"value":`...)
			st.head = cut(at)
			if s.Unit != "" {
				at = len(arena)
				arena = appendQuoted(append(arena, `,"unit":`...), s.Unit)
				st.unit = cut(at)
			}
		}
		st.scale = decoder.ScaleDecimals(s.Factor, s.Offset)
		for p := st.scale; p >= 10; p /= 10 {
			st.dec++
		}
	}
	return t
}

// signal returns the text of s, or nil when s is not among the
// message's signals.
func (t *msgText) signal(s *dbc.Signal) *sigText {
	if t == nil {
		return nil
	}
	if j := s.Index - t.base; j >= 0 && j < len(t.sigs) && t.sigs[j].sig == s {
		return &t.sigs[j]
	}
	return nil
}

// appendJSONFrame appends the fields of frame f that begin each JSON
// line: `{"t":…,"ts":…,"bus":…,"id":…`.
func appendJSONFrame(b []byte, f *frame.Frame, iface string) []byte {
	b = append(b, `{"t":`...)
	b = AppendSeconds(b, f.Time)
	b = append(b, `,"ts":`...)
	b = strconv.AppendInt(b, f.Time, 10)
	b = append(b, `,"bus":`...)
	b = appendQuoted(b, iface)
	b = append(b, `,"id":`...)
	return strconv.AppendUint(b, uint64(f.ID), 10)
}

// appendCSVFrame appends the fields of frame f that begin each CSV
// row: t, ts, bus and id, each followed by a comma.
func appendCSVFrame(b []byte, f *frame.Frame, iface string) []byte {
	b = AppendSeconds(b, f.Time)
	b = append(b, ',')
	b = strconv.AppendInt(b, f.Time, 10)
	b = append(b, ',')
	b = appendCSVField(b, iface)
	b = append(b, ',')
	b = strconv.AppendUint(b, uint64(f.ID), 10)
	return append(b, ',')
}

// appendJSON appends the rest of v's JSON line, after its frame's
// fields: as appendJSON writes it.
func (st *sigText) appendJSON(b []byte, v *decoder.Value) []byte {
	s := st.sig
	if v.Flags&decoder.J1939 != 0 {
		b = append(b, `,"sa":`...)
		b = strconv.AppendUint(b, uint64(v.SA), 10)
	}
	b = append(b, st.head...)
	if nf := NonFinite(v); nf != "" {
		b = append(b, `null,"nonfinite":"`...)
		b = append(b, nf...)
		b = append(b, '"')
	} else {
		b = st.appendValue(b, v)
	}
	b = append(b, st.unit...)
	if len(s.Values) > 0 && v.Flags&decoder.Float == 0 {
		if l, ok := s.Label(int64(v.Raw)); ok {
			b = append(b, `,"label":`...)
			b = appendQuoted(b, l)
		}
	}
	if outOfRange(v) {
		b = append(b, `,"oor":true`...)
	}
	return append(b, "}\n"...)
}

// appendCSV appends the rest of v's CSV row, after its frame's fields:
// as appendCSV writes it.
func (st *sigText) appendCSV(b []byte, v *decoder.Value) []byte {
	s := st.sig
	b = append(b, st.head...)
	b = st.appendValue(b, v) // empty for a non-finite value
	b = append(b, ',')
	b = append(b, NonFinite(v)...)
	b = append(b, st.unit...)
	if len(s.Values) > 0 && v.Flags&decoder.Float == 0 {
		if l, ok := s.Label(int64(v.Raw)); ok {
			b = appendCSVField(b, l)
		}
	}
	b = append(b, ',')
	if outOfRange(v) {
		b = append(b, "true"...)
	}
	return append(b, '\n')
}

// appendValue appends v as AppendValue does, with the signal's scale
// worked out beforehand.
func (st *sigText) appendValue(b []byte, v *decoder.Value) []byte {
	switch {
	case v.Flags&decoder.Unsigned != 0:
		return strconv.AppendUint(b, v.Uint(), 10)
	case v.Flags&decoder.Exact != 0:
		return strconv.AppendInt(b, v.Int, 10)
	case math.IsNaN(v.Phys) || math.IsInf(v.Phys, 0):
		return b
	case v.Flags&decoder.Float != 0 || st.scale == 0:
		return envelope.AppendFloat(b, decoder.Tidy(v))
	}
	return appendScaled(b, v.Phys, st.scale, st.dec)
}

// appendScaled appends envelope.AppendFloat(decoder.TidyScaled(f,
// scale)) for scale = 10^dec (from decoder.ScaleDecimals), without the
// general shortest-float search where it can.
//
// TidyScaled returns n / 10^dec for the integer n = round(f × 10^dec),
// |n| < 2^53: the float64 nearest the decimal n × 10^-dec. That decimal
// is also the shortest that reads back as the float: its neighbours
// with as few digits are 10^-dec or more away, farther than the float's
// half spacing (below 2^-53 × 2^53 × 10^-dec). So the digits are those
// of n, with the point dec places from the right and trailing zeros
// dropped. strconv writes them without an exponent when the decimal
// exponent is -4 to 5 (shortest %g); elsewhere, and for a zero (whose
// sign shows), the general path writes it.
func appendScaled(b []byte, f, scale float64, dec int) []byte {
	x := f * scale
	if !(math.Abs(x) < 1<<53) {
		return envelope.AppendFloat(b, f)
	}
	r := math.Round(x)
	if r == 0 {
		return envelope.AppendFloat(b, r/scale)
	}
	n := int64(r)
	u := uint64(n)
	if n < 0 {
		u = uint64(-n)
	}
	for dec > 0 && u%10 == 0 {
		u /= 10
		dec--
	}
	var d [20]byte
	digits := strconv.AppendUint(d[:0], u, 10)
	point := len(digits) - dec // digits before the point; ≤ 0 for |value| < 1
	if point < -3 || point > 6 {
		return envelope.AppendFloat(b, r/scale)
	}
	if n < 0 {
		b = append(b, '-')
	}
	switch {
	case dec == 0:
		b = append(b, digits...)
		return append(b, ".0"...)
	case point > 0:
		b = append(b, digits[:point]...)
		b = append(b, '.')
		return append(b, digits[point:]...)
	}
	b = append(b, "0."...)
	for range -point {
		b = append(b, '0')
	}
	return append(b, digits...)
}
