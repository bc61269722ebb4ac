package dbc

import (
	"fmt"
	"strconv"
	"time"
)

// ByteOrder is a signal's byte order.
type ByteOrder uint8

// Byte orders. DBC writes Intel as "@1" and Motorola as "@0".
const (
	// LittleEndian (Intel): the start bit is the least significant bit.
	LittleEndian ByteOrder = iota
	// BigEndian (Motorola): the start bit is the most significant bit, in
	// DBC's sawtooth bit numbering (bit 7 of byte 0 is bit 7, the next
	// bit down is 6, …, after bit 0 of byte 0 comes bit 15 of byte 1).
	BigEndian
)

// ValueType is how a signal's raw bits are interpreted.
type ValueType uint8

// Value types, from the signal's sign and SIG_VALTYPE_.
const (
	// Integer is a plain integer (signed or unsigned by Signal.Signed).
	Integer ValueType = iota
	// Float32 is an IEEE 754 single (SIG_VALTYPE_ 1); Length is 32.
	Float32
	// Float64 is an IEEE 754 double (SIG_VALTYPE_ 2); Length is 64.
	Float64
)

// ValueDescription is one entry of a signal's value table (VAL_).
type ValueDescription struct {
	Value int64
	Label string
}

// MuxRange is an inclusive range of multiplexer values.
type MuxRange struct {
	Lo, Hi uint64
}

// Mux says when a multiplexed signal is present: when the raw value of
// the multiplexer signal Switch lies in one of Ranges (and Switch itself
// is present, for cascaded multiplexers).
type Mux struct {
	// Switch is the multiplexer signal that selects this one.
	Switch *Signal
	// Ranges are the multiplexer raw values that select this signal. A
	// plain "m3" is the single range {3, 3}; SG_MUL_VAL_ may give several.
	Ranges []MuxRange
}

// Matches reports whether raw multiplexer value v selects the signal.
func (m *Mux) Matches(v uint64) bool {
	for _, r := range m.Ranges {
		if v >= r.Lo && v <= r.Hi {
			return true
		}
	}
	return false
}

// Signal is a compiled DBC signal. It is immutable once compiled.
type Signal struct {
	// Name is the signal's name; Message is the message that carries it.
	Name    string
	Message *Message
	// Index is the signal's position in Database.Signals, a dense key
	// for per-signal state kept in slices.
	Index int
	// Start is the DBC start bit; Length the length in bits (1–64).
	Start, Length int
	Order         ByteOrder
	Signed        bool
	Type          ValueType
	// Factor and Offset map raw to physical: raw × Factor + Offset.
	Factor, Offset float64
	// Min and Max are the DBC's physical range; a range applies only
	// where Min < Max.
	Min, Max float64
	Unit     string
	// Values is the value table (VAL_), sorted by Value.
	Values  []ValueDescription
	Comment string
	// Receivers are the nodes that receive the signal.
	Receivers []string
	// Multiplexer is true for a multiplexer switch ("M", or "mNM").
	Multiplexer bool
	// Mux is non-nil for a multiplexed signal ("mN", "mNM" or SG_MUL_VAL_).
	Mux *Mux
}

// FullName returns "message.signal".
func (s *Signal) FullName() string { return s.Message.Name + "." + s.Name }

// Label returns the value-table label for raw value v, if any.
func (s *Signal) Label(v int64) (string, bool) {
	lo, hi := 0, len(s.Values)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if s.Values[m].Value < v {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < len(s.Values) && s.Values[lo].Value == v {
		return s.Values[lo].Label, true
	}
	return "", false
}

// Message is a compiled DBC message. It is immutable once compiled.
type Message struct {
	Name string
	// ID is the arbitration ID without flag bits; Extended says whether
	// it is a 29-bit ID.
	ID       uint32
	Extended bool
	// Length is the DBC's data length in bytes (up to 64).
	Length int
	Sender string
	// Signals in DBC order; multiplexer switches come before the signals
	// they select.
	Signals []*Signal
	Comment string
	// CycleTime is GenMsgCycleTime, zero when the DBC has none. A
	// message without its own GenMsgCycleTime takes the attribute's
	// default (BA_DEF_DEF_) when that is above zero, as DBC tools do.
	CycleTime time.Duration
	// CycleTimeDefault is true when CycleTime is that default rather
	// than a value set on this message.
	CycleTimeDefault bool
	// SendType is GenMsgSendType as written ("Cyclic", "Event", …), or "";
	// an ENUM index is resolved to its name, and a message without its
	// own value takes the attribute's default.
	SendType string
	// File is the DBC file the message came from.
	File string
	// J1939 is true for a 29-bit message that is a J1939 parameter
	// group: its VFrameFormat is J1939PG, or it has none and the file's
	// ProtocolType is J1939. Frames match it by PGN (see PGN), not only
	// by ID.
	J1939 bool
}

// PGN returns the message's J1939 parameter group number (see PGN).
func (m *Message) PGN() uint32 { return PGN(m.ID) }

// PGN returns the J1939 parameter group number of a 29-bit CAN ID:
//
//	 28  26 25  24  23        16 15        8 7         0
//	+------+---+---+------------+-----------+-----------+
//	| prio |EDP| DP|     PF     |    PS     |    SA     |
//	+------+---+---+------------+-----------+-----------+
//
// PGN = EDP, DP, PF and, when PF ≥ 240 (PDU2, broadcast), PS. When
// PF < 240 (PDU1) PS is the destination address, not part of the PGN.
// Priority and source address are never part of it.
func PGN(id uint32) uint32 {
	pgn := id >> 8 & 0x3FF00
	if pf := id >> 16 & 0xFF; pf >= 240 {
		pgn |= id >> 8 & 0xFF
	}
	return pgn
}

// Key is a message's identity on a bus: the arbitration ID and whether it
// is extended.
type Key struct {
	ID       uint32
	Extended bool
}

// Database is a compiled, immutable set of messages from one or more DBC
// files, indexed by CAN ID.
type Database struct {
	// Messages in load order.
	Messages []*Message
	// Signals of all messages, indexed by Signal.Index.
	Signals []*Signal
	// Warnings are the quirks tolerated while loading.
	Warnings []Warning
	byKey    map[Key]*Message
	std      [2048]*Message // 11-bit IDs: direct lookup
	// byPGN holds the J1939 messages by PGN, the first of each PGN in
	// load order; nil when there are none.
	byPGN map[uint32]*Message
}

// Message returns the message with the given ID and format, or nil.
func (db *Database) Message(id uint32, extended bool) *Message {
	if !extended {
		if id < uint32(len(db.std)) {
			return db.std[id]
		}
		return nil
	}
	return db.byKey[Key{id, true}]
}

// MessageByPGN returns the first J1939 message (in load order) whose
// PGN is pgn, or nil. A 29-bit frame whose ID is not in the database
// belongs to the J1939 message with its PGN (PGN(id)).
func (db *Database) MessageByPGN(pgn uint32) *Message {
	return db.byPGN[pgn]
}

// Warning is a quirk the loader tolerated: where it is and what it was.
type Warning struct {
	File         string
	Line, Column int
	Msg          string
}

func (w Warning) String() string {
	return w.File + ":" + strconv.Itoa(w.Line) + ":" + strconv.Itoa(w.Column) + ": " + w.Msg
}

// NewDatabase indexes compiled messages: it sets each signal's Message and
// Index and builds the ID lookup and, for J1939 messages, the PGN lookup. It fails when two messages share an ID
// and format. The messages must not be changed afterwards.
func NewDatabase(msgs []*Message) (*Database, error) {
	db := &Database{Messages: msgs, byKey: make(map[Key]*Message, len(msgs))}
	for _, m := range msgs {
		k := Key{m.ID, m.Extended}
		if prev, ok := db.byKey[k]; ok {
			return nil, fmt.Errorf("dbc: message %s (%s) and %s (%s) share ID %s", prev.Name, prev.File, m.Name, m.File, k)
		}
		db.byKey[k] = m
		if !m.Extended && m.ID < uint32(len(db.std)) {
			db.std[m.ID] = m
		}
		if m.J1939 && m.Extended {
			if db.byPGN == nil {
				db.byPGN = make(map[uint32]*Message)
			}
			if _, ok := db.byPGN[m.PGN()]; !ok {
				db.byPGN[m.PGN()] = m
			}
		}
		for _, s := range m.Signals {
			s.Message = m
			s.Index = len(db.Signals)
			db.Signals = append(db.Signals, s)
		}
	}
	return db, nil
}

// String formats the key as candump does: 3 hex digits for 11-bit IDs, 8
// for 29-bit IDs.
func (k Key) String() string {
	if k.Extended {
		return fmt.Sprintf("%08X", k.ID)
	}
	return fmt.Sprintf("%03X", k.ID)
}
