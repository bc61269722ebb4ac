package capture

import (
	"bufio"
	"errors"
	"fmt"
	"io"

	"github.com/yukart/candec/frame"
	"github.com/yukart/candec/internal/base/termtext"
)

// Errors for frames a Writer cannot write.
var (
	// ErrTime: the timestamp is before the Unix epoch.
	ErrTime = errors.New("capture: timestamp before 1970")
	// ErrInterface: the interface name is empty, too long, or has a blank
	// or control character.
	ErrInterface = errors.New("capture: invalid interface name")
	// ErrLength: the data length is over 8 (64 for CAN FD).
	ErrLength = errors.New("capture: data length out of range")
	// ErrID: the ID is wider than 11 bits (29 for an extended or error
	// frame).
	ErrID = errors.New("capture: ID wider than its format")
	// ErrFlags: a remote CAN FD frame, which does not exist.
	ErrFlags = errors.New("capture: remote CAN FD frame")
)

// Writer writes frames as candump -l does. Its output is buffered: call
// Flush when done.
type Writer struct {
	bw  *bufio.Writer
	buf []byte
}

// NewWriter returns a Writer that writes a candump log to w.
func NewWriter(w io.Writer) *Writer {
	return &Writer{bw: bufio.NewWriterSize(w, 64<<10), buf: make([]byte, 0, 256)}
}

// Write writes f as one line, on the named interface (f.Bus is not
// used). It does not allocate.
func (w *Writer) Write(f *frame.Frame, iface string) error {
	var err error
	if w.buf, err = AppendLine(w.buf[:0], f, iface); err != nil {
		return err
	}
	if _, err := w.bw.Write(w.buf); err != nil {
		return fmt.Errorf("capture: write: %w", err)
	}
	return nil
}

// Flush writes any buffered lines to the underlying writer.
func (w *Writer) Flush() error {
	if err := w.bw.Flush(); err != nil {
		return fmt.Errorf("capture: write: %w", err)
	}
	return nil
}

const hexUpper = "0123456789ABCDEF"

// AppendLine appends f as a candump log line, ending in "\n", on the
// named interface to dst. The timestamp has 6 decimals, or 9 when it is
// not a whole microsecond, so that reading the line gives f.Time back.
// The seconds are not zero-padded (candump pads them to 10 digits, which
// makes no difference after 2001). A CAN FD line's flags digit is
// f.FDFlags() (BRS = 1, ESI = 2). On error dst is returned
// unchanged.
func AppendLine(dst []byte, f *frame.Frame, iface string) ([]byte, error) {
	if err := checkWrite(f, iface); err != nil {
		return dst, err
	}
	sec, ns := f.Time/1e9, f.Time%1e9
	dst = append(dst, '(')
	dst = appendUint(dst, uint64(sec), 1)
	dst = append(dst, '.')
	if ns%1000 == 0 {
		dst = appendUint(dst, uint64(ns/1000), 6)
	} else {
		dst = appendUint(dst, uint64(ns), 9)
	}
	dst = append(dst, ") "...)
	dst = append(dst, iface...)
	dst = append(dst, ' ')
	switch {
	case f.Flags&frame.Error != 0:
		dst = appendHex(dst, uint64(f.ID|idError), 8)
	case f.Flags&frame.Extended != 0:
		dst = appendHex(dst, uint64(f.ID), 8)
	default:
		dst = appendHex(dst, uint64(f.ID), 3)
	}
	dst = append(dst, '#')
	switch {
	case f.Flags&frame.Remote != 0:
		dst = append(dst, 'R')
		if f.Len > 0 {
			dst = append(dst, hexUpper[f.Len])
		}
		return append(dst, '\n'), nil
	case f.Flags&frame.FD != 0:
		dst = append(dst, '#', hexUpper[f.FDFlags()])
	}
	for _, b := range f.Data[:f.Len] {
		dst = append(dst, hexUpper[b>>4], hexUpper[b&0xF])
	}
	return append(dst, '\n'), nil
}

func checkWrite(f *frame.Frame, iface string) error {
	if f.Time < 0 {
		return fmt.Errorf("%w: %d ns", ErrTime, f.Time)
	}
	if iface == "" || len(iface) > MaxInterfaceLen {
		return fmt.Errorf("%w: %s", ErrInterface, termtext.Quote(iface))
	}
	for i := range len(iface) {
		if c := iface[i]; c <= ' ' || c == 0x7F {
			return fmt.Errorf("%w: %s", ErrInterface, termtext.Quote(iface))
		}
	}
	maxLen, maxID := uint8(8), maskStdID
	if f.Flags&frame.FD != 0 {
		maxLen = frame.MaxLen
		if f.Flags&frame.Remote != 0 {
			return ErrFlags
		}
	}
	if f.Flags&(frame.Extended|frame.Error) != 0 {
		maxID = maskExtID
	}
	if f.Len > maxLen {
		return fmt.Errorf("%w: %d bytes, want at most %d", ErrLength, f.Len, maxLen)
	}
	if f.ID > maxID {
		return fmt.Errorf("%w: %X, want at most %X", ErrID, f.ID, maxID)
	}
	return nil
}

// appendUint appends v in decimal, zero-padded to at least width digits.
func appendUint(dst []byte, v uint64, width int) []byte {
	var b [20]byte
	i := len(b)
	for v >= 10 || width > 1 {
		i--
		b[i] = byte('0' + v%10)
		v /= 10
		width--
	}
	i--
	b[i] = byte('0' + v)
	return append(dst, b[i:]...)
}

// appendHex appends v as exactly width upper-case hex digits.
func appendHex(dst []byte, v uint64, width int) []byte {
	for shift := 4 * (width - 1); shift >= 0; shift -= 4 {
		dst = append(dst, hexUpper[v>>uint(shift)&0xF])
	}
	return dst
}
