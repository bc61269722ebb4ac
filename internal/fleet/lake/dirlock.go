package lake

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strconv"
	"strings"
)

// lockLake opens the lake's lock file and locks it: exclusively, and
// writing this process's ID into it, for a lake without an owner;
// shared for an owner's. When another holds it, the error is ErrBusy,
// naming the process when the lock file says which. The lock file is
// opened without following a symbolic link and must be a regular file
// of one link (openLock): truncating it must never reach another file.
func (s *dirStore) lockLake() error {
	name := s.path(LockName)
	f, err := openLock(s.root, LockName)
	if err != nil {
		if lerr := s.check(LockName, false); errors.Is(lerr, ErrLink) || errors.Is(lerr, ErrNotRegular) {
			return lerr
		}
		return fmt.Errorf("lake: lock: %w", err)
	}
	if err := checkLock(f); err != nil {
		f.Close()
		return fmt.Errorf("lake: lock %s: %w", name, err)
	}
	if err := tryLock(f, s.owner != ""); err != nil {
		if errors.Is(err, ErrBusy) {
			err = fmt.Errorf("%w: %s (its %s is locked%s)", ErrBusy, s.dir, LockName, holder(f))
		} else {
			err = fmt.Errorf("lake: lock %s: %w", name, err)
		}
		f.Close()
		return err
	}
	if s.owner != "" {
		if err := tryLockOwner(f, s.owner); err != nil {
			f.Close()
			if errors.Is(err, ErrBusy) {
				return fmt.Errorf("%w: %s: its owner %q has it open already (two writers with one name would write the same files)", ErrBusy, s.dir, s.owner)
			}
			return fmt.Errorf("lake: lock %s: %w", name, err)
		}
	}
	if s.owner == "" {
		if err := f.Truncate(0); err == nil {
			f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
		}
	}
	s.lock = f
	return nil
}

// holder names the process ID a lock file holds, if any: " by process
// N". Only a process ID is quoted: the file is the lake's, and anyone
// who writes the lake may write it. Owners sharing a lake write none.
func holder(f *os.File) string {
	b := make([]byte, 32)
	n, _ := f.ReadAt(b, 0)
	if pid, err := strconv.Atoi(string(bytes.TrimSpace(b[:n]))); err == nil && pid > 0 {
		return " by process " + strconv.Itoa(pid)
	}
	return ""
}

// removeTemps removes the temporary files this store may remove
// (ownTemp) in the lake's directories below its root, and, holding the
// lake alone, the partition directories (a name with '=') that leaves
// empty. It returns how many files it removed. A symbolic link
// anywhere it looks is refused (ErrLink).
//
// An owner removes no directory: another owner may have just made it
// for a file it is about to create.
func (s *dirStore) removeTemps() (int, error) {
	n := 0
	err := s.walk(".", func(rel string, e fs.DirEntry) error {
		if path.Dir(rel) == "." || !e.Type().IsRegular() || !s.ownTemp(e.Name()) {
			return nil
		}
		switch err := s.root.Remove(local(rel)); {
		case err == nil:
			n++
		case !errors.Is(err, fs.ErrNotExist):
			return fmt.Errorf("lake: remove a temporary file: %w", err)
		}
		return nil
	}, func(rel string) {
		if s.owner == "" && strings.Contains(path.Base(rel), "=") {
			s.root.Remove(local(rel)) // only if nothing is left in it
		}
	})
	return n, err
}

// emptyRoot reports whether the lake's directory holds nothing but the
// lock file, the marker and temporary files (of a run killed as it
// made the lake, or of an owner making it now).
func (s *dirStore) emptyRoot() (bool, error) {
	ents, err := s.readDir(".")
	if err != nil {
		return false, err
	}
	for _, e := range ents {
		if n := e.Name(); n != LockName && n != MarkerName && !(isTemp(n) && e.Type().IsRegular()) {
			return false, nil
		}
	}
	return true, nil
}
