package readfile

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestRead(t *testing.T) {
	dir := t.TempDir()
	file := func(name string, size int64) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, bytes.Repeat([]byte("x"), int(size)), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	// A FIFO with a writer that never writes: a read would wait for
	// ever, and one without a writer would see an empty file.
	w, err := os.OpenFile(fifo, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	tests := []struct {
		name    string
		path    string
		limit   int64
		want    int      // bytes read, when no error
		wantErr error    // errors.Is
		text    []string // in the error's text
	}{
		{"small", file("small", 10), 100, 10, nil, nil},
		{"empty", file("empty", 0), 100, 0, nil, nil},
		{"at the limit", file("at", 100), 100, 100, nil, nil},
		{"a byte over", file("over", 101), 100, 0, ErrTooLarge, []string{"over", "101 bytes", "over the limit of 100 bytes"}},
		{"MiB", file("mib", 3<<20), 2 << 20, 0, ErrTooLarge, []string{"mib is 3 MiB, over the limit of 2 MiB"}},
		{"bigger than a chunk", file("chunks", 3*chunk+5), 4 * chunk, 3*chunk + 5, nil, nil},
		{"directory", dir, 100, 0, ErrNotRegular, []string{dir + " is a directory, not a regular file"}},
		{"FIFO", fifo, 100, 0, ErrNotRegular, []string{"fifo is a FIFO (named pipe), not a regular file"}},
		{"/dev/zero", "/dev/zero", 100, 0, ErrNotRegular, []string{"/dev/zero is a device, not a regular file"}},
		{"missing", filepath.Join(dir, "missing"), 100, 0, os.ErrNotExist, []string{"missing"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := Read(context.Background(), tt.path, tt.limit)
			if tt.wantErr == nil {
				if err != nil || len(b) != tt.want {
					t.Fatalf("got %d bytes, %v; want %d bytes", len(b), err, tt.want)
				}
				return
			}
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("got %d bytes, error %v; want %v", len(b), err, tt.wantErr)
			}
			for _, s := range tt.text {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("got error %q, want it to say %q", err, s)
				}
			}
		})
	}
}

// TestReadEndsWithContext: a read whose context has ended returns the
// context's error, not the file.
func TestReadEndsWithContext(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, make([]byte, 3*chunk), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if b, err := Read(ctx, p, 4*chunk); !errors.Is(err, context.Canceled) {
		t.Fatalf("got %d bytes, %v; want context.Canceled", len(b), err)
	}
}

func TestSize(t *testing.T) {
	for _, tt := range []struct {
		n    int64
		want string
	}{
		{0, "0 bytes"}, {1023, "1023 bytes"}, {1024, "1 KiB"}, {1 << 20, "1 MiB"}, {64 << 20, "64 MiB"},
		{100_000_000, "100000000 bytes (95.4 MiB)"}, {1<<20 + 1, "1048577 bytes (1.0 MiB)"},
	} {
		if got := Size(tt.n); got != tt.want {
			t.Errorf("Size(%d): got %q, want %q", tt.n, got, tt.want)
		}
	}
}
