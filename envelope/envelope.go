package envelope

import (
	"errors"
	"fmt"
	"math"
)

// Encoding is an envelope's wire encoding.
type Encoding uint8

// Encodings. JSON is the default.
const (
	// JSON is UTF-8 JSON, one object per envelope.
	JSON Encoding = iota
	// Msgpack is MessagePack, one map per envelope with the JSON keys.
	Msgpack
)

// Content types set on MQTT v5 publishes (the ContentType property).
const (
	ContentTypeJSON    = "application/json"
	ContentTypeMsgpack = "application/msgpack"
)

// ContentType returns the MQTT v5 content type of the encoding.
func (e Encoding) ContentType() string {
	if e == Msgpack {
		return ContentTypeMsgpack
	}
	return ContentTypeJSON
}

// String returns "json" or "msgpack", the names ParseEncoding accepts.
func (e Encoding) String() string {
	switch e {
	case JSON:
		return "json"
	case Msgpack:
		return "msgpack"
	}
	return fmt.Sprintf("Encoding(%d)", uint8(e))
}

// ParseEncoding reads an encoding name: "json" or "msgpack" (also
// "messagepack"), or a content type such as "application/json".
func ParseEncoding(s string) (Encoding, error) {
	switch s {
	case "json", "JSON", ContentTypeJSON:
		return JSON, nil
	case "msgpack", "messagepack", "MessagePack", ContentTypeMsgpack, "application/x-msgpack", "application/vnd.msgpack":
		return Msgpack, nil
	}
	return 0, fmt.Errorf("%w %q (want json or msgpack)", ErrEncoding, s)
}

// Kind says which field of an Envelope holds its value.
type Kind uint8

// Value kinds.
const (
	// Int: the value is the exact integer Envelope.Int.
	Int Kind = iota
	// Uint: the value is the exact integer Envelope.Uint, above
	// math.MaxInt64 (only then; smaller integers are Int).
	Uint
	// Float: the value is Envelope.Float, which may be NaN or ±Inf.
	Float
)

// String names the kind.
func (k Kind) String() string {
	switch k {
	case Int:
		return "int"
	case Uint:
		return "uint"
	case Float:
		return "float"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Flags qualify an envelope.
type Flags uint8

// Envelope flags.
const (
	// OutOfRange ("oor") marks a value outside the DBC's minimum..maximum.
	OutOfRange Flags = 1 << iota
	// Stale ("stale") marks the last value of a message whose frames
	// stopped; the next frame clears it.
	Stale
)

// Envelope is one published signal value. The zero value is an Int 0.
//
// When filled by Parse, Unit and Label point into the parsed payload (or
// into the Envelope's scratch space when the JSON had escapes): copy
// them to keep them beyond the payload's life.
type Envelope struct {
	// Kind says which of Int, Uint and Float holds the value.
	Kind  Kind
	Int   int64
	Uint  uint64
	Float float64
	// Unit is the DBC unit, empty when none.
	Unit []byte
	// Label is the value-table label of the value, empty when none.
	Label []byte
	// TS is the CAN frame's timestamp in nanoseconds since the Unix
	// epoch, never the publish time.
	TS int64
	// Seq rises by exactly 1 per envelope published on the topic,
	// starting at 1 in each epoch.
	Seq uint64
	// Epoch identifies the publisher's run; when it changes, Seq
	// restarted.
	Epoch uint64
	Flags Flags

	// scratch holds unescaped JSON strings when they cannot alias the
	// payload; it is reused from one Parse to the next.
	scratch []byte
}

// SetInt sets an exact integer value.
func (e *Envelope) SetInt(v int64) { e.Kind, e.Int, e.Uint, e.Float = Int, v, 0, 0 }

// SetUint sets an exact unsigned value; values up to math.MaxInt64 are
// stored as Int so that every encoding parses back to the same Kind.
func (e *Envelope) SetUint(v uint64) {
	if v <= math.MaxInt64 {
		e.SetInt(int64(v))
		return
	}
	e.Kind, e.Int, e.Uint, e.Float = Uint, 0, v, 0
}

// SetFloat sets a floating-point value (NaN and ±Inf allowed).
func (e *Envelope) SetFloat(v float64) { e.Kind, e.Int, e.Uint, e.Float = Float, 0, 0, v }

// Float64 returns the value as a float64, whatever its kind.
func (e *Envelope) Float64() float64 {
	switch e.Kind {
	case Int:
		return float64(e.Int)
	case Uint:
		return float64(e.Uint)
	}
	return e.Float
}

// Stale reports whether the envelope is flagged stale.
func (e *Envelope) Stale() bool { return e.Flags&Stale != 0 }

// OutOfRange reports whether the envelope is flagged out of range.
func (e *Envelope) OutOfRange() bool { return e.Flags&OutOfRange != 0 }

// Errors. Parse errors wrap ErrMalformed in a *SyntaxError.
var (
	// ErrEncoding is returned for an unknown encoding name.
	ErrEncoding = errors.New("envelope: unknown encoding")
	// ErrMalformed is wrapped by every parse error.
	ErrMalformed = errors.New("envelope: malformed")
)

// SyntaxError says what is malformed in a payload and where.
type SyntaxError struct {
	// Encoding is the payload's encoding as detected from its first byte.
	Encoding Encoding
	// Offset is the byte offset in the payload where the problem is.
	Offset int
	// Key is the envelope key being read, empty when none.
	Key string
	// Msg says what is wrong.
	Msg string
}

func (e *SyntaxError) Error() string {
	if e.Key != "" {
		return fmt.Sprintf("envelope: malformed %s at byte %d: key %q: %s", e.Encoding, e.Offset, e.Key, e.Msg)
	}
	return fmt.Sprintf("envelope: malformed %s at byte %d: %s", e.Encoding, e.Offset, e.Msg)
}

// Unwrap returns ErrMalformed.
func (e *SyntaxError) Unwrap() error { return ErrMalformed }
