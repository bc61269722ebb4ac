package envelope

import (
	"encoding/binary"
	"fmt"
	"math"
)

// mpParser reads MessagePack. It checks lengths before every read, so a
// short or lying payload is an error, never a panic.
type mpParser struct {
	b []byte
	i int
}

func (p *mpParser) errorf(key, format string, args ...any) error {
	return &SyntaxError{Encoding: Msgpack, Offset: p.i, Key: key, Msg: fmt.Sprintf(format, args...)}
}

// need reports whether n more bytes are there.
func (p *mpParser) need(n int) bool { return n >= 0 && len(p.b)-p.i >= n }

func (p *mpParser) byte1(key string) (byte, error) {
	if !p.need(1) {
		return 0, p.errorf(key, "unexpected end of input")
	}
	c := p.b[p.i]
	p.i++
	return c, nil
}

// uintN reads a big-endian unsigned integer of n bytes (1, 2, 4 or 8).
func (p *mpParser) uintN(n int, key string) (uint64, error) {
	if !p.need(n) {
		return 0, p.errorf(key, "unexpected end of input")
	}
	b := p.b[p.i : p.i+n]
	p.i += n
	switch n {
	case 1:
		return uint64(b[0]), nil
	case 2:
		return uint64(binary.BigEndian.Uint16(b)), nil
	case 4:
		return uint64(binary.BigEndian.Uint32(b)), nil
	}
	return binary.BigEndian.Uint64(b), nil
}

// mapLen reads a map header.
func (p *mpParser) mapLen(key string) (int, error) {
	c, err := p.byte1(key)
	if err != nil {
		return 0, err
	}
	switch {
	case c&0xf0 == 0x80:
		return int(c & 0x0f), nil
	case c == 0xde:
		n, err := p.uintN(2, key)
		return int(n), err
	case c == 0xdf:
		n, err := p.uintN(4, key)
		return int(n), err
	}
	p.i--
	return 0, p.errorf(key, "want a map, got type byte %#02x", c)
}

// arrayLen reads an array header.
func (p *mpParser) arrayLen(key string) (int, error) {
	c, err := p.byte1(key)
	if err != nil {
		return 0, err
	}
	switch {
	case c&0xf0 == 0x90:
		return int(c & 0x0f), nil
	case c == 0xdc:
		n, err := p.uintN(2, key)
		return int(n), err
	case c == 0xdd:
		n, err := p.uintN(4, key)
		return int(n), err
	}
	p.i--
	return 0, p.errorf(key, "want an array, got type byte %#02x", c)
}

// str reads a string as a sub-slice of the input.
func (p *mpParser) str(key string) ([]byte, error) {
	c, err := p.byte1(key)
	if err != nil {
		return nil, err
	}
	var n uint64
	switch {
	case c&0xe0 == 0xa0:
		n = uint64(c & 0x1f)
	case c == 0xd9:
		n, err = p.uintN(1, key)
	case c == 0xda:
		n, err = p.uintN(2, key)
	case c == 0xdb:
		n, err = p.uintN(4, key)
	default:
		p.i--
		return nil, p.errorf(key, "want a string, got type byte %#02x", c)
	}
	if err != nil {
		return nil, err
	}
	if !p.need(int(n)) {
		return nil, p.errorf(key, "string of %d bytes runs past the end", n)
	}
	s := p.b[p.i : p.i+int(n) : p.i+int(n)]
	p.i += int(n)
	return s, nil
}

// number reads any MessagePack integer or float.
func (p *mpParser) number(key string) (Kind, int64, uint64, float64, error) {
	c, err := p.byte1(key)
	if err != nil {
		return 0, 0, 0, 0, err
	}
	switch {
	case c <= 0x7f:
		return Int, int64(c), 0, 0, nil
	case c >= 0xe0:
		return Int, int64(int8(c)), 0, 0, nil
	case c >= 0xcc && c <= 0xcf: // uint 8, 16, 32, 64
		u, err := p.uintN(1<<(c-0xcc), key)
		if u > math.MaxInt64 {
			return Uint, 0, u, 0, err
		}
		return Int, int64(u), 0, 0, err
	case c >= 0xd0 && c <= 0xd3: // int 8, 16, 32, 64
		n := 1 << (c - 0xd0)
		u, err := p.uintN(n, key)
		shift := 64 - 8*n
		return Int, int64(u<<shift) >> shift, 0, 0, err
	case c == 0xca:
		u, err := p.uintN(4, key)
		return Float, 0, 0, float64(math.Float32frombits(uint32(u))), err
	case c == 0xcb:
		u, err := p.uintN(8, key)
		return Float, 0, 0, math.Float64frombits(u), err
	}
	p.i--
	return 0, 0, 0, 0, p.errorf(key, "want a number, got type byte %#02x", c)
}

func (p *mpParser) uint64(key string) (uint64, error) {
	at := p.i
	k, i, u, _, err := p.number(key)
	switch {
	case err != nil:
		return 0, err
	case k == Uint:
		return u, nil
	case k == Int && i >= 0:
		return uint64(i), nil
	}
	p.i = at
	return 0, p.errorf(key, "want an unsigned integer")
}

func (p *mpParser) int64(key string) (int64, error) {
	at := p.i
	k, i, _, _, err := p.number(key)
	switch {
	case err != nil:
		return 0, err
	case k == Int:
		return i, nil
	}
	p.i = at
	return 0, p.errorf(key, "want an integer in int64")
}

func (p *mpParser) boolean(key string) (bool, error) {
	c, err := p.byte1(key)
	if err != nil {
		return false, err
	}
	switch c {
	case 0xc2:
		return false, nil
	case 0xc3:
		return true, nil
	}
	p.i--
	return false, p.errorf(key, "want true or false, got type byte %#02x", c)
}

// envelope reads one envelope map into e, keeping e's scratch space.
func (p *mpParser) envelope(e *Envelope, _ string) error {
	e.reset()
	n, err := p.mapLen("")
	if err != nil {
		return err
	}
	var seen, non int
	for range n {
		key, err := p.str("")
		if err != nil {
			return err
		}
		switch str(key) {
		case "value":
			seen |= seenValue
			if p.i < len(p.b) && p.b[p.i] == 0xc0 { // nil, as JSON's null
				p.i++
				seen |= seenNull
				continue
			}
			var k Kind
			var i int64
			var u uint64
			var f float64
			if k, i, u, f, err = p.number("value"); err == nil {
				e.Kind, e.Int, e.Uint, e.Float = k, i, u, f
			}
		case "unit":
			e.Unit, err = p.str("unit")
		case "label":
			e.Label, err = p.str("label")
		case "ts":
			seen |= seenTS
			e.TS, err = p.int64("ts")
		case "seq":
			seen |= seenSeq
			e.Seq, err = p.uint64("seq")
		case "epoch":
			e.Epoch, err = p.uint64("epoch")
		case "oor":
			err = p.flag(e, OutOfRange, "oor")
		case "stale":
			err = p.flag(e, Stale, "stale")
		case "nonfinite":
			at := p.i
			var s []byte
			if s, err = p.str("nonfinite"); err == nil {
				if non = nonFiniteOf(s); non == finite {
					p.i = at
					err = p.errorf("nonfinite", badNonFinite, s)
				}
			}
		default:
			err = p.skip(0)
		}
		if err != nil {
			return err
		}
	}
	return finish(e, seen, non, Msgpack, p.i)
}

func (p *mpParser) flag(e *Envelope, f Flags, key string) error {
	b, err := p.boolean(key)
	if b {
		e.Flags |= f
	} else {
		e.Flags &^= f
	}
	return err
}

func (p *mpParser) window(w *Window) error {
	n, err := p.mapLen("")
	if err != nil {
		return err
	}
	var seen int
	for range n {
		key, err := p.str("")
		if err != nil {
			return err
		}
		switch str(key) {
		case "seq":
			seen |= seenSeq
			w.Seq, err = p.uint64("seq")
		case "epoch":
			w.Epoch, err = p.uint64("epoch")
		case "start":
			w.Start, err = p.int64("start")
		case "end":
			w.End, err = p.int64("end")
		case "policy":
			w.Policy, err = p.uint64("policy")
		case "items":
			seen |= seenValue
			err = p.items(w)
		default:
			err = p.skip(0)
		}
		if err != nil {
			return err
		}
	}
	if key := windowMissing(seen); key != "" {
		return p.errorf(key, "missing")
	}
	return nil
}

func (p *mpParser) items(w *Window) error {
	n, err := p.arrayLen("items")
	if err != nil {
		return err
	}
	for range n {
		at := p.i
		m, err := p.arrayLen("items")
		if err != nil {
			return err
		}
		if m != 2 {
			p.i = at
			return p.errorf("items", "want [topic, envelope], got an array of %d", m)
		}
		it := w.nextItem()
		if it.Topic, err = p.str("topic"); err != nil {
			return err
		}
		if err := p.envelope(&it.Envelope, ""); err != nil {
			return err
		}
	}
	return nil
}

// skip consumes one MessagePack object of any type.
func (p *mpParser) skip(depth int) error {
	if depth > maxDepth {
		return p.errorf("", "nested deeper than %d", maxDepth)
	}
	c, err := p.byte1("")
	if err != nil {
		return err
	}
	var n uint64 // bytes of payload to skip
	switch {
	case c <= 0x7f || c >= 0xe0 || c == 0xc0 || c == 0xc2 || c == 0xc3:
		return nil
	case c&0xe0 == 0xa0:
		n = uint64(c & 0x1f)
	case c&0xf0 == 0x80, c&0xf0 == 0x90, c == 0xdc, c == 0xdd, c == 0xde, c == 0xdf:
		p.i--
		var m int
		isMap := c&0xf0 == 0x80 || c == 0xde || c == 0xdf
		if isMap {
			m, err = p.mapLen("")
			m *= 2
		} else {
			m, err = p.arrayLen("")
		}
		if err != nil {
			return err
		}
		for range m {
			if err := p.skip(depth + 1); err != nil {
				return err
			}
		}
		return nil
	case c == 0xc4 || c == 0xd9: // bin8, str8
		n, err = p.uintN(1, "")
	case c == 0xc5 || c == 0xda:
		n, err = p.uintN(2, "")
	case c == 0xc6 || c == 0xdb:
		n, err = p.uintN(4, "")
	case c == 0xc7: // ext8
		n, err = p.uintN(1, "")
		n++
	case c == 0xc8:
		n, err = p.uintN(2, "")
		n++
	case c == 0xc9:
		n, err = p.uintN(4, "")
		n++
	case c == 0xca:
		n = 4
	case c == 0xcb:
		n = 8
	case c >= 0xcc && c <= 0xcf:
		n = 1 << (c - 0xcc)
	case c >= 0xd0 && c <= 0xd3:
		n = 1 << (c - 0xd0)
	case c >= 0xd4 && c <= 0xd8: // fixext 1, 2, 4, 8, 16
		n = 1 + 1<<(c-0xd4)
	default: // 0xc1 is never used
		p.i--
		return p.errorf("", "bad type byte %#02x", c)
	}
	if err != nil {
		return err
	}
	if n > uint64(len(p.b)-p.i) {
		return p.errorf("", "object of %d bytes runs past the end", n)
	}
	p.i += int(n)
	return nil
}
