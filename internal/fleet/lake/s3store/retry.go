package s3store

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/url"
	"syscall"
	"time"

	"github.com/minio/minio-go/v7"
)

// Retry defaults: a request that fails in a way that can pass is tried
// again DefaultRetries times, after DefaultMinBackoff, doubling up to
// DefaultMaxBackoff (8 to 16 s of waiting in all, then the error).
const (
	DefaultRetries    = 8
	DefaultMinBackoff = 100 * time.Millisecond
	DefaultMaxBackoff = 5 * time.Second
	// DefaultRequestTimeout bounds each attempt's connection, TLS
	// handshake, and wait for the answer's headers once the request is
	// sent: a server that accepts and never answers costs at most this
	// per attempt, so a request gives up within 9 × 5 s plus the waits
	// (8 to 16 s), about a minute, instead of 9 minutes.
	DefaultRequestTimeout = 5 * time.Second
)

// transientCodes are S3 error codes that name a passing condition,
// whatever the status that carries them.
var transientCodes = map[string]bool{
	"SlowDown":             true,
	"InternalError":        true,
	"ServiceUnavailable":   true,
	"RequestTimeout":       true,
	"RequestTimeTooSkewed": false, // a clock to fix, not to wait out
	"OperationAborted":     true,
	"Throttling":           true,
	"ThrottlingException":  true,
}

// transient reports whether err can pass on its own, so that the
// request is worth trying again: a 5xx, a 408 or 429, an S3 code such
// as SlowDown, a network error or timeout, a connection refused or
// reset, a response cut short. Any other 4xx (AccessDenied,
// NoSuchBucket, InvalidAccessKeyId, SignatureDoesNotMatch) is an answer
// that the same request will get again, and the end of the store's
// context ends the retries.
func transient(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	var r minio.ErrorResponse
	if errors.As(err, &r) {
		if t, ok := transientCodes[r.Code]; ok {
			return t
		}
		return r.StatusCode >= 500 || r.StatusCode == 408 || r.StatusCode == 429
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, syscall.ECONNABORTED) || errors.Is(err, syscall.ETIMEDOUT) || errors.Is(err, syscall.EHOSTUNREACH) ||
		errors.Is(err, syscall.ENETUNREACH) {
		return true
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	if badTLS(err) {
		return false
	}
	var oe *net.OpError
	var ue *url.Error
	return errors.As(err, &oe) || errors.As(err, &ue)
}

// badTLS reports a certificate or TLS error: a configuration to fix
// (the endpoint's scheme, a CA), that no retry mends.
func badTLS(err error) bool {
	var cv *tls.CertificateVerificationError
	var rh tls.RecordHeaderError
	var ua x509.UnknownAuthorityError
	var hn x509.HostnameError
	var ci x509.CertificateInvalidError
	return errors.As(err, &cv) || errors.As(err, &rh) || errors.As(err, &ua) || errors.As(err, &hn) || errors.As(err, &ci)
}

// backoff is the wait before retry n (0 for the first): min doubling
// up to max, of which a random half (equal jitter, so that writers
// that failed together do not retry together).
func backoff(n int, min, max time.Duration, rnd func(int64) int64) time.Duration {
	d := min
	for i := 0; i < n && d < max; i++ {
		d *= 2
	}
	if d > max {
		d = max
	}
	half := d / 2
	if half <= 0 {
		return d
	}
	return half + time.Duration(rnd(int64(half)+1))
}

// Error is a request that the store refused, or that failed past its
// retries: what (Op, the object's URL), after how many attempts, and
// why (Err, an minio.ErrorResponse when the store answered).
type Error struct {
	Op, Name string
	Attempts int
	Elapsed  time.Duration
	Err      error
}

func (e *Error) Error() string {
	if e.Attempts > 1 {
		return fmt.Sprintf("s3store: %s %s: gave up after %d attempts in %s: %s",
			e.Op, e.Name, e.Attempts, e.Elapsed.Round(time.Millisecond), reason(e.Err))
	}
	return fmt.Sprintf("s3store: %s %s: %s", e.Op, e.Name, reason(e.Err))
}

func (e *Error) Unwrap() error { return e.Err }

// do runs op until it succeeds, fails in a way that will not pass, or
// has been retried s.opt.Retries times, waiting a backoff between
// attempts; or until the store's context ends.
func (s *Store) do(op, name string, try func(ctx context.Context) error) error {
	start := time.Now()
	for n := 1; ; n++ {
		err := try(s.ctx)
		if err == nil {
			return nil
		}
		if !transient(err) || n > s.opt.Retries {
			return &Error{Op: op, Name: name, Attempts: n, Elapsed: time.Since(start), Err: err}
		}
		d := backoff(n-1, s.opt.MinBackoff, s.opt.MaxBackoff, rand.Int64N)
		if s.opt.Retried != nil {
			s.opt.Retried(Retry{Op: op, Name: name, Attempt: n, Attempts: s.opt.Retries + 1, Err: err, Wait: d})
		}
		if serr := s.opt.Sleep(s.ctx, d); serr != nil {
			return &Error{Op: op, Name: name, Attempts: n, Elapsed: time.Since(start), Err: fmt.Errorf("%w (after %s)", serr, reason(err))}
		}
	}
}

// Retry is a failed attempt that will be tried again after Wait:
// attempt Attempt of at most Attempts, of request Op on Name.
type Retry struct {
	Op, Name          string
	Attempt, Attempts int
	Err               error
	Wait              time.Duration
}

// RetryLine returns an Options.Retried that writes each retry to w as
// a line: what, where, attempt n of m, why, and the wait. A request to
// a store that does not answer so says what it is doing while it
// retries, rather than nothing for a minute.
func RetryLine(w io.Writer) func(Retry) {
	return func(r Retry) {
		fmt.Fprintf(w, "s3store: %s %s: attempt %d of %d failed (%s); trying again in %v\n",
			r.Op, r.Name, r.Attempt, r.Attempts, reason(r.Err), r.Wait.Round(time.Millisecond))
	}
}

// reason says why a request failed: the S3 code, status and message
// when the store answered, the error otherwise.
func reason(err error) string {
	var r minio.ErrorResponse
	if errors.As(err, &r) && r.Code != "" {
		if r.StatusCode != 0 {
			return fmt.Sprintf("%s (%d): %s", r.Code, r.StatusCode, r.Message)
		}
		return fmt.Sprintf("%s: %s", r.Code, r.Message)
	}
	return err.Error()
}

// sleep waits d, or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
