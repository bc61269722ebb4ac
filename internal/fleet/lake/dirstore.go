package lake

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// dirStore is a lake in a directory: the Store of a Config without one.
// Every path below the directory is opened within it (an os.Root), and
// a symbolic link, a named pipe or a device where the lake has a file
// or a directory of its own is refused, named (ErrLink, ErrNotRegular).
// A file is written under a temporary name in its directory, synced,
// then renamed to its own.
type dirStore struct {
	dir   string // as the caller gave it, for messages
	root  *os.Root
	owner string // Escape(Config.Owner): in its temporary files' names
	lock  *os.File

	// made holds the directories mkdirs made or found, checked, so that
	// a lake written again and again (an ingest's commits) pays for each
	// once. A link planted there later is followed, but only within the
	// root, as every path is opened in it.
	mu   sync.Mutex
	made map[string]bool
}

// openDirStore makes the directory dir if need be and opens it.
func openDirStore(dir, owner string) (*dirStore, error) {
	if err := os.MkdirAll(dir, DirPerm); err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("lake: %w", err)
	}
	s := &dirStore{dir: dir, root: root}
	if owner != "" {
		s.owner = Escape(owner)
	}
	return s, nil
}

// close drops the lock, if held, and the directory.
func (s *dirStore) close() error {
	var err error
	if s.lock != nil {
		if s.owner == "" {
			// Emptied first, so that a lake's files are the same
			// whichever process wrote them last.
			s.lock.Truncate(0)
		}
		err = s.lock.Close() // which drops the lock
		s.lock = nil
	}
	s.root.Close()
	return err
}

// String returns the directory, ending in a separator.
func (s *dirStore) String() string {
	return strings.TrimSuffix(s.dir, string(filepath.Separator)) + string(filepath.Separator)
}

// path is rel's path for a message: the lake's directory joined.
func (s *dirStore) path(rel string) string { return filepath.Join(s.dir, filepath.FromSlash(rel)) }

// local is rel as a path of the system, within the root.
func local(rel string) string { return filepath.FromSlash(rel) }

// valid refuses a name that is not a file's in the lake: empty, the
// root, absolute, with a "." or ".." element or an empty one.
func (s *dirStore) valid(rel string) error {
	if rel == "" || rel == "." || !fs.ValidPath(rel) || strings.Contains(rel, `\`) && filepath.Separator == '\\' {
		return fmt.Errorf("lake: %s: %q is not the name of a file in the lake", s.dir, rel)
	}
	return nil
}

// linkErr is the ErrLink of rel.
func (s *dirStore) linkErr(rel string) error {
	return fmt.Errorf("%w: %s (a lake holds none: remove it)", ErrLink, s.path(rel))
}

// check returns nil when rel, in the lake, is a directory (dir) or a
// regular file (!dir); ErrLink for a symbolic link, ErrNotRegular (or
// an error naming what it is) for anything else, and the Lstat's
// error, fs.ErrNotExist among them, when there is nothing. It is a
// check for a clear message: a race that replaces rel after it cannot
// lead outside the lake, as every path is opened in s.root.
func (s *dirStore) check(rel string, dir bool) error {
	fi, err := s.root.Lstat(local(rel))
	switch {
	case err != nil:
		return err
	case fi.Mode()&fs.ModeSymlink != 0:
		return s.linkErr(rel)
	case dir && !fi.IsDir():
		return fmt.Errorf("lake: %s is not a directory", s.path(rel))
	case !dir && !fi.Mode().IsRegular():
		return fmt.Errorf("%w: %s (%s)", ErrNotRegular, s.path(rel), fi.Mode().Type())
	}
	return nil
}

// checkParents checks the directories rel is in, as check does.
func (s *dirStore) checkParents(rel string) error {
	p := ""
	for _, el := range strings.Split(path.Dir(rel), "/") {
		if el == "." {
			break
		}
		p = path.Join(p, el)
		if err := s.check(p, true); err != nil {
			return err
		}
	}
	return nil
}

// mkdirs makes the directories of rel in the lake, refusing any of
// them that is a symbolic link (ErrLink) or no directory.
func (s *dirStore) mkdirs(rel string) error {
	s.mu.Lock()
	done := s.made[rel]
	s.mu.Unlock()
	if done {
		return nil
	}
	p := ""
	for _, el := range strings.Split(rel, "/") {
		p = path.Join(p, el)
		if err := s.root.Mkdir(local(p), DirPerm); err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("lake: %w", err)
		}
		if err := s.check(p, true); err != nil {
			return err
		}
	}
	s.mu.Lock()
	if s.made == nil {
		s.made = map[string]bool{}
	}
	s.made[rel] = true
	s.mu.Unlock()
	return nil
}

// forget drops dir from what mkdirs made, and reports whether it was
// there.
func (s *dirStore) forget(dir string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	ok := s.made[dir]
	delete(s.made, dir)
	return ok
}

// readDir lists rel, a directory in the lake, sorted by name.
func (s *dirStore) readDir(rel string) ([]fs.DirEntry, error) {
	d, err := s.root.Open(local(rel))
	if err != nil {
		return nil, fmt.Errorf("lake: %w", err)
	}
	defer d.Close()
	ents, err := d.ReadDir(-1)
	if err != nil {
		return nil, fmt.Errorf("lake: %s: %w", s.path(rel), err)
	}
	slices.SortFunc(ents, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return ents, nil
}

// ReadFile reads rel, a regular file of the lake of at most limit
// bytes. It is opened without waiting (a named pipe planted there must
// not block the run) and checked to be a regular file once open.
func (s *dirStore) ReadFile(rel string, limit int64) ([]byte, error) {
	if err := s.valid(rel); err != nil {
		return nil, err
	}
	if err := s.checkParents(rel); err != nil {
		return nil, err
	}
	if err := s.check(rel, false); err != nil {
		return nil, err
	}
	f, err := s.root.OpenFile(local(rel), os.O_RDONLY|oNonblock, 0)
	if err != nil {
		return nil, fmt.Errorf("lake: %w", err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: %s", ErrNotRegular, s.path(rel))
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	switch {
	case err != nil:
		return nil, fmt.Errorf("lake: %s: %w", s.path(rel), err)
	case int64(len(b)) > limit:
		return nil, fmt.Errorf("lake: %s: longer than %d bytes", s.path(rel), limit)
	}
	return b, nil
}

// WriteFile writes rel whole: under a temporary name, synced, then
// renamed over it.
func (s *dirStore) WriteFile(rel string, b []byte) error {
	return writeWhole(s, rel, b)
}

// writeWhole writes rel of st whole: Create, Write, Commit.
func writeWhole(st Store, rel string, b []byte) error {
	f, err := st.Create(rel)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Abort()
		return err
	}
	return f.Commit()
}

// writeNew writes rel whole unless there is a file there already: a
// hard link of the synced temporary file takes its name, or fails.
// It reports whether it wrote rel.
func (s *dirStore) writeNew(rel string, b []byte) (bool, error) {
	t, err := s.CreateTemp(path.Dir(rel))
	if err != nil {
		return false, err
	}
	f := t.(*dirFile)
	defer f.Abort()
	if _, err := f.Write(b); err != nil {
		return false, fmt.Errorf("lake: %s: %w", s.path(rel), err)
	}
	if err := f.f.Sync(); err != nil {
		return false, fmt.Errorf("lake: %s: %w", s.path(rel), err)
	}
	switch err := s.root.Link(local(f.tmp), local(rel)); {
	case errors.Is(err, fs.ErrExist):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("lake: %w", err)
	}
	return true, nil
}

// List returns every file under dir, recursively, but the lock file
// and temporary files, sorted; a symbolic link, a named pipe or a
// device anywhere below dir is refused (ErrLink, ErrNotRegular).
func (s *dirStore) List(dir string) ([]string, error) {
	dir = cmp.Or(dir, ".")
	if dir != "." {
		if err := s.valid(dir); err != nil {
			return nil, err
		}
		err := s.checkParents(dir)
		if err == nil {
			err = s.check(dir, true)
		}
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
	}
	var names []string
	err := s.walk(dir, func(rel string, e fs.DirEntry) error {
		switch {
		case !e.Type().IsRegular():
			return fmt.Errorf("%w: %s (%s)", ErrNotRegular, s.path(rel), e.Type())
		case rel != LockName && !isTemp(e.Name()):
			names = append(names, rel)
		}
		return nil
	}, nil)
	if err != nil {
		return nil, err
	}
	slices.Sort(names)
	return names, nil
}

// walk calls file with each entry below dir that is no directory, and
// after (when not nil) with each directory once walked; a symbolic link
// anywhere is refused (ErrLink).
func (s *dirStore) walk(dir string, file func(rel string, e fs.DirEntry) error, after func(rel string)) error {
	ents, err := s.readDir(dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		rel := path.Join(dir, e.Name())
		switch {
		case e.Type()&fs.ModeSymlink != 0:
			return s.linkErr(rel)
		case e.IsDir():
			if err := s.walk(rel, file, after); err != nil {
				return err
			}
			if after != nil {
				after(rel)
			}
		default:
			if err := file(rel, e); err != nil {
				return err
			}
		}
	}
	return nil
}

// Remove removes rel, a regular file of the lake; nil when there is
// none. A symbolic link there, or in the directories above it, is
// refused (ErrLink), as is anything but a regular file.
func (s *dirStore) Remove(rel string) error {
	if err := s.valid(rel); err != nil {
		return err
	}
	err := s.checkParents(rel)
	if err == nil {
		err = s.check(rel, false)
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	}
	if err := s.root.Remove(local(rel)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("lake: %w", err)
	}
	return nil
}

// Create starts rel: a temporary file in its directory, renamed to rel
// at Commit.
func (s *dirStore) Create(rel string) (File, error) {
	if err := s.valid(rel); err != nil {
		return nil, err
	}
	f, err := s.CreateTemp(path.Dir(rel))
	if err != nil {
		return nil, err
	}
	return namedFile{f, rel}, nil
}

// CreateTemp starts a file in dir, making dir if need be: a new file
// of the temporary files' pattern, made with O_EXCL (never a link or a
// pipe planted at its name), mode Perm less the umask.
func (s *dirStore) CreateTemp(dir string) (TempFile, error) {
	if dir != "." {
		if err := s.valid(dir); err != nil {
			return nil, err
		}
		if err := s.mkdirs(dir); err != nil {
			return nil, err
		}
	}
	prefix := ".candec-"
	if s.owner != "" {
		prefix += s.owner + "-"
	}
	remade := false
	for range 100 {
		name := path.Join(dir, prefix+strconv.FormatUint(rand.Uint64(), 36)+".tmp")
		f, err := s.root.OpenFile(local(name), os.O_RDWR|os.O_CREATE|os.O_EXCL, Perm)
		if err == nil {
			return &dirFile{s: s, f: f, tmp: name}, nil
		}
		if !errors.Is(err, fs.ErrExist) && !remade && dir != "." && s.forget(dir) {
			remade = true
			// Removed or replaced since mkdirs made it: made and checked
			// again, once (a link planted there is named as such).
			if err := s.mkdirs(dir); err != nil {
				return nil, err
			}
			continue
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("lake: %w", err)
		}
	}
	return nil, fmt.Errorf("lake: no free temporary name in %s", s.path(dir))
}

// dirFile is a file of the lake being written, under its temporary name.
type dirFile struct {
	s   *dirStore
	f   *os.File // nil once committed or aborted
	tmp string
}

var errDone = errors.New("lake: the file was committed or aborted already")

func (d *dirFile) Write(b []byte) (int, error) {
	if d.f == nil {
		return 0, errDone
	}
	return d.f.Write(b)
}

// CommitAs syncs the file, so that not even a crash of the machine
// leaves a named file cut short, and renames it to rel. On an error the
// temporary file is removed.
func (d *dirFile) CommitAs(rel string) error {
	if d.f == nil {
		return errDone
	}
	err := d.s.valid(rel)
	if err == nil {
		if err = d.f.Sync(); err != nil {
			err = fmt.Errorf("lake: %s: %w", d.s.path(rel), err)
		}
	}
	if cerr := d.f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("lake: %s: %w", d.s.path(rel), cerr)
	}
	d.f = nil
	if err == nil {
		// The rename would replace a link or a pipe there, not follow
		// it; but the lake never made one, so it is refused, named.
		if cerr := d.s.check(rel, false); cerr != nil && !errors.Is(cerr, fs.ErrNotExist) {
			err = cerr
		}
	}
	if err == nil {
		if rerr := d.s.root.Rename(local(d.tmp), local(rel)); rerr != nil {
			err = fmt.Errorf("lake: %w", rerr)
		}
	}
	if err != nil {
		d.s.root.Remove(local(d.tmp))
	}
	return err
}

// Abort closes and removes the temporary file.
func (d *dirFile) Abort() {
	if d.f != nil {
		d.f.Close()
		d.f = nil
		d.s.root.Remove(local(d.tmp))
	}
}

// namedFile is a TempFile given its name when it was created: a File.
type namedFile struct {
	TempFile
	rel string
}

func (n namedFile) Commit() error { return n.CommitAs(n.rel) }

// ownTemp reports whether name is a temporary file this store may
// remove: any of the lake's when it has no owner (it holds the lake
// alone), else its owner's only, .candec-<owner>-<random>.tmp, where
// the random part has no '-' (so owner "a" never takes "a-b"'s).
func (s *dirStore) ownTemp(name string) bool {
	if !isTemp(name) {
		return false
	}
	if s.owner == "" {
		return true
	}
	mid := strings.TrimSuffix(strings.TrimPrefix(name, ".candec-"), ".tmp")
	i := strings.LastIndexByte(mid, '-')
	return i >= 0 && mid[:i] == s.owner && i+1 < len(mid)
}
