//go:build linux

package lake

import (
	"errors"
	"hash/fnv"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// tryLockOwner takes, without waiting, an exclusive lock on one byte of
// the lake's lock file chosen by owner: an open file description lock
// (F_OFD_SETLK), which the flock on the same file does not touch. A
// second writer with the same owner, in this process or another, gets
// ErrBusy; owners of other names (other bytes) share the lake. The
// kernel drops it with the file, as it drops the flock.
func tryLockOwner(f *os.File, owner string) error {
	h := fnv.New64a()
	h.Write([]byte(owner))
	lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: io.SeekStart, Start: int64(h.Sum64()>>2) + 1, Len: 1}
	for {
		err := unix.FcntlFlock(f.Fd(), unix.F_OFD_SETLK, &lk)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, unix.EAGAIN), errors.Is(err, unix.EACCES):
			return ErrBusy
		case errors.Is(err, unix.EINTR):
			continue
		}
		return err
	}
}
