package brokertest

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/yukart/candec/internal/lab/broker"
	"github.com/yukart/candec/internal/lab/mosquitto"
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
	StartTimeout = mosquitto.StartTimeout
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
	proc     *mosquitto.Process
	embedded *broker.Broker
}

// Start starts a broker on a free port of 127.0.0.1 and stops it when the
// test ends. It fails the test when no broker can be started.
func Start(t testing.TB) *Broker {
	t.Helper()
	b := &Broker{t: t, dir: t.TempDir()}
	forced := os.Getenv(EmbeddedEnv) == "1"
	if !forced {
		b.exe, _ = findMosquitto()
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
	// Port 0: a free port, tried again when someone else takes it first.
	if err := b.startMosquitto(0); err != nil {
		t.Fatalf("brokertest: %v", err)
	}
	return b
}

// findMosquitto is mosquitto.Find; tests replace it to exercise the
// fallback.
var findMosquitto = mosquitto.Find

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
	_ = b.proc.Stop(StopTimeout)
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
	_, port, _ := net.SplitHostPort(b.Addr)
	n, _ := strconv.Atoi(port)
	if err := b.startMosquitto(n); err != nil {
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

// startMosquitto starts mosquitto on port (0: a free one) with a verbose
// log and waits until it accepts connections.
func (b *Broker) startMosquitto(port int) error {
	b.logFile = filepath.Join(b.dir, mosquitto.LogFile)
	p, err := mosquitto.Start(context.Background(), mosquitto.Options{Binary: b.exe, Dir: b.dir, Port: port, Verbose: true})
	if err != nil {
		return err
	}
	b.mu.Lock()
	b.proc = p
	b.mu.Unlock()
	b.setAddr(p.Addr)
	return nil
}

func (b *Broker) dumpLog() {
	b.t.Logf("brokertest: last lines of %s:\n%s", b.logFile, mosquitto.LogTail(b.dir, 40))
}
