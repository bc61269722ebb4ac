package s3store

import (
	"bytes"
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// silentServer accepts TCP connections and never answers, until the
// test ends; it returns its http:// URL, and a channel closed at its
// first connection.
func silentServer(t *testing.T) (string, <-chan struct{}) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	done, accepted := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			if len(conns) == 0 {
				close(accepted)
			}
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	})
	return "http://" + ln.Addr().String(), accepted
}

// syncBuffer is a bytes.Buffer for one writer and one reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestOpenSilentServer: a server that accepts TCP and never answers
// costs RequestTimeout per attempt (before, minio-go's minute), each
// retry says what, where and attempt n of m, and the error comes after
// every attempt, within their bound.
func TestOpenSilentServer(t *testing.T) {
	url, _ := silentServer(t)
	env := map[string]string{"AWS_ACCESS_KEY_ID": "id", "AWS_SECRET_ACCESS_KEY": "secret", "AWS_ENDPOINT_URL": url}
	var lines syncBuffer
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
	var lines syncBuffer
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
