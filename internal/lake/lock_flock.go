//go:build unix && !solaris && !aix

package lake

import (
	"errors"
	"os"
	"syscall"
)

// tryLock takes an exclusive flock on f without waiting; ErrBusy when
// another open file holds it. The kernel drops the lock with the last
// descriptor of the file, so a killed run leaves no stale lock.
func tryLock(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
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
