package envelope

import (
	"fmt"
	"math"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// maxDepth bounds the nesting of unknown values that Parse skips.
const maxDepth = 32

// Keys seen while parsing, one bit each.
const (
	seenValue = 1 << iota
	seenTS
	seenSeq
	seenNull // "value": null
)

// Non-finite values named by the JSON key "nonfinite".
const (
	finite = iota
	nonNaN
	nonPosInf
	nonNegInf
)

// Parse reads one envelope in either encoding into e, detecting the
// encoding from the first byte ('{' or JSON whitespace: JSON; a
// MessagePack map header: MessagePack). Every field of e is set; e's
// scratch space is reused, so Parse does not allocate in steady state.
// Unknown keys are skipped, so newer publishers may add keys. The keys
// value, ts and seq are required. Errors are *SyntaxError, wrapping
// ErrMalformed.
func Parse(payload []byte, e *Envelope) error {
	e.scratch = e.scratch[:0]
	if isMsgpackMap(payload) {
		p := mpParser{b: payload}
		if err := p.envelope(e, ""); err != nil {
			return err
		}
		if p.i != len(p.b) {
			return p.errorf("", "%d bytes after the envelope", len(p.b)-p.i)
		}
		return nil
	}
	p := jsonParser{b: payload}
	p.ws()
	if err := p.envelope(e); err != nil {
		return err
	}
	p.ws()
	if p.i != len(p.b) {
		return p.errorf("", "unexpected %s after the envelope", p.describe())
	}
	return nil
}

// ParseWindow reads one window-stream message in either encoding into
// w, reusing w.Items and each item's scratch space. Item topics and
// strings point into payload. Errors are *SyntaxError.
func ParseWindow(payload []byte, w *Window) error {
	w.Items, w.Policy = w.Items[:0], 0
	if isMsgpackMap(payload) {
		p := mpParser{b: payload}
		if err := p.window(w); err != nil {
			return err
		}
		if p.i != len(p.b) {
			return p.errorf("", "%d bytes after the window", len(p.b)-p.i)
		}
		return nil
	}
	p := jsonParser{b: payload}
	p.ws()
	if err := p.window(w); err != nil {
		return err
	}
	p.ws()
	if p.i != len(p.b) {
		return p.errorf("", "unexpected %s after the window", p.describe())
	}
	return nil
}

func isMsgpackMap(b []byte) bool {
	return len(b) > 0 && (b[0]&0xf0 == 0x80 || b[0] == 0xde || b[0] == 0xdf)
}

// nextItem extends w.Items by one, reusing an old item's scratch space.
func (w *Window) nextItem() *WindowItem {
	if len(w.Items) < cap(w.Items) {
		w.Items = w.Items[:len(w.Items)+1]
	} else {
		w.Items = append(w.Items, WindowItem{})
	}
	it := &w.Items[len(w.Items)-1]
	it.Envelope.scratch = it.Envelope.scratch[:0]
	return it
}

// reset clears every field but the scratch space.
func (e *Envelope) reset() {
	s := e.scratch
	*e = Envelope{scratch: s}
}

// str returns b as a string without copying; for short-lived use where
// the string does not escape (parsing numbers, comparing keys).
func str(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// ---- JSON ----

type jsonParser struct {
	b []byte
	i int
}

func (p *jsonParser) errorf(key, format string, args ...any) error {
	return &SyntaxError{Encoding: JSON, Offset: p.i, Key: key, Msg: fmt.Sprintf(format, args...)}
}

// describe names the byte at the parser's position for an error.
func (p *jsonParser) describe() string {
	if p.i >= len(p.b) {
		return "end of input"
	}
	return strconv.QuoteRune(rune(p.b[p.i]))
}

func (p *jsonParser) ws() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *jsonParser) expect(c byte, key string) error {
	p.ws()
	if p.i >= len(p.b) || p.b[p.i] != c {
		return p.errorf(key, "want %q, got %s", c, p.describe())
	}
	p.i++
	return nil
}

// members iterates over an object's members: it calls f with each key,
// positioned at the value, which f must consume.
func (p *jsonParser) members(scratch *[]byte, what string, f func(key []byte) error) error {
	if err := p.expect('{', what); err != nil {
		return err
	}
	p.ws()
	if p.i < len(p.b) && p.b[p.i] == '}' {
		p.i++
		return nil
	}
	for {
		p.ws()
		key, err := p.str(scratch, what)
		if err != nil {
			return err
		}
		if err := p.expect(':', str(key)); err != nil {
			return err
		}
		p.ws()
		if err := f(key); err != nil {
			return err
		}
		p.ws()
		if p.i >= len(p.b) {
			return p.errorf(what, "unterminated object")
		}
		switch p.b[p.i] {
		case ',':
			p.i++
		case '}':
			p.i++
			return nil
		default:
			return p.errorf(what, "want ',' or '}', got %s", p.describe())
		}
	}
}

// envelope reads one envelope object into e. It keeps e's scratch
// space as it is (a window item's topic may live there).
func (p *jsonParser) envelope(e *Envelope) error {
	e.reset()
	var seen, non int
	err := p.members(&e.scratch, "", func(key []byte) error {
		return p.member(e, key, &seen, &non)
	})
	if err != nil {
		return err
	}
	return finish(e, seen, non, JSON, p.i)
}

// member reads the value of one envelope key.
func (p *jsonParser) member(e *Envelope, key []byte, seen, non *int) error {
	var err error
	switch str(key) {
	case "value":
		*seen |= seenValue
		if p.literal("null") {
			*seen |= seenNull
			return nil
		}
		err = p.value(e)
	case "unit":
		e.Unit, err = p.str(&e.scratch, "unit")
	case "label":
		e.Label, err = p.str(&e.scratch, "label")
	case "ts":
		*seen |= seenTS
		e.TS, err = p.int64("ts")
	case "seq":
		*seen |= seenSeq
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
		if s, err = p.str(&e.scratch, "nonfinite"); err != nil {
			return err
		}
		if *non = nonFiniteOf(s); *non == finite {
			p.i = at
			err = p.errorf("nonfinite", badNonFinite, s)
		}
	default:
		err = p.skip(0)
	}
	return err
}

// nonFiniteOf reads the text of "nonfinite" in either encoding: nonNaN,
// nonPosInf or nonNegInf, or finite for a text that names none.
func nonFiniteOf(s []byte) int {
	switch str(s) {
	case "NaN":
		return nonNaN
	case "+Inf", "Inf":
		return nonPosInf
	case "-Inf":
		return nonNegInf
	}
	return finite
}

// badNonFinite is the error of a "nonfinite" text that names no value.
const badNonFinite = "want \"NaN\", \"+Inf\" or \"-Inf\", got %q"

// finish checks the required keys and applies "nonfinite", after either
// parser has read an envelope's keys: one verdict for both encodings.
func finish(e *Envelope, seen, non int, enc Encoding, off int) error {
	missing := ""
	switch {
	case seen&seenValue == 0:
		missing = "value"
	case seen&seenTS == 0:
		missing = "ts"
	case seen&seenSeq == 0:
		missing = "seq"
	}
	if missing != "" {
		return &SyntaxError{Encoding: enc, Offset: off, Key: missing, Msg: "missing"}
	}
	switch {
	case seen&seenNull != 0 && non == finite:
		return &SyntaxError{Encoding: enc, Offset: off, Key: "value", Msg: "null without \"nonfinite\""}
	case seen&seenNull == 0 && non != finite:
		return &SyntaxError{Encoding: enc, Offset: off, Key: "nonfinite", Msg: "given with a numeric value"}
	}
	switch non {
	case nonNaN:
		e.SetFloat(math.NaN())
	case nonPosInf:
		e.SetFloat(math.Inf(1))
	case nonNegInf:
		e.SetFloat(math.Inf(-1))
	}
	return nil
}

func (p *jsonParser) literal(lit string) bool {
	if len(p.b)-p.i >= len(lit) && str(p.b[p.i:p.i+len(lit)]) == lit {
		p.i += len(lit)
		return true
	}
	return false
}

func (p *jsonParser) flag(e *Envelope, f Flags, key string) error {
	switch {
	case p.literal("true"):
		e.Flags |= f
	case p.literal("false"):
		e.Flags &^= f
	default:
		return p.errorf(key, "want true or false, got %s", p.describe())
	}
	return nil
}

// number scans a JSON number and returns its text and whether it is an
// integer (no fraction, no exponent).
func (p *jsonParser) number(key string) ([]byte, bool, error) {
	b, start := p.b, p.i
	i := p.i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	default:
		p.i = i
		return nil, false, p.errorf(key, "want a number, got %s", p.describe())
	}
	integer := true
	if i < len(b) && b[i] == '.' {
		integer = false
		i++
		d := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == d {
			p.i = i
			return nil, false, p.errorf(key, "want a digit after '.', got %s", p.describe())
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		integer = false
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		d := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == d {
			p.i = i
			return nil, false, p.errorf(key, "want a digit in the exponent, got %s", p.describe())
		}
	}
	p.i = i
	return b[start:i], integer, nil
}

// value reads "value": an integer when it has no fraction or exponent
// and fits in int64 (or uint64 when positive), else a float.
func (p *jsonParser) value(e *Envelope) error {
	at := p.i
	t, integer, err := p.number("value")
	if err != nil {
		return err
	}
	if integer {
		if t[0] == '-' {
			if v, ok := parseNeg(t[1:]); ok {
				e.SetInt(v)
				return nil
			}
		} else if v, ok := parseUint(t); ok {
			e.SetUint(v)
			return nil
		}
	}
	f, err := strconv.ParseFloat(str(t), 64)
	if err != nil && !isRange(err) {
		p.i = at
		return p.errorf("value", "bad number %q", t)
	}
	e.SetFloat(f)
	return nil
}

func isRange(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

func (p *jsonParser) uint64(key string) (uint64, error) {
	at := p.i
	t, integer, err := p.number(key)
	if err != nil {
		return 0, err
	}
	if v, ok := parseUint(t); integer && ok {
		return v, nil
	}
	p.i = at
	return 0, p.errorf(key, "want an unsigned integer, got %s", t)
}

func (p *jsonParser) int64(key string) (int64, error) {
	at := p.i
	t, integer, err := p.number(key)
	if err != nil {
		return 0, err
	}
	if integer {
		if t[0] == '-' {
			if v, ok := parseNeg(t[1:]); ok {
				return v, nil
			}
		} else if v, ok := parseUint(t); ok && v <= math.MaxInt64 {
			return int64(v), nil
		}
	}
	p.i = at
	return 0, p.errorf(key, "want an integer in int64, got %s", t)
}

// parseUint reads decimal digits into a uint64, reporting overflow.
func parseUint(t []byte) (uint64, bool) {
	const cutoff = math.MaxUint64 / 10 // 1844674407370955161
	var v uint64
	for _, c := range t {
		d := uint64(c - '0')
		if d > 9 || v > cutoff || (v == cutoff && d > math.MaxUint64%10) {
			return 0, false
		}
		v = v*10 + d
	}
	return v, len(t) > 0
}

// parseNeg reads the digits of a negative integer.
func parseNeg(t []byte) (int64, bool) {
	u, ok := parseUint(t)
	if !ok || u > 1<<63 {
		return 0, false
	}
	return -int64(u), true
}

// str reads a JSON string. Without escapes it returns a sub-slice of the
// input; with escapes it unescapes into *scratch.
func (p *jsonParser) str(scratch *[]byte, key string) ([]byte, error) {
	if p.i >= len(p.b) || p.b[p.i] != '"' {
		return nil, p.errorf(key, "want a string, got %s", p.describe())
	}
	p.i++
	start := p.i
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			s := p.b[start:p.i]
			p.i++
			return s, nil
		case c == '\\':
			return p.strEscaped(scratch, start, key)
		case c < 0x20:
			return nil, p.errorf(key, "control character %#02x in a string", c)
		}
		p.i++
	}
	return nil, p.errorf(key, "unterminated string")
}

func (p *jsonParser) strEscaped(scratch *[]byte, start int, key string) ([]byte, error) {
	buf := *scratch
	n := len(buf)
	buf = append(buf, p.b[start:p.i]...)
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			p.i++
			*scratch = buf
			return buf[n:len(buf):len(buf)], nil
		case c < 0x20:
			return nil, p.errorf(key, "control character %#02x in a string", c)
		case c != '\\':
			buf = append(buf, c)
			p.i++
			continue
		}
		p.i++
		if p.i >= len(p.b) {
			break
		}
		esc := p.b[p.i]
		p.i++
		switch esc {
		case '"', '\\', '/':
			buf = append(buf, esc)
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'n':
			buf = append(buf, '\n')
		case 'r':
			buf = append(buf, '\r')
		case 't':
			buf = append(buf, '\t')
		case 'u':
			r, ok := p.hex4()
			if !ok {
				return nil, p.errorf(key, "bad \\u escape")
			}
			if utf16.IsSurrogate(r) {
				r2 := utf8.RuneError
				if p.i+1 < len(p.b) && p.b[p.i] == '\\' && p.b[p.i+1] == 'u' {
					save := p.i
					p.i += 2
					if lo, ok := p.hex4(); ok {
						r2 = utf16.DecodeRune(r, lo)
					}
					if r2 == utf8.RuneError {
						p.i = save
					}
				}
				r = r2
			}
			buf = utf8.AppendRune(buf, r)
		default:
			p.i--
			return nil, p.errorf(key, "bad escape \\%c", esc)
		}
	}
	return nil, p.errorf(key, "unterminated string")
}

func (p *jsonParser) hex4() (rune, bool) {
	if len(p.b)-p.i < 4 {
		return 0, false
	}
	var r rune
	for _, c := range p.b[p.i : p.i+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	p.i += 4
	return r, true
}

// skip consumes one JSON value of any kind, checking its syntax.
func (p *jsonParser) skip(depth int) error {
	if depth > maxDepth {
		return p.errorf("", "nested deeper than %d", maxDepth)
	}
	p.ws()
	if p.i >= len(p.b) {
		return p.errorf("", "want a value, got end of input")
	}
	switch c := p.b[p.i]; {
	case c == '"':
		var none []byte
		_, err := p.skipStr(&none)
		return err
	case c == '{':
		var none []byte
		return p.members(&none, "", func([]byte) error { return p.skip(depth + 1) })
	case c == '[':
		return p.elements("", func() error { return p.skip(depth + 1) })
	case c == '-' || (c >= '0' && c <= '9'):
		_, _, err := p.number("")
		return err
	case p.literal("true"), p.literal("false"), p.literal("null"):
		return nil
	}
	return p.errorf("", "want a value, got %s", p.describe())
}

// skipStr checks a string without keeping it.
func (p *jsonParser) skipStr(scratch *[]byte) ([]byte, error) {
	s, err := p.str(scratch, "")
	*scratch = (*scratch)[:0]
	return s, err
}

// elements iterates over an array's elements: f consumes each.
func (p *jsonParser) elements(what string, f func() error) error {
	if err := p.expect('[', what); err != nil {
		return err
	}
	p.ws()
	if p.i < len(p.b) && p.b[p.i] == ']' {
		p.i++
		return nil
	}
	for {
		p.ws()
		if err := f(); err != nil {
			return err
		}
		p.ws()
		if p.i >= len(p.b) {
			return p.errorf(what, "unterminated array")
		}
		switch p.b[p.i] {
		case ',':
			p.i++
		case ']':
			p.i++
			return nil
		default:
			return p.errorf(what, "want ',' or ']', got %s", p.describe())
		}
	}
}

func (p *jsonParser) window(w *Window) error {
	var seen int
	var keys []byte
	err := p.members(&keys, "", func(key []byte) error {
		var err error
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
			err = p.elements("items", func() error {
				return p.item(w.nextItem())
			})
		default:
			err = p.skip(0)
		}
		return err
	})
	if err != nil {
		return err
	}
	if key := windowMissing(seen); key != "" {
		return p.errorf(key, "missing")
	}
	return nil
}

// windowMissing names the first required key of a window that either
// parser has not seen ("" when none): seq, then items.
func windowMissing(seen int) string {
	switch {
	case seen&seenSeq == 0:
		return "seq"
	case seen&seenValue == 0:
		return "items"
	}
	return ""
}

// item reads one [topic, envelope] pair.
func (p *jsonParser) item(it *WindowItem) error {
	if err := p.expect('[', "items"); err != nil {
		return err
	}
	p.ws()
	t, err := p.str(&it.Envelope.scratch, "topic")
	if err != nil {
		return err
	}
	it.Topic = t
	if err := p.expect(',', "items"); err != nil {
		return err
	}
	p.ws()
	if err := p.envelope(&it.Envelope); err != nil {
		return err
	}
	return p.expect(']', "items")
}
