package rawbatch

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/yukart/candec/frame"
)

// Sizes and limits of version 1.
const (
	// Version is the format version this package reads and writes.
	Version = 1
	// HeaderSize is the size of the batch header in bytes.
	HeaderSize = 12
	// FrameSize is the size of one frame record in bytes.
	FrameSize = 24
	// MaxCount is the largest number of frames one batch can carry.
	MaxCount = math.MaxUint16
	// MaxDataLen is the longest payload a frame record can carry.
	MaxDataLen = 8
)

// Offsets of the fields in the header and in a frame record.
const (
	offVersion = 0
	offFlags   = 1
	offCount   = 2
	offSeq     = 4

	offTime     = 0
	offID       = 8
	offLen      = 12
	offBus      = 13
	offReserved = 14
	offData     = 16
)

// SocketCAN's can_id layout: three flag bits above a 29-bit identifier.
const (
	idExtended uint32 = 1 << 31 // CAN_EFF_FLAG
	idRemote   uint32 = 1 << 30 // CAN_RTR_FLAG
	idError    uint32 = 1 << 29 // CAN_ERR_FLAG
	maskExtID  uint32 = 1<<29 - 1
	maskStdID  uint32 = 1<<11 - 1
)

// Errors wrapped by FormatError, and returned by the encoders.
var (
	// ErrShort: the message is shorter than the header.
	ErrShort = errors.New("rawbatch: message shorter than the header")
	// ErrVersion: the version byte is not 1.
	ErrVersion = errors.New("rawbatch: unsupported version")
	// ErrFlags: a reserved header flag is set.
	ErrFlags = errors.New("rawbatch: reserved header flags set")
	// ErrLength: the message length is not 12 + 24 × count.
	ErrLength = errors.New("rawbatch: message length does not match count")
	// ErrDataLength: a frame's data length is over 8.
	ErrDataLength = errors.New("rawbatch: data length over 8")
	// ErrReserved: a frame's reserved field is not zero.
	ErrReserved = errors.New("rawbatch: reserved frame field set")
	// ErrID: a standard (11-bit) frame's ID has bits above bit 10, or an
	// ID to encode is wider than 29 bits.
	ErrID = errors.New("rawbatch: ID wider than its format")
	// ErrFD: a CAN FD frame cannot be encoded in version 1.
	ErrFD = errors.New("rawbatch: CAN FD frame not representable")
	// ErrTooMany: more than 65535 frames in one batch.
	ErrTooMany = errors.New("rawbatch: more than 65535 frames in a batch")
)

// FormatError says what is wrong with a batch and where.
type FormatError struct {
	// Offset is the byte offset in the batch of the offending field.
	Offset int
	// Frame is the index of the offending frame, or -1 for the header.
	Frame int
	// Got is the offending value; Want the value or bound it broke (see
	// Error for which is which).
	Got, Want uint64
	// Err is one of the package's sentinel errors.
	Err error
}

// Error reads like "rawbatch: data length over 8: got 9, want at most 8
// (frame 1, byte 48)".
func (e *FormatError) Error() string {
	where := fmt.Sprintf("byte %d", e.Offset)
	if e.Frame >= 0 {
		where = fmt.Sprintf("frame %d, byte %d", e.Frame, e.Offset)
	}
	var bound string
	switch e.Err {
	case ErrFD, ErrTooMany:
		return fmt.Sprintf("%v (%s)", e.Err, where)
	case ErrShort:
		bound = "at least "
	case ErrDataLength, ErrID:
		bound = "at most "
	}
	return fmt.Sprintf("%v: got %d, want %s%d (%s)", e.Err, e.Got, bound, e.Want, where)
}

// Unwrap returns the sentinel error.
func (e *FormatError) Unwrap() error { return e.Err }

// Batch is a validated batch. It reads its frames from the message bytes
// passed to Parse, so it is valid only while those bytes are unchanged.
type Batch struct {
	seq    uint64
	frames []byte
}

// Parse validates a batch message and returns it. A message is accepted
// only when every field is in range: version 1, no header flags, a length
// of exactly 12 + 24 × count, and for every frame a data length of at
// most 8, a zero reserved field and, for a standard frame, an 11-bit ID.
// Data bytes past a frame's length are ignored (and read as zero): they
// carry no meaning, and a sender that copies SocketCAN's can_frame
// verbatim may leave stale bytes there.
//
// Parse does not allocate unless it returns an error.
func Parse(b []byte) (Batch, error) {
	if len(b) < HeaderSize {
		return Batch{}, &FormatError{Offset: len(b), Frame: -1, Got: uint64(len(b)), Want: HeaderSize, Err: ErrShort}
	}
	if v := b[offVersion]; v != Version {
		return Batch{}, &FormatError{Offset: offVersion, Frame: -1, Got: uint64(v), Want: Version, Err: ErrVersion}
	}
	if fl := b[offFlags]; fl != 0 {
		return Batch{}, &FormatError{Offset: offFlags, Frame: -1, Got: uint64(fl), Err: ErrFlags}
	}
	n := int(binary.LittleEndian.Uint16(b[offCount:]))
	if want := HeaderSize + FrameSize*n; len(b) != want {
		return Batch{}, &FormatError{Offset: offCount, Frame: -1, Got: uint64(len(b)), Want: uint64(want), Err: ErrLength}
	}
	frames := b[HeaderSize:]
	for i := range n {
		p := frames[i*FrameSize : (i+1)*FrameSize]
		at := HeaderSize + i*FrameSize
		id := binary.LittleEndian.Uint32(p[offID:])
		if id&(idExtended|idError) == 0 && id&maskExtID > maskStdID {
			return Batch{}, &FormatError{Offset: at + offID, Frame: i, Got: uint64(id & maskExtID), Want: uint64(maskStdID), Err: ErrID}
		}
		if l := p[offLen]; l > MaxDataLen {
			return Batch{}, &FormatError{Offset: at + offLen, Frame: i, Got: uint64(l), Want: MaxDataLen, Err: ErrDataLength}
		}
		if r := binary.LittleEndian.Uint16(p[offReserved:]); r != 0 {
			return Batch{}, &FormatError{Offset: at + offReserved, Frame: i, Got: uint64(r), Err: ErrReserved}
		}
	}
	return Batch{seq: binary.LittleEndian.Uint64(b[offSeq:]), frames: frames}, nil
}

// Seq returns the sequence number of the batch's first frame; frame i has
// Seq()+i.
func (b Batch) Seq() uint64 { return b.seq }

// Len returns the number of frames in the batch.
func (b Batch) Len() int { return len(b.frames) / FrameSize }

// Frame overwrites *f with frame i, which must be in [0, Len()). The
// SocketCAN flag bits of the ID become frame.Flags; Data past Len is
// zero.
func (b Batch) Frame(i int, f *frame.Frame) {
	p := b.frames[i*FrameSize : (i+1)*FrameSize]
	id := binary.LittleEndian.Uint32(p[offID:])
	*f = frame.Frame{
		Time: int64(binary.LittleEndian.Uint64(p[offTime:])),
		ID:   id & maskExtID,
		Bus:  p[offBus],
		Len:  p[offLen],
	}
	if id&idExtended != 0 {
		f.Flags |= frame.Extended
	}
	if id&idRemote != 0 {
		f.Flags |= frame.Remote
	}
	if id&idError != 0 {
		f.Flags |= frame.Error
	}
	copy(f.Data[:f.Len], p[offData:])
}

// AppendBatch appends a batch of frames whose first frame has sequence
// number seq to dst and returns the extended slice. It does not allocate
// when dst has room for 12 + 24 × len(frames) more bytes. When a frame
// cannot be represented (see Encoder.Add) it returns dst unchanged and a
// *FormatError naming the frame.
func AppendBatch(dst []byte, seq uint64, frames []frame.Frame) ([]byte, error) {
	if len(frames) > MaxCount {
		return dst, &FormatError{Offset: offCount, Frame: -1, Err: ErrTooMany}
	}
	for i := range frames {
		if err := check(&frames[i], i); err != nil {
			return dst, err
		}
	}
	dst = slices.Grow(dst, HeaderSize+FrameSize*len(frames))
	dst = appendHeader(dst, seq, len(frames))
	for i := range frames {
		dst = appendFrame(dst, &frames[i])
	}
	return dst, nil
}

// Encoder accumulates frames into a batch and numbers its batches
// continuously, as a bridge does over its batching window. The zero value
// is ready to use and numbers from 0.
type Encoder struct {
	seq    uint64
	frames []byte
}

// Reset drops the pending frames and makes seq the sequence number of the
// next batch's first frame.
func (e *Encoder) Reset(seq uint64) {
	e.seq = seq
	e.frames = e.frames[:0]
}

// Add appends f to the pending batch. It rejects, with a *FormatError
// wrapping ErrFD, ErrDataLength, ErrID or ErrTooMany, a CAN FD frame, a
// data length over 8, an ID wider than 29 bits (11 bits for a standard
// frame that is not an error frame) and a 65536th frame.
func (e *Encoder) Add(f *frame.Frame) error {
	n := len(e.frames) / FrameSize
	if n == MaxCount {
		return &FormatError{Offset: HeaderSize + n*FrameSize, Frame: n, Err: ErrTooMany}
	}
	if err := check(f, n); err != nil {
		return err
	}
	e.frames = appendFrame(e.frames, f)
	return nil
}

// Len returns the number of pending frames.
func (e *Encoder) Len() int { return len(e.frames) / FrameSize }

// Seq returns the sequence number the pending batch's first frame gets.
func (e *Encoder) Seq() uint64 { return e.seq }

// Flush appends the pending batch to dst, advances the sequence number
// past its frames and starts an empty batch. With no frames pending it
// returns dst unchanged. It does not allocate when dst has room.
func (e *Encoder) Flush(dst []byte) []byte {
	n := e.Len()
	if n == 0 {
		return dst
	}
	dst = slices.Grow(dst, HeaderSize+len(e.frames))
	dst = appendHeader(dst, e.seq, n)
	dst = append(dst, e.frames...)
	e.seq += uint64(n)
	e.frames = e.frames[:0]
	return dst
}

// check reports why frame i cannot be encoded, or nil.
func check(f *frame.Frame, i int) error {
	at := HeaderSize + i*FrameSize
	switch {
	case f.Flags&frame.FD != 0:
		return &FormatError{Offset: at, Frame: i, Err: ErrFD}
	case f.Len > MaxDataLen:
		return &FormatError{Offset: at + offLen, Frame: i, Got: uint64(f.Len), Want: MaxDataLen, Err: ErrDataLength}
	case f.ID > maskExtID:
		return &FormatError{Offset: at + offID, Frame: i, Got: uint64(f.ID), Want: uint64(maskExtID), Err: ErrID}
	case f.Flags&(frame.Extended|frame.Error) == 0 && f.ID > maskStdID:
		return &FormatError{Offset: at + offID, Frame: i, Got: uint64(f.ID), Want: uint64(maskStdID), Err: ErrID}
	}
	return nil
}

func appendHeader(dst []byte, seq uint64, n int) []byte {
	dst = append(dst, Version, 0)
	dst = binary.LittleEndian.AppendUint16(dst, uint16(n))
	return binary.LittleEndian.AppendUint64(dst, seq)
}

// appendFrame appends a frame that check accepted.
func appendFrame(dst []byte, f *frame.Frame) []byte {
	id := f.ID
	if f.Flags&frame.Extended != 0 {
		id |= idExtended
	}
	if f.Flags&frame.Remote != 0 {
		id |= idRemote
	}
	if f.Flags&frame.Error != 0 {
		id |= idError
	}
	dst = binary.LittleEndian.AppendUint64(dst, uint64(f.Time))
	dst = binary.LittleEndian.AppendUint32(dst, id)
	dst = append(dst, f.Len, f.Bus, 0, 0)
	var data [MaxDataLen]byte
	copy(data[:], f.Data[:f.Len])
	return append(dst, data[:]...)
}
