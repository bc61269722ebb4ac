package replay

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/yukart/candec/capture"
	"github.com/yukart/candec/frame"
)

// TestOpenFile: each pass reads the file from its start, and the source
// closes the file.
func TestOpenFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.log")
	if err := os.WriteFile(path, []byte("(1.000000) can0 123#01\n(1.010000) can0 124#02\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	open := OpenFile(context.Background(), path, capture.Options{})
	for pass := range 2 {
		src, err := open()
		if err != nil {
			t.Fatal(err)
		}
		var ids []uint32
		var f frame.Frame
		for {
			err := src.Next(&f)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, f.ID)
		}
		if len(ids) != 2 || ids[0] != 0x123 || ids[1] != 0x124 {
			t.Errorf("pass %d: got IDs %x, want [123 124]", pass, ids)
		}
		c, ok := src.(io.Closer)
		if !ok {
			t.Fatal("source is not an io.Closer")
		}
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		if err := c.Close(); err == nil {
			t.Error("second Close succeeded: the file was not closed by the first")
		}
	}
	if _, err := OpenFile(context.Background(), filepath.Join(t.TempDir(), "none.log"), capture.Options{})(); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: got %v, want it not to exist", err)
	}
	if _, err := OpenFile(context.Background(), t.TempDir(), capture.Options{})(); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("directory: got %v, want it refused", err)
	}
}

// TestOpenFileStdin: "-" reads the capture options' Stdin.
func TestOpenFileStdin(t *testing.T) {
	src, err := OpenFile(context.Background(), "-", capture.Options{Stdin: strings.NewReader("(1.000000) can0 123#01\n")})()
	if err != nil {
		t.Fatal(err)
	}
	var f frame.Frame
	if err := src.Next(&f); err != nil || f.ID != 0x123 {
		t.Errorf("got %+v, %v, want the frame of stdin", f, err)
	}
	if _, err := OpenFile(context.Background(), "-", capture.Options{Stdin: strings.NewReader("hello\n")})(); !errors.Is(err, capture.ErrFormat) {
		t.Errorf("stdin of no known format: got %v, want capture.ErrFormat", err)
	}
}

// TestOpenFileErrorNamesCapture: a malformed record is reported with the
// capture's name and its line, so a replay's error says which file broke.
func TestOpenFileErrorNamesCapture(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.log")
	if err := os.WriteFile(path, []byte("(1.000000) can0 123#01\n(1.0) can0 0A0#FAZZ\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	pub := PublisherFunc(func(context.Context, []byte) error { return nil })
	_, err := Run(context.Background(), OpenFile(context.Background(), path, capture.Options{}), pub, Options{Flood: true})
	var le *capture.LineError
	if err == nil || !strings.Contains(err.Error(), path+": capture: line 2:") || !errors.As(err, &le) {
		t.Errorf("got %v, want a *capture.LineError naming %s and line 2", err, path)
	}
	_, err = Run(context.Background(), OpenFile(context.Background(), "-", capture.Options{Stdin: strings.NewReader("(1.0) can0 0A0#FAZZ\n")}), pub, Options{Flood: true})
	if err == nil || !strings.Contains(err.Error(), "standard input: capture: line 1:") {
		t.Errorf("stdin: got %v, want it named standard input", err)
	}
}
