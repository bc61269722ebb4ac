// Package dbc loads DBC files and compiles them into an immutable
// Database indexed by CAN ID.
//
// Parse turns one file into a syntax tree (File) with the position of
// every definition; Compile turns one or more parsed files into a
// Database; Load does both for files on disk. A Database gives O(1)
// lookup by ID (11-bit and 29-bit IDs kept apart), signals with a dense
// Index for per-signal state in slices, and, per message, the signals
// in an order where every multiplexer switch comes before the signals
// it selects.
//
// # Errors
//
// Every problem that stops loading is an *Error whose text reads
// "file:line:col: what is wrong". It wraps ErrSyntax (text that does not
// follow the grammar), ErrInvalid (a definition that cannot be decoded:
// a signal longer than 64 bits or beyond any frame, a float signal that
// is not 32 or 64 bits, a duplicate ID, a multiplexed signal
// whose switch cannot be told, a cycle of switches), ErrConflict (two
// files that define one ID differently) or, from Load only,
// ErrNoMessages (files that define no message, or a file that defines
// nothing at all: a capture or a log given as a DBC).
//
// # Tolerated quirks
//
// Real DBC files are messy. The parser is candec's own, lenient where
// leniency cannot change a decoded value, and each thing it tolerates
// becomes a Warning (file, line, column, text) in Database.Warnings:
//
//   - Text that is not valid UTF-8 is read as Windows-1252 (cp1252),
//     the encoding of Vector's tools. Columns count characters, so they
//     match the original bytes.
//   - A statement with an unknown keyword is skipped, up to its ";" or
//     the next keyword at the start of a line. So is a malformed
//     statement that cannot change how a frame decodes: VERSION, BU_,
//     VAL_TABLE_, BO_TX_BU_, EV_, CM_, BA_DEF_, BA_DEF_DEF_, BA_ and their
//     _REL_ forms, SIG_GROUP_. A malformed BO_, SG_, VAL_, SIG_VALTYPE_ or
//     SG_MUL_VAL_ is an error.
//   - A statement whose closing ";" is missing ends at the next keyword
//     at the start of a line.
//   - Attribute names are any string ("NWM-WakeupAllowed"); an
//     attribute value's type is not checked against its definition.
//   - EV_ accepts any access type (DUMMY_NODE_VECTOR8000 and others).
//   - Pseudo-messages that carry no frame are left out: the one named
//     VECTOR__INDEPENDENT_SIG_MSG and any whose ID has more than 29 bits
//     after the extended flag (4294967295 = 0xFFFFFFFF). Comments,
//     values and attributes that refer to them are ignored quietly.
//   - An ID above 0x7FF without the extended flag (bit 31) can only be
//     a 29-bit ID whose writer left the flag out; it is taken as one.
//   - A signal that fits in 64 bytes but not in its message's length is
//     kept; a decoder flags it as truncated on frames that short.
//   - SG_MUL_VAL_ naming a switch whose SG_ line lacks "M", or a signal
//     whose SG_ line lacks "m<value>", is taken as written in
//     SG_MUL_VAL_.
//   - A value described twice in one VAL_ keeps the later label; a
//     second VAL_ for a signal replaces the first; a value that is not
//     an integer is dropped.
//   - References to messages or signals the file does not define (in
//     CM_, VAL_, BA_, SIG_VALTYPE_, SG_MUL_VAL_) are ignored.
//   - The same message in two files, identical in every field that
//     decoding or naming uses, is kept once.
//   - "//" starts a comment to the end of the line (not DBC, but seen in
//     hand-edited files).
//   - A signal name written twice in one message keeps both signals: the
//     first keeps the name, a later one is named name_2 (name_3, …, the
//     first such name the message does not use). CM_, VAL_, BA_,
//     SIG_VALTYPE_ and SG_MUL_VAL_ that name the signal apply to each
//     (as cantools, whose statements name signals, not positions); as a
//     switch, and for SystemSignalLongSymbol, the name means the first.
//   - A multiplexer indicator without a value ("m", "mM") takes its
//     values from SG_MUL_VAL_; where none names the signal, "m" is taken
//     as not multiplexed (decoded in every frame) and "mM" as a plain
//     switch "M", as cantools reads them.
//   - A signal that cannot mean what it says is kept as written, with a
//     warning: a factor of 0 (every value is the offset), a minimum
//     above its maximum (no range is checked), a multiplexer value its
//     switch's bits can never hold (the signal is never decoded for it),
//     and an integer scale whose values pass the 64-bit integers (they
//     are decoded as rounded floats, not exact).
//
// Valid statements candec has no use for (SIG_TYPE_REF_, SGTYPE_,
// CAT_DEF_, FILTER, ENVVAR_DATA_, …) are skipped without a warning.
//
// # Multiplexing
//
// A signal marked "M" is a switch; "m3" is present when the message's
// single plain switch has raw value 3. Extended multiplexing marks a
// switch that is itself multiplexed "m3M" and names, per signal, the
// switch and the value ranges that select it in SG_MUL_VAL_; where an
// SG_MUL_VAL_ exists it overrides the SG_ line's value. Signal.Mux holds
// the switch and the ranges, so a decoder checks a switch's value and,
// for cascades, that the switch itself was present.
//
// # Attributes
//
// Message.CycleTime comes from GenMsgCycleTime in milliseconds and
// Message.SendType from GenMsgSendType, with an ENUM index resolved to
// its name. A message without its own value takes the attribute's
// BA_DEF_DEF_ default, as DBC tools show it (a cycle time only when the
// default is above zero); Message.CycleTimeDefault tells such a cycle
// time apart. SystemMessageLongSymbol, SystemSignalLongSymbol and
// SystemNodeLongSymbol replace names that DBC's 32-character limit cut
// short.
//
// # J1939
//
// Message.J1939 marks a 29-bit message that is a J1939 parameter group:
// its VFrameFormat (an ENUM, resolved by name) is J1939PG, or it has no
// VFrameFormat of its own and the file's ProtocolType is "J1939" (or
// VFrameFormat's default is J1939PG). A frame whose ID is not in the
// database belongs to the J1939 message with its PGN (PGN, MessageByPGN),
// whatever its priority, source address and, for PDU1, destination.
// Two J1939 messages with one PGN keep the first for such frames, with
// a warning.
//
// # Buses
//
// BusFiles is what every candec command's --dbc (and the service's dbc
// key) says: "[IFACE=]FILE[,...]", files for every interface or for one
// interface alone; it is a flag.Value. LoadBuses loads each interface's
// files (Buses), and Buses.Merged makes one Database of every
// interface's messages for a consumer that decodes with one database,
// giving a message that another interface's DBC defines under the same
// ID an ID of its own (see decoder.Selector, which chooses and rekeys
// the frames for it).
package dbc
