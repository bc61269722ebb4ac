//go:build unix

package lake

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// oNonblock opens a file without waiting for a named pipe's other end.
const oNonblock = syscall.O_NONBLOCK

// openLock opens (or creates, with mode Perm less the umask) the lock
// file name in root without following a symbolic link (O_NOFOLLOW, at
// the root's own directory: no path is looked up again), and without
// waiting on a named pipe.
func openLock(root *os.Root, name string) (*os.File, error) {
	d, err := root.Open(".")
	if err != nil {
		return nil, err
	}
	defer d.Close()
	var fd int
	for {
		fd, err = unix.Openat(int(d.Fd()), name, unix.O_RDWR|unix.O_CREAT|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, Perm)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: filepath.Join(root.Name(), name), Err: err}
	}
	return os.NewFile(uintptr(fd), filepath.Join(root.Name(), name)), nil
}

// checkLock refuses a lock file that is not a regular file, or that has
// another name (a hard link): truncating it would reach that file too.
func checkLock(f *os.File) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%w (%s)", ErrNotRegular, fi.Mode().Type())
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Nlink != 1 {
		return fmt.Errorf("lake: it has %d links, want 1: remove it", st.Nlink)
	}
	return nil
}
