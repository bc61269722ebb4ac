package frame

// Flags describe a frame's format beyond its ID and data.
type Flags uint8

// Frame flags.
const (
	// Extended marks a 29-bit identifier; without it the ID is 11-bit.
	Extended Flags = 1 << iota
	// Remote marks a remote transmission request (no data).
	Remote
	// Error marks an error frame.
	Error
	// FD marks a CAN FD frame (up to 64 data bytes).
	FD
	// BRS marks a CAN FD frame sent with bit-rate switching.
	BRS
	// ESI marks a CAN FD frame whose sender was error passive.
	ESI
)

// FDFlags returns a CAN FD frame's BRS and ESI bits as struct
// canfd_frame and candump number them: BRS = 1, ESI = 2.
func (f *Frame) FDFlags() uint8 {
	var v uint8
	if f.Flags&BRS != 0 {
		v |= 1
	}
	if f.Flags&ESI != 0 {
		v |= 2
	}
	return v
}

// MaxLen is the largest data length of any frame (CAN FD).
const MaxLen = 64

// Frame is one CAN frame as received, with the kernel's reception time.
// It is a plain value: pass it by pointer on hot paths (it is 80 bytes).
type Frame struct {
	// Time is the reception time in nanoseconds since the Unix epoch.
	Time int64
	// ID is the arbitration ID without flag bits (11 or 29 bits).
	ID uint32
	// Flags say whether the ID is extended and whether this is a remote,
	// error or CAN FD frame (with its BRS and ESI bits).
	Flags Flags
	// Bus is the interface index (0 for can0).
	Bus uint8
	// Len is the number of valid bytes in Data (0–8, or 0–64 for CAN FD).
	Len uint8
	// Data holds the payload; bytes past Len are zero.
	Data [MaxLen]byte
}

// Extended reports whether the frame has a 29-bit identifier.
func (f *Frame) Extended() bool { return f.Flags&Extended != 0 }

// Payload returns the valid data bytes.
func (f *Frame) Payload() []byte { return f.Data[:f.Len] }
