package dbc

import (
	"bytes"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/yukart/candec/internal/base/termtext"
)

// Parse parses one DBC file into a syntax tree. filename is used only
// in errors and warnings. Text that is not valid UTF-8 is read as
// Windows-1252 (with a warning). Statements with unknown keywords, and
// malformed statements that do not change how frames decode (comments,
// attributes, nodes, environment variables, …), are skipped with a
// warning in File.Warnings; any other problem is an *Error.
func Parse(filename string, src []byte) (*File, error) {
	f := &File{Name: filename}
	src = bytes.TrimPrefix(src, []byte("\uFEFF"))
	var text string
	if utf8.Valid(src) {
		text = string(src)
	} else {
		line, col := firstInvalidUTF8(src)
		f.Warnings = append(f.Warnings, Warning{filename, line, col, "text is not UTF-8: read as Windows-1252"})
		text = decodeCP1252(src)
	}
	p := &parser{f: f, lx: newLexer(text)}
	p.tok = p.lx.next()
	if err := p.parse(); err != nil {
		return nil, err
	}
	return f, nil
}

// parser is a recursive-descent parser with one token of lookahead.
// The first error sticks: once err is set the parser sees only the end
// of the file, so a statement's parse function runs to its end without
// checking after every token, and the statement loop then decides
// whether the error is fatal.
type parser struct {
	f   *File
	lx  *lexer
	tok token
	err *Error
}

// statement describes how to parse a statement that starts with a
// keyword. A statement that is not fatal does not change how frames
// decode, so a syntax error in it is a warning and the statement is
// skipped.
type statement struct {
	parse func(p *parser, kw token)
	fatal bool
}

var statements map[string]statement

func init() {
	// Assigned here, not in the declaration, because the parse
	// functions refer back to the table.
	statements = map[string]statement{
		"VERSION":         {parse: (*parser).version},
		"NS_":             {parse: (*parser).newSymbols},
		"BS_":             {parse: (*parser).bitTiming},
		"BU_":             {parse: (*parser).nodes},
		"VAL_TABLE_":      {parse: (*parser).valueTable},
		"BO_":             {parse: (*parser).message, fatal: true},
		"SG_":             {parse: (*parser).straySignal},
		"BO_TX_BU_":       {parse: (*parser).transmitters},
		"EV_":             {parse: (*parser).envVar},
		"CM_":             {parse: (*parser).comment},
		"BA_DEF_":         {parse: (*parser).attributeDef},
		"BA_DEF_REL_":     {parse: (*parser).attributeDef},
		"BA_DEF_DEF_":     {parse: (*parser).attributeDefault},
		"BA_DEF_DEF_REL_": {parse: (*parser).attributeDefault},
		"BA_":             {parse: (*parser).attribute},
		"BA_REL_":         {parse: (*parser).relationAttribute},
		"VAL_":            {parse: (*parser).valueDescs, fatal: true},
		"SIG_VALTYPE_":    {parse: (*parser).valueType, fatal: true},
		"SG_MUL_VAL_":     {parse: (*parser).muxValue, fatal: true},
		"SIG_GROUP_":      {parse: (*parser).signalGroup},
		// Valid DBC that candec has no use for: skipped quietly.
		"ENVVAR_DATA_":     {parse: (*parser).ignored},
		"EV_DATA_":         {parse: (*parser).ignored},
		"SIG_TYPE_REF_":    {parse: (*parser).ignored},
		"SIGTYPE_REF_":     {parse: (*parser).ignored},
		"SGTYPE_":          {parse: (*parser).ignored},
		"SGTYPE_VAL_":      {parse: (*parser).ignored},
		"SIGTYPE_VALTYPE_": {parse: (*parser).ignored},
		"BA_DEF_SGTYPE_":   {parse: (*parser).ignored},
		"BA_SGTYPE_":       {parse: (*parser).ignored},
		"CAT_DEF_":         {parse: (*parser).ignored},
		"CAT_":             {parse: (*parser).ignored},
		"FILTER":           {parse: (*parser).ignored},
		"NS_DESC_":         {parse: (*parser).ignored},
		"BU_SG_REL_":       {parse: (*parser).ignored},
		"BU_EV_REL_":       {parse: (*parser).ignored},
		"BU_BO_REL_":       {parse: (*parser).ignored},
	}
}

func isKeyword(s string) bool {
	_, ok := statements[s]
	return ok
}

// startsStatement reports whether t begins a new statement: a keyword
// first on its line.
func startsStatement(t token) bool {
	return t.kind == tIdent && t.bol && isKeyword(t.text)
}

func (p *parser) parse() *Error {
	for {
		t := p.tok
		switch t.kind {
		case tEOF:
			return nil
		case tBadString:
			p.failf(t, "")
			return p.err
		case tIdent:
		default:
			p.warn(t, "unexpected %s where a statement should start: skipped", describe(t))
			p.skip()
			continue
		}
		st, ok := statements[t.text]
		if !ok {
			p.warn(t, "unknown keyword %s: statement skipped", termtext.Quote(t.text))
			p.next()
			p.skip()
			continue
		}
		p.next()
		st.parse(p, t)
		if p.err == nil {
			continue
		}
		if st.fatal || p.tok.kind == tBadString {
			return p.err
		}
		p.f.Warnings = append(p.f.Warnings, Warning{p.f.Name, p.err.Line, p.err.Column, p.err.Msg + ": " + t.text + " statement skipped"})
		p.err = nil
		p.skip()
	}
}

// skip skips the rest of a statement: up to and including the next
// ";", or up to the next statement keyword at the start of a line.
func (p *parser) skip() {
	for {
		t := p.tok
		switch {
		case t.kind == tEOF || t.kind == tBadString || startsStatement(t):
			return
		case t.is(';'):
			p.next()
			return
		}
		p.next()
	}
}

func (p *parser) next() token {
	t := p.tok
	if p.err == nil && t.kind != tEOF {
		p.tok = p.lx.next()
	}
	return t
}

// peek returns the lookahead token, or end of file once an error
// stuck.
func (p *parser) peek() token {
	if p.err != nil {
		return token{kind: tEOF}
	}
	return p.tok
}

func (p *parser) failf(t token, format string, args ...any) {
	if p.err != nil {
		return
	}
	msg := "string has no closing quote"
	if t.kind != tBadString {
		msg = msgf(format, args...)
	}
	p.err = &Error{File: p.f.Name, Line: t.line, Column: t.col, Msg: msg, Kind: ErrSyntax}
}

func (p *parser) warn(t token, format string, args ...any) {
	p.f.Warnings = append(p.f.Warnings, Warning{p.f.Name, t.line, t.col, msgf(format, args...)})
}

func pos(t token) Pos { return Pos{t.line, t.col} }

// describe names a token for an error message.
func describe(t token) string {
	switch t.kind {
	case tEOF:
		return "end of file"
	case tBadString:
		return "a string without closing quote"
	case tString:
		return "string " + termtext.Quote(t.text)
	case tOther:
		return "character " + termtext.Quote(t.text)
	}
	return termtext.Quote(t.text)
}

// expect consumes the punctuation c or fails naming what it is for.
func (p *parser) expect(c byte, what string) {
	t := p.peek()
	if !t.is(c) {
		p.failf(t, "expected %q %s, found %s", string(c), what, describe(t))
		return
	}
	p.next()
}

// accept consumes the punctuation c if it comes next.
func (p *parser) accept(c byte) bool {
	if p.peek().is(c) {
		p.next()
		return true
	}
	return false
}

// end consumes the ";" that ends a statement. A missing ";" before the
// next statement keyword is tolerated with a warning.
func (p *parser) end(kw token) {
	t := p.peek()
	switch {
	case t.is(';'):
		p.next()
	case p.err == nil && (t.kind == tEOF || startsStatement(t)):
		p.warn(kw, "%s statement has no closing \";\"", kw.text)
	default:
		p.failf(t, "expected \";\" at the end of %s, found %s", kw.text, describe(t))
	}
}

func (p *parser) ident(what string) string {
	t := p.peek()
	if t.kind != tIdent {
		p.failf(t, "expected %s, found %s", what, describe(t))
		return ""
	}
	p.next()
	return t.text
}

func (p *parser) str(what string) string {
	t := p.peek()
	if t.kind != tString {
		p.failf(t, "expected %s (a quoted string), found %s", what, describe(t))
		return ""
	}
	p.next()
	return t.text
}

// uint parses an unsigned decimal integer no larger than limit.
func (p *parser) uint(what string, limit uint64) uint64 {
	t := p.peek()
	if t.kind != tNumber {
		p.failf(t, "expected %s, found %s", what, describe(t))
		return 0
	}
	v, err := strconv.ParseUint(t.text, 10, 64)
	switch {
	case err != nil && strings.ContainsAny(t.text, ".eE"):
		p.failf(t, "expected %s (an unsigned integer), found %s", what, describe(t))
		return 0
	case err != nil || v > limit: // only digits: too large
		p.failf(t, "%s %s is too large (at most %d)", what, termtext.Quote(t.text), limit)
		return 0
	}
	p.next()
	return v
}

// int32 parses an unsigned integer that fits an int32: a bit position,
// a length, a count.
func (p *parser) int32(what string) int {
	return int(p.uint(what, math.MaxInt32))
}

func (p *parser) id() uint32 {
	return uint32(p.uint("message ID", math.MaxUint32))
}

// sign consumes an optional "+" or "-" and reports whether it was "-".
func (p *parser) sign() bool {
	t := p.peek()
	if t.is('-') {
		p.next()
		return true
	}
	if t.is('+') {
		p.next()
	}
	return false
}

// float parses a signed decimal number.
func (p *parser) float(what string) float64 {
	first := p.peek()
	neg := p.sign()
	t := p.peek()
	if t.kind != tNumber {
		if t != first {
			p.failf(t, "expected a number after the sign of %s, found %s", what, describe(t))
		} else {
			p.failf(t, "expected %s (a number), found %s", what, describe(t))
		}
		return 0
	}
	v, err := strconv.ParseFloat(t.text, 64)
	if err != nil || math.IsInf(v, 0) {
		p.failf(t, "%s %s is out of range", what, termtext.Quote(t.text))
		return 0
	}
	p.next()
	if neg {
		v = -v
	}
	return v
}

// key parses a value-description key: a signed integer. A positive key
// above the int64 range is kept as the two's complement of the uint64,
// which is how the raw bits of a 64-bit unsigned signal compare. A
// number with a fraction yields ok false (after consuming it).
func (p *parser) key() (v int64, ok bool) {
	neg := p.sign()
	t := p.peek()
	if t.kind != tNumber {
		p.failf(t, "expected a value (an integer), found %s", describe(t))
		return 0, false
	}
	p.next()
	if u, err := strconv.ParseUint(t.text, 10, 64); err == nil {
		switch {
		case !neg:
			return int64(u), true
		case u <= 1<<63:
			return -int64(u), true
		}
		return 0, false
	}
	f, err := strconv.ParseFloat(t.text, 64)
	switch {
	case err != nil || f != math.Trunc(f) || f >= 1<<64 || neg && f > 1<<63:
		return 0, false
	case neg && f == 1<<63:
		return math.MinInt64, true
	case neg:
		return -int64(f), true
	}
	return int64(uint64(f)), true
}

func (p *parser) literal(what string) Literal {
	t := p.peek()
	if t.kind == tString {
		p.next()
		return Literal{IsString: true, Str: t.text}
	}
	return Literal{Num: p.float(what)}
}

// valueList parses "value "label" …" pairs up to the closing ";".
func (p *parser) valueList(kw token) []ValueDescription {
	var vs []ValueDescription
	for {
		t := p.peek()
		if t.kind != tNumber && !t.is('-') && !t.is('+') {
			break
		}
		v, ok := p.key()
		text := strings.TrimSpace(p.lx.src[t.off:p.tok.off])
		label := p.str("the label of value " + text)
		if p.err != nil {
			break
		}
		if !ok {
			p.warn(t, "value %s is not an integer: description %s dropped", termtext.Quote(text), termtext.Quote(label))
			continue
		}
		vs = append(vs, ValueDescription{Value: v, Label: label})
	}
	p.end(kw)
	return vs
}

func (p *parser) version(kw token) {
	v := p.str("the version")
	if p.err == nil {
		p.f.Version = v
	}
}

// newSymbols parses NS_, a list of keywords the file may use. The list
// has no terminator: it runs while the names are indented or on the
// NS_ line, or, unindented, while each is alone on its line.
func (p *parser) newSymbols(kw token) {
	p.accept(':')
	for {
		t := p.peek()
		if t.kind != tIdent || t.text == "BS_" || t.text == "BU_" || t.text == "BO_" {
			return
		}
		if t.line != kw.line && t.col == 1 {
			if n := p.peekAfter(); !isKeyword(t.text) || n.kind != tIdent || !n.bol {
				return
			}
		}
		p.next()
	}
}

// peekAfter returns the token after the lookahead without consuming
// either.
func (p *parser) peekAfter() token {
	lx := *p.lx
	return lx.next()
}

// bitTiming parses the obsolete BS_ line, which has no terminator.
func (p *parser) bitTiming(kw token) {
	p.expect(':', "after BS_")
	for t := p.peek(); t.kind != tEOF && t.line == kw.line && !t.is(';') && !startsStatement(t); t = p.peek() {
		p.next()
	}
	p.accept(';')
}

// nodes parses BU_, the list of network nodes: names on the BU_ line
// or on indented lines after it.
func (p *parser) nodes(kw token) {
	p.expect(':', "after BU_")
	for {
		t := p.peek()
		if t.is(',') {
			p.next()
			continue
		}
		if t.kind != tIdent || t.line != kw.line && (t.col == 1 || isKeyword(t.text)) {
			break
		}
		p.next()
		p.f.Nodes = append(p.f.Nodes, t.text)
	}
	p.accept(';')
}

func (p *parser) valueTable(kw token) {
	d := &ValueTableDef{Pos: pos(kw)}
	d.Name = p.ident("a value table name")
	d.Values = p.valueList(kw)
	if p.err == nil {
		p.f.ValueTables = append(p.f.ValueTables, d)
	}
}

// message parses "BO_ id name: length sender" and the SG_ lines that
// follow.
func (p *parser) message(kw token) {
	m := &MessageDef{Pos: pos(kw)}
	m.ID = p.id()
	m.Name = p.ident("a message name")
	p.expect(':', "after the message name")
	m.Length = p.int32("message length")
	if t := p.peek(); t.kind == tIdent && !startsStatement(t) {
		m.Sender = p.next().text
	}
	for t := p.peek(); t.kind == tIdent && t.text == "SG_"; t = p.peek() {
		p.next()
		if s := p.signal(t); s != nil {
			m.Signals = append(m.Signals, s)
		}
	}
	if p.err == nil {
		p.f.Messages = append(p.f.Messages, m)
	}
}

// signal parses the rest of one SG_ line:
//
//	SG_ name [M|mN|mNM] : start|length@order sign (factor,offset) [min|max] "unit" receivers
func (p *parser) signal(kw token) *SignalDef {
	s := &SignalDef{Pos: pos(kw)}
	s.Name = p.ident("a signal name")
	if t := p.peek(); t.kind == tIdent {
		p.next()
		mux, ok := parseMuxIndicator(t.text)
		if !ok {
			p.failf(t, "invalid multiplexer indicator %s (want M, m<value> or m<value>M)", termtext.Quote(t.text))
		}
		mux.Pos = pos(t)
		s.Mux = mux
	}
	p.expect(':', "after the signal name")
	s.Start = p.int32("start bit")
	p.expect('|', "between start bit and length")
	s.Length = p.int32("signal length")
	p.expect('@', "before the byte order")
	switch t := p.peek(); {
	case t.kind == tNumber && t.text == "0":
		s.Order = BigEndian
		p.next()
	case t.kind == tNumber && t.text == "1":
		s.Order = LittleEndian
		p.next()
	default:
		p.failf(t, "expected byte order 0 (Motorola) or 1 (Intel), found %s", describe(t))
	}
	switch t := p.peek(); {
	case t.is('-'):
		s.Signed = true
		p.next()
	case t.is('+'):
		p.next()
	default:
		p.failf(t, "expected sign + or - after the byte order, found %s", describe(t))
	}
	p.expect('(', "before the factor")
	s.Factor = p.float("the factor")
	p.expect(',', "between factor and offset")
	s.Offset = p.float("the offset")
	p.expect(')', "after the offset")
	p.expect('[', "before the minimum")
	s.Min = p.float("the minimum")
	p.expect('|', "between minimum and maximum")
	s.Max = p.float("the maximum")
	p.expect(']', "after the maximum")
	s.Unit = p.str("the unit")
	for t := p.peek(); (t.kind == tIdent || t.is(',')) && !t.bol; t = p.peek() {
		p.next()
		if t.kind == tIdent {
			s.Receivers = append(s.Receivers, t.text)
		}
	}
	if p.err != nil {
		return nil
	}
	return s
}

// parseMuxIndicator reads "M", "mN" or "mNM", or a bare "m" or "mM".
func parseMuxIndicator(s string) (MuxIndicator, bool) {
	switch s {
	case "M":
		return MuxIndicator{Switch: true}, true
	case "m":
		return MuxIndicator{Multiplexed: true, Bare: true}, true
	case "mM":
		return MuxIndicator{Switch: true, Multiplexed: true, Bare: true}, true
	}
	if len(s) < 2 || s[0] != 'm' {
		return MuxIndicator{}, false
	}
	digits := s[1:]
	sw := false
	if strings.HasSuffix(digits, "M") {
		digits, sw = digits[:len(digits)-1], true
	}
	for i := 0; i < len(digits); i++ {
		if !isDigit(digits[i]) {
			return MuxIndicator{}, false
		}
	}
	v, err := strconv.ParseUint(digits, 10, 64)
	if err != nil {
		return MuxIndicator{}, false
	}
	return MuxIndicator{Switch: sw, Multiplexed: true, Value: v}, true
}

func (p *parser) straySignal(kw token) {
	p.warn(kw, "SG_ outside a message (no BO_ before it): skipped")
	p.skip()
}

func (p *parser) transmitters(kw token) {
	d := &TransmittersDef{Pos: pos(kw)}
	d.ID = p.id()
	p.expect(':', "after the message ID")
	for t := p.peek(); t.kind == tIdent || t.is(','); t = p.peek() {
		if startsStatement(t) {
			break
		}
		p.next()
		if t.kind == tIdent {
			d.Nodes = append(d.Nodes, t.text)
		}
	}
	p.end(kw)
	if p.err == nil {
		p.f.Transmitters = append(p.f.Transmitters, d)
	}
}

// envVar parses
//
//	EV_ name : type [min|max] "unit" initial id access nodes ;
//
// The access type is any identifier: files in the wild write
// DUMMY_NODE_VECTOR8000 and others beyond the documented four.
func (p *parser) envVar(kw token) {
	d := &EnvVarDef{Pos: pos(kw)}
	d.Name = p.ident("an environment variable name")
	p.expect(':', "after the environment variable name")
	d.Type = int(p.uint("environment variable type", 2))
	p.expect('[', "before the minimum")
	d.Min = p.float("the minimum")
	p.expect('|', "between minimum and maximum")
	d.Max = p.float("the maximum")
	p.expect(']', "after the maximum")
	d.Unit = p.str("the unit")
	d.Initial = p.float("the initial value")
	d.ID = p.uint("environment variable ID", math.MaxUint64)
	d.Access = p.ident("the access type")
	for t := p.peek(); (t.kind == tIdent || t.is(',')) && !startsStatement(t); t = p.peek() {
		p.next()
		if t.kind == tIdent {
			d.Nodes = append(d.Nodes, t.text)
		}
	}
	p.end(kw)
	if p.err == nil {
		p.f.EnvVars = append(p.f.EnvVars, d)
	}
}

// object parses the optional object of CM_ and BA_: "BU_ node",
// "BO_ id", "SG_ id signal" or "EV_ name"; none means the network.
func (p *parser) object() Object {
	t := p.peek()
	if t.kind != tIdent {
		return Object{}
	}
	var o Object
	switch t.text {
	case "BU_":
		p.next()
		o.Kind, o.Name = ObjectNode, p.ident("a node name")
	case "BO_":
		p.next()
		o.Kind, o.ID = ObjectMessage, p.id()
	case "SG_":
		p.next()
		o.Kind, o.ID = ObjectSignal, p.id()
		o.Signal = p.ident("a signal name")
	case "EV_":
		p.next()
		o.Kind, o.Name = ObjectEnvVar, p.ident("an environment variable name")
	default:
		p.failf(t, "expected BU_, BO_, SG_, EV_ or a string, found %s", describe(t))
	}
	return o
}

func (p *parser) comment(kw token) {
	d := &CommentDef{Pos: pos(kw)}
	d.Object = p.object()
	d.Text = p.str("the comment")
	p.end(kw)
	if p.err == nil {
		p.f.Comments = append(p.f.Comments, d)
	}
}

// attributeDef parses BA_DEF_ and BA_DEF_REL_:
//
//	BA_DEF_ [BU_|BO_|SG_|EV_] "name" INT|HEX|FLOAT min max | STRING | ENUM "a","b",… ;
func (p *parser) attributeDef(kw token) {
	d := &AttributeDef{Pos: pos(kw)}
	if t := p.peek(); t.kind == tIdent {
		p.next()
		switch t.text {
		case "BU_":
			d.Object = ObjectNode
		case "BO_":
			d.Object = ObjectMessage
		case "SG_":
			d.Object = ObjectSignal
		case "EV_":
			d.Object = ObjectEnvVar
		case "BU_SG_REL_", "BU_BO_REL_", "BU_EV_REL_":
			d.Relation = t.text
		default:
			p.failf(t, "expected an object type or the attribute name, found %s", describe(t))
		}
	}
	d.Name = p.str("the attribute name")
	t := p.peek()
	d.Type = p.ident("the attribute type")
	switch d.Type {
	case "INT", "HEX", "FLOAT":
		// Some writers leave the range out.
		if n := p.peek(); n.kind == tNumber || n.is('-') || n.is('+') {
			d.Min = p.float("the minimum")
			d.Max = p.float("the maximum")
		}
	case "STRING":
	case "ENUM":
		for n := p.peek(); n.kind == tString; n = p.peek() {
			p.next()
			d.Enum = append(d.Enum, n.text)
			if !p.accept(',') {
				break
			}
		}
	default:
		p.failf(t, "unknown attribute type %s (want INT, HEX, FLOAT, STRING or ENUM)", termtext.Quote(d.Type))
	}
	p.end(kw)
	if p.err == nil {
		p.f.AttributeDefs = append(p.f.AttributeDefs, d)
	}
}

func (p *parser) attributeDefault(kw token) {
	d := &AttributeDefault{Pos: pos(kw), Relation: kw.text == "BA_DEF_DEF_REL_"}
	d.Name = p.str("the attribute name")
	d.Value = p.literal("the default value")
	p.end(kw)
	if p.err == nil {
		p.f.Defaults = append(p.f.Defaults, d)
	}
}

func (p *parser) attribute(kw token) {
	d := &AttributeValue{Pos: pos(kw)}
	d.Name = p.str("the attribute name")
	d.Object = p.object()
	d.Value = p.literal("the attribute value")
	p.end(kw)
	if p.err == nil {
		p.f.Attributes = append(p.f.Attributes, d)
	}
}

// relationAttribute checks a BA_REL_ statement; candec keeps none of
// them.
func (p *parser) relationAttribute(kw token) {
	p.str("the attribute name")
	t := p.peek()
	rel := p.ident("BU_SG_REL_, BU_BO_REL_ or BU_EV_REL_")
	p.ident("a node name")
	switch rel {
	case "BU_SG_REL_":
		if n := p.peek(); n.kind == tIdent && n.text == "SG_" {
			p.next()
		}
		p.id()
		p.ident("a signal name")
	case "BU_BO_REL_":
		p.id()
	case "BU_EV_REL_":
		p.ident("an environment variable name")
	default:
		p.failf(t, "expected BU_SG_REL_, BU_BO_REL_ or BU_EV_REL_, found %s", describe(t))
	}
	p.literal("the attribute value")
	p.end(kw)
}

// valueDescs parses "VAL_ id signal pairs ;" or "VAL_ envvar pairs ;".
func (p *parser) valueDescs(kw token) {
	d := &ValueDescsDef{Pos: pos(kw)}
	if p.peek().kind == tNumber {
		d.Object.Kind = ObjectSignal
		d.Object.ID = p.id()
		d.Object.Signal = p.ident("a signal name")
	} else {
		d.Object.Kind = ObjectEnvVar
		d.Object.Name = p.ident("a message ID or an environment variable name")
	}
	d.Values = p.valueList(kw)
	if p.err == nil {
		p.f.ValueDescs = append(p.f.ValueDescs, d)
	}
}

func (p *parser) valueType(kw token) {
	d := &ValueTypeDef{Pos: pos(kw)}
	d.ID = p.id()
	d.Signal = p.ident("a signal name")
	p.accept(':')
	d.Type = int(p.uint("value type", 255))
	p.end(kw)
	if p.err == nil {
		p.f.ValueTypes = append(p.f.ValueTypes, d)
	}
}

// muxValue parses "SG_MUL_VAL_ id signal switch lo-hi, lo-hi ;".
func (p *parser) muxValue(kw token) {
	d := &MuxValueDef{Pos: pos(kw)}
	d.ID = p.id()
	d.Signal = p.ident("a signal name")
	d.Switch = p.ident("the multiplexer switch name")
	for p.err == nil {
		lo := p.uint("range start", math.MaxUint64)
		p.expect('-', "in the range (lo-hi)")
		hi := p.uint("range end", math.MaxUint64)
		d.Ranges = append(d.Ranges, MuxRange{lo, hi})
		if !p.accept(',') {
			break
		}
	}
	p.end(kw)
	if p.err == nil {
		p.f.MuxValues = append(p.f.MuxValues, d)
	}
}

func (p *parser) signalGroup(kw token) {
	d := &SignalGroupDef{Pos: pos(kw)}
	d.ID = p.id()
	d.Name = p.ident("a signal group name")
	d.Repetitions = p.int32("repetitions")
	p.expect(':', "before the signal names")
	for t := p.peek(); (t.kind == tIdent || t.is(',')) && !startsStatement(t); t = p.peek() {
		p.next()
		if t.kind == tIdent {
			d.Signals = append(d.Signals, t.text)
		}
	}
	p.end(kw)
	if p.err == nil {
		p.f.SignalGroups = append(p.f.SignalGroups, d)
	}
}

// ignored skips a valid statement candec has no use for.
func (p *parser) ignored(kw token) { p.skip() }
