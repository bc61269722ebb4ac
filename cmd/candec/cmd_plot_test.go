package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/yukart/candec/internal/cmdkit/cli"
	"github.com/yukart/candec/internal/lab/chart/charttest"
)

func TestPlot(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "speed.svg")
	const dbcFile = "../../testdata/yukart.dbc"
	const capFile = "../../testdata/idle.log"
	tests := []struct {
		name     string
		args     []string
		wantExit int
		wantErr  string
	}{
		{"writes the picture", []string{"--dbc", dbcFile, "--signals", "WSS_Speed*", "-o", out, capFile}, 0, ""},
		{"glob matching nothing", []string{"--dbc", dbcFile, "--signals", "Nope*", "-o", out, capFile}, 2, `no signal matches "Nope*"`},
		{"output is the input", []string{"--dbc", dbcFile, "--signals", "*", "-o", capFile, capFile}, 2, ""},
		{"not svg or png", []string{"--dbc", dbcFile, "--signals", "*", "-o", filepath.Join(dir, "x.pdf"), capFile}, 2, ".svg or .png"},
		{"no glob", []string{"--dbc", dbcFile, "-o", out, capFile}, 2, "--signals GLOB is required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			err := run(context.Background(), cli.Env{Stdin: nil, Stdout: &bytes.Buffer{}, Stderr: &stderr}, append([]string{"plot"}, tt.args...))
			if tt.wantExit == 0 {
				if err != nil {
					t.Fatalf("got error %v, want none", err)
				}
				svg, err := os.ReadFile(out)
				if err != nil {
					t.Fatal(err)
				}
				charttest.Check(t, svg, "WSS_SpeedFL", "km/h", "time since the first frame (s)")
				return
			}
			if err == nil || cli.ExitCode(err) != tt.wantExit || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("got %v (exit %d), want exit %d naming %q", err, cli.ExitCode(err), tt.wantExit, tt.wantErr)
			}
		})
	}
}
