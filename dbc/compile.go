package dbc

import (
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/yukart/candec/internal/base/termtext"
)

// CAN ID limits and the flag bits of a DBC message ID.
const (
	extendedFlag = 0x80000000 // bit 31 of a DBC ID: 29-bit frame
	maxStdID     = 0x7FF
	maxExtID     = 0x1FFFFFFF
	// MaxLength is the largest message length in bytes (CAN FD).
	MaxLength = 64
	// independentSignals is the name Vector tools give the pseudo
	// message that holds signals not placed in any frame.
	independentSignals = "VECTOR__INDEPENDENT_SIG_MSG"
	// noNode is DBC's placeholder for "no node".
	noNode = "Vector__XXX"
)

// Attributes candec reads.
const (
	attrCycleTime  = "GenMsgCycleTime"
	attrSendType   = "GenMsgSendType"
	attrLongMsg    = "SystemMessageLongSymbol"
	attrLongSignal = "SystemSignalLongSymbol"
	attrLongNode   = "SystemNodeLongSymbol"
	// attrProtocol ("J1939" for a J1939 network) and attrFrameFormat
	// (an ENUM whose value J1939PG marks a J1939 parameter group) say
	// which messages match frames by PGN.
	attrProtocol    = "ProtocolType"
	attrFrameFormat = "VFrameFormat"
	protocolJ1939   = "J1939"
	frameJ1939      = "J1939PG"
)

// Compile compiles parsed DBC files into one Database. Files usually
// describe different buses or subsystems; the same CAN ID in two files
// is an error (ErrConflict) unless both define the message identically,
// in which case the first is kept and a warning says so. Warnings of
// the files and of compiling are collected in Database.Warnings.
func Compile(files ...*File) (*Database, error) {
	type origin struct {
		m    *Message
		file string
		pos  Pos
	}
	var (
		msgs     []*Message
		warnings []Warning
		byKey    = make(map[Key]origin)
		byName   = make(map[string]origin)
		byPGN    = make(map[uint32]origin)
	)
	for _, f := range files {
		fc := &fileCompiler{f: f}
		compiled, err := fc.compile()
		if err != nil {
			return nil, err
		}
		fileWarnings := append(slices.Clip(f.Warnings), fc.warnings...)
		slices.SortStableFunc(fileWarnings, func(a, b Warning) int {
			if a.Line != b.Line {
				return a.Line - b.Line
			}
			return a.Column - b.Column
		})
		warnings = append(warnings, fileWarnings...)
		for _, cm := range compiled {
			m := cm.m
			k := Key{m.ID, m.Extended}
			if prev, ok := byKey[k]; ok {
				if !sameMessage(prev.m, m) {
					return nil, &Error{File: f.Name, Line: cm.def.Pos.Line, Column: cm.def.Pos.Column, Kind: ErrConflict,
						Msg: fmt.Sprintf("message %s (ID %s) differs from message %s with the same ID in %s:%d", m.Name, k, prev.m.Name, prev.file, prev.pos.Line)}
				}
				warnings = append(warnings, Warning{f.Name, cm.def.Pos.Line, cm.def.Pos.Column,
					fmt.Sprintf("message %s (ID %s) is also defined, identically, in %s:%d: this copy is ignored", m.Name, k, prev.file, prev.pos.Line)})
				continue
			}
			o := origin{m, f.Name, cm.def.Pos}
			byKey[k] = o
			if prev, ok := byName[m.Name]; ok {
				warnings = append(warnings, Warning{f.Name, cm.def.Pos.Line, cm.def.Pos.Column,
					fmt.Sprintf("message name %s (ID %s) is also used by ID %s in %s:%d", m.Name, k, Key{prev.m.ID, prev.m.Extended}, prev.file, prev.pos.Line)})
			} else {
				byName[m.Name] = o
			}
			if m.J1939 {
				if prev, ok := byPGN[m.PGN()]; ok {
					warnings = append(warnings, Warning{f.Name, cm.def.Pos.Line, cm.def.Pos.Column,
						fmt.Sprintf("J1939 message %s (ID %s) has the PGN %d (0x%05X) of message %s in %s:%d: frames of that PGN with neither ID decode as %s", m.Name, k, m.PGN(), m.PGN(), prev.m.Name, prev.file, prev.pos.Line, prev.m.Name)})
				} else {
					byPGN[m.PGN()] = o
				}
			}
			msgs = append(msgs, m)
		}
	}
	db, err := NewDatabase(msgs)
	if err != nil {
		return nil, err // unreachable: IDs were checked above
	}
	db.Warnings = warnings
	return db, nil
}

// compiledMessage is a message with the definition it came from.
type compiledMessage struct {
	m    *Message
	def  *MessageDef
	sigs map[string]*compiledSignal // by name as written
	// order holds the signals in DBC order.
	order []*compiledSignal
	// muxDefs are the SG_MUL_VAL_ entries by signal name.
	muxDefs map[string]*MuxValueDef
	// cycleSet is true once a BA_ set the cycle time.
	cycleSet, sendSet bool
	longName          string
	// frameFormat is the message's own VFrameFormat, by name, when
	// frameSet.
	frameFormat string
	frameSet    bool
}

type compiledSignal struct {
	s        *Signal
	def      *SignalDef
	longName string
	state    uint8 // ordering: 0 new, 1 in progress, 2 placed
	// twin is the next signal of the message written with the same
	// name: statements that name the signal (VAL_, CM_, BA_,
	// SIG_VALTYPE_, SG_MUL_VAL_) apply to each of them.
	twin *compiledSignal
}

// fileCompiler compiles the definitions of one file.
type fileCompiler struct {
	f        *File
	warnings []Warning
	msgs     map[uint32]*compiledMessage // by ID as written
	skipped  map[uint32]bool             // pseudo-messages left out
	defs     map[string]*AttributeDef
	defaults map[string]*AttributeDefault
	// longNodes maps node names to SystemNodeLongSymbol.
	longNodes map[string]string
	// defaultCycle and defaultSend are the BA_DEF_DEF_ defaults of
	// GenMsgCycleTime and GenMsgSendType.
	defaultCycle time.Duration
	defaultSend  string
	// protocol is the file's ProtocolType (BA_, else BA_DEF_DEF_);
	// defaultFrame the BA_DEF_DEF_ of VFrameFormat, by name.
	protocol, defaultFrame string
}

func (c *fileCompiler) warn(p Pos, format string, args ...any) {
	c.warnings = append(c.warnings, Warning{c.f.Name, p.Line, p.Column, msgf(format, args...)})
}

func (c *fileCompiler) errorf(p Pos, format string, args ...any) *Error {
	return &Error{File: c.f.Name, Line: p.Line, Column: p.Column, Msg: msgf(format, args...), Kind: ErrInvalid}
}

func (c *fileCompiler) compile() ([]*compiledMessage, error) {
	c.msgs = make(map[uint32]*compiledMessage, len(c.f.Messages))
	c.skipped = make(map[uint32]bool)
	c.defs = make(map[string]*AttributeDef, len(c.f.AttributeDefs))
	c.defaults = make(map[string]*AttributeDefault, len(c.f.Defaults))
	c.longNodes = make(map[string]string)
	for _, d := range c.f.AttributeDefs {
		if d.Relation == "" {
			c.defs[d.Name] = d
		}
	}
	for _, d := range c.f.Defaults {
		if !d.Relation {
			c.defaults[d.Name] = d
		}
	}
	var out []*compiledMessage
	for _, d := range c.f.Messages {
		cm, err := c.message(d)
		if err != nil {
			return nil, err
		}
		if cm != nil {
			out = append(out, cm)
		}
	}
	steps := []func() error{c.valueTypes, c.valueDescs, c.comments, c.attributes, c.muxValues}
	for _, step := range steps {
		if err := step(); err != nil {
			return nil, err
		}
	}
	if d := c.defaults[attrCycleTime]; d != nil && !d.Value.IsString && d.Value.Num > 0 {
		c.defaultCycle = c.cycleTime(d.Pos, d.Value)
	}
	if d := c.defaults[attrSendType]; d != nil {
		c.defaultSend = c.enumValue(d.Pos, attrSendType, d.Value)
	}
	if d := c.defaults[attrFrameFormat]; d != nil {
		c.defaultFrame = c.enumValue(d.Pos, attrFrameFormat, d.Value)
	}
	if d := c.defaults[attrProtocol]; d != nil && c.protocol == "" && d.Value.IsString {
		c.protocol = d.Value.Str
	}
	for _, cm := range out {
		if err := c.finish(cm); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// message compiles a BO_ and its signals, or returns nil for a pseudo
// message that carries no frame.
func (c *fileCompiler) message(d *MessageDef) (*compiledMessage, error) {
	ext := d.ID&extendedFlag != 0
	id := d.ID &^ extendedFlag
	switch {
	case d.Name == independentSignals:
		c.skipped[d.ID] = true
		c.warn(d.Pos, "pseudo-message %s (signals not sent in any frame) skipped", d.Name)
		return nil, nil
	case id > maxExtID:
		c.skipped[d.ID] = true
		c.warn(d.Pos, "message %s: ID %d (0x%X) is no CAN ID (more than 29 bits): message skipped", d.Name, d.ID, d.ID)
		return nil, nil
	case !ext && id > maxStdID:
		// Only an extended ID can be this large: the writer left out
		// the flag (bit 31), as some older tools do.
		c.warn(d.Pos, "message %s: ID %d (0x%X) has more than 11 bits but no extended flag (bit 31): taken as a 29-bit ID", d.Name, id, id)
		ext = true
	}
	if d.Length > MaxLength {
		return nil, c.errorf(d.Pos, "message %s: length %d bytes is more than %d", d.Name, d.Length, MaxLength)
	}
	if prev, ok := c.msgs[d.ID]; ok {
		return nil, c.errorf(d.Pos, "message %s: ID %s is already used by message %s at line %d", d.Name, Key{id, ext}, prev.def.Name, prev.def.Pos.Line)
	}
	m := &Message{Name: d.Name, ID: id, Extended: ext, Length: d.Length, Sender: node(d.Sender), File: c.f.Name}
	cm := &compiledMessage{m: m, def: d, sigs: make(map[string]*compiledSignal, len(d.Signals))}
	var names map[string]bool // every signal name of the message, once a name repeats
	for _, sd := range d.Signals {
		s, err := c.signal(m, sd)
		if err != nil {
			return nil, err
		}
		cs := &compiledSignal{s: s, def: sd}
		cm.order = append(cm.order, cs)
		first, ok := cm.sigs[sd.Name]
		if !ok {
			cm.sigs[sd.Name] = cs
			continue
		}
		// Both are kept, so that no value goes unseen; the later one
		// gets a name of its own, so that each has its own topic.
		if names == nil {
			names = make(map[string]bool, len(d.Signals))
			for _, o := range d.Signals {
				names[o.Name] = true
			}
		}
		s.Name = uniqueName(sd.Name, names)
		last := first
		for last.twin != nil {
			last = last.twin
		}
		last.twin = cs
		c.warn(sd.Pos, "message %s: signal %s is defined again (first at line %d): this one is named %s", d.Name, sd.Name, first.def.Pos.Line, s.Name)
	}
	c.msgs[d.ID] = cm
	return cm, nil
}

// uniqueName returns name_2, name_3, … whichever is first not in names,
// and adds it there.
func uniqueName(name string, names map[string]bool) string {
	for n := 2; ; n++ {
		if u := name + "_" + strconv.Itoa(n); !names[u] {
			names[u] = true
			return u
		}
	}
}

func (c *fileCompiler) signal(m *Message, d *SignalDef) (*Signal, error) {
	if d.Length < 1 || d.Length > 64 {
		return nil, c.errorf(d.Pos, "signal %s.%s: length %d is not 1–64 bits", m.Name, d.Name, d.Length)
	}
	last := lastByte(d.Order, d.Start, d.Length)
	if last >= MaxLength {
		return nil, c.errorf(d.Pos, "signal %s.%s: bits %s reach byte %d, beyond the %d bytes of any CAN frame", m.Name, d.Name, bitRange(d.Order, d.Start, d.Length), last, MaxLength)
	}
	if last >= m.Length {
		c.warn(d.Pos, "signal %s.%s: bits %s reach byte %d, beyond the message length of %d bytes (frames that short flag it truncated)", m.Name, d.Name, bitRange(d.Order, d.Start, d.Length), last, m.Length)
	}
	s := &Signal{
		Name: d.Name, Start: d.Start, Length: d.Length, Order: d.Order, Signed: d.Signed,
		Factor: d.Factor, Offset: d.Offset, Min: d.Min, Max: d.Max, Unit: d.Unit,
		Multiplexer: d.Mux.Switch,
	}
	for _, r := range d.Receivers {
		if r != noNode {
			s.Receivers = append(s.Receivers, r)
		}
	}
	return s, nil
}

// lastByte returns the index of the last byte a signal touches.
//
// Intel signals count up from the start bit (the LSB). Motorola signals
// run from the start bit (the MSB) down to bit 0 of its byte and go on
// at bit 7 of the next byte, DBC's sawtooth numbering:
//
//	byte 0: 7 6 5 4 3 2 1 0   byte 1: 15 14 13 12 11 10 9 8   …
//
// Numbered in that order, left to right, the bits a Motorola signal
// covers are consecutive.
func lastByte(o ByteOrder, start, length int) int {
	if o == LittleEndian {
		return (start + length - 1) / 8
	}
	msb := start/8*8 + 7 - start%8
	return (msb + length - 1) / 8
}

// bitRange formats a signal's bits as the SG_ line writes them:
// "start|length@order".
func bitRange(o ByteOrder, start, length int) string {
	n := 1
	if o == BigEndian {
		n = 0
	}
	return fmt.Sprintf("%d|%d@%d", start, length, n)
}

func node(n string) string {
	if n == noNode {
		return ""
	}
	return n
}

// lookup finds the signal a statement refers to. It warns about unknown
// messages and signals, except those of skipped pseudo-messages.
func (c *fileCompiler) lookup(p Pos, what string, id uint32, name string) (*compiledMessage, *compiledSignal) {
	cm, ok := c.msgs[id]
	if !ok {
		if !c.skipped[id] {
			c.warn(p, "%s refers to message ID %d, which the file does not define: ignored", what, id)
		}
		return nil, nil
	}
	if name == "" {
		return cm, nil
	}
	cs, ok := cm.sigs[name]
	if !ok {
		c.warn(p, "%s refers to signal %s, which message %s does not have: ignored", what, name, cm.def.Name)
		return cm, nil
	}
	return cm, cs
}

func (c *fileCompiler) valueTypes() error {
	for _, d := range c.f.ValueTypes {
		_, cs := c.lookup(d.Pos, "SIG_VALTYPE_", d.ID, d.Signal)
		if cs != nil && (d.Type < 0 || d.Type > 2) {
			c.warn(d.Pos, "signal %s: unknown value type %d (want 0, 1 or 2): ignored", d.Signal, d.Type)
			continue
		}
		for ; cs != nil; cs = cs.twin {
			s := cs.s
			switch d.Type {
			case 0:
				s.Type = Integer
			case 1, 2:
				t, bits := Float32, 32
				if d.Type == 2 {
					t, bits = Float64, 64
				}
				if s.Length != bits {
					return c.errorf(d.Pos, "signal %s: value type %d (IEEE float%d) needs %d bits, the signal has %d", s.Name, d.Type, bits, bits, s.Length)
				}
				s.Type = t
			}
		}
	}
	return nil
}

func (c *fileCompiler) valueDescs() error {
	for _, d := range c.f.ValueDescs {
		if d.Object.Kind != ObjectSignal {
			continue
		}
		_, cs := c.lookup(d.Pos, "VAL_", d.Object.ID, d.Object.Signal)
		if cs == nil {
			continue
		}
		if cs.s.Values != nil {
			c.warn(d.Pos, "signal %s: second VAL_ replaces the first", d.Object.Signal)
		}
		vs := slices.Clone(d.Values)
		// Stable, so that of two equal keys the later one wins below.
		slices.SortStableFunc(vs, func(a, b ValueDescription) int {
			switch {
			case a.Value < b.Value:
				return -1
			case a.Value > b.Value:
				return 1
			}
			return 0
		})
		out := vs[:0]
		for _, v := range vs {
			if n := len(out); n > 0 && out[n-1].Value == v.Value {
				c.warn(d.Pos, "signal %s: value %d is described twice: %s replaces %s", d.Object.Signal, v.Value, termtext.Quote(v.Label), termtext.Quote(out[n-1].Label))
				out[n-1] = v
				continue
			}
			out = append(out, v)
		}
		for ; cs != nil; cs = cs.twin {
			cs.s.Values = out
		}
	}
	return nil
}

func (c *fileCompiler) comments() error {
	for _, d := range c.f.Comments {
		switch d.Object.Kind {
		case ObjectMessage:
			if cm, _ := c.lookup(d.Pos, "CM_", d.Object.ID, ""); cm != nil {
				cm.m.Comment = d.Text
			}
		case ObjectSignal:
			_, cs := c.lookup(d.Pos, "CM_", d.Object.ID, d.Object.Signal)
			for ; cs != nil; cs = cs.twin {
				cs.s.Comment = d.Text
			}
		}
	}
	return nil
}

func (c *fileCompiler) attributes() error {
	for _, d := range c.f.Attributes {
		switch d.Object.Kind {
		case ObjectMessage:
			cm, _ := c.lookup(d.Pos, "BA_ "+d.Name, d.Object.ID, "")
			if cm == nil {
				continue
			}
			switch d.Name {
			case attrCycleTime:
				cm.m.CycleTime, cm.cycleSet = c.cycleTime(d.Pos, d.Value), true
			case attrSendType:
				cm.m.SendType, cm.sendSet = c.enumValue(d.Pos, d.Name, d.Value), true
			case attrLongMsg:
				cm.longName = c.longName(d)
			case attrFrameFormat:
				cm.frameFormat, cm.frameSet = c.enumValue(d.Pos, d.Name, d.Value), true
			}
		case ObjectSignal:
			if d.Name != attrLongSignal {
				continue
			}
			if _, cs := c.lookup(d.Pos, "BA_ "+d.Name, d.Object.ID, d.Object.Signal); cs != nil {
				cs.longName = c.longName(d)
			}
		case ObjectNode:
			if d.Name == attrLongNode {
				c.longNodes[d.Object.Name] = c.longName(d)
			}
		case ObjectNetwork:
			if d.Name == attrProtocol && d.Value.IsString {
				c.protocol = d.Value.Str
			}
		}
	}
	return nil
}

func (c *fileCompiler) longName(d *AttributeValue) string {
	if !d.Value.IsString || d.Value.Str == "" {
		c.warn(d.Pos, "%s must be a non-empty string: ignored", d.Name)
		return ""
	}
	return d.Value.Str
}

// cycleTime converts a GenMsgCycleTime value in milliseconds.
func (c *fileCompiler) cycleTime(p Pos, v Literal) time.Duration {
	ms := v.Num
	if v.IsString {
		c.warn(p, "%s %s is a string, not a number: ignored", attrCycleTime, termtext.Quote(v.Str))
		return 0
	}
	if ms < 0 || ms > math.MaxInt64/float64(time.Millisecond) {
		c.warn(p, "%s %g ms is out of range: ignored", attrCycleTime, ms)
		return 0
	}
	return time.Duration(math.Round(ms * float64(time.Millisecond)))
}

// enumValue resolves an attribute value to text: an ENUM's index
// becomes its name, a string stays as written.
func (c *fileCompiler) enumValue(p Pos, name string, v Literal) string {
	if v.IsString {
		return v.Str
	}
	def := c.defs[name]
	if def == nil || def.Type != "ENUM" {
		return fmt.Sprint(v.Num)
	}
	i := int(v.Num)
	if float64(i) != v.Num || i < 0 || i >= len(def.Enum) {
		c.warn(p, "%s %g is not an index of its ENUM (%d values): ignored", name, v.Num, len(def.Enum))
		return ""
	}
	return def.Enum[i]
}

func (c *fileCompiler) muxValues() error {
	for _, d := range c.f.MuxValues {
		cm, cs := c.lookup(d.Pos, "SG_MUL_VAL_", d.ID, d.Signal)
		if cs == nil {
			continue
		}
		for _, r := range d.Ranges {
			if r.Lo > r.Hi {
				return c.errorf(d.Pos, "signal %s: multiplexer range %d-%d is empty (start after end)", d.Signal, r.Lo, r.Hi)
			}
		}
		if cm.muxDefs == nil {
			cm.muxDefs = make(map[string]*MuxValueDef)
		}
		prev, ok := cm.muxDefs[d.Signal]
		switch {
		case !ok:
			cm.muxDefs[d.Signal] = d
		case prev.Switch == d.Switch:
			merged := *prev
			merged.Ranges = append(slices.Clip(prev.Ranges), d.Ranges...)
			cm.muxDefs[d.Signal] = &merged
		default:
			return c.errorf(d.Pos, "signal %s: SG_MUL_VAL_ names switch %s, but line %d names %s", d.Signal, d.Switch, prev.Pos.Line, prev.Switch)
		}
	}
	return nil
}

// finish applies defaults, resolves multiplexing, orders the signals
// and applies long names.
func (c *fileCompiler) finish(cm *compiledMessage) error {
	m := cm.m
	if !cm.cycleSet && c.defaultCycle > 0 {
		m.CycleTime, m.CycleTimeDefault = c.defaultCycle, true
	}
	if !cm.sendSet {
		m.SendType = c.defaultSend
	}
	c.j1939(cm)
	if err := c.multiplex(cm); err != nil {
		return err
	}
	if err := c.order(cm); err != nil {
		return err
	}
	if cm.longName != "" {
		m.Name = cm.longName
	}
	if n := c.longNodes[m.Sender]; n != "" {
		m.Sender = n
	}
	seen := make(map[string]*compiledSignal, len(cm.order))
	for _, cs := range cm.order {
		if cs.longName != "" {
			cs.s.Name = cs.longName
		}
		for i, r := range cs.s.Receivers {
			if n := c.longNodes[r]; n != "" {
				cs.s.Receivers[i] = n
			}
		}
		if prev, ok := seen[cs.s.Name]; ok {
			return c.errorf(cs.def.Pos, "message %s: signals %s and %s (line %d) both have the long name %s", m.Name, cs.def.Name, prev.def.Name, prev.def.Pos.Line, cs.s.Name)
		}
		seen[cs.s.Name] = cs
	}
	for _, cs := range cm.order {
		c.oddities(m, cs)
	}
	return nil
}

// oddities warns about a signal that loads but cannot mean what it says:
// a factor of 0, a range whose minimum is above its maximum, a
// multiplexer value its switch can never hold, and a scale whose integer
// values overflow int64.
func (c *fileCompiler) oddities(m *Message, cs *compiledSignal) {
	s, p := cs.s, cs.def.Pos
	if s.Factor == 0 {
		c.warn(p, "signal %s.%s: factor 0: every value is the offset %g, whatever the frame holds", m.Name, s.Name, s.Offset)
	}
	if s.Min > s.Max {
		c.warn(p, "signal %s.%s: minimum %g is more than maximum %g: the range is ignored, no value is flagged out of range", m.Name, s.Name, s.Min, s.Max)
	}
	if s.Mux != nil && s.Mux.Switch != nil {
		sw := s.Mux.Switch
		for _, r := range s.Mux.Ranges {
			if !switchCanHold(sw, r) {
				what := strconv.FormatUint(r.Lo, 10)
				if r.Hi != r.Lo {
					what += "–" + strconv.FormatUint(r.Hi, 10)
				}
				c.warn(p, "signal %s.%s: multiplexer value %s can never occur: switch %s has %d bits (%s): the signal is never decoded for it", m.Name, s.Name, what, sw.Name, sw.Length, rawRange(sw))
			}
		}
	}
	if s.Type == Integer {
		if lo, hi, ok := scaledRange(s); !ok {
			c.warn(p, "signal %s.%s: raw × %g + %g reaches %s to %s, beyond the 64-bit integers: such values are not exact (decoded as rounded floats)", m.Name, s.Name, s.Factor, s.Offset, lo, hi)
		}
	}
}

// switchCanHold reports whether a multiplexer switch's raw value (as the
// decoder reads it: sign-extended when signed) can lie in r.
func switchCanHold(sw *Signal, r MuxRange) bool {
	if sw.Length >= 64 {
		return true
	}
	if !sw.Signed {
		return r.Lo <= 1<<sw.Length-1
	}
	// Signed: 0 … 2^(n-1)-1, and the negative values, which are above
	// 2^64 - 2^(n-1) as unsigned.
	half := uint64(1) << (sw.Length - 1)
	return r.Lo <= half-1 || r.Hi >= -half
}

// rawRange formats the raw values a signal can hold.
func rawRange(s *Signal) string {
	if s.Signed {
		return fmt.Sprintf("raw %d to %d", -(int64(1) << (s.Length - 1)), int64(1)<<(s.Length-1)-1)
	}
	return fmt.Sprintf("raw 0 to %d", uint64(1)<<s.Length-1)
}

// scaledRange returns the lowest and highest raw × Factor + Offset of an
// integer signal with an integral factor and offset, and whether every
// one fits in int64 (an unsigned 64-bit raw value with factor 1 and
// offset 0 is read as it is, so it fits too). A fractional factor or
// offset makes floats of every value, which is no overflow.
func scaledRange(s *Signal) (lo, hi string, ok bool) {
	if s.Factor != math.Trunc(s.Factor) || s.Offset != math.Trunc(s.Offset) || math.IsInf(s.Factor, 0) || math.IsInf(s.Offset, 0) {
		return "", "", true
	}
	if !s.Signed && s.Length == 64 && s.Factor == 1 && s.Offset == 0 {
		return "", "", true
	}
	rlo, rhi := new(big.Int), new(big.Int).Lsh(big.NewInt(1), uint(s.Length))
	if s.Signed {
		rhi.Rsh(rhi, 1)
		rlo.Neg(rhi)
	}
	rhi.Sub(rhi, big.NewInt(1))
	f, _ := big.NewFloat(s.Factor).Int(nil)
	o, _ := big.NewFloat(s.Offset).Int(nil)
	a := new(big.Int).Add(new(big.Int).Mul(rlo, f), o)
	b := new(big.Int).Add(new(big.Int).Mul(rhi, f), o)
	if a.Cmp(b) > 0 {
		a, b = b, a
	}
	minI, maxI := big.NewInt(math.MinInt64), big.NewInt(math.MaxInt64)
	return a.String(), b.String(), a.Cmp(minI) >= 0 && b.Cmp(maxI) <= 0
}

// j1939 sets Message.J1939. The message's own VFrameFormat decides
// where it has one; otherwise a J1939 ProtocolType or a J1939PG default
// VFrameFormat makes it a parameter group. J1939 IDs have 29 bits, so an
// 11-bit message never is one.
func (c *fileCompiler) j1939(cm *compiledMessage) {
	m := cm.m
	pg := strings.EqualFold(c.protocol, protocolJ1939) || c.defaultFrame == frameJ1939
	if cm.frameSet {
		pg = cm.frameFormat == frameJ1939
	}
	if pg && !m.Extended {
		if cm.frameSet {
			c.warn(cm.def.Pos, "message %s: VFrameFormat %s, but ID %s has 11 bits: matched by ID only", m.Name, frameJ1939, Key{m.ID, false})
		}
		pg = false
	}
	m.J1939 = pg
}

// multiplex sets each signal's Mux. SG_MUL_VAL_ decides where it
// exists; otherwise "mN" refers to the message's single plain "M"
// switch.
func (c *fileCompiler) multiplex(cm *compiledMessage) error {
	var plain []*compiledSignal
	for _, cs := range cm.order {
		// A bare "mM" that no SG_MUL_VAL_ multiplexes is a plain switch.
		mx := cs.def.Mux
		if mx.Switch && (!mx.Multiplexed || mx.Bare && cm.muxDefs[cs.def.Name] == nil) {
			plain = append(plain, cs)
		}
	}
	for _, cs := range cm.order {
		d := cs.def
		if md := cm.muxDefs[d.Name]; md != nil {
			sw := cm.sigs[md.Switch]
			switch {
			case sw == nil:
				return c.errorf(md.Pos, "signal %s: multiplexer switch %s is not a signal of message %s", d.Name, md.Switch, cm.def.Name)
			case sw == cs:
				return c.errorf(md.Pos, "signal %s cannot be its own multiplexer switch", d.Name)
			}
			if !sw.s.Multiplexer {
				c.warn(md.Pos, "signal %s is used as a multiplexer switch, but its SG_ line (line %d) does not say M: taken as a switch", sw.def.Name, sw.def.Pos.Line)
				sw.s.Multiplexer = true
			}
			if !d.Mux.Multiplexed {
				c.warn(md.Pos, "signal %s is multiplexed by SG_MUL_VAL_, but its SG_ line (line %d) has no m<value>: taken as multiplexed", d.Name, d.Pos.Line)
			}
			if d.Mux.Bare {
				c.warn(d.Mux.Pos, "signal %s: multiplexer indicator %s has no value: taken from SG_MUL_VAL_ (line %d)", d.Name, termtext.Quote(d.Mux.Text()), md.Pos.Line)
			}
			cs.s.Mux = &Mux{Switch: sw.s, Ranges: slices.Clone(md.Ranges)}
			continue
		}
		if !d.Mux.Multiplexed {
			continue
		}
		if d.Mux.Bare {
			// "m" names no value, and no SG_MUL_VAL_ gives any: decoding
			// the signal in every frame hides nothing. "mM" is then a
			// plain switch, as cantools reads both.
			what := "not multiplexed"
			if d.Mux.Switch {
				what = "a plain switch (M)"
			}
			c.warn(d.Mux.Pos, "signal %s: multiplexer indicator %s has no value and no SG_MUL_VAL_ gives one: taken as %s", d.Name, termtext.Quote(d.Mux.Text()), what)
			continue
		}
		switch len(plain) {
		case 1:
			cs.s.Mux = &Mux{Switch: plain[0].s, Ranges: []MuxRange{{d.Mux.Value, d.Mux.Value}}}
		case 0:
			return c.errorf(d.Pos, "signal %s is multiplexed (m%d) but message %s has no multiplexer switch (M) and no SG_MUL_VAL_ names one", d.Name, d.Mux.Value, cm.def.Name)
		default:
			names := make([]string, len(plain))
			for i, p := range plain {
				names[i] = p.def.Name
			}
			return c.errorf(d.Pos, "signal %s is multiplexed (m%d) but message %s has %d multiplexer switches (%s) and no SG_MUL_VAL_ says which", d.Name, d.Mux.Value, cm.def.Name, len(plain), strings.Join(names, ", "))
		}
	}
	return nil
}

// order lists the message's signals in DBC order, except that a switch
// moves up to just before the first signal it selects, so that decoding
// in order always meets a switch before what depends on it.
func (c *fileCompiler) order(cm *compiledMessage) error {
	bySignal := make(map[*Signal]*compiledSignal, len(cm.order))
	for _, cs := range cm.order {
		bySignal[cs.s] = cs
	}
	out := make([]*Signal, 0, len(cm.order))
	var place func(cs *compiledSignal) error
	place = func(cs *compiledSignal) error {
		switch cs.state {
		case 2:
			return nil
		case 1:
			return c.errorf(cs.def.Pos, "message %s: multiplexer switches form a cycle through signal %s", cm.def.Name, cs.def.Name)
		}
		cs.state = 1
		if cs.s.Mux != nil {
			if err := place(bySignal[cs.s.Mux.Switch]); err != nil {
				return err
			}
		}
		cs.state = 2
		out = append(out, cs.s)
		return nil
	}
	for _, cs := range cm.order {
		if err := place(cs); err != nil {
			return err
		}
	}
	cm.m.Signals = out
	return nil
}

// sameMessage reports whether two messages decode alike and carry the
// same names: the test for a message repeated in two files.
func sameMessage(a, b *Message) bool {
	if a.Name != b.Name || a.ID != b.ID || a.Extended != b.Extended || a.J1939 != b.J1939 || a.Length != b.Length ||
		a.Sender != b.Sender || a.CycleTime != b.CycleTime || a.SendType != b.SendType ||
		len(a.Signals) != len(b.Signals) {
		return false
	}
	for i, x := range a.Signals {
		y := b.Signals[i]
		if x.Name != y.Name || x.Start != y.Start || x.Length != y.Length || x.Order != y.Order ||
			x.Signed != y.Signed || x.Type != y.Type || x.Factor != y.Factor || x.Offset != y.Offset ||
			x.Min != y.Min || x.Max != y.Max || x.Unit != y.Unit || x.Multiplexer != y.Multiplexer ||
			!slices.Equal(x.Values, y.Values) || (x.Mux == nil) != (y.Mux == nil) {
			return false
		}
		if x.Mux != nil && (x.Mux.Switch.Name != y.Mux.Switch.Name || !slices.Equal(x.Mux.Ranges, y.Mux.Ranges)) {
			return false
		}
	}
	return true
}
