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

// TestPredictionWarning: a run within 2 % of tune's prediction passes,
// one further is warned of with both figures; no prediction, no warning.
func TestPredictionWarning(t *testing.T) {
	for _, tt := range []struct {
		predicted, got float64
		want           string
	}{
		{8530, 8505.4, ""},
		{8530, 8700, ""},
		{8530, 8000, "8000 deliveries/s, -6.2 % from the 8530 candec tune predicted"},
		{8530, 8800, "8800 deliveries/s, +3.2 % from the 8530 candec tune predicted"},
		{0, 5000, ""},
	} {
		if got := predictionWarning(tt.predicted, tt.got); got != tt.want {
			t.Errorf("predicted %g, got %g: %q, want %q", tt.predicted, tt.got, got, tt.want)
		}
	}
}
