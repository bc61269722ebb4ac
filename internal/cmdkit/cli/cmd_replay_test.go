package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/yukart/candec/internal/cmdkit/replay"
	"github.com/yukart/candec/internal/testkit/brokertest"
)

// writeCapture writes a capture of n frames, gap apart, and returns its
// path; extra lines come first.
func writeCapture(t *testing.T, n int, gap time.Duration, extra ...string) string {
	t.Helper()
	var b strings.Builder
	for _, l := range extra {
		b.WriteString(l + "\n")
	}
	for i := range n {
		at := time.Duration(i) * gap
		fmt.Fprintf(&b, "(%d.%06d) can0 123#0102\n", 1000+int(at/time.Second), int(at%time.Second/time.Microsecond))
	}
	path := filepath.Join(t.TempDir(), "c.log")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestReplayBadInput: flags out of range and a missing file are one line
// naming them, a non-zero exit, before any connection and without a
// summary of nothing.
func TestReplayBadInput(t *testing.T) {
	url := unreachableURL(t)
	good := writeCapture(t, 2, time.Millisecond)
	missing := filepath.Join(t.TempDir(), "none.log")
	dir := t.TempDir()
	notes := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notes, []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
		code int
	}{
		{[]string{"--speed", "0", good}, "--speed must be between 0.001 and 1000, got 0", 2},
		{[]string{"--speed", "1e-300", good}, "--speed must be between 0.001 and 1000, got 1e-300", 2},
		{[]string{"--speed", "1001", good}, "--speed must be between 0.001 and 1000, got 1001", 2},
		{[]string{"--speed", "NaN", good}, "--speed must be between 0.001 and 1000, got NaN", 2},
		{[]string{"--window", "0", good}, "--window must be between 100µs and 10s, got 0s", 2},
		{[]string{"--window", "-1ms", good}, "--window must be between 100µs and 10s, got -1ms", 2},
		{[]string{"--connect-timeout", "0", good}, "--connect-timeout must be between 1ms and 5m0s, got 0s", 2},
		{[]string{"--topic", "yukart/can/#", good}, `replay: --topic "yukart/can/#" must be a topic name`, 2},
		{[]string{missing}, "replay: open " + missing + ": no such file or directory", 1},
		{[]string{dir}, "replay: capture: " + dir + " is a directory, not a capture", 1},
		{[]string{notes}, "replay: " + notes + `: capture: unknown format: its first line is "hello"`, 1},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			args := append([]string{"replay", "--broker", url, "--connect-timeout", "20s"}, tc.args...)
			start := time.Now()
			err := run(context.Background(), Env{nil, &stdout, &stderr}, args)
			if err == nil || ExitCode(err) != tc.code || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v (exit %d), want one line containing %q and exit %d", err, ExitCode(err), tc.want, tc.code)
			}
			if stdout.Len()+stderr.Len() != 0 {
				t.Errorf("printed %q %q, want nothing before the error", stdout.String(), stderr.String())
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("took %v: it tried to connect", d)
			}
		})
	}
	// --flood ignores the speed, --per-frame the window.
	var stderr bytes.Buffer
	err := run(context.Background(), Env{nil, &bytes.Buffer{}, &stderr}, []string{"replay", "--broker", url, "--connect-timeout", "100ms", "--flood", "--speed", "0", "--per-frame", "--window", "0", good})
	if err == nil || !strings.Contains(err.Error(), "no connection to") {
		t.Errorf("--flood --speed 0 --per-frame --window 0: got %v, want only the connection error", err)
	}
}

// TestReplayUnreachable: a broker that does not answer is an error
// naming it within --connect-timeout.
func TestReplayUnreachable(t *testing.T) {
	checkUnreachable(t, "replay", writeCapture(t, 2, time.Millisecond))
}

// TestReplayBrokerKilled: a broker that goes away mid-run makes the
// replay fail with the count of failed publishes.
func TestReplayBrokerKilled(t *testing.T) {
	b := brokertest.Start(t)
	sub := brokertest.Connect(t, b.URL)
	sub.Subscribe("yukart/can/raw")
	capPath := writeCapture(t, 150, 10*time.Millisecond) // 1.5 s
	var stderr bytes.Buffer
	done := make(chan error, 1)
	go func() {
		done <- run(context.Background(), Env{nil, &bytes.Buffer{}, &stderr}, []string{"replay", "--broker", b.URL, capPath})
	}()
	sub.WaitFor("three batches", func(m []brokertest.Message) bool { return len(m) >= 3 })
	b.Stop()
	var err error
	select {
	case err = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("replay did not end")
	}
	if err == nil || ExitCode(err) == 0 || !strings.Contains(err.Error(), "batches failed to publish to "+b.URL) {
		t.Fatalf("got %v, want a non-zero exit counting the failed publishes\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "replay: publishing to "+b.URL+" fails:") || !strings.Contains(stderr.String(), "failed publishes (") {
		t.Errorf("output %q lacks the notice when publishing began failing, or the failed publishes in the summary", stderr.String())
	}
}

// TestReplaySkipped: what is skipped is counted by reason, and says why.
func TestReplaySkipped(t *testing.T) {
	b := brokertest.Start(t)
	capPath := writeCapture(t, 3, time.Millisecond, "(999.000000) can0 123##1001122334455667788", "garbage")
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), Env{nil, &stdout, &stderr}, []string{"replay", "--broker", b.URL, "--skip-invalid", capPath}); err != nil {
		t.Fatal(err)
	}
	if want := "skipped 1 CAN FD frame (wire format v1 carries classic CAN only), 1 malformed line"; !strings.Contains(stderr.String(), want) {
		t.Errorf("summary %q lacks %q", stderr.String(), want)
	}
	stdout.Reset()
	if err := run(context.Background(), Env{nil, &stdout, &bytes.Buffer{}}, []string{"replay", "--broker", b.URL, "--skip-invalid", "--json", capPath}); err != nil {
		t.Fatal(err)
	}
	var st replay.Stats
	if err := json.Unmarshal(stdout.Bytes(), &st); err != nil {
		t.Fatal(err)
	}
	if st.Frames != 3 || st.Skipped != 2 || st.SkippedBy[replay.SkipFD] != 1 || st.SkippedBy[replay.SkipMalformed] != 1 {
		t.Errorf("stats %+v; want 3 frames, 2 skipped: 1 CAN FD, 1 malformed", st)
	}
}
