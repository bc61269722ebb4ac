package brokertest

import (
	"bufio"
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

	"github.com/yukart/candec/broker"
)

// RequireEnv names the environment variable that turns a missing
// mosquitto into a test failure when set to 1.
const RequireEnv = "CANDEC_REQUIRE_MOSQUITTO"

// EmbeddedEnv names the environment variable that, set to 1, makes Start
// use the embedded broker even where mosquitto is installed: a quick way
// to check the fallback.
const EmbeddedEnv = "CANDEC_TEST_EMBEDDED_BROKER"

// Timeouts of the broker's life cycle.
const (
	// StartTimeout bounds how long a broker may take to accept
	// connections.
	StartTimeout = 10 * time.Second
	// StopTimeout is how long Stop waits after SIGTERM before SIGKILL.
	StopTimeout = 5 * time.Second
)

// Broker is a broker started for one test.
type Broker struct {
	// Addr is the broker's host:port; URL the same as mqtt://host:port.
	Addr, URL string
	// Embedded is true when the broker is package broker's, not
	// mosquitto.
	Embedded bool

	t       testing.TB
	exe     string // mosquitto binary, "" when embedded
	dir     string // config and log
	logFile string

	mu       sync.Mutex
	proc     *exec.Cmd
	exited   chan struct{} // closed when proc has been waited for
	embedded *broker.Broker
}

// Start starts a broker on a free port of 127.0.0.1 and stops it when the
// test ends. It fails the test when no broker can be started.
func Start(t testing.TB) *Broker {
	t.Helper()
	b := &Broker{t: t, dir: t.TempDir()}
	forced := os.Getenv(EmbeddedEnv) == "1"
	if !forced {
		b.exe = findMosquitto()
	}
	if b.exe == "" {
		switch {
		case os.Getenv(RequireEnv) == "1" && forced:
			t.Fatalf("brokertest: %s=1 and %s=1 contradict each other", RequireEnv, EmbeddedEnv)
		case os.Getenv(RequireEnv) == "1":
			t.Fatalf("brokertest: mosquitto not found on PATH or at /usr/sbin/mosquitto and %s=1 (install the Debian package mosquitto)", RequireEnv)
		case forced:
			t.Logf("brokertest: using the embedded broker (%s=1)", EmbeddedEnv)
		default:
			t.Log("brokertest: mosquitto not found; using the embedded broker (install the Debian package mosquitto to test against the real one)")
		}
		b.Embedded = true
	}
	t.Cleanup(func() {
		b.Stop()
		if t.Failed() && b.logFile != "" {
			b.dumpLog()
		}
	})
	if b.Embedded {
		eb, err := broker.Start(context.Background(), "127.0.0.1:0")
		if err != nil {
			t.Fatalf("brokertest: %v", err)
		}
		b.embedded = eb
		b.setAddr(eb.Addr())
		return b
	}
	// A free port can be taken by someone else between our probe and
	// mosquitto's bind; try a few.
	var err error
	for range 5 {
		var port int
		if port, err = freePort(); err != nil {
			break
		}
		b.setAddr(net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err = b.startMosquitto(); err == nil {
			return b
		}
	}
	t.Fatalf("brokertest: %v", err)
	return nil
}

// findMosquitto is FindMosquitto; tests replace it to exercise the
// fallback.
var findMosquitto = FindMosquitto

// FindMosquitto returns the path of the mosquitto binary, or "" when it
// is not installed.
func FindMosquitto() string {
	if p, err := exec.LookPath("mosquitto"); err == nil {
		return p
	}
	for _, p := range []string{"/usr/sbin/mosquitto", "/usr/local/sbin/mosquitto"} {
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}

func (b *Broker) setAddr(addr string) {
	b.Addr = addr
	b.URL = "mqtt://" + addr
}

// Stop stops the broker: mosquitto by SIGTERM to its PID, then SIGKILL
// when it has not exited after StopTimeout. Clients see their connections
// drop. Stopping a stopped broker does nothing.
func (b *Broker) Stop() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.embedded != nil {
		b.embedded.Close()
		b.embedded = nil
		return
	}
	if b.proc == nil {
		return
	}
	_ = b.proc.Process.Signal(syscall.SIGTERM)
	select {
	case <-b.exited:
	case <-time.After(StopTimeout):
		_ = b.proc.Process.Kill()
		<-b.exited
	}
	b.proc = nil
}

// Restart starts the stopped broker again on the same port. Without
// persistence it has no retained messages and no sessions.
func (b *Broker) Restart() {
	b.t.Helper()
	b.Stop()
	if b.Embedded {
		// The port was just released; the kernel lets it be bound again at
		// once because nothing is listening on it.
		eb, err := startEmbeddedRetry(b.Addr)
		if err != nil {
			b.t.Fatalf("brokertest: restart: %v", err)
		}
		b.mu.Lock()
		b.embedded = eb
		b.mu.Unlock()
		return
	}
	if err := b.startMosquitto(); err != nil {
		b.t.Fatalf("brokertest: restart: %v", err)
	}
}

func startEmbeddedRetry(addr string) (*broker.Broker, error) {
	deadline := time.Now().Add(StartTimeout)
	for {
		eb, err := broker.Start(context.Background(), addr)
		if err == nil || time.Now().After(deadline) {
			return eb, err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// LogFile returns the path of mosquitto's log, or "" for the embedded
// broker.
func (b *Broker) LogFile() string { return b.logFile }

// startMosquitto writes the configuration for b.Addr, starts mosquitto
// and waits until it accepts connections.
func (b *Broker) startMosquitto() error {
	_, port, _ := net.SplitHostPort(b.Addr)
	b.logFile = filepath.Join(b.dir, "mosquitto.log")
	conf := filepath.Join(b.dir, "mosquitto.conf")
	var c strings.Builder
	fmt.Fprintf(&c, "listener %s 127.0.0.1\n", port)
	c.WriteString("allow_anonymous true\n")
	c.WriteString("set_tcp_nodelay true\n")
	c.WriteString("persistence false\n")
	fmt.Fprintf(&c, "log_dest file %s\n", b.logFile)
	c.WriteString("log_type error\nlog_type warning\nlog_type notice\nlog_type information\n")
	c.WriteString("log_timestamp_format %H:%M:%S\n")
	if os.Geteuid() == 0 {
		// As root, mosquitto would switch to the user "mosquitto", which
		// cannot write the log in the test's private directory.
		c.WriteString("user root\n")
	}
	if err := os.WriteFile(conf, []byte(c.String()), 0o600); err != nil {
		return err
	}
	cmd := exec.Command(b.exe, "-c", conf)
	cmd.SysProcAttr = procAttr()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", b.exe, err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	b.mu.Lock()
	b.proc, b.exited = cmd, exited
	b.mu.Unlock()
	if err := waitListening(b.Addr, exited); err != nil {
		b.Stop()
		return fmt.Errorf("mosquitto on %s: %w\n%s", b.Addr, err, tail(b.logFile, 10))
	}
	return nil
}

// waitListening waits until addr accepts a TCP connection, the process
// exits or StartTimeout passes.
func waitListening(addr string, exited <-chan struct{}) error {
	deadline := time.Now().Add(StartTimeout)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return nil
		}
		select {
		case <-exited:
			return errors.New("exited before accepting connections")
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not accepting connections after %v: %w", StartTimeout, err)
		}
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (b *Broker) dumpLog() {
	b.t.Logf("brokertest: last lines of %s:\n%s", b.logFile, tail(b.logFile, 40))
}

// tail returns the last n lines of a file, or why it cannot.
func tail(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	defer f.Close()
	var lines []string
	s := bufio.NewScanner(f)
	for s.Scan() {
		lines = append(lines, s.Text())
		if len(lines) > n {
			lines = lines[1:]
		}
	}
	return strings.Join(lines, "\n")
}
