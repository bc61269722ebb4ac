package s3test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"io"
	"io/fs"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/yukart/candec/internal/fleet/lake"
	"github.com/yukart/candec/internal/fleet/lake/s3store"
)

// open opens the store at url on the server as key.
func open(t *testing.T, s *server, url, key, secret string, opt s3store.Options) (*s3store.Store, error) {
	t.Helper()
	env := s.env(key, secret)
	opt.Env = func(k string) string { return env[k] }
	if opt.TempDir == "" {
		opt.TempDir = t.TempDir()
	}
	return s3store.Open(context.Background(), url, opt)
}

// testStoreFiles: a file is visible only once committed, whole (a
// multipart upload too); an aborted one never; the store's names are
// those of its prefix only.
func testStoreFiles(t *testing.T, srv *server) {
	st, err := open(t, srv, "s3://lake/fleet/a", writerKey, writerSecret, s3store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var _ lake.TempStore = st
	// Neighbours the store must not list: a sibling prefix that starts
	// alike, and the bucket's root.
	w := srv.client(writerKey, writerSecret)
	for _, k := range []string{"fleet/ab/x.parquet", "fleet/x.parquet", "other"} {
		if _, err := w.PutObject(context.Background(), bucket, k, strings.NewReader("x"), 1, minio.PutObjectOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	rel := "message=A/date=2026-12-04/can0-1.parquet"
	f, err := st.Create(rel)
	if err != nil {
		t.Fatal(err)
	}
	big := make([]byte, 17<<20) // past minio-go's 16 MiB part: a multipart upload
	rand.Read(big)
	if _, err := f.Write(big); err != nil {
		t.Fatal(err)
	}
	if got := srv.keys("fleet/a/"); len(got) != 0 {
		t.Fatalf("before Commit the bucket has %q, want nothing", got)
	}
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	if got, err := st.ReadFile(rel, int64(len(big))); err != nil || !bytes.Equal(got, big) {
		t.Fatalf("ReadFile: %d bytes, %v; want the %d bytes committed", len(got), err, len(big))
	}

	tf, err := st.CreateTemp("message=B/date=2026-12-04")
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(tf, "table")
	if err := tf.CommitAs("message=B/date=2026-12-04/can0-1.parquet"); err != nil {
		t.Fatal(err)
	}
	if err := st.WriteFile(".candec-lake", []byte(`{"candec_lake":1}`)); err != nil {
		t.Fatal(err)
	}
	ab, err := st.Create("message=C/date=2026-12-04/can0-1.parquet")
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(ab, "dropped")
	ab.Abort()

	want := []string{".candec-lake", "message=A/date=2026-12-04/can0-1.parquet", "message=B/date=2026-12-04/can0-1.parquet"}
	if got, err := st.List(""); err != nil || !slices.Equal(got, want) {
		t.Errorf("List: %q, %v; want %q", got, err, want)
	}
	if got, err := st.List("message=B"); err != nil || !slices.Equal(got, want[2:]) {
		t.Errorf("List(message=B): %q, %v; want %q", got, err, want[2:])
	}
	if got, err := st.List("message=C"); err != nil || got != nil {
		t.Errorf("List(message=C), aborted: %q, %v; want none", got, err)
	}
	if _, err := st.ReadFile(rel, 1000); err == nil || !strings.Contains(err.Error(), "more than the 1000 expected") {
		t.Errorf("ReadFile over its limit: %v, want an error", err)
	}
	if _, err := st.ReadFile("message=C/date=2026-12-04/can0-1.parquet", 1000); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadFile of an aborted file: %v, want fs.ErrNotExist", err)
	}
	for range 2 {
		if err := st.Remove(rel); err != nil {
			t.Errorf("Remove: %v, want nil (the second time too)", err)
		}
	}
	if got, err := st.List("message=A"); err != nil || got != nil {
		t.Errorf("List after Remove: %q, %v; want none", got, err)
	}
	if got := srv.keys("fleet/"); len(got) != 4 {
		t.Errorf("bucket under fleet/: %q, want the 2 files left and the 2 neighbours", got)
	}
}

// testStoreRefuses: a store that refuses the writes (read-only
// credentials, a wrong secret, an unknown key, no such bucket, a bucket
// gone) fails at once with an error that names the object or the lake
// and the server's reason, and leaves nothing visible.
func testStoreRefuses(t *testing.T, srv *server) {
	ctx := context.Background()

	// Read-only credentials: Open succeeds (the bucket is visible), the
	// upload is refused, once.
	ro, err := open(t, srv, "s3://lake/ro", readerKey, readerSecret, s3store.Options{})
	if err != nil {
		t.Fatalf("Open as the reader: %v", err)
	}
	f, err := ro.Create("message=A/date=2026-12-04/can0-1.parquet")
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(f, "refused")
	err = f.Commit()
	var se *s3store.Error
	if err == nil || !strings.Contains(err.Error(), "put s3://lake/ro/message=A/date=2026-12-04/can0-1.parquet: AccessDenied (403)") ||
		!errors.As(err, &se) || se.Attempts != 1 {
		t.Errorf("Commit as the reader: %v, want AccessDenied naming the object, after 1 attempt", err)
	}
	if err := ro.WriteFile(".candec-lake", []byte("{}")); err == nil || !strings.Contains(err.Error(), "put s3://lake/ro/.candec-lake: AccessDenied") {
		t.Errorf("WriteFile as the reader: %v, want AccessDenied naming the object", err)
	}
	if got := srv.keys("ro/"); len(got) != 0 {
		t.Errorf("refused writes left %q", got)
	}

	for _, c := range []struct {
		name, url, key, secret, want string
	}{
		{"wrong secret", "s3://lake/x", writerKey, "not-the-secret", "open s3://lake/x: AccessDenied (403)"},
		{"unknown key", "s3://lake/x", "nobody", "nothing", "open s3://lake/x: AccessDenied (403)"},
		{"no such bucket", "s3://no-such-bucket/x", writerKey, writerSecret, `open s3://no-such-bucket/x: no such bucket "no-such-bucket"`},
	} {
		start := time.Now()
		_, err := open(t, srv, c.url, c.key, c.secret, s3store.Options{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Open: %v, want %q", c.name, err, c.want)
		}
		if el := time.Since(start); el > 5*time.Second {
			t.Errorf("%s: Open took %v: a refusal is not retried", c.name, el)
		}
	}

	// A bucket removed after Open.
	w := srv.client(writerKey, writerSecret)
	if err := w.MakeBucket(ctx, "gone", minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	gone, err := open(t, srv, "s3://gone/lake", writerKey, writerSecret, s3store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.RemoveBucket(ctx, "gone"); err != nil {
		t.Fatal(err)
	}
	if err := gone.WriteFile("x.parquet", []byte("x")); err == nil || !strings.Contains(err.Error(), "put s3://gone/lake/x.parquet: NoSuchBucket (404)") {
		t.Errorf("WriteFile into a removed bucket: %v, want NoSuchBucket naming the object", err)
	}
}

// TestStoreServerGone: a Commit while the server is down does not
// return, retrying with backoff, until the server is back and has
// acknowledged the object; then the object is there, whole. So with a
// lake's Writer.Commit (its tables committed in parallel): it returns
// once every table is in the bucket, and DuckDB reads them back as
// written. A Commit whose retries run out first fails, named, and
// leaves nothing.
func TestStoreServerGone(t *testing.T) {
	srv := startServer(t)
	var (
		retried atomic.Int64
		mu      sync.Mutex
		reasons []string // what the retries met, in order, once each
	)
	opt := s3store.Options{
		Retries: 100, MinBackoff: 50 * time.Millisecond, MaxBackoff: 500 * time.Millisecond,
		Retried: func(rt s3store.Retry) {
			err := rt.Err
			retried.Add(1)
			mu.Lock()
			defer mu.Unlock()
			r := err.Error()
			if i := strings.LastIndex(r, ": "); i >= 0 && strings.Contains(r, "dial tcp") {
				r = r[i+2:]
			}
			if len(reasons) == 0 || reasons[len(reasons)-1] != r {
				reasons = append(reasons, r)
			}
		},
	}
	st, err := open(t, srv, "s3://lake/gone", writerKey, writerSecret, opt)
	if err != nil {
		t.Fatal(err)
	}
	ls, err := open(t, srv, "s3://lake/gone-lake", writerKey, writerSecret, opt)
	if err != nil {
		t.Fatal(err)
	}
	short, err := open(t, srv, "s3://lake/gone", writerKey, writerSecret, s3store.Options{Retries: 2, MinBackoff: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	lk, err := lake.Open(lake.Config{Dir: ls.String(), Store: ls, DBC: "yukart"})
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Close()
	w := lk.NewWriter()
	wrote := writeCapture(t, w, 1)
	body := make([]byte, 1<<20)
	rand.Read(body)
	f, err := st.Create("message=A/date=2026-12-04/can0-1.parquet")
	if err != nil {
		t.Fatal(err)
	}
	f.Write(body)

	srv.stop()
	if err := short.WriteFile("short.parquet", []byte("x")); err == nil || !strings.Contains(err.Error(), "put s3://lake/gone/short.parquet: gave up after 3 attempts") ||
		!strings.Contains(err.Error(), "connection refused") {
		t.Errorf("WriteFile with 2 retries while the server is down: %v, want it to give up after 3 attempts, naming the object and why", err)
	}
	done, lakeDone := make(chan error, 1), make(chan error, 1)
	go func() { done <- f.Commit() }()
	go func() { lakeDone <- w.Commit("capture1") }()
	deadline := time.Now().Add(30 * time.Second)
	for retried.Load() < 3 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	select {
	case err := <-done:
		t.Fatalf("Commit returned %v while the server was down", err)
	case err := <-lakeDone:
		t.Fatalf("the lake's Writer.Commit returned %v while the server was down", err)
	default:
	}
	if retried.Load() < 3 {
		t.Fatalf("%d retries in 30 s while the server was down, want 3 or more", retried.Load())
	}
	back := time.Now()
	srv.start()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Commit after the server came back: %v", err)
		}
		t.Logf("Commit returned %v after the restart began", time.Since(back).Round(time.Millisecond))
	case <-time.After(60 * time.Second):
		t.Fatalf("Commit has not returned 60 s after the server came back; its log:\n%s", srv.tail())
	}
	select {
	case err := <-lakeDone:
		if err != nil {
			t.Fatalf("the lake's Writer.Commit after the server came back: %v", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the lake's Writer.Commit has not returned 60 s after the server came back")
	}
	if names := w.Committed(); len(names) != len(wrote.rows) {
		t.Errorf("the writer committed %q, want a table per message (%d)", names, len(wrote.rows))
	}
	dir := t.TempDir()
	download(t, srv, "gone-lake", dir)
	checkLake(t, dir, wrote.sigs, wrote.rows)
	if got, err := st.ReadFile("message=A/date=2026-12-04/can0-1.parquet", 2<<20); err != nil || !bytes.Equal(got, body) {
		t.Errorf("after the restart: %d bytes, %v; want the %d committed", len(got), err, len(body))
	}
	if _, err := st.ReadFile("short.parquet", 10); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the upload that gave up: %v, want fs.ErrNotExist", err)
	}
	mu.Lock()
	t.Logf("%d retries; what they met: %q", retried.Load(), reasons)
	mu.Unlock()
}
