package s3store

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/yukart/candec/internal/base/defaults"
	"github.com/yukart/candec/internal/fleet/lake"
)

// Options tune a Store. The zero value is the defaults.
type Options struct {
	// Env reads the AWS variables (credentials, region, endpoint); nil
	// is os.Getenv.
	Env func(string) string
	// Retries is how many times a request that failed in a way that
	// can pass is tried again; 0 is DefaultRetries, a negative number
	// none.
	Retries int
	// MinBackoff and MaxBackoff bound the wait before a retry, which
	// doubles from one to the other; 0 is DefaultMinBackoff,
	// DefaultMaxBackoff.
	MinBackoff, MaxBackoff time.Duration
	// TempDir holds the files being written until their upload; "" is
	// os.TempDir().
	TempDir string
	// Transport carries the requests; nil is minio-go's default with
	// RequestTimeout as its bounds.
	Transport http.RoundTripper
	// RequestTimeout bounds each attempt's connection, TLS handshake
	// and wait for the answer's headers (the body sent); 0 is
	// DefaultRequestTimeout. It applies to the default Transport.
	RequestTimeout time.Duration
	// Sleep waits d before a retry, or less if ctx ends (returning its
	// error); nil waits on a timer.
	Sleep func(ctx context.Context, d time.Duration) error
	// Retried, when set, is told of each failed attempt that will be
	// tried again: for a log (RetryLine) or a metric.
	Retried func(Retry)
}

// Store is a lake's files in an S3 bucket under a prefix: a lake.Store.
type Store struct {
	ctx    context.Context
	client *minio.Client
	bucket string
	prefix string // "" or without a trailing slash
	opt    Options
}

var _ lake.TempStore = (*Store)(nil)

// Open returns the store of the lake at rawURL, s3://bucket/prefix,
// with the credentials, region and endpoint of the AWS variables (see
// the package's documentation). It checks that the bucket exists and
// that the credentials may see it, so that a wrong URL or key fails
// here rather than at the first upload. ctx bounds the store's life:
// when it ends, requests in flight and waits between retries end too.
func Open(ctx context.Context, rawURL string, opt Options) (*Store, error) {
	bucket, prefix, err := ParseURL(rawURL)
	if err != nil {
		return nil, err
	}
	opt = opt.withDefaults()
	client, err := newClient(opt)
	if err != nil {
		return nil, err
	}
	s := &Store{ctx: ctx, client: client, bucket: bucket, prefix: prefix, opt: opt}
	var ok bool
	err = s.do("open", s.String(), func(ctx context.Context) (err error) {
		ok, err = client.BucketExists(ctx, bucket)
		return err
	})
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("s3store: open %s: no such bucket %q at %s", s, bucket, client.EndpointURL().Host)
	}
	return s, nil
}

func (o Options) withDefaults() Options {
	if o.Env == nil {
		o.Env = os.Getenv
	}
	switch {
	case o.Retries == 0:
		o.Retries = DefaultRetries
	case o.Retries < 0:
		o.Retries = 0
	}
	o.MinBackoff = defaults.Positive(o.MinBackoff, DefaultMinBackoff)
	o.MaxBackoff = defaults.Positive(o.MaxBackoff, DefaultMaxBackoff)
	o.MaxBackoff = max(o.MaxBackoff, o.MinBackoff)
	if o.Sleep == nil {
		o.Sleep = sleep
	}
	o.RequestTimeout = defaults.Positive(o.RequestTimeout, DefaultRequestTimeout)
	return o
}

// newClient makes the S3 client of the AWS variables. minio-go's own
// retries are off: the Store retries, with its bounds and its
// classification of errors.
func newClient(opt Options) (*minio.Client, error) {
	ep, err := parseEndpoint(opt.Env)
	if err != nil {
		return nil, err
	}
	id, secret := opt.Env("AWS_ACCESS_KEY_ID"), opt.Env("AWS_SECRET_ACCESS_KEY")
	if id == "" || secret == "" {
		return nil, errors.New("s3store: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY must both be set")
	}
	region := cmp.Or(opt.Env("AWS_REGION"), opt.Env("AWS_DEFAULT_REGION"))
	if region == "" && ep.custom {
		region = "us-east-1" // rather than a request to ask the server
	}
	tr := opt.Transport
	if tr == nil {
		dt, err := minio.DefaultTransport(ep.secure)
		if err != nil {
			return nil, fmt.Errorf("s3store: %w", err)
		}
		// minio-go waits a minute for an answer's headers: against a
		// server that accepts and never answers, 9 attempts took 9
		// minutes.
		dt.DialContext = (&net.Dialer{Timeout: opt.RequestTimeout, KeepAlive: 30 * time.Second}).DialContext
		dt.TLSHandshakeTimeout = opt.RequestTimeout
		dt.ResponseHeaderTimeout = opt.RequestTimeout
		tr = dt
	}
	mo := &minio.Options{
		Creds:      credentials.NewStaticV4(id, secret, opt.Env("AWS_SESSION_TOKEN")),
		Secure:     ep.secure,
		Region:     region,
		Transport:  tr,
		MaxRetries: 1,
	}
	if ep.custom {
		mo.BucketLookup = minio.BucketLookupPath
	}
	c, err := minio.New(ep.host, mo)
	if err != nil {
		return nil, fmt.Errorf("s3store: %w", err)
	}
	return c, nil
}

// String is the lake's URL: s3://bucket/prefix.
func (s *Store) String() string {
	if s.prefix == "" {
		return Scheme + s.bucket
	}
	return Scheme + s.bucket + "/" + s.prefix
}

// key is the object key of the lake's file rel, which it checks.
func (s *Store) key(rel string) (string, error) {
	if err := checkName(rel); err != nil {
		return "", fmt.Errorf("s3store: %s: name %w", s, err)
	}
	if s.prefix == "" {
		return rel, nil
	}
	return s.prefix + "/" + rel, nil
}

// url names rel in messages.
func (s *Store) url(rel string) string { return s.String() + "/" + rel }

// Create starts the file rel: what is written goes to a temporary
// local file, uploaded whole by Commit. Nothing is visible under rel
// before the store acknowledges the upload.
func (s *Store) Create(rel string) (lake.File, error) {
	if _, err := s.key(rel); err != nil {
		return nil, err
	}
	f, err := s.spool()
	if err != nil {
		return nil, err
	}
	return named{f, rel}, nil
}

// CreateTemp starts a file whose name comes at its CommitAs (a lake
// table's): the same local spool as Create's, so that the lake need
// not copy it into another first. dir does not matter to an object
// store.
func (s *Store) CreateTemp(dir string) (lake.TempFile, error) { return s.spool() }

func (s *Store) spool() (*file, error) {
	f, err := os.CreateTemp(s.opt.TempDir, "candec-s3-*.tmp")
	if err != nil {
		return nil, fmt.Errorf("s3store: %s: spool: %w", s, err)
	}
	return &file{s: s, f: f}, nil
}

// WriteFile uploads b whole as rel.
func (s *Store) WriteFile(rel string, b []byte) error {
	key, err := s.key(rel)
	if err != nil {
		return err
	}
	return s.put(rel, key, bytes.NewReader(b), int64(len(b)))
}

// put uploads size bytes of r as key, again from the start at each
// attempt. It returns once the store acknowledged the object.
func (s *Store) put(rel, key string, r io.ReaderAt, size int64) error {
	return s.do("put", s.url(rel), func(ctx context.Context) error {
		_, err := s.client.PutObject(ctx, s.bucket, key, io.NewSectionReader(r, 0, size), size,
			minio.PutObjectOptions{ContentType: contentType(rel)})
		return err
	})
}

func contentType(rel string) string {
	switch {
	case strings.HasSuffix(rel, ".parquet"):
		return "application/vnd.apache.parquet"
	case strings.HasSuffix(rel, ".json"):
		return "application/json"
	}
	return "application/octet-stream"
}

// ReadFile reads rel whole; an error that is fs.ErrNotExist when there
// is no such object, and an error when it is larger than limit.
func (s *Store) ReadFile(rel string, limit int64) ([]byte, error) {
	key, err := s.key(rel)
	if err != nil {
		return nil, err
	}
	var b []byte
	err = s.do("read", s.url(rel), func(ctx context.Context) error {
		o, err := s.client.GetObject(ctx, s.bucket, key, minio.GetObjectOptions{})
		if err != nil {
			return err
		}
		defer o.Close()
		st, err := o.Stat()
		if err != nil {
			return err
		}
		if st.Size > limit {
			return tooLarge{st.Size, limit}
		}
		b, err = io.ReadAll(io.LimitReader(o, limit+1))
		if err == nil && int64(len(b)) > limit {
			return tooLarge{int64(len(b)), limit}
		}
		return err
	})
	if code(err) == minio.NoSuchKey {
		return nil, &fs.PathError{Op: "read", Path: s.url(rel), Err: fs.ErrNotExist}
	}
	return b, err
}

// tooLarge is the error of a ReadFile of a file over its limit.
type tooLarge struct{ size, limit int64 }

func (e tooLarge) Error() string {
	return fmt.Sprintf("%d bytes, more than the %d expected", e.size, e.limit)
}

// List returns the names of the lake's files under dir ("" for all),
// sorted. A key under the prefix that is not a plain relative name
// (one another tool made, such as "a//b" or a folder marker "a/") is
// not a lake file and is left out.
func (s *Store) List(dir string) ([]string, error) {
	p := s.prefix
	if dir != "" {
		k, err := s.key(strings.TrimSuffix(dir, "/"))
		if err != nil {
			return nil, err
		}
		p = k
	}
	if p != "" {
		p += "/"
	}
	var names []string
	err := s.do("list", s.String()+"/"+dir, func(ctx context.Context) error {
		names = names[:0]
		ctx, cancel := context.WithCancel(ctx)
		defer cancel() // stops the listing's goroutine on an error
		for o := range s.client.ListObjects(ctx, s.bucket, minio.ListObjectsOptions{Prefix: p, Recursive: true}) {
			if o.Err != nil {
				return o.Err
			}
			rel := strings.TrimPrefix(o.Key, s.prefix)
			if s.prefix != "" {
				rel = strings.TrimPrefix(rel, "/")
			}
			if checkName(rel) == nil {
				names = append(names, rel)
			}
		}
		return nil
	})
	if err != nil || len(names) == 0 {
		return nil, err
	}
	slices.Sort(names)
	return names, nil
}

// Remove removes rel; one already gone is no error.
func (s *Store) Remove(rel string) error {
	key, err := s.key(rel)
	if err != nil {
		return err
	}
	err = s.do("remove", s.url(rel), func(ctx context.Context) error {
		err := s.client.RemoveObject(ctx, s.bucket, key, minio.RemoveObjectOptions{})
		if code(err) == minio.NoSuchKey {
			return nil
		}
		return err
	})
	return err
}

// file is a lake file being written: a local temporary file until
// CommitAs uploads it.
type file struct {
	s    *Store
	f    *os.File
	err  error // the first write error, returned by CommitAs too
	done bool
}

func (f *file) Write(p []byte) (int, error) {
	if f.done {
		return 0, fmt.Errorf("s3store: write to %s: the file was committed or aborted", f.s)
	}
	n, err := f.f.Write(p)
	if err != nil && f.err == nil {
		f.err = fmt.Errorf("s3store: %s: spool: %w", f.s, err)
	}
	return n, err
}

// CommitAs uploads the file as rel and returns once the store
// acknowledged it: the object is then durable and visible whole. On an
// error nothing of it is visible (an S3 PUT replaces the object whole
// or not at all). The file is dropped either way.
func (f *file) CommitAs(rel string) error {
	if f.done {
		return fmt.Errorf("s3store: commit %s: the file was committed or aborted", f.s.url(rel))
	}
	defer f.Abort()
	key, err := f.s.key(rel)
	if err != nil {
		return err
	}
	if f.err != nil {
		return f.err
	}
	st, err := f.f.Stat()
	if err != nil {
		return fmt.Errorf("s3store: %s: spool: %w", f.s.url(rel), err)
	}
	return f.s.put(rel, key, f.f, st.Size())
}

// Abort removes the temporary file; nothing was uploaded.
func (f *file) Abort() {
	if f.done {
		return
	}
	f.done = true
	f.f.Close()
	os.Remove(f.f.Name())
}

// named is a file started by Create: its name is known.
type named struct {
	*file
	rel string
}

// Commit uploads the file as its name (CommitAs).
func (n named) Commit() error { return n.CommitAs(n.rel) }

// code is the S3 error code of err, "" for none.
func code(err error) string {
	var r minio.ErrorResponse
	if errors.As(err, &r) {
		return r.Code
	}
	return ""
}
