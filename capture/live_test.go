package capture

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestLiveReaderEndsWithContext: a read blocked on a pipe whose writer
// sends nothing returns when the context ends, after the output was
// flushed (idle), and Close lets the reading goroutine go.
func TestLiveReaderEndsWithContext(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	ctx, cancel := context.WithCancel(context.Background())
	idle := 0
	lr := NewLiveReader(ctx, pr, func() { idle++ })
	defer lr.Close()
	go func() {
		pw.Write([]byte("abc"))
		time.Sleep(20 * time.Millisecond)
		cancel()
	}()
	got, err := io.ReadAll(lr)
	if string(got) != "abc" || !errors.Is(err, context.Canceled) {
		t.Errorf("got %q, %v; want \"abc\", context.Canceled", got, err)
	}
	if idle == 0 {
		t.Error("idle was never called before waiting on the pipe")
	}
	pw.CloseWithError(io.ErrClosedPipe) // the blocked Read of the source returns
}

// TestOpenContextEndsOnSilentPipes: OpenContext of a pipe that sends
// nothing, and of a FIFO that no writer has opened (whose open waits),
// returns ctx's error once ctx ends, rather than wait for the writer.
func TestOpenContextEndsOnSilentPipes(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	pr, pw := io.Pipe()
	defer pw.Close()
	for _, tt := range []struct {
		name string
		opts Options
	}{
		{"-", Options{Stdin: pr}},
		{fifo, Options{}},
	} {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			f, err := OpenContext(ctx, tt.name, tt.opts)
			if err == nil {
				f.Close()
			}
			done <- err
		}()
		time.Sleep(20 * time.Millisecond) // let it wait; the result is the same either way
		cancel()
		select {
		case err := <-done:
			if !errors.Is(err, context.Canceled) {
				t.Errorf("OpenContext(%s): got %v, want context.Canceled", tt.name, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("OpenContext(%s) did not return after its context ended", tt.name)
		}
	}
	pw.CloseWithError(io.ErrClosedPipe)
	// A writer lets the open left waiting return, and close the file.
	if w, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
		w.Close()
	}
}
