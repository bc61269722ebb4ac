//go:build !unix

package lake

import (
	"fmt"
	"os"
)

const oNonblock = 0

// openLock opens (or creates) the lock file name in root; Lake.check
// refuses a symbolic link there first.
func openLock(root *os.Root, name string) (*os.File, error) {
	if fi, err := root.Lstat(name); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		return nil, fmt.Errorf("%w: %s", ErrLink, name)
	}
	return root.OpenFile(name, os.O_RDWR|os.O_CREATE, Perm)
}

// checkLock refuses a lock file that is not a regular file.
func checkLock(f *os.File) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%w (%s)", ErrNotRegular, fi.Mode().Type())
	}
	return nil
}
