package main

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/yukart/candec/internal/cmdkit/cli"
	"github.com/yukart/candec/internal/testkit"
)

// silentS3 sets the AWS variables to an endpoint that accepts TCP and
// never answers, for this test and the processes it starts.
func silentS3(t *testing.T) {
	t.Helper()
	addr, _ := testkit.SilentListener(t)
	t.Setenv("AWS_ACCESS_KEY_ID", "id")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
	t.Setenv("AWS_ENDPOINT_URL_S3", "http://"+addr)
}

// retryLine is what a retry of the lake's open against silentS3 says
// first, after one request timeout (5 s).
const retryLine = "s3store: open s3://lake/kart: attempt 1 of 9 failed ("

// TestIngestS3SilentStopsOnSignal: `candec ingest --out-dir s3://…`
// against an object store that accepts TCP and never answers says
// each retry on stderr (what, where, attempt n of m) and stops at once
// on SIGTERM, exit status 1, saying it was interrupted while opening
// the lake. Before, it ignored SIGTERM and SIGINT and gave up, without
// a word, after 9 min 14 s.
func TestIngestS3SilentStopsOnSignal(t *testing.T) {
	silentS3(t)
	p, stderr := startCandec(t, nil, "ingest", "--broker", "mqtt://127.0.0.1:1", "--dbc", yukartDBC, "--out-dir", "s3://lake/kart", "--id", "silent")
	waitStderr(t, p, stderr, retryLine, 1)
	sendSignal(t, p, syscall.SIGTERM)
	if code := exitOf(t, p, promptly, stderr); code != 1 {
		t.Errorf("got exit status %d, want 1\n%s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "ingest: interrupted while opening the lake s3://lake/kart") {
		t.Errorf("stderr does not say the open was interrupted:\n%s", stderr.String())
	}
}

// TestDecodeS3SilentSaysRetry: `candec decode --out-dir s3://…` to such
// a store says each retry on stderr (before: nothing for ten minutes),
// and ends when its context does.
func TestDecodeS3SilentSaysRetry(t *testing.T) {
	silentS3(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr testkit.SyncBuffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, cli.Env{Stdin: nil, Stdout: &testkit.SyncBuffer{}, Stderr: &stderr}, []string{"decode", "--dbc", yukartDBC, "--out-dir", "s3://lake/kart", idleLog})
	}()
	deadline := time.Now().Add(promptly)
	for !strings.Contains(stderr.String(), retryLine) {
		if time.Now().After(deadline) {
			t.Fatalf("no retry line within %v:\n%s", promptly, stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	select {
	case err := <-done:
		if err == nil || cli.ExitCode(err) == 0 {
			t.Errorf("got %v, want a failure", err)
		}
	case <-time.After(promptly):
		t.Fatal("decode went on after its context ended")
	}
}
