package valuelog

import (
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/decoder"
	"github.com/yukart/candec/envelope"
	"github.com/yukart/candec/frame"
)

// Format is the dialect of the value lines: JSON lines or CSV, the same
// fields in the same order. The names decode takes and every other
// output format are rows of internal/cmdkit/outformat's table.
type Format uint8

// The dialects.
const (
	JSON Format = iota
	CSV
)

// Writer writes decoded values. It buffers; call Flush at the end.
type Writer struct {
	out       io.Writer
	err       error // the first error of out, returned from then on
	format    Format
	buf       []byte // whole lines not yet written to out
	pre       []byte // the fields of the frame being written
	header    bool
	truncated int
	lines     int
	// The text of each message's signals, made when a message is first
	// written: a line is then its frame's fields, the signal's and the
	// value.
	msgs map[*dbc.Message]*msgText
	// near holds recent texts by the low bits of their message's ID, a
	// cache in front of msgs (a map lookup was a tenth of the writer's
	// time).
	near [64]*msgText
}

// bufSize is what Writer buffers before it writes to its output.
const bufSize = 256 << 10

// Header is the first line of the CSV output: its columns, the keys of
// the JSON objects in the same order.
const Header = "t,ts,bus,id,signal,value,nonfinite,unit,label,oor\n"

// NewWriter returns a Writer of the given format.
func NewWriter(w io.Writer, f Format) *Writer {
	return &Writer{out: w, format: f, buf: make([]byte, 0, bufSize+4<<10), pre: make([]byte, 0, 128), msgs: map[*dbc.Message]*msgText{}}
}

// Write writes one line per value of frame f, received on interface iface.
// Truncated values (signals past the end of a short frame) are not
// written; Truncated counts them.
func (w *Writer) Write(f *frame.Frame, iface string, vals []decoder.Value) error {
	if w.err != nil {
		return w.err
	}
	if w.format == CSV && !w.header {
		w.header = true
		w.buf = append(w.buf, Header...)
	}
	if len(vals) > 0 {
		w.buf = w.appendFrame(w.buf, f, iface, vals)
	}
	if len(w.buf) >= bufSize {
		return w.Flush()
	}
	return nil
}

// appendFrame appends the lines of the values of frame f. The fields of
// the frame that begin each line (t, ts, bus, id) are formatted once.
func (w *Writer) appendFrame(b []byte, f *frame.Frame, iface string, vals []decoder.Value) []byte {
	if w.format == CSV {
		w.pre = appendCSVFrame(w.pre[:0], f, iface)
	} else {
		w.pre = appendJSONFrame(w.pre[:0], f, iface)
	}
	m := w.text(vals[0].Signal)
	for i := range vals {
		v := &vals[i]
		if v.Flags&decoder.Truncated != 0 {
			w.truncated++
			continue
		}
		w.lines++
		st := m.signal(v.Signal)
		if st == nil {
			// A value whose signal is not among its message's: no text
			// was made for it.
			if w.format == CSV {
				b = appendCSV(b, f, iface, v)
			} else {
				b = appendJSON(b, f, iface, v)
			}
			continue
		}
		b = append(b, w.pre...)
		if w.format == CSV {
			b = st.appendCSV(b, v)
		} else {
			b = st.appendJSON(b, v)
		}
	}
	return b
}

// text returns the text of the signals of s's message.
func (w *Writer) text(s *dbc.Signal) *msgText {
	if s == nil || s.Message == nil {
		return nil
	}
	m := s.Message
	slot := &w.near[(m.ID^m.ID>>6)&63]
	if t := *slot; t != nil && t.msg == m {
		return t
	}
	t, ok := w.msgs[m]
	if !ok {
		t = newMsgText(m, w.format)
		w.msgs[m] = t
	}
	*slot = t
	return t
}

// Lines returns how many values Write has written, one line each (the
// CSV header not counted).
func (w *Writer) Lines() int { return w.lines }

// Flush writes any buffered data. Everything written so far is whole
// lines, so output flushed at any time between Writes ends with a whole
// line.
func (w *Writer) Flush() error {
	if w.err != nil {
		return w.err
	}
	if len(w.buf) == 0 {
		return nil
	}
	n, err := w.out.Write(w.buf)
	if err == nil && n < len(w.buf) {
		err = io.ErrShortWrite
	}
	if err != nil {
		w.err = err
		return err
	}
	w.buf = w.buf[:0]
	return nil
}

// Close writes what is buffered, as Flush; it leaves the output open,
// and is there so that a Writer ends like the other writers of values.
func (w *Writer) Close() error { return w.Flush() }

// Truncated returns how many values Write left out because their
// signal did not fit in a short frame.
func (w *Writer) Truncated() int { return w.truncated }

// AppendSeconds appends ns since the epoch as seconds with six decimals,
// exactly (no float rounding), as candump writes times.
func AppendSeconds(b []byte, ns int64) []byte {
	if ns < 0 {
		b = append(b, '-')
		ns = -ns
	}
	b = strconv.AppendInt(b, ns/1e9, 10)
	us := (ns % 1e9) / 1e3
	b = append(b, '.')
	for d := int64(100000); d > 0; d /= 10 {
		b = append(b, byte('0'+us/d%10))
	}
	return b
}

// AppendValue appends the physical value by the envelopes' number rule:
// an exact integer where the value is Exact; otherwise the value without
// binary noise (decoder.Tidy) as a float that reads back as a float
// (envelope.AppendFloat: 0.7, 25.0, 1e+21). A non-finite value appends
// nothing: see NonFinite.
func AppendValue(b []byte, v *decoder.Value) []byte {
	switch {
	case v.Flags&decoder.Unsigned != 0:
		return strconv.AppendUint(b, v.Uint(), 10)
	case v.Flags&decoder.Exact != 0:
		return strconv.AppendInt(b, v.Int, 10)
	case math.IsNaN(v.Phys) || math.IsInf(v.Phys, 0):
		return b
	}
	return envelope.AppendFloat(b, decoder.Tidy(v))
}

// NonFinite returns "NaN", "+Inf" or "-Inf" for a non-finite value (as
// the envelope's "nonfinite"), "" otherwise.
func NonFinite(v *decoder.Value) string {
	if v.Flags&decoder.Exact != 0 {
		return ""
	}
	return envelope.NonFinite(v.Phys)
}

// outOfRange reports the "oor" flag: the decoder's OutOfRange, which
// never marks NaN (no point on the scale) and marks ±Inf beyond the range,
// the rule the envelopes follow too.
func outOfRange(v *decoder.Value) bool {
	return v.Flags&decoder.OutOfRange != 0
}

// appendJSON appends v's JSON line from nothing: for a value whose
// signal has no text (see msgText), and the reference the lines made
// from a message's text are tested against.
func appendJSON(b []byte, f *frame.Frame, iface string, v *decoder.Value) []byte {
	s := v.Signal
	b = append(b, `{"t":`...)
	b = AppendSeconds(b, f.Time)
	b = append(b, `,"ts":`...)
	b = strconv.AppendInt(b, f.Time, 10)
	b = append(b, `,"bus":`...)
	b = appendQuoted(b, iface)
	b = append(b, `,"id":`...)
	b = strconv.AppendUint(b, uint64(f.ID), 10)
	if v.Flags&decoder.J1939 != 0 {
		b = append(b, `,"sa":`...)
		b = strconv.AppendUint(b, uint64(v.SA), 10)
	}
	b = append(b, `,"signal":`...)
	b = appendQuotedName(b, s.Message.Name, s.Name)
	b = append(b, `,"value":`...)
	if nf := NonFinite(v); nf != "" {
		b = append(b, `null,"nonfinite":"`...)
		b = append(b, nf...)
		b = append(b, '"')
	} else {
		b = AppendValue(b, v)
	}
	if s.Unit != "" {
		b = append(b, `,"unit":`...)
		b = appendQuoted(b, s.Unit)
	}
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

// appendCSV appends v's CSV row from nothing, as appendJSON its line.
func appendCSV(b []byte, f *frame.Frame, iface string, v *decoder.Value) []byte {
	s := v.Signal
	b = AppendSeconds(b, f.Time)
	b = append(b, ',')
	b = strconv.AppendInt(b, f.Time, 10)
	b = append(b, ',')
	b = appendCSVField(b, iface)
	b = append(b, ',')
	b = strconv.AppendUint(b, uint64(f.ID), 10)
	b = append(b, ',')
	if csvPlain(s.Message.Name) && csvPlain(s.Name) {
		b = append(b, s.Message.Name...)
		b = append(b, '.')
		b = append(b, s.Name...)
	} else {
		b = appendCSVField(b, s.Message.Name+"."+s.Name)
	}
	b = append(b, ',')
	b = AppendValue(b, v) // empty for a non-finite value, as JSON's null
	b = append(b, ',')
	b = append(b, NonFinite(v)...)
	b = append(b, ',')
	b = appendCSVField(b, s.Unit)
	b = append(b, ',')
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

// appendQuoted appends a JSON string of s by envelope.AppendJSONString's
// rule (docs/decode-output.md, "Text"). Names and units are plain ASCII
// nearly always, which is copied as it is.
func appendQuoted(dst []byte, s string) []byte {
	if !plainASCII(s) {
		return envelope.AppendJSONString(dst, s)
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}

// appendQuotedName appends the JSON string "msg.sig", as appendQuoted
// would quote it, without joining the two first (which would allocate).
func appendQuotedName(dst []byte, msg, sig string) []byte {
	dst = appendQuoted(dst, msg)
	dst = append(dst[:len(dst)-1], '.') // msg's closing quote
	n := len(dst)
	dst = appendQuoted(dst, sig)
	return append(dst[:n], dst[n+1:]...) // sig's opening quote
}

// plainASCII reports whether s is printable ASCII without a quote or a
// backslash: text that JSON writes unchanged.
func plainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// csvPlain reports whether s is written in CSV as it is: printable
// ASCII without a comma or a quote.
func csvPlain(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == ',' || c == '"' {
			return false
		}
	}
	return true
}

// appendCSVField appends s as a CSV field (RFC 4180), by the rule of
// docs/decode-output.md ("Text"): CSV has no escapes, so a control
// character (C0, DEL or C1; line breaks included) and a byte that is not
// part of valid UTF-8 are each written as U+FFFD, and every row is one
// line; a field that then holds a comma or a quote is quoted, its quotes
// doubled. Other text, "°C" for one, is copied as it is.
func appendCSVField(b []byte, s string) []byte {
	if csvPlain(s) {
		return append(b, s...)
	}
	quote := strings.ContainsAny(s, `,"`)
	if quote {
		b = append(b, '"')
	}
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < 0x7f {
			if c == '"' {
				b = append(b, '"')
			}
			b = append(b, c)
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r < 0x20 || r >= 0x7f && r <= 0x9f || r == utf8.RuneError && size == 1 {
			b = utf8.AppendRune(b, utf8.RuneError)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	if quote {
		b = append(b, '"')
	}
	return b
}
