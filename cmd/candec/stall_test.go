package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/yukart/candec/internal/base/child"
	"github.com/yukart/candec/internal/cmdkit/cli"
	"github.com/yukart/candec/internal/testkit"
	"github.com/yukart/candec/internal/testkit/brokertest"
)

// stallMargin is what a stopping process may take beyond its bound: a
// liveness margin for a busy machine, not a speed target.
const stallMargin = 4 * time.Second

// kartCapture writes a simulated capture of the kart, d long.
func kartCapture(t *testing.T, d time.Duration) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kart.log")
	if err := run(context.Background(), cli.Env{Stdin: nil, Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}}, []string{"generate", "--duration", d.String(), "-o", path}); err != nil {
		t.Fatal(err)
	}
	return path
}

// flood replays capture to the broker at url as fast as it takes it,
// in a loop, until the test ends.
func flood(t *testing.T, url, capture string) {
	t.Helper()
	startCandec(t, nil, "replay", "--broker", url, "--flood", "--loop", "--client-id", "flood-"+t.Name(), capture)
}

// waitBlocked waits until p, a client of proxy, which stopped reading,
// has its writes blocked: bytes wait unread in the proxy's socket and
// in p's own, and p's queue has not moved for a second while p has
// more to send.
func waitBlocked(t *testing.T, p *child.Process, proxy *brokertest.Proxy, stderr *testkit.SyncBuffer) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	last, since := -1, time.Now()
	for {
		select {
		case <-p.Exited():
			t.Fatalf("candec exited (%v) before its writes blocked\n%s", p.Err(), stderr.String())
		default:
		}
		q, backlog := proxy.ClientQueue(), proxy.Backlog()
		if q < 0 || backlog < 0 {
			t.Skip("the system does not show the sockets' queues")
		}
		if q != last || q == 0 || backlog == 0 {
			last, since = q, time.Now()
		} else if time.Since(since) > time.Second {
			t.Logf("blocked: %d bytes wait in candec's socket, %d in the proxy's", q, backlog)
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("candec's writes did not block within 60 s (queue %d, backlog %d)\n%s", q, backlog, stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stopWithin sends SIGTERM to p and checks it exits within bound (plus
// stallMargin) with status want, saying each of says on stderr.
func stopWithin(t *testing.T, p *child.Process, stderr *testkit.SyncBuffer, bound time.Duration, want int, says ...string) {
	t.Helper()
	start := time.Now()
	sendSignal(t, p, syscall.SIGTERM)
	code := exitOf(t, p, bound+stallMargin, stderr)
	t.Logf("exit status %d %v after SIGTERM (bound %v)", code, time.Since(start).Round(time.Millisecond), bound)
	if code != want {
		t.Errorf("got exit status %d, want %d\n%s", code, want, stderr.String())
	}
	for _, s := range says {
		if !strings.Contains(stderr.String(), s) {
			t.Errorf("stderr does not say %q:\n%s", s, stderr.String())
		}
	}
}

// TestRunStopsBrokerNotReading: `candec run` whose broker is connected
// but stopped reading (a proxy before mosquitto stops copying what
// candec sends, its socket buffers full, a batched write blocked) ends
// within shutdown_timeout of SIGTERM, with exit status 0 (a stop asked
// for), saying what was not delivered. Before, it was still running
// 120 s later: paho's DISCONNECT waited for ever behind the write.
func TestRunStopsBrokerNotReading(t *testing.T) {
	b := brokertest.Start(t)
	proxy := brokertest.StartProxy(t, b.Addr)
	sub := brokertest.Connect(t, b.URL)
	sub.Subscribe("yukart/decoder/status")
	pol := writeFile(t, t.TempDir(), "policy.yaml", "defaults:\n  max_rate: 1000\n  on_change: false\n")
	const shutdown = 2 * time.Second
	p, stderr := startCandec(t, nil, "run", "--broker", proxy.URL, "--dbc", "../../testdata/yukart.dbc", "--policy", pol,
		"--metrics-addr", "", "--client-id", "cmd-run-stall", "--shutdown-timeout", shutdown.String())
	sub.WaitFor("online", func(m []brokertest.Message) bool { return len(m) > 0 && string(m[len(m)-1].Payload) == "online" })
	flood(t, b.URL, kartCapture(t, 20*time.Second))
	proxy.StopReading()
	waitBlocked(t, p, proxy, stderr)
	stopWithin(t, p, stderr, shutdown, 0, "shutdown_timeout reached with the broker connected but not taking what was written")
	if strings.Contains(stderr.String(), "broker unreachable") {
		t.Errorf("a broker that is connected but does not read is said unreachable:\n%s", stderr.String())
	}
}

// TestReplayStopsBrokerNotReading: a replay whose broker stopped
// reading, a publish blocked in its write, ends within 3 s of SIGTERM
// (its grace for the open batch and the DISCONNECT's), with exit status
// 1, saying that what it wrote last is lost.
func TestReplayStopsBrokerNotReading(t *testing.T) {
	b := brokertest.Start(t)
	proxy := brokertest.StartProxy(t, b.Addr)
	sub := brokertest.Connect(t, b.URL)
	sub.Subscribe("yukart/can/raw")
	// One frame a message: small messages, which the subscriber takes.
	p, stderr := startCandec(t, nil, "replay", "--broker", proxy.URL, "--flood", "--loop", "--per-frame", "--client-id", "replay-stall", kartCapture(t, 20*time.Second))
	sub.WaitFor("a batch", func(m []brokertest.Message) bool { return len(m) > 0 })
	proxy.StopReading()
	waitBlocked(t, p, proxy, stderr)
	stopWithin(t, p, stderr, 3*time.Second, 1, // replay's 2s grace (internal/cmdkit/cli's replayGrace) and a second
		"did not take what was written within 2s of the signal (connected, not reading): the connection was closed")
}

// waitRelayed waits until the broker has sent the proxy's clients more
// than after bytes: a packet has come through since.
func waitRelayed(t *testing.T, proxy *brokertest.Proxy, after int64) {
	t.Helper()
	deadline := time.Now().Add(promptly)
	for proxy.ToClients() <= after {
		if time.Now().After(deadline) {
			t.Fatalf("nothing came through the proxy within %v", promptly)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestWatchStopsBrokerNotReading: watch, whose broker stopped reading
// what it sends, ends within a second of SIGTERM (the DISCONNECT's
// grace) with its summary and exit status 0.
func TestWatchStopsBrokerNotReading(t *testing.T) {
	b := brokertest.Start(t)
	proxy := brokertest.StartProxy(t, b.Addr)
	pub := brokertest.Connect(t, b.URL)
	p, stderr := startCandec(t, nil, "watch", "--broker", proxy.URL, "--client-id", "watch-stall", "--quiet")
	waitRelayed(t, proxy, 0) // CONNACK
	// Published until one comes through: the subscription is made.
	for n := proxy.ToClients(); proxy.ToClients() == n; {
		pub.Publish("yukart/vehicle/Speed", []byte("1"), false)
		time.Sleep(50 * time.Millisecond)
	}
	proxy.StopReading()
	pub.Publish("yukart/vehicle/Speed", []byte("2"), false)
	stopWithin(t, p, stderr, time.Second, 0)
}

// TestRunBrokerNotReadingReconnects: while `candec run` runs, a broker
// that is connected but stopped reading is given up within two
// keep-alive periods (paho's pinger, which writes PINGREQ on a
// goroutine of its own, hears no PINGRESP): the connection is closed,
// also under a write blocked on the full socket buffers, and the
// service says it reconnects, rather than waiting on the write for
// ever. (On a busy machine the flood may not fill the buffers before
// the keep-alive ends the connection: the bound holds either way, and
// the log says which.)
func TestRunBrokerNotReadingReconnects(t *testing.T) {
	b := brokertest.Start(t)
	proxy := brokertest.StartProxy(t, b.Addr)
	sub := brokertest.Connect(t, b.URL)
	sub.Subscribe("yukart/decoder/status")
	pol := writeFile(t, t.TempDir(), "policy.yaml", "defaults:\n  max_rate: 1000\n  on_change: false\n")
	const keepalive = 5 * time.Second
	p, stderr := startCandec(t, nil, "run", "--broker", proxy.URL, "--dbc", "../../testdata/yukart.dbc", "--policy", pol,
		"--metrics-addr", "", "--client-id", "cmd-run-stall-ka", "--keepalive", keepalive.String())
	sub.WaitFor("online", func(m []brokertest.Message) bool { return len(m) > 0 && string(m[len(m)-1].Payload) == "online" })
	flood(t, b.URL, kartCapture(t, 20*time.Second))
	start := time.Now()
	proxy.StopReading()
	limit := 2*keepalive + stallMargin
	blocked, last, since := false, -1, time.Now()
	for !strings.Contains(stderr.String(), "broker connection lost; reconnecting") {
		select {
		case <-p.Exited():
			t.Fatalf("candec exited (%v) while its broker did not read\n%s", p.Err(), stderr.String())
		default:
		}
		if time.Since(start) > limit {
			t.Fatalf("the connection was not given up within %v of the broker not reading (a write blocked: %v)\n%s", limit, blocked, stderr.String())
		}
		if q := proxy.ClientQueue(); q <= 0 || q != last {
			last, since = q, time.Now()
		} else if time.Since(since) > time.Second {
			blocked = true
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("given up %v after the broker stopped reading; a write was seen blocked: %v", time.Since(start).Round(time.Millisecond), blocked)
}
