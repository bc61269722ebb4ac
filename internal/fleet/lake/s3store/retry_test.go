package s3store

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
)

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

func TestTransient(t *testing.T) {
	dial := func(errno syscall.Errno) error {
		return &url.Error{Op: "Put", URL: "http://127.0.0.1:1/b/k", Err: &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", errno)}}
	}
	for _, c := range []struct {
		name string
		err  error
		want bool
	}{
		{"SlowDown", minio.ErrorResponse{Code: "SlowDown", StatusCode: 503}, true},
		{"InternalError", minio.ErrorResponse{Code: "InternalError", StatusCode: 500}, true},
		{"ServiceUnavailable", minio.ErrorResponse{Code: "ServiceUnavailable", StatusCode: 503}, true},
		{"502 without a code", minio.ErrorResponse{StatusCode: 502}, true},
		{"RequestTimeout", minio.ErrorResponse{Code: "RequestTimeout", StatusCode: 400}, true},
		{"429", minio.ErrorResponse{Code: "TooManyRequests", StatusCode: 429}, true},
		{"wrapped 503", fmt.Errorf("put: %w", minio.ErrorResponse{Code: "SlowDown", StatusCode: 503}), true},
		{"AccessDenied", minio.ErrorResponse{Code: "AccessDenied", StatusCode: 403}, false},
		{"NoSuchBucket", minio.ErrorResponse{Code: "NoSuchBucket", StatusCode: 404}, false},
		{"NoSuchKey", minio.ErrorResponse{Code: "NoSuchKey", StatusCode: 404}, false},
		{"InvalidAccessKeyId", minio.ErrorResponse{Code: "InvalidAccessKeyId", StatusCode: 403}, false},
		{"SignatureDoesNotMatch", minio.ErrorResponse{Code: "SignatureDoesNotMatch", StatusCode: 403}, false},
		{"RequestTimeTooSkewed", minio.ErrorResponse{Code: "RequestTimeTooSkewed", StatusCode: 403}, false},
		{"InvalidArgument (client side)", minio.ErrorResponse{Code: "InvalidArgument"}, false},
		{"connection refused", dial(syscall.ECONNREFUSED), true},
		{"connection reset", dial(syscall.ECONNRESET), true},
		{"broken pipe", fmt.Errorf("write: %w", syscall.EPIPE), true},
		{"unexpected EOF", &url.Error{Op: "Put", URL: "u", Err: io.ErrUnexpectedEOF}, true},
		{"timeout", &url.Error{Op: "Put", URL: "u", Err: timeoutErr{}}, true},
		{"deadline of a request", context.DeadlineExceeded, true},
		{"DNS", &url.Error{Op: "Put", URL: "u", Err: &net.OpError{Op: "dial", Err: &net.DNSError{Err: "no such host", Name: "x"}}}, true},
		{"canceled", context.Canceled, false},
		{"canceled in a url.Error", &url.Error{Op: "Put", URL: "u", Err: context.Canceled}, false},
		{"unknown certificate authority", &url.Error{Op: "Put", URL: "u", Err: x509.UnknownAuthorityError{}}, false},
		{"a local error", errors.New("spool: no space left"), false},
		{"nil", nil, false},
	} {
		if got := transient(c.err); got != c.want {
			t.Errorf("transient(%s: %v) = %v, want %v", c.name, c.err, got, c.want)
		}
	}
}

func TestBackoff(t *testing.T) {
	lo := func(n int64) int64 { return 0 }
	hi := func(n int64) int64 { return n - 1 }
	min, max := 100*time.Millisecond, 5*time.Second
	for n, want := range []time.Duration{100, 200, 400, 800, 1600, 3200, 5000, 5000, 5000} {
		want *= time.Millisecond
		if got := backoff(n, min, max, lo); got != want/2 {
			t.Errorf("backoff(%d) at least = %v, want %v", n, got, want/2)
		}
		if got := backoff(n, min, max, hi); got != want {
			t.Errorf("backoff(%d) at most = %v, want %v", n, got, want)
		}
	}
	if got := backoff(1000, min, max, hi); got != max {
		t.Errorf("backoff(1000) = %v, want %v (no overflow)", got, max)
	}
}

// script is an S3 server's answers, in order, to the requests of a
// Store: a RoundTripper, so that the Store's retry loop is tested
// without a server (internal/fleet/lake/s3test runs the Store against a real
// one).
type script struct {
	mu      sync.Mutex
	answers []answer
	got     []string // "METHOD path" of each request
	bodies  []string // the body of each PUT
}

// answer is a status and an S3 error code, or a network error.
type answer struct {
	status int
	code   string
	err    error
}

func (s *script) RoundTrip(r *http.Request) (*http.Response, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.got = append(s.got, r.Method+" "+r.URL.Path)
	if r.Method == http.MethodPut && r.Body != nil {
		b, _ := io.ReadAll(r.Body)
		s.bodies = append(s.bodies, string(b))
	}
	a := answer{status: 200}
	if len(s.answers) > 0 {
		a, s.answers = s.answers[0], s.answers[1:]
	}
	if a.err != nil {
		return nil, a.err
	}
	body := ""
	if a.code != "" {
		body = fmt.Sprintf("<Error><Code>%s</Code><Message>%s said the script</Message></Error>", a.code, a.code)
	}
	h := http.Header{"Content-Type": {"application/xml"}, "Etag": {`"0"`}}
	return &http.Response{StatusCode: a.status, Status: http.StatusText(a.status), Header: h,
		Body: io.NopCloser(strings.NewReader(body)), ContentLength: int64(len(body)), Request: r}, nil
}

func (s *script) requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.got...)
}

var testEnv = map[string]string{"AWS_ACCESS_KEY_ID": "id", "AWS_SECRET_ACCESS_KEY": "secret", "AWS_ENDPOINT_URL": "http://s3.test:8333"}

// open opens s3://lake/fleet through the script, recording the waits
// between retries instead of waiting.
func open(t *testing.T, sc *script, retries int) (*Store, *[]time.Duration) {
	t.Helper()
	var waits []time.Duration
	s, err := Open(context.Background(), "s3://lake/fleet", Options{
		Env: func(k string) string { return testEnv[k] }, Transport: sc, Retries: retries, TempDir: t.TempDir(),
		Sleep: func(ctx context.Context, d time.Duration) error { waits = append(waits, d); return ctx.Err() },
	})
	if err != nil {
		t.Fatal(err)
	}
	waits = nil
	sc.mu.Lock()
	sc.got = nil
	sc.mu.Unlock()
	return s, &waits
}

// TestCommitRetries: an upload that meets a passing failure (a 503, a
// refused connection, a reset) is sent again, whole, after a growing
// wait, and Commit returns once the store answered 200.
func TestCommitRetries(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	sc := &script{}
	s, waits := open(t, sc, 5)
	sc.answers = []answer{{status: 503, code: "SlowDown"}, {err: refused}, {status: 500, code: "InternalError"}}
	f, err := s.Create("message=A/date=2026-12-04/can0-x.parquet")
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(f, "whole file")
	if err := f.Commit(); err != nil {
		t.Fatalf("Commit: %v, want success on the 4th attempt", err)
	}
	want := "PUT /lake/fleet/message=A/date=2026-12-04/can0-x.parquet"
	if got := sc.requests(); len(got) != 4 || got[3] != want {
		t.Errorf("requests %q, want 4 times %q", got, want)
	}
	for i, b := range sc.bodies {
		if b != "whole file" && !strings.Contains(b, "whole file") {
			t.Errorf("upload %d sent %q, want the whole file", i, b)
		}
	}
	if len(*waits) != 3 || (*waits)[0] > (*waits)[2] || (*waits)[2] < 200*time.Millisecond {
		t.Errorf("waits %v, want 3 growing ones", *waits)
	}
	if err := f.Commit(); err == nil {
		t.Error("a second Commit succeeded")
	}
}

// TestCommitRefused: a refusal is not retried, and the error names the
// object, the store's code and its message; a passing failure that
// lasts is retried Retries times, then named with the attempts.
func TestCommitRefused(t *testing.T) {
	for _, c := range []struct {
		name     string
		answers  []answer
		requests int
		want     []string
	}{
		{"AccessDenied", []answer{{status: 403, code: "AccessDenied"}}, 1,
			[]string{"s3store: put s3://lake/fleet/a/b.parquet: AccessDenied (403): AccessDenied said the script"}},
		{"NoSuchBucket", []answer{{status: 404, code: "NoSuchBucket"}}, 1,
			[]string{"put s3://lake/fleet/a/b.parquet: NoSuchBucket (404)"}},
		{"SlowDown for ever", []answer{{status: 503, code: "SlowDown"}, {status: 503, code: "SlowDown"}, {status: 503, code: "SlowDown"}, {status: 503, code: "SlowDown"}}, 4,
			[]string{"put s3://lake/fleet/a/b.parquet: gave up after 4 attempts", "SlowDown (503)"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			sc := &script{}
			s, _ := open(t, sc, 3)
			sc.answers = c.answers
			f, err := s.Create("a/b.parquet")
			if err != nil {
				t.Fatal(err)
			}
			io.WriteString(f, "x")
			err = f.Commit()
			for _, w := range c.want {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("Commit: %v, want an error with %q", err, w)
				}
			}
			var e *Error
			if !errors.As(err, &e) || e.Attempts != c.requests {
				t.Errorf("Commit: %#v, want an *Error of %d attempts", err, c.requests)
			}
			if got := sc.requests(); len(got) != c.requests {
				t.Errorf("%d requests %q, want %d", len(got), got, c.requests)
			}
			if left, _ := os.ReadDir(s.opt.TempDir); len(left) != 0 {
				t.Errorf("spool files left: %v", left)
			}
		})
	}
}

// TestRetryStopsWithContext: the store's context ends the waits.
func TestRetryStopsWithContext(t *testing.T) {
	sc := &script{}
	ctx, cancel := context.WithCancel(context.Background())
	waiting := make(chan struct{})
	s, err := Open(ctx, "s3://lake", Options{Env: func(k string) string { return testEnv[k] }, Transport: sc,
		MinBackoff: time.Hour, MaxBackoff: time.Hour,
		Retried: func(Retry) { close(waiting) }})
	if err != nil {
		t.Fatal(err)
	}
	sc.answers = []answer{{status: 503, code: "SlowDown"}}
	done := make(chan error)
	go func() { done <- s.WriteFile("x", []byte("x")) }()
	<-waiting // minio-go's own short wait after a failed attempt is over: the Store's hour begins
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "SlowDown") {
			t.Errorf("WriteFile: %v, want context canceled after SlowDown", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("WriteFile still waiting an hour after its context ended")
	}
}

// TestReadFileNotExist: a missing object is fs.ErrNotExist (the lake
// then writes its marker); a missing bucket is not.
func TestReadFileNotExist(t *testing.T) {
	sc := &script{}
	s, _ := open(t, sc, 3)
	sc.answers = []answer{{status: 404, code: "NoSuchKey"}}
	if _, err := s.ReadFile(".candec-lake", 1<<10); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "s3://lake/fleet/.candec-lake") {
		t.Errorf("ReadFile of a missing key: %v, want fs.ErrNotExist naming it", err)
	}
	sc.answers = []answer{{status: 404, code: "NoSuchBucket"}}
	if _, err := s.ReadFile(".candec-lake", 1<<10); err == nil || errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "NoSuchBucket") {
		t.Errorf("ReadFile in a missing bucket: %v, want NoSuchBucket, not fs.ErrNotExist", err)
	}
}

// TestOpenRefused: missing credentials, a missing bucket and a refused
// key fail at Open, named.
func TestOpenRefused(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	if _, err := Open(context.Background(), "s3://lake", Options{Env: env(nil)}); err == nil || !strings.Contains(err.Error(), "AWS_ACCESS_KEY_ID") {
		t.Errorf("Open without credentials: %v, want an error naming AWS_ACCESS_KEY_ID", err)
	}
	for _, c := range []struct {
		a    answer
		want string
	}{
		{answer{status: 404}, `open s3://lake/fleet: no such bucket "lake" at s3.test:8333`},
		{answer{status: 403}, "open s3://lake/fleet: AccessDenied (403)"},
	} {
		sc := &script{answers: []answer{c.a}}
		_, err := Open(context.Background(), "s3://lake/fleet", Options{Env: env(testEnv), Transport: sc})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Open answered %d: %v, want %q", c.a.status, err, c.want)
		}
	}
}
