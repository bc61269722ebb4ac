package dbc

import "strconv"

// Pos is a place in a DBC file: line and column, both from 1. Columns
// count characters, not bytes.
type Pos struct {
	Line, Column int
}

// File is the syntax tree of one DBC file: its definitions as written,
// in file order, each with its position. Parse builds it; Compile turns
// one or more into a Database. Statements candec has no use for
// (signal types, categories, filters, relation attributes) are checked
// for well-formedness where cheap and then dropped.
type File struct {
	// Name is the file name given to Parse; errors and warnings use it.
	Name    string
	Version string
	// Nodes are the network nodes of BU_.
	Nodes       []string
	ValueTables []*ValueTableDef
	Messages    []*MessageDef
	// Transmitters are the extra senders of BO_TX_BU_.
	Transmitters  []*TransmittersDef
	EnvVars       []*EnvVarDef
	Comments      []*CommentDef
	AttributeDefs []*AttributeDef
	Defaults      []*AttributeDefault
	Attributes    []*AttributeValue
	ValueDescs    []*ValueDescsDef
	ValueTypes    []*ValueTypeDef
	MuxValues     []*MuxValueDef
	SignalGroups  []*SignalGroupDef
	Warnings      []Warning
}

// ObjectKind says what a comment or attribute belongs to.
type ObjectKind uint8

// Object kinds, named after their DBC keywords.
const (
	// ObjectNetwork is the whole file (no keyword).
	ObjectNetwork ObjectKind = iota
	ObjectNode               // BU_
	ObjectMessage            // BO_
	ObjectSignal             // SG_
	ObjectEnvVar             // EV_
)

// String returns the kind's DBC keyword, or "network".
func (k ObjectKind) String() string {
	switch k {
	case ObjectNode:
		return "BU_"
	case ObjectMessage:
		return "BO_"
	case ObjectSignal:
		return "SG_"
	case ObjectEnvVar:
		return "EV_"
	}
	return "network"
}

// Object names what a comment or attribute value is attached to. Only
// the fields of its Kind are set.
type Object struct {
	Kind ObjectKind
	// Name is the node or environment variable name.
	Name string
	// ID is the message ID as written (bit 31 set for extended IDs).
	ID     uint32
	Signal string
}

// ValueTableDef is a named value table (VAL_TABLE_).
type ValueTableDef struct {
	Pos    Pos
	Name   string
	Values []ValueDescription
}

// MessageDef is a message (BO_) with its signals.
type MessageDef struct {
	Pos Pos
	// ID as written: bit 31 marks an extended ID.
	ID     uint32
	Name   string
	Length int
	// Sender is the transmitting node as written ("Vector__XXX" for
	// none).
	Sender  string
	Signals []*SignalDef
}

// MuxIndicator is a signal's multiplexer indicator: "M" is a switch,
// "m3" is selected by switch value 3, "m3M" is both. "m" and "mM"
// without a value are Bare: multiplexed only where SG_MUL_VAL_ says so.
type MuxIndicator struct {
	Switch      bool
	Multiplexed bool
	Value       uint64
	// Bare marks "m" or "mM": Multiplexed, with no Value.
	Bare bool
	// Pos is where the indicator is written, when there is one.
	Pos Pos
}

// Text returns the indicator as written in a SG_ line ("" for none).
func (m MuxIndicator) Text() string {
	switch {
	case !m.Multiplexed && m.Switch:
		return "M"
	case !m.Multiplexed:
		return ""
	}
	t := "m"
	if !m.Bare {
		t += strconv.FormatUint(m.Value, 10)
	}
	if m.Switch {
		t += "M"
	}
	return t
}

// SignalDef is a signal (SG_) as written.
type SignalDef struct {
	Pos           Pos
	Name          string
	Mux           MuxIndicator
	Start, Length int
	Order         ByteOrder
	Signed        bool
	Factor        float64
	Offset        float64
	Min, Max      float64
	Unit          string
	Receivers     []string
}

// TransmittersDef lists further senders of a message (BO_TX_BU_).
type TransmittersDef struct {
	Pos   Pos
	ID    uint32
	Nodes []string
}

// EnvVarDef is an environment variable (EV_).
type EnvVarDef struct {
	Pos      Pos
	Name     string
	Type     int
	Min, Max float64
	Unit     string
	Initial  float64
	ID       uint64
	Access   string
	Nodes    []string
}

// CommentDef is a comment (CM_).
type CommentDef struct {
	Pos    Pos
	Object Object
	Text   string
}

// AttributeDef defines an attribute (BA_DEF_ or BA_DEF_REL_).
type AttributeDef struct {
	Pos Pos
	// Object is what the attribute applies to; for relation
	// attributes it is ObjectNetwork and Relation names the relation.
	Object   ObjectKind
	Relation string
	Name     string
	// Type is INT, HEX, FLOAT, STRING or ENUM.
	Type     string
	Min, Max float64
	// Enum holds the names of an ENUM; values index into it.
	Enum []string
}

// Literal is an attribute value: a number or a string.
type Literal struct {
	IsString bool
	Str      string
	Num      float64
}

// AttributeDefault is an attribute's default (BA_DEF_DEF_ or
// BA_DEF_DEF_REL_).
type AttributeDefault struct {
	Pos      Pos
	Name     string
	Relation bool
	Value    Literal
}

// AttributeValue sets an attribute on an object (BA_).
type AttributeValue struct {
	Pos    Pos
	Name   string
	Object Object
	Value  Literal
}

// ValueDescsDef is a signal's or environment variable's value table
// (VAL_).
type ValueDescsDef struct {
	Pos Pos
	// Object is ObjectSignal (ID and Signal set) or ObjectEnvVar.
	Object Object
	Values []ValueDescription
}

// ValueTypeDef sets a signal's value type (SIG_VALTYPE_): 0 integer,
// 1 IEEE float32, 2 IEEE float64.
type ValueTypeDef struct {
	Pos    Pos
	ID     uint32
	Signal string
	Type   int
}

// MuxValueDef is an extended multiplexing entry (SG_MUL_VAL_): Signal
// is present when Switch has a raw value in one of Ranges.
type MuxValueDef struct {
	Pos    Pos
	ID     uint32
	Signal string
	Switch string
	Ranges []MuxRange
}

// SignalGroupDef is a signal group (SIG_GROUP_).
type SignalGroupDef struct {
	Pos         Pos
	ID          uint32
	Name        string
	Repetitions int
	Signals     []string
}
