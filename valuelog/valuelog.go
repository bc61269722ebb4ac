package valuelog

import (
	"bufio"
	"io"
	"math"
	"strconv"

	"github.com/yukart/candec/decoder"
	"github.com/yukart/candec/frame"
)

// Format selects the output format.
type Format uint8

// Output formats.
const (
	JSON Format = iota
	CSV
)

// ParseFormat maps "json" or "csv" to a Format.
func ParseFormat(s string) (Format, bool) {
	switch s {
	case "json", "jsonl":
		return JSON, true
	case "csv":
		return CSV, true
	}
	return 0, false
}

// Writer writes decoded values. It buffers; call Flush at the end.
type Writer struct {
	w      *bufio.Writer
	format Format
	buf    []byte
	header bool
}

// NewWriter returns a Writer of the given format.
func NewWriter(w io.Writer, f Format) *Writer {
	return &Writer{w: bufio.NewWriterSize(w, 64<<10), format: f, buf: make([]byte, 0, 256)}
}

// Write writes one line per value of frame f, received on interface iface.
// Truncated values (signals past the end of a short frame) are skipped.
func (w *Writer) Write(f *frame.Frame, iface string, vals []decoder.Value) error {
	if w.format == CSV && !w.header {
		w.header = true
		if _, err := w.w.WriteString("t,ts,bus,id,signal,value,unit,label,flags\n"); err != nil {
			return err
		}
	}
	for i := range vals {
		v := &vals[i]
		if v.Flags&decoder.Truncated != 0 {
			continue
		}
		if w.format == CSV {
			w.buf = appendCSV(w.buf[:0], f, iface, v)
		} else {
			w.buf = appendJSON(w.buf[:0], f, iface, v)
		}
		if _, err := w.w.Write(w.buf); err != nil {
			return err
		}
	}
	return nil
}

// Flush writes any buffered data.
func (w *Writer) Flush() error { return w.w.Flush() }

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

// AppendValue appends the physical value: an exact integer where the
// value is Exact, the shortest float that reads back the same otherwise,
// and quoted "NaN", "Infinity" or "-Infinity" for IEEE specials.
func AppendValue(b []byte, v *decoder.Value) []byte {
	switch {
	case v.Flags&decoder.Unsigned != 0:
		return strconv.AppendUint(b, v.Uint(), 10)
	case v.Flags&decoder.Exact != 0:
		return strconv.AppendInt(b, v.Int, 10)
	case math.IsNaN(v.Phys):
		return append(b, `"NaN"`...)
	case math.IsInf(v.Phys, 1):
		return append(b, `"Infinity"`...)
	case math.IsInf(v.Phys, -1):
		return append(b, `"-Infinity"`...)
	}
	return strconv.AppendFloat(b, v.Phys, 'g', -1, 64)
}

func appendJSON(b []byte, f *frame.Frame, iface string, v *decoder.Value) []byte {
	s := v.Signal
	b = append(b, `{"t":`...)
	b = AppendSeconds(b, f.Time)
	b = append(b, `,"ts":`...)
	b = strconv.AppendInt(b, f.Time, 10)
	b = append(b, `,"bus":`...)
	b = strconv.AppendQuote(b, iface)
	b = append(b, `,"id":`...)
	b = strconv.AppendUint(b, uint64(f.ID), 10)
	b = append(b, `,"signal":`...)
	b = strconv.AppendQuote(b, s.Message.Name+"."+s.Name)
	b = append(b, `,"value":`...)
	b = AppendValue(b, v)
	if s.Unit != "" {
		b = append(b, `,"unit":`...)
		b = strconv.AppendQuote(b, s.Unit)
	}
	if len(s.Values) > 0 && v.Flags&decoder.Float == 0 {
		if l, ok := s.Label(int64(v.Raw)); ok {
			b = append(b, `,"label":`...)
			b = strconv.AppendQuote(b, l)
		}
	}
	if v.Flags&decoder.OutOfRange != 0 {
		b = append(b, `,"flags":["out_of_range"]`...)
	}
	return append(b, "}\n"...)
}

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
	b = appendCSVField(b, s.Message.Name+"."+s.Name)
	b = append(b, ',')
	switch {
	case math.IsNaN(v.Phys) && v.Flags&decoder.Exact == 0:
		b = append(b, "NaN"...)
	case math.IsInf(v.Phys, 0) && v.Flags&decoder.Exact == 0:
		if v.Phys > 0 {
			b = append(b, "Infinity"...)
		} else {
			b = append(b, "-Infinity"...)
		}
	default:
		b = AppendValue(b, v)
	}
	b = append(b, ',')
	b = appendCSVField(b, s.Unit)
	b = append(b, ',')
	if len(s.Values) > 0 && v.Flags&decoder.Float == 0 {
		if l, ok := s.Label(int64(v.Raw)); ok {
			b = appendCSVField(b, l)
		}
	}
	b = append(b, ',')
	if v.Flags&decoder.OutOfRange != 0 {
		b = append(b, "out_of_range"...)
	}
	return append(b, '\n')
}

// appendCSVField quotes a field when it holds a comma, quote or newline.
func appendCSVField(b []byte, s string) []byte {
	quote := false
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == ',' || c == '"' || c == '\n' || c == '\r' {
			quote = true
			break
		}
	}
	if !quote {
		return append(b, s...)
	}
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		if s[i] == '"' {
			b = append(b, '"')
		}
		b = append(b, s[i])
	}
	return append(b, '"')
}
