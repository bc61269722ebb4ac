package s3test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// The server's identities: the writer may do anything, the reader
// only read and list.
const (
	writerKey, writerSecret = "candec-writer", "candec-writer-secret"
	readerKey, readerSecret = "candec-reader", "candec-reader-secret"
	bucket                  = "lake"
)

const identities = `{"identities": [
 {"name": "writer", "credentials": [{"accessKey": "` + writerKey + `", "secretKey": "` + writerSecret + `"}],
  "actions": ["Admin", "Read", "Write", "List", "Tagging"]},
 {"name": "reader", "credentials": [{"accessKey": "` + readerKey + `", "secretKey": "` + readerSecret + `"}],
  "actions": ["Read", "List"]}
]}`

var (
	weedOnce sync.Once
	weedPath string
	weedErr  error
)

// weed returns the SeaweedFS binary, built from the seaweedfs module
// (go tool caches it: the first build on a machine takes minutes, the
// next a second or two).
func weed(t *testing.T) string {
	t.Helper()
	weedOnce.Do(func() {
		cmd := exec.Command("go", "tool", "-n", "weed")
		cmd.Dir = "seaweedfs"
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			weedErr = fmt.Errorf("build SeaweedFS (go tool -n weed in seaweedfs/): %v\n%s", err, stderr.Bytes())
			return
		}
		weedPath = strings.TrimSpace(string(out))
	})
	if weedErr != nil {
		t.Fatal(weedErr)
	}
	return weedPath
}

// server is a SeaweedFS server (master, volume, filer and S3 gateway in
// one process) on free ports of 127.0.0.1, with a bucket "lake".
type server struct {
	t     *testing.T
	bin   string
	dir   string
	ports []int // master, volume, filer, s3, each then its gRPC port
	cmd   *exec.Cmd
	log   string
}

// startServer starts a server with its data in a temporary directory;
// the test's cleanup stops it.
func startServer(t *testing.T) *server {
	t.Helper()
	s := &server{t: t, bin: weed(t), dir: t.TempDir()}
	s.ports = freePorts(t, 8)
	if err := os.WriteFile(filepath.Join(s.dir, "s3.json"), []byte(identities), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(s.dir, "data"), 0o700); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.stop)
	start := time.Now()
	s.start()
	if err := s.client(writerKey, writerSecret).MakeBucket(context.Background(), bucket, minio.MakeBucketOptions{}); err != nil {
		t.Fatalf("make bucket %s: %v", bucket, err)
	}
	s.waitWritable()
	t.Logf("SeaweedFS up in %v", time.Since(start).Round(time.Millisecond))
	return s
}

// freePorts returns n ports that were free a moment ago.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports
}

// start starts the server process on the server's ports and data, and
// waits until its S3 gateway answers.
func (s *server) start() {
	s.t.Helper()
	p := func(i int) string { return strconv.Itoa(s.ports[i]) }
	s.log = filepath.Join(s.dir, fmt.Sprintf("weed-%d.log", time.Now().UnixNano()))
	log, err := os.Create(s.log)
	if err != nil {
		s.t.Fatal(err)
	}
	defer log.Close()
	s.cmd = exec.Command(s.bin, "server", "-ip", "127.0.0.1", "-ip.bind", "127.0.0.1",
		"-dir", filepath.Join(s.dir, "data"), "-master.telemetry=false", "-master.volumeSizeLimitMB", "64",
		"-master.port", p(0), "-master.port.grpc", p(1), "-volume.port", p(2), "-volume.port.grpc", p(3),
		"-filer", "-filer.port", p(4), "-filer.port.grpc", p(5),
		"-s3", "-s3.port", p(6), "-s3.port.grpc", p(7), "-s3.port.iceberg", "0", "-s3.port.lance", "0",
		"-s3.autoCreateBucket=false", // as Amazon S3: an upload into a missing bucket is refused
		"-s3.config", filepath.Join(s.dir, "s3.json"))
	s.cmd.Stdout, s.cmd.Stderr = log, log
	if err := s.cmd.Start(); err != nil {
		s.t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		if c, err := net.DialTimeout("tcp", s.addr(), time.Second); err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("SeaweedFS's S3 gateway not listening on %s after 60 s; its log:\n%s", s.addr(), s.tail())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitWritable waits until the server stores an object: its volume
// server has joined the master.
func (s *server) waitWritable() {
	s.t.Helper()
	c := s.client(writerKey, writerSecret)
	ctx := context.Background()
	deadline := time.Now().Add(60 * time.Second)
	for {
		_, err := c.PutObject(ctx, bucket, "probe", strings.NewReader("probe"), 5, minio.PutObjectOptions{})
		if err == nil {
			if err := c.RemoveObject(ctx, bucket, "probe", minio.RemoveObjectOptions{}); err != nil {
				s.t.Fatal(err)
			}
			return
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("SeaweedFS stores no object after 60 s: %v; its log:\n%s", err, s.tail())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// stop kills the server by its PID and waits for it.
func (s *server) stop() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	if err := s.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		s.t.Errorf("kill SeaweedFS (pid %d): %v", s.cmd.Process.Pid, err)
	}
	err := s.cmd.Wait()
	var ee *exec.ExitError
	if err != nil && !(errors.As(err, &ee) && ee.Sys().(syscall.WaitStatus).Signaled()) {
		s.t.Errorf("SeaweedFS (pid %d): %v", s.cmd.Process.Pid, err)
	}
	s.cmd = nil
}

// addr is the S3 gateway's address; endpoint its URL.
func (s *server) addr() string     { return "127.0.0.1:" + strconv.Itoa(s.ports[6]) }
func (s *server) endpoint() string { return "http://" + s.addr() }

// env is the AWS variables that lead candec to the server as key.
func (s *server) env(key, secret string) map[string]string {
	return map[string]string{
		"AWS_ACCESS_KEY_ID": key, "AWS_SECRET_ACCESS_KEY": secret,
		"AWS_ENDPOINT_URL": s.endpoint(), "AWS_REGION": "us-east-1",
	}
}

// client is a minio-go client of the server as key: the test's own
// view of the bucket, beside the store under test.
func (s *server) client(key, secret string) *minio.Client {
	s.t.Helper()
	c, err := minio.New(s.addr(), &minio.Options{Creds: credentials.NewStaticV4(key, secret, ""), Region: "us-east-1", BucketLookup: minio.BucketLookupPath})
	if err != nil {
		s.t.Fatal(err)
	}
	return c
}

// keys lists the bucket's keys under prefix, as the writer sees them.
func (s *server) keys(prefix string) []string {
	s.t.Helper()
	var keys []string
	for o := range s.client(writerKey, writerSecret).ListObjects(context.Background(), bucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
		if o.Err != nil {
			s.t.Fatalf("list %s: %v", prefix, o.Err)
		}
		keys = append(keys, o.Key)
	}
	return keys
}

// tail is the end of the server's log, for a failure's message.
func (s *server) tail() string {
	b, _ := os.ReadFile(s.log)
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}
