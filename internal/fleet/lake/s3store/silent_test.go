package s3store

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/yukart/candec/internal/testkit"
)

// silentServer is an endpoint that accepts TCP and never answers,
// until the test ends: its http:// URL, and a channel closed at its
// first connection.
func silentServer(t *testing.T) (string, <-chan struct{}) {
	addr, accepted := testkit.SilentListener(t)
	return "http://" + addr, accepted
}

// TestOpenSilentServer: a server that accepts TCP and never answers
// costs RequestTimeout per attempt (before, minio-go's minute), each
// retry says what, where and attempt n of m, and the error comes after
// every attempt, within their bound.
func TestOpenSilentServer(t *testing.T) {
	url, _ := silentServer(t)
	env := map[string]string{"AWS_ACCESS_KEY_ID": "id", "AWS_SECRET_ACCESS_KEY": "secret", "AWS_ENDPOINT_URL": url}
	var lines testkit.SyncBuffer
	const timeout, retries = 300 * time.Millisecond, 2
	start := time.Now()
	_, err := Open(context.Background(), "s3://lake/kart", Options{Env: func(k string) string { return env[k] },
		RequestTimeout: timeout, Retries: retries, MinBackoff: 10 * time.Millisecond, MaxBackoff: 20 * time.Millisecond,
		Retried: RetryLine(&lines)})
	took := time.Since(start)
	var se *Error
	if !errors.As(err, &se) || se.Attempts != retries+1 {
		t.Fatalf("got %v, want an *Error after %d attempts", err, retries+1)
	}
	// The bound: every attempt's timeout and the waits; the margin is
	// for a busy machine.
	if limit := (retries+1)*timeout + 5*time.Second; took > limit {
		t.Errorf("gave up after %v, want at most %v", took, limit)
	}
	for i := 1; i <= retries; i++ {
		want := "s3store: open s3://lake/kart: attempt " + string(rune('0'+i)) + " of 3 failed ("
		if !strings.Contains(lines.String(), want) {
			t.Errorf("the retry lines lack %q:\n%s", want, lines.String())
		}
	}
	if !strings.Contains(lines.String(), "timeout awaiting response headers") {
		t.Errorf("the retry lines do not say why:\n%s", lines.String())
	}
}

// TestOpenSilentServerEndsWithContext: the end of the store's context
// (a signal) ends an attempt in flight against a silent server at once.
func TestOpenSilentServerEndsWithContext(t *testing.T) {
	url, accepted := silentServer(t)
	env := map[string]string{"AWS_ACCESS_KEY_ID": "id", "AWS_SECRET_ACCESS_KEY": "secret", "AWS_ENDPOINT_URL": url}
	ctx, cancel := context.WithCancel(context.Background())
	var lines testkit.SyncBuffer
	done := make(chan error, 1)
	go func() {
		_, err := Open(ctx, "s3://lake/kart", Options{Env: func(k string) string { return env[k] }, RequestTimeout: time.Minute,
			Retried: RetryLine(&lines)})
		done <- err
	}()
	<-accepted // the attempt waits for the answer
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("got %v, want the context's end", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Open went on after its context ended")
	}
}
