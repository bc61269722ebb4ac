//go:build unix

package outfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// openDirect opens a device or a pipe to write in place. A named pipe
// is opened without waiting for a reader: one with no reader is refused
// at once (ENXIO) rather than left to block the command, which no signal
// could then stop. Once open, the descriptor blocks again, as a pipe
// the shell hands over does.
func openDirect(name string, fi fs.FileInfo) (*os.File, error) {
	if fi.Mode()&fs.ModeNamedPipe == 0 {
		return os.OpenFile(name, os.O_WRONLY, 0)
	}
	var fd int
	var err error
	for {
		fd, err = syscall.Open(name, syscall.O_WRONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	switch {
	case errors.Is(err, syscall.ENXIO):
		return nil, fmt.Errorf("outfile: %s is a named pipe with no reader: start its reader first", name)
	case err != nil:
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	if err := syscall.SetNonblock(fd, false); err != nil {
		syscall.Close(fd)
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	return os.NewFile(uintptr(fd), name), nil
}
