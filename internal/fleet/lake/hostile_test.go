//go:build unix

package lake

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/yukart/candec/dbc"
)

// hostileLake is a lake with one committed file, a file outside it
// ("precious") and a directory outside it ("elsewhere").
type hostileLake struct {
	dir, precious, elsewhere string
	db                       *dbc.Database
	msgDir                   string // the committed file's message=… directory
	file                     string // the committed file
}

func newHostileLake(t *testing.T) *hostileLake {
	t.Helper()
	top := t.TempDir()
	h := &hostileLake{dir: filepath.Join(top, "lake"), precious: filepath.Join(top, "precious.txt"), elsewhere: filepath.Join(top, "elsewhere")}
	os.WriteFile(h.precious, []byte("PRECIOUS\n"), 0o644)
	os.Mkdir(h.elsewhere, 0o755)
	db, err := dbc.Load(carDBC)
	if err != nil {
		t.Fatal(err)
	}
	h.db = db
	l, err := Open(Config{Dir: h.dir})
	if err != nil {
		t.Fatal(err)
	}
	w := l.NewWriter()
	if err := oneFrame(t, db, w); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit("0123456789abcdef"); err != nil {
		t.Fatal(err)
	}
	l.Close()
	files := lakeFiles(t, h.dir)
	if len(files) != 1 {
		t.Fatalf("lake files %q, want 1", files)
	}
	h.file = files[0]
	h.msgDir = filepath.Dir(filepath.Dir(h.file))
	return h
}

// untouched fails when anything outside the lake changed.
func (h *hostileLake) untouched(t *testing.T) {
	t.Helper()
	if b, _ := os.ReadFile(h.precious); string(b) != "PRECIOUS\n" {
		t.Errorf("the file outside the lake holds %q, want it untouched", b)
	}
	if ents, _ := os.ReadDir(h.elsewhere); len(ents) != 0 {
		t.Errorf("the directory outside the lake holds %d entries, want none", len(ents))
	}
}

// TestHostileLakeAtOpen: a symbolic link, a hard link or a named pipe
// planted where the lake has a file or a partition of its own is
// refused by Open, naming it, at once (no wait on a pipe), and nothing
// outside the lake is written or truncated.
func TestHostileLakeAtOpen(t *testing.T) {
	for _, c := range []struct {
		name  string
		plant func(h *hostileLake) error
		want  error  // nil: want wantS in the message
		wantS string // in the message
	}{
		{"lock is a symlink out", func(h *hostileLake) error {
			return replace(filepath.Join(h.dir, LockName), func(p string) error { return os.Symlink(h.precious, p) })
		}, ErrLink, LockName},
		{"lock is a dangling symlink", func(h *hostileLake) error {
			return replace(filepath.Join(h.dir, LockName), func(p string) error { return os.Symlink(filepath.Join(h.elsewhere, "new"), p) })
		}, ErrLink, LockName},
		{"lock is a hard link out", func(h *hostileLake) error {
			return replace(filepath.Join(h.dir, LockName), func(p string) error { return os.Link(h.precious, p) })
		}, nil, "links, want 1"},
		{"lock is a named pipe", func(h *hostileLake) error {
			return replace(filepath.Join(h.dir, LockName), func(p string) error { return syscall.Mkfifo(p, 0o644) })
		}, ErrNotRegular, LockName},
		{"marker is a named pipe", func(h *hostileLake) error {
			return replace(filepath.Join(h.dir, MarkerName), func(p string) error { return syscall.Mkfifo(p, 0o644) })
		}, ErrNotRegular, MarkerName},
		{"marker is a symlink out", func(h *hostileLake) error {
			return replace(filepath.Join(h.dir, MarkerName), func(p string) error { return os.Symlink(h.precious, p) })
		}, ErrLink, MarkerName},
		{"message= directory is a symlink out", func(h *hostileLake) error {
			return replace(h.msgDir, func(p string) error { return os.Symlink(h.elsewhere, p) })
		}, ErrLink, "message="},
		{"date= directory is a symlink out", func(h *hostileLake) error {
			return os.Symlink(h.elsewhere, filepath.Join(h.msgDir, "date=2000-01-01"))
		}, ErrLink, "date=2000-01-01"},
		{"a temporary file is a symlink out", func(h *hostileLake) error {
			return os.Symlink(h.precious, filepath.Join(filepath.Dir(h.file), ".candec-x.tmp"))
		}, ErrLink, ".candec-x.tmp"},
		{"a committed file is a symlink out", func(h *hostileLake) error {
			return replace(h.file, func(p string) error { return os.Symlink(h.precious, p) })
		}, ErrLink, "can0-0123456789abcdef.parquet"},
		{"a symlink of another name at the root", func(h *hostileLake) error {
			return os.Symlink(h.elsewhere, filepath.Join(h.dir, "other"))
		}, ErrLink, "other"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHostileLake(t)
			if err := c.plant(h); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() {
				l, err := Open(Config{Dir: h.dir})
				if err == nil {
					l.Close()
				}
				done <- err
			}()
			var err error
			select {
			case err = <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("Open blocked")
			}
			if err == nil || c.want != nil && !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.wantS) || !strings.Contains(err.Error(), h.dir) {
				t.Errorf("Open: got %v, want %v naming %s in %s", err, c.want, c.wantS, h.dir)
			}
			h.untouched(t)
		})
	}
}

// replace removes p and makes it again with mk.
func replace(p string, mk func(string) error) error {
	if err := os.RemoveAll(p); err != nil {
		return err
	}
	return mk(p)
}

// TestHostileLakeWhileOpen: a link planted while a run has the lake
// open (after Open checked it) is refused when the run reaches it, and
// nothing is written outside the lake; the committed file a link
// replaced is refused, not followed.
func TestHostileLakeWhileOpen(t *testing.T) {
	for _, c := range []struct {
		name  string
		plant func(h *hostileLake) error
		wantS string
	}{
		{"message= directory", func(h *hostileLake) error {
			return replace(h.msgDir, func(p string) error { return os.Symlink(h.elsewhere, p) })
		}, "message="},
		{"date= directory", func(h *hostileLake) error {
			return replace(filepath.Dir(h.file), func(p string) error { return os.Symlink(h.elsewhere, p) })
		}, "date="},
		{"the committed file", func(h *hostileLake) error {
			return replace(h.file, func(p string) error { return os.Symlink(h.precious, p) })
		}, "can0-0123456789abcdef.parquet"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHostileLake(t)
			l, err := Open(Config{Dir: h.dir})
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			if err := c.plant(h); err != nil {
				t.Fatal(err)
			}
			w := l.NewWriter()
			err = oneFrame(t, h.db, w)
			if err == nil {
				err = w.Commit("0123456789abcdef")
			}
			if !errors.Is(err, ErrLink) || !strings.Contains(err.Error(), c.wantS) {
				t.Errorf("got %v, want ErrLink naming %s", err, c.wantS)
			}
			w.Abort()
			h.untouched(t)
		})
	}
}

// TestLakeModeFollowsUmask: the lake's files get 0666 less the umask and
// its directories 0777 less it, as os.Create and mkdir give, so that
// other users and query engines can read a lake the umask lets them.
func TestLakeModeFollowsUmask(t *testing.T) {
	old := syscall.Umask(0o002)
	defer syscall.Umask(old)
	h := newHostileLake(t)
	for _, c := range []struct {
		name string
		want os.FileMode
	}{
		{h.file, 0o664},
		{filepath.Join(h.dir, MarkerName), 0o664},
		{filepath.Join(h.dir, LockName), 0o664},
		{filepath.Dir(h.file), 0o775 | os.ModeDir},
		{h.msgDir, 0o775 | os.ModeDir},
	} {
		fi, err := os.Stat(c.name)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode() & (os.ModePerm | os.ModeDir); got != c.want {
			t.Errorf("%s: mode %v under umask 002, want %v", c.name, got, c.want)
		}
	}
}
