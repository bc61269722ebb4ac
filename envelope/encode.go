package envelope

import (
	"encoding/binary"
	"math"
	"strconv"
	"unicode/utf8"
	"unsafe"
)

// Append appends e in encoding enc to dst and returns the extended
// buffer. It never allocates when dst has room.
func Append(enc Encoding, dst []byte, e *Envelope) []byte {
	if enc == Msgpack {
		return AppendMsgpack(dst, e)
	}
	return AppendJSON(dst, e)
}

// AppendJSON appends e as one JSON object, keys in the documented order:
//
//	{"value":21.5,"unit":"°C","ts":1760000000123456789,"seq":42,"epoch":1760000000000000000}
//
// Floats are written in the shortest form that parses back to the same
// float64, always with a '.' or an exponent so that they read back as
// floats; NaN and ±Inf are written as "value":null with "nonfinite".
func AppendJSON(dst []byte, e *Envelope) []byte {
	dst = append(dst, `{"value":`...)
	nonfinite := ""
	switch e.Kind {
	case Int:
		dst = strconv.AppendInt(dst, e.Int, 10)
	case Uint:
		dst = strconv.AppendUint(dst, e.Uint, 10)
	default:
		if nonfinite = NonFinite(e.Float); nonfinite != "" {
			dst = append(dst, "null"...)
		} else {
			dst = AppendFloat(dst, e.Float)
		}
	}
	if nonfinite != "" {
		dst = append(dst, `,"nonfinite":"`...)
		dst = append(dst, nonfinite...)
		dst = append(dst, '"')
	}
	if len(e.Unit) > 0 {
		dst = append(dst, `,"unit":`...)
		dst = appendStringJSON(dst, e.Unit)
	}
	if len(e.Label) > 0 {
		dst = append(dst, `,"label":`...)
		dst = appendStringJSON(dst, e.Label)
	}
	dst = append(dst, `,"ts":`...)
	dst = strconv.AppendInt(dst, e.TS, 10)
	dst = append(dst, `,"seq":`...)
	dst = strconv.AppendUint(dst, e.Seq, 10)
	dst = append(dst, `,"epoch":`...)
	dst = strconv.AppendUint(dst, e.Epoch, 10)
	if e.Flags&OutOfRange != 0 {
		dst = append(dst, `,"oor":true`...)
	}
	if e.Flags&Stale != 0 {
		dst = append(dst, `,"stale":true`...)
	}
	return append(dst, '}')
}

const hexDigits = "0123456789abcdef"

// appendStringJSON writes s as a JSON string by the rule of
// AppendJSONString.
func appendStringJSON(dst, s []byte) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < 0x7f {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRune(s[i:])
			switch {
			case r == utf8.RuneError && size == 1:
				dst = append(dst, s[start:i]...)
				dst = append(dst, `\ufffd`...)
			case r <= 0x9f || r == 0x2028 || r == 0x2029:
				dst = append(dst, s[start:i]...)
				dst = append(dst, '\\', 'u', hexDigits[r>>12], hexDigits[r>>8&0xF], hexDigits[r>>4&0xF], hexDigits[r&0xF])
			default:
				i += size
				continue
			}
			i += size
			start = i
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
		}
		i++
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// AppendMsgpack appends e as one MessagePack map with the same keys as
// the JSON form (without "nonfinite": MessagePack carries NaN and ±Inf
// as float64). Integers use the smallest MessagePack integer type that
// holds them; floats are always float64.
func AppendMsgpack(dst []byte, e *Envelope) []byte {
	n := 4 // value, ts, seq, epoch
	if len(e.Unit) > 0 {
		n++
	}
	if len(e.Label) > 0 {
		n++
	}
	if e.Flags&OutOfRange != 0 {
		n++
	}
	if e.Flags&Stale != 0 {
		n++
	}
	dst = append(dst, 0x80|byte(n))
	dst = append(dst, 0xa5, 'v', 'a', 'l', 'u', 'e')
	switch e.Kind {
	case Int:
		dst = appendMsgpackInt(dst, e.Int)
	case Uint:
		dst = appendMsgpackUint(dst, e.Uint)
	default:
		dst = append(dst, 0xcb)
		dst = binary.BigEndian.AppendUint64(dst, math.Float64bits(e.Float))
	}
	if len(e.Unit) > 0 {
		dst = append(dst, 0xa4, 'u', 'n', 'i', 't')
		dst = appendMsgpackStr(dst, e.Unit)
	}
	if len(e.Label) > 0 {
		dst = append(dst, 0xa5, 'l', 'a', 'b', 'e', 'l')
		dst = appendMsgpackStr(dst, e.Label)
	}
	dst = append(dst, 0xa2, 't', 's')
	dst = appendMsgpackInt(dst, e.TS)
	dst = append(dst, 0xa3, 's', 'e', 'q')
	dst = appendMsgpackUint(dst, e.Seq)
	dst = append(dst, 0xa5, 'e', 'p', 'o', 'c', 'h')
	dst = appendMsgpackUint(dst, e.Epoch)
	if e.Flags&OutOfRange != 0 {
		dst = append(dst, 0xa3, 'o', 'o', 'r', 0xc3)
	}
	if e.Flags&Stale != 0 {
		dst = append(dst, 0xa5, 's', 't', 'a', 'l', 'e', 0xc3)
	}
	return dst
}

func appendMsgpackInt(dst []byte, v int64) []byte {
	if v >= 0 {
		return appendMsgpackUint(dst, uint64(v))
	}
	switch {
	case v >= -32:
		return append(dst, byte(v))
	case v >= math.MinInt8:
		return append(dst, 0xd0, byte(v))
	case v >= math.MinInt16:
		return binary.BigEndian.AppendUint16(append(dst, 0xd1), uint16(v))
	case v >= math.MinInt32:
		return binary.BigEndian.AppendUint32(append(dst, 0xd2), uint32(v))
	}
	return binary.BigEndian.AppendUint64(append(dst, 0xd3), uint64(v))
}

func appendMsgpackUint(dst []byte, v uint64) []byte {
	switch {
	case v <= 0x7f:
		return append(dst, byte(v))
	case v <= math.MaxUint8:
		return append(dst, 0xcc, byte(v))
	case v <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(dst, 0xcd), uint16(v))
	case v <= math.MaxUint32:
		return binary.BigEndian.AppendUint32(append(dst, 0xce), uint32(v))
	}
	return binary.BigEndian.AppendUint64(append(dst, 0xcf), v)
}

// appendMsgpackStr writes s, bytes or a string, as a MessagePack str.
func appendMsgpackStr[S ~string | ~[]byte](dst []byte, s S) []byte {
	switch n := len(s); {
	case n < 32:
		dst = append(dst, 0xa0|byte(n))
	case n <= math.MaxUint8:
		dst = append(dst, 0xd9, byte(n))
	case n <= math.MaxUint16:
		dst = binary.BigEndian.AppendUint16(append(dst, 0xda), uint16(n))
	default:
		dst = binary.BigEndian.AppendUint32(append(dst, 0xdb), uint32(n))
	}
	return append(dst, s...)
}

func appendMsgpackArrayHeader(dst []byte, n int) []byte {
	switch {
	case n < 16:
		return append(dst, 0x90|byte(n))
	case n <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(dst, 0xdc), uint16(n))
	}
	return binary.BigEndian.AppendUint32(append(dst, 0xdd), uint32(n))
}

func appendUintJSON(dst []byte, v uint64) []byte { return strconv.AppendUint(dst, v, 10) }

func appendIntJSON(dst []byte, v int64) []byte { return strconv.AppendInt(dst, v, 10) }

// AppendJSONString appends s as a JSON string (RFC 8259), the form of
// an envelope's unit and label, so that any bytes give valid JSON that
// is safe to print: a quote and a backslash are escaped; a C0 control
// character is written \n, \r, \t or \u00XX; DEL, a C1 control
// character (U+0080–U+009F), U+2028 and U+2029 as \uXXXX; a byte that
// is not part of valid UTF-8 as \ufffd (U+FFFD, the replacement
// character), one for each such byte. Other text, "°C" for one, is
// copied as it is. It allocates nothing when dst has room.
func AppendJSONString(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x7f {
			return appendStringJSONSlow(dst, s)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}

// appendStringJSONSlow is appendStringJSON for a string, converted
// without a copy: appendStringJSON only reads it.
func appendStringJSONSlow(dst []byte, s string) []byte {
	return appendStringJSON(dst, unsafe.Slice(unsafe.StringData(s), len(s)))
}
