package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/yukart/candec/internal/cmdkit/cli"
)

// TestWholeFileReadsRefuseNonRegularAndHuge: every file a command reads
// whole (a DBC, the config, a policy, the scenarios) is refused at once
// when it is a FIFO (whose open would wait for a writer), a device
// (/dev/zero, which reads for ever) or a directory, and when it is
// bigger than its limit, with an error naming the file; none is read
// into memory.
func TestWholeFileReadsRefuseNonRegularAndHuge(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	// 100 MiB of nothing, sparse on disk: over every limit.
	huge := filepath.Join(dir, "huge")
	if err := os.WriteFile(huge, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(huge, 100<<20); err != nil {
		t.Fatal(err)
	}
	const dbcFile, capture = "../../testdata/yukart.dbc", "../../testdata/idle.log"
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"dbc FIFO", []string{"dbc", fifo}, "dbc: " + fifo + " is a FIFO (named pipe), not a regular file"},
		{"dbc /dev/zero", []string{"dbc", "/dev/zero"}, "dbc: /dev/zero is a device, not a regular file"},
		{"dbc directory", []string{"dbc", dir}, "dbc: " + dir + " is a directory, not a regular file"},
		{"dbc huge", []string{"dbc", huge}, "dbc: " + huge + " is 100 MiB, over the limit of 64 MiB"},
		{"run config FIFO", []string{"run", "--config", fifo}, fifo + " is a FIFO (named pipe), not a regular file"},
		{"run config /dev/zero", []string{"run", "--config", "/dev/zero"}, "/dev/zero is a device, not a regular file"},
		{"run config huge", []string{"run", "--config", huge}, huge + " is 100 MiB, over the limit of 1 MiB"},
		{"run DBC FIFO", []string{"run", "--dbc", fifo}, fifo + " is a FIFO (named pipe), not a regular file"},
		{"run policy FIFO", []string{"run", "--dbc", dbcFile, "--policy", fifo}, "load policy: " + fifo + " is a FIFO (named pipe), not a regular file"},
		{"run policy huge", []string{"run", "--dbc", dbcFile, "--policy", huge}, "load policy: " + huge + " is 100 MiB, over the limit of 4 MiB"},
		{"decode DBC FIFO", []string{"decode", "--dbc", fifo, capture}, fifo + " is a FIFO (named pipe), not a regular file"},
		{"decode policy FIFO", []string{"decode", "--dbc", dbcFile, "--policy", fifo, capture}, "load policy: " + fifo + " is a FIFO (named pipe), not a regular file"},
		{"tune policy /dev/zero", []string{"tune", "--dbc", dbcFile, "--policy", "/dev/zero", capture}, "/dev/zero is a device, not a regular file"},
		{"plot DBC FIFO", []string{"plot", "--dbc", fifo, "--signals", "*", "-o", filepath.Join(dir, "p.svg"), capture}, fifo + " is a FIFO (named pipe), not a regular file"},
		{"generate DBC huge", []string{"generate", "--dbc", huge, "-o", filepath.Join(dir, "g.log")}, huge + " is 100 MiB, over the limit of 64 MiB"},
		{"bench scenarios /dev/zero", []string{"bench", "--scenarios", "/dev/zero"}, "/dev/zero is a device, not a regular file"},
		{"bench scenarios FIFO", []string{"bench", "--scenarios", fifo}, fifo + " is a FIFO (named pipe), not a regular file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan error, 1)
			var stdout, stderr bytes.Buffer
			go func() {
				done <- run(ctx, cli.Env{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr}, tt.args)
			}()
			select {
			case err := <-done:
				if err == nil || cli.ExitCode(err) == 0 || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("candec %s: got %v, want an error saying %q", strings.Join(tt.args, " "), err, tt.want)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("candec %s: no answer within 10 s (a read that waits)", strings.Join(tt.args, " "))
			}
		})
	}
}
