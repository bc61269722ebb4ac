package benchmarks

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/yukart/candec/benchmarks/scenario"
	"github.com/yukart/candec/capture"
)

// TestRunChecksCapture: a capture that is missing or of no known format
// fails the run before any process starts (the binary named here does
// not exist, so starting one would fail otherwise).
func TestRunChecksCapture(t *testing.T) {
	dir := t.TempDir()
	notes := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notes, []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "none.log")
	for _, tt := range []struct {
		capture string
		is      error
	}{
		{notes, capture.ErrFormat},
		{missing, os.ErrNotExist},
	} {
		var out, log bytes.Buffer
		runs := []scenario.Run{{Scenario: "bad-capture", Capture: tt.capture, DBC: scenario.DBC{File: "../testdata/yukart.dbc"}}}
		_, err := Run(context.Background(), Config{
			Exe: filepath.Join(dir, "no-candec"), Host: "test", ResultsDir: dir, WorkDir: dir,
			Out: &out, Log: &log, IdleWait: -1,
		}, runs)
		if !errors.Is(err, tt.is) || !strings.Contains(err.Error(), "bad-capture: bench: ") || !strings.Contains(err.Error(), tt.capture) {
			t.Errorf("capture %s: got %v, want a bench error naming it, wrapping %v", tt.capture, err, tt.is)
		}
	}
}
