package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGenerateDefaultsReproduceIdleLog runs the command as the README
// says, from the repository root: its defaults must give the checked-in
// capture.
func TestGenerateDefaultsReproduceIdleLog(t *testing.T) {
	out := filepath.Join(t.TempDir(), "idle.log")
	t.Chdir(filepath.Join("..", ".."))
	var stderr bytes.Buffer
	if err := run(context.Background(), env{nil, &bytes.Buffer{}, &stderr}, []string{"generate", "-o", out}); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join("testdata", "idle.log"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("candec generate -o FILE: got %d bytes, want testdata/idle.log's %d, byte for byte", len(got), len(want))
	}
	if !strings.Contains(stderr.String(), "17827 frames") {
		t.Errorf("stderr: got %q, want a summary with 17827 frames", stderr.String())
	}
}

func TestGenerateBadFlags(t *testing.T) {
	dbcPath := filepath.Join("..", "..", "testdata", "yukart.dbc")
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--dbc", dbcPath, "--scenario", "race"}, "unknown scenario"},
		{[]string{"--dbc", dbcPath, "--duration", "-1s"}, "negative duration"},
		{[]string{"--dbc", dbcPath, "--start", "yesterday"}, "--start"},
		{[]string{"--dbc", dbcPath, "extra"}, "unexpected argument"},
		{[]string{"--dbc", "missing.dbc"}, "missing.dbc"},
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), env{nil, &stdout, &stderr}, append([]string{"generate"}, tt.args...))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("generate %v: got %v, want an error mentioning %q", tt.args, err, tt.want)
		}
		if stdout.Len() != 0 {
			t.Errorf("generate %v: wrote %d bytes to stdout, want none", tt.args, stdout.Len())
		}
	}
}

func TestGenerateStdout(t *testing.T) {
	var stdout bytes.Buffer
	args := []string{"generate", "--dbc", filepath.Join("..", "..", "testdata", "mix8.dbc"), "--scenario", "drive", "--duration", "1s", "--seed", "9", "--iface", "vcan3"}
	if err := run(context.Background(), env{nil, &stdout, &bytes.Buffer{}}, args); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n")
	if len(lines) < 850 || len(lines) > 940 {
		t.Errorf("1 s of mix8: got %d lines, want about 891", len(lines))
	}
	if !strings.Contains(lines[0], ") vcan3 ") {
		t.Errorf("first line %q: want interface vcan3", lines[0])
	}
}
