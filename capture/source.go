package capture

import (
	"fmt"
	"io"

	"github.com/yukart/candec/frame"
)

// Source is a stream of CAN frames, whatever the format it is read from.
// Every consumer of frames (decode, the policy driver, tune, replay, the
// demo and the bench) reads through it.
type Source interface {
	// Next overwrites *f with the next frame, its Bus the index of its
	// interface (see Interface). It returns io.EOF after the last frame
	// and a *LineError for a malformed record (unless
	// Options.SkipInvalid); after a *LineError, Next may be called again.
	// Next allocates nothing per frame.
	Next(f *frame.Frame) error
	// Interface returns the name of the interface with the given bus
	// index, or "" if no frame had it yet.
	Interface(bus uint8) string
	// Skipped returns how many malformed records were skipped
	// (Options.SkipInvalid).
	Skipped() int
}

var _ Source = (*Reader)(nil)

// NewSource returns a Source that reads the capture in r, of the format
// its content shows.
func NewSource(r io.Reader, opts Options) (Source, error) { return NewReader(r, opts), nil }

// OffsetError is a malformed record of a binary capture (BLF, MDF).
type OffsetError struct {
	// Format names the capture format: "blf", "mf4".
	Format string
	// Offset is the record's byte offset in the file; for a record inside
	// a compressed container, the container's.
	Offset int64
	// Msg says what is wrong.
	Msg string
}

// Error reads like `capture: blf: byte 4096: object size 3 is below its
// header's 16`.
func (e *OffsetError) Error() string {
	return fmt.Sprintf("capture: %s: byte %d: %s", e.Format, e.Offset, e.Msg)
}
