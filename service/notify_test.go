package service

import (
	"context"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/yukart/candec/internal/testkit/brokertest"
)

// testWatchdog is the WATCHDOG_USEC the tests give: the service pings
// every 100 ms.
const testWatchdog = 200 * time.Millisecond

// notifySocket is a service manager's end of the notify protocol: a
// unixgram socket whose path the test puts in NOTIFY_SOCKET, with
// WATCHDOG_USEC set. Each datagram arrives on states.
type notifySocket struct {
	states chan string
}

func listenNotify(t *testing.T) *notifySocket {
	t.Helper()
	// A socket path has at most 107 bytes: a short directory of its own.
	dir, err := os.MkdirTemp("", "sd")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	path := filepath.Join(dir, "notify")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	ns := &notifySocket{states: make(chan string, 4096)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 4096)
		for {
			n, err := conn.Read(buf)
			if err != nil {
				return
			}
			select {
			case ns.states <- string(buf[:n]):
			default:
			}
		}
	}()
	t.Cleanup(func() { conn.Close(); <-done })
	t.Setenv("NOTIFY_SOCKET", path)
	t.Setenv("WATCHDOG_USEC", "200000")
	t.Setenv("WATCHDOG_PID", "")
	return ns
}

// next returns the next datagram that has the line want, failing the
// test after within; the datagrams before it go to skipped.
func (ns *notifySocket) next(t *testing.T, want string, within time.Duration) (state string, skipped []string) {
	t.Helper()
	deadline := time.After(within)
	for {
		select {
		case s := <-ns.states:
			if hasLine(s, want) {
				return s, skipped
			}
			skipped = append(skipped, s)
		case <-deadline:
			t.Fatalf("no %s on NOTIFY_SOCKET within %v; got %q", want, within, skipped)
		}
	}
}

// during collects the datagrams that arrive within d.
func (ns *notifySocket) during(d time.Duration) []string {
	var got []string
	deadline := time.After(d)
	for {
		select {
		case s := <-ns.states:
			got = append(got, s)
		case <-deadline:
			return got
		}
	}
}

func hasLine(state, line string) bool {
	for l := range strings.SplitSeq(state, "\n") {
		if l == line {
			return true
		}
	}
	return false
}

func count(states []string, line string) int {
	n := 0
	for _, s := range states {
		if hasLine(s, line) {
			n++
		}
	}
	return n
}

// TestNotifyProtocol runs the service over a real NOTIFY_SOCKET and a
// real broker: READY=1 comes once the raw subscription is acknowledged
// (a batch published right after it is decoded), WATCHDOG=1 every half
// WATCHDOG_USEC while the engine runs, STOPPING=1 when the shutdown
// begins, and no READY=1 again on a reconnect.
func TestNotifyProtocol(t *testing.T) {
	b := brokertest.Start(t) // before NOTIFY_SOCKET: mosquitto speaks the protocol too
	ns := listenNotify(t)
	r := startService(t, testConfig(t, b.URL), loadTestDB(t))

	ready, _ := ns.next(t, "READY=1", 15*time.Second)
	if !strings.Contains(ready, "STATUS=decoding "+DefaultRawTopic+" from "+b.URL) {
		t.Errorf("READY=1 came with %q; want a STATUS naming the raw topic and the broker", ready)
	}
	// One batch, published once: it reaches the service only if the
	// subscription was in place when READY=1 was sent.
	pub := brokertest.Connect(t, b.URL)
	pub.Publish(DefaultRawTopic, batch(t, 0, nil), false)
	waitUntil(t, "the batch published after READY=1 received", func() bool { return counter(t, r.m.rawBatches) == 1 })

	// 1 s of a running engine: 10 pings at 100 ms; allow for a slow
	// machine, not for a missing ticker.
	if got := count(ns.during(time.Second), "WATCHDOG=1"); got < 5 || got > 12 {
		t.Errorf("got %d WATCHDOG=1 in 1 s with WATCHDOG_USEC=%v; want about 10", got, testWatchdog)
	}

	// A reconnect says so in STATUS, and is not a second READY=1.
	r.conn.Load().TerminateConnectionForTest()
	_, before := ns.next(t, "STATUS=broker connection lost; reconnecting", 15*time.Second)
	st, skipped := ns.next(t, "STATUS=decoding "+DefaultRawTopic+" from "+b.URL, 15*time.Second)
	if hasLine(st, "READY=1") || count(append(before, skipped...), "READY=1") > 0 {
		t.Errorf("READY=1 sent again on a reconnect: %q", st)
	}

	r.stop(t)
	ns.next(t, "STOPPING=1", 5*time.Second)
}

// TestNotifyWatchdogEngineStall stalls the engine goroutine through a
// test hook: the watchdog pings stop (so that systemd would restart the
// service), STATUS says why, and the pings resume when the engine does.
func TestNotifyWatchdogEngineStall(t *testing.T) {
	b := brokertest.Start(t) // before NOTIFY_SOCKET: mosquitto speaks the protocol too
	ns := listenNotify(t)
	s, err := New(testConfig(t, b.URL), loadTestDB(t), slog.New(slog.NewTextHandler(testWriter{t}, nil)), prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	var stall atomic.Bool
	entered, release := make(chan struct{}, 1), make(chan struct{})
	s.notify.stall = func() {
		if stall.Load() {
			entered <- struct{}{}
			<-release
			stall.Store(false)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{Service: s, cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- s.Run(ctx) }()
	released := false
	t.Cleanup(func() {
		if !released {
			close(release)
		}
		r.stop(t)
	})

	ns.next(t, "READY=1", 15*time.Second)
	ns.next(t, "WATCHDOG=1", time.Second)
	ns.next(t, "WATCHDOG=1", time.Second)

	stall.Store(true)
	select {
	case <-entered:
	case <-time.After(5 * time.Second):
		t.Fatal("the engine did not reach the stall hook within 5 s")
	}
	// The ticks before the stall may still earn one ping, within the
	// first ping period; after it, none.
	first := ns.during(testWatchdog / 2 * 3 / 2)
	later := ns.during(4 * testWatchdog)
	if n := count(first, "WATCHDOG=1"); n > 1 {
		t.Errorf("got %d WATCHDOG=1 in the first %v of a stalled engine; want at most 1", n, testWatchdog/2*3/2)
	}
	if n := count(later, "WATCHDOG=1"); n != 0 {
		t.Errorf("got %d WATCHDOG=1 in %v of a stalled engine after the first ping period; want 0", n, 4*testWatchdog)
	}
	if all := append(first, later...); count(all, "STATUS=engine loop stalled") != 1 {
		t.Errorf("got %q while the engine was stalled; want one STATUS=engine loop stalled", all)
	}

	close(release)
	released = true
	ns.next(t, "WATCHDOG=1", 2*time.Second)
}

// TestNotifierOff: without NOTIFY_SOCKET nothing is sent and the
// watchdog goroutine returns at once.
func TestNotifierOff(t *testing.T) {
	t.Setenv("NOTIFY_SOCKET", "")
	t.Setenv("WATCHDOG_USEC", "200000")
	n := newNotifier(slog.New(slog.DiscardHandler))
	n.send = func(state string) error {
		t.Errorf("sent %q without NOTIFY_SOCKET", state)
		return nil
	}
	n.subscribed("mqtt://127.0.0.1:1883", DefaultRawTopic)
	n.status("x")
	done := make(chan struct{})
	go func() { n.run(context.Background()); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Second):
		t.Fatal("run without NOTIFY_SOCKET did not return")
	}
}
