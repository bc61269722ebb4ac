//go:build linux

package outfile

import (
	"errors"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestFailedWriteKeepsOld: a write that fails (here on a file size
// limit, as on a full disk) makes Commit commit nothing: the old file
// stays whole, no temporary file is left, and the error names the
// output, not the temporary file.
func TestFailedWriteKeepsOld(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "o.log")
	os.WriteFile(name, []byte("PRECIOUS\n"), 0o644)
	f, err := Create(name, nil)
	if err != nil {
		t.Fatal(err)
	}
	withFileSizeLimit(t, 4096, func() {
		for range 8 {
			f.Write(make([]byte, 1024))
		}
	})
	err = f.Commit()
	if !errors.Is(err, syscall.EFBIG) || !strings.Contains(err.Error(), "outfile: write "+name+":") || strings.Contains(err.Error(), ".tmp") {
		t.Errorf("Commit: got %v, want the EFBIG of the write, naming %s and no temporary file", err, name)
	}
	if f.Err() == nil {
		t.Error("Err: got nil after a failed write")
	}
	if got, _ := os.ReadFile(name); string(got) != "PRECIOUS\n" {
		t.Errorf("the file holds %d bytes after a failed write, want the old content", len(got))
	}
	assertOnly(t, dir, "o.log")
}

// withFileSizeLimit runs fn with RLIMIT_FSIZE at limit and SIGXFSZ
// ignored, so that a write past it fails with EFBIG. No test runs in
// parallel with it (none of the package calls t.Parallel).
func withFileSizeLimit(t *testing.T, limit uint64, fn func()) {
	t.Helper()
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
		t.Fatal(err)
	}
	signal.Ignore(syscall.SIGXFSZ)
	defer signal.Reset(syscall.SIGXFSZ)
	lim := old
	lim.Cur = limit
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
		t.Fatal(err)
	}
	defer syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old)
	fn()
}

// TestNewFileModeFollowsUmask: a new output gets 0666 less the umask,
// as os.Create gives, not a fixed 0644.
func TestNewFileModeFollowsUmask(t *testing.T) {
	old := syscall.Umask(0o002)
	defer syscall.Umask(old)
	name := filepath.Join(t.TempDir(), "new.log")
	f, err := Create(name, nil)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("x\n"))
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(name); fi.Mode().Perm() != 0o664 {
		t.Errorf("mode %v under umask 002, want -rw-rw-r--", fi.Mode().Perm())
	}
}

// TestNamedPipe: a named pipe with no reader is refused at once, naming
// it, instead of blocking the command; one with a reader is written in
// place.
func TestNamedPipe(t *testing.T) {
	name := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(name, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		f, err := Create(name, nil)
		if err == nil {
			f.Abort()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), name+" is a named pipe with no reader") {
			t.Errorf("got %v, want a refusal naming %s", err, name)
		}
	case <-time.After(5 * time.Second):
		// Unblock the open before failing, so the test ends.
		if r, err := os.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
			defer r.Close()
		}
		t.Fatal("Create blocked on a named pipe with no reader")
	}

	r, err := os.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	f, err := Create(name, nil)
	if err != nil {
		t.Fatalf("a named pipe with a reader: %v", err)
	}
	f.Write([]byte("through\n"))
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	syscall.SetNonblock(int(r.Fd()), false)
	if got, _ := io.ReadAll(r); string(got) != "through\n" {
		t.Errorf("the reader got %q, want %q", got, "through\n")
	}
}
