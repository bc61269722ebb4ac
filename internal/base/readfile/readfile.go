package readfile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// Errors of Read, besides the os errors of opening the file (which name
// it) and the context's.
var (
	// ErrNotRegular: the path names a FIFO, a device, a socket or a
	// directory where a regular file is meant.
	ErrNotRegular = errors.New("readfile: not a regular file")
	// ErrTooLarge: the file is over the caller's limit.
	ErrTooLarge = errors.New("readfile: file too large")
)

// chunk is how much Read reads between two looks at the context.
const chunk = 1 << 20

// Read returns the contents of the regular file at path, which must be
// at most limit bytes. A file of another kind is ErrNotRegular and a
// larger one ErrTooLarge, each in an error that names the file; when ctx
// ends first, the error is ctx's.
func Read(ctx context.Context, path string, limit int64) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// O_NONBLOCK: opening a FIFO for reading would otherwise wait for a
	// writer, for ever. It changes nothing for a regular file, the only
	// kind read below.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, &pathError{ErrNotRegular, fmt.Sprintf("%s is %s, not a regular file", path, kind(fi.Mode()))}
	}
	if fi.Size() > limit {
		return nil, tooLarge(path, Size(fi.Size()), limit)
	}
	// The size may change while the file is read: read at most one byte
	// past the limit, to see whether it did.
	buf := make([]byte, 0, fi.Size()+1)
	r := io.LimitReader(f, limit+1)
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := r.Read(buf[len(buf):min(cap(buf), len(buf)+chunk)])
		buf = buf[:len(buf)+n]
		if int64(len(buf)) > limit {
			// It grew while being read.
			return nil, tooLarge(path, "over "+Size(limit), limit)
		}
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

func tooLarge(path, size string, limit int64) error {
	return &pathError{ErrTooLarge, fmt.Sprintf("%s is %s, over the limit of %s", path, size, Size(limit))}
}

// pathError is an error of Read about the file itself: its text names
// the file, and errors.Is finds the sentinel.
type pathError struct {
	err  error
	text string
}

func (e *pathError) Error() string { return e.text }
func (e *pathError) Unwrap() error { return e.err }

// kind names a file mode that is not a regular file's.
func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO (named pipe)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "not a regular file"
}

// Size formats a byte count for a message: "64 MiB" when it is a whole
// number of MiB or KiB, else the bytes with the MiB beside them.
func Size(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0 && n < 1<<20:
		return fmt.Sprintf("%d KiB", n>>10)
	case n >= 1<<20:
		return fmt.Sprintf("%d bytes (%.1f MiB)", n, float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d bytes", n)
}
