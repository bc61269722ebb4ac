//go:build unix && !solaris && !aix

package lake

import (
	"errors"
	"os"
	"syscall"
)

// tryLock takes a flock on f without waiting, shared or exclusive;
// ErrBusy when another open file holds one that excludes it. The
// kernel drops the lock with the last descriptor of the file, so a
// killed run leaves no stale lock.
func tryLock(f *os.File, shared bool) error {
	how := syscall.LOCK_EX
	if shared {
		how = syscall.LOCK_SH
	}
	for {
		err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, syscall.EWOULDBLOCK):
			return ErrBusy
		case errors.Is(err, syscall.EINTR):
			continue
		}
		return err
	}
}
