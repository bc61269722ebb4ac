package mqttclient

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/autopaho"

	"github.com/yukart/candec/internal/testkit/brokertest"
)

// connectBatched connects a client with a Batcher to the broker at url
// and waits for the connection.
func connectBatched(t testing.TB, url string) (*autopaho.ConnectionManager, *Batcher) {
	t.Helper()
	var b Batcher
	ctx, cancel := context.WithCancel(context.Background())
	cm, err := Connect(ctx, Config{Settings: Settings{Broker: url, ClientID: "batch-" + t.Name()}, Batcher: &b})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		defer cancel()
		dctx, dcancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer dcancel()
		_ = cm.Disconnect(dctx)
	})
	if err := cm.AwaitConnection(ctx); err != nil {
		t.Fatal(err)
	}
	// autopaho ends AwaitConnection before it calls OnConnectionUp, where
	// the Batcher takes the connection: until then the Batcher has none
	// (a Publish is ConnectionDownError, a Hold holds nothing).
	deadline := time.Now().Add(10 * time.Second)
	for !b.connected() {
		if time.Now().After(deadline) {
			t.Fatal("the Batcher has no connection 10 s after autopaho's")
		}
		time.Sleep(time.Millisecond)
	}
	return cm, &b
}

// connected reports whether b has a connection the broker accepted.
func (b *Batcher) connected() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.cur != nil
}

// publishN publishes n messages at QoS 0 on topics t/0 … t/4, payload
// its index, through one Publisher per topic.
func publishN(t testing.TB, cm *autopaho.ConnectionManager, n int, payload func(i int) []byte) {
	t.Helper()
	pubs := make([]*Publisher, 5)
	for i := range pubs {
		pubs[i] = NewPublisher(cm, "t/"+strconv.Itoa(i), 0, false, "application/json")
	}
	for i := range n {
		if err := pubs[i%len(pubs)].Publish(context.Background(), payload(i)); err != nil {
			t.Fatal(err)
		}
	}
}

func index(i int) []byte { return []byte(strconv.Itoa(i)) }

// waitInOrder waits until sub has n messages and checks that they came
// in publish order.
func waitInOrder(t *testing.T, sub *brokertest.Client, n int) {
	t.Helper()
	got := sub.WaitFor(fmt.Sprintf("%d messages", n), func(m []brokertest.Message) bool { return len(m) >= n })
	if len(got) != n {
		t.Fatalf("got %d messages, want %d", len(got), n)
	}
	for i, m := range got {
		if want := "t/" + strconv.Itoa(i%5); m.Topic != want || string(m.Payload) != strconv.Itoa(i) {
			t.Fatalf("message %d: got %s %q, want %s %q", i, m.Topic, m.Payload, want, strconv.Itoa(i))
		}
	}
}

// TestBatcherOneWrite: the packets published between Hold and Flush
// leave in one write at Flush, in the order they were published, and
// none before.
func TestBatcherOneWrite(t *testing.T) {
	br := brokertest.Start(t)
	sub := brokertest.Connect(t, br.URL)
	sub.Subscribe("t/#")
	cm, b := connectBatched(t, br.URL)
	b.Hold()
	w0 := b.Writes() // paho's first PINGREQ, if it comes now, waits too
	publishN(t, cm, 100, index)
	if got := b.Writes() - w0; got != 0 {
		t.Fatalf("got %d writes before Flush, want 0", got)
	}
	if err := b.Flush(); err != nil {
		t.Fatal(err)
	}
	if got := b.Writes() - w0; got != 1 {
		t.Fatalf("got %d writes for 100 packets between Hold and Flush, want 1", got)
	}
	waitInOrder(t, sub, 100)
}

// TestUnheldPacketLeavesAtOnce: outside a hold each packet is one write,
// made before Publish returns, and reaches subscribers without a Flush.
func TestUnheldPacketLeavesAtOnce(t *testing.T) {
	br := brokertest.Start(t)
	sub := brokertest.Connect(t, br.URL)
	sub.Subscribe("t/#")
	cm, b := connectBatched(t, br.URL)
	w0 := b.Writes()
	publishN(t, cm, 10, index)
	// paho's pinger sends a PINGREQ at its start when it has not seen
	// the CONNECT go out: it may add one write of its own.
	if got := b.Writes() - w0; got != 10 && got != 11 {
		t.Fatalf("got %d writes for 10 packets outside a hold, want 10 (11 with a PINGREQ)", got)
	}
	waitInOrder(t, sub, 10)
}

// TestBatcherFlushSize: a hold that gathers more than FlushSize bytes
// writes them out as it goes, a packet never split, and the rest at
// Flush.
func TestBatcherFlushSize(t *testing.T) {
	br := brokertest.Start(t)
	sub := brokertest.Connect(t, br.URL)
	sub.Subscribe("t/#")
	cm, b := connectBatched(t, br.URL)
	big := func(i int) []byte { return append(index(i), bytes.Repeat([]byte{' '}, 10<<10)...) }
	b.Hold()
	w0 := b.Writes()
	publishN(t, cm, 20, big) // 200 KiB
	held := b.Writes() - w0
	if err := b.Flush(); err != nil {
		t.Fatal(err)
	}
	// A write goes out once FlushSize bytes wait: at least one before
	// Flush, and no more than one per FlushSize bytes.
	if most := uint64(20*10<<10) / FlushSize; held < 1 || held > most {
		t.Fatalf("got %d writes before Flush for 200 KiB, want 1 to %d", held, most)
	}
	got := sub.WaitFor("20 messages", func(m []brokertest.Message) bool { return len(m) >= 20 })
	for i, m := range got {
		if !bytes.Equal(m.Payload, big(i)) {
			t.Fatalf("message %d: got %d bytes, want %d", i, len(m.Payload), len(big(i)))
		}
	}
}

// TestBatcherQoS1: a QoS 1 publish outside a hold gets its PUBACK, and
// a QoS 1 publish from another goroutine during a hold leaves with the
// held packets at Flush and is acknowledged then.
func TestBatcherQoS1(t *testing.T) {
	br := brokertest.Start(t)
	cm, b := connectBatched(t, br.URL)
	p := NewPublisher(cm, "t/q1", 1, false, "")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := p.Publish(ctx, []byte("a")); err != nil {
		t.Fatalf("QoS 1 outside a hold: %v", err)
	}
	b.Hold()
	w0 := b.Writes()
	done := make(chan error, 1)
	go func() { done <- p.Publish(ctx, []byte("b")) }()
	// The publish is written to the held connection, then waits for its
	// PUBACK, which cannot come before Flush.
	waitWritten(t, b)
	if got := b.Writes() - w0; got != 0 {
		t.Fatalf("got %d writes during the hold, want 0", got)
	}
	if err := b.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("QoS 1 during a hold, after Flush: %v", err)
	}
}

// waitWritten waits until the held connection of b has bytes waiting.
func waitWritten(t *testing.T, b *Batcher) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		b.mu.Lock()
		c := b.held
		b.mu.Unlock()
		c.mu.Lock()
		n := len(c.buf)
		c.mu.Unlock()
		if n > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("nothing written to the held connection within 10 s")
		}
		time.Sleep(time.Millisecond)
	}
}

// fakeConn records writes; fail makes them fail.
type fakeConn struct {
	net.Conn
	mu      sync.Mutex
	writes  [][]byte
	fail    error
	closed  bool
	discard bool // count nothing, keep nothing
}

func (f *fakeConn) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail != nil {
		return 0, f.fail
	}
	if f.discard {
		return len(p), nil
	}
	f.writes = append(f.writes, append([]byte(nil), p...))
	return len(p), nil
}

func (f *fakeConn) Close() error { f.closed = true; return nil }

// TestConnWrites: what reaches the connection in which write, for
// packets (Lock, Writes, Unlock) and plain writes, held or not.
func TestConnWrites(t *testing.T) {
	packet := func(c *conn, parts ...string) {
		c.Lock()
		for _, p := range parts {
			if _, err := c.Write([]byte(p)); err != nil {
				t.Fatal(err)
			}
		}
		c.Unlock()
	}
	for _, tc := range []struct {
		name string
		run  func(c *conn, b *Batcher)
		want []string
	}{
		{"a packet is one write", func(c *conn, _ *Batcher) { packet(c, "h", "body") }, []string{"hbody"}},
		{"two packets, two writes", func(c *conn, _ *Batcher) { packet(c, "a", "1"); packet(c, "b", "2") }, []string{"a1", "b2"}},
		{"a plain write at once", func(c *conn, _ *Batcher) { _, _ = c.Write([]byte("x")) }, []string{"x"}},
		{"held packets at Flush", func(c *conn, b *Batcher) {
			b.Hold()
			packet(c, "a", "1")
			packet(c, "b", "2")
			_ = b.Flush()
			packet(c, "c", "3")
		}, []string{"a1b2", "c3"}},
		{"Flush during another's packet: written at its Unlock", func(c *conn, b *Batcher) {
			b.Hold()
			packet(c, "a", "1")
			c.Lock()
			_, _ = c.Write([]byte("b"))
			_ = b.Flush()
			_, _ = c.Write([]byte("2"))
			c.Unlock()
		}, []string{"a1b2"}},
		{"Flush with nothing held", func(c *conn, b *Batcher) { _ = b.Flush(); packet(c, "a") }, []string{"a"}},
	} {
		f := &fakeConn{}
		c := newConn(f)
		var b Batcher
		b.dialed(c)
		b.up(nil)
		tc.run(c, &b)
		var got []string
		for _, w := range f.writes {
			got = append(got, string(w))
		}
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%s: got writes %q, want %q", tc.name, got, tc.want)
		}
		if b.Writes() != uint64(len(tc.want)) {
			t.Errorf("%s: Writes() = %d, want %d", tc.name, b.Writes(), len(tc.want))
		}
	}
}

// TestConnFailedWrite: a failed write closes the connection, Flush
// returns its error, and every later write fails with it.
func TestConnFailedWrite(t *testing.T) {
	f := &fakeConn{fail: syscall.EPIPE}
	c := newConn(f)
	var b Batcher
	b.dialed(c)
	b.up(nil)
	b.Hold()
	c.Lock()
	if _, err := c.Write([]byte("a")); err != nil {
		t.Fatalf("a held write: got %v, want nil", err)
	}
	c.Unlock()
	if err := b.Flush(); !errors.Is(err, syscall.EPIPE) {
		t.Fatalf("Flush: got %v, want EPIPE", err)
	}
	if !f.closed {
		t.Fatal("the connection stayed open after a failed write")
	}
	if _, err := c.Write([]byte("b")); !errors.Is(err, syscall.EPIPE) {
		t.Fatalf("a write after the failure: got %v, want EPIPE", err)
	}
}

// BenchmarkPublish publishes 120-byte envelopes on 50 topics to a real
// mosquitto at QoS 0, as the service does: "direct" through
// Batcher.Publish in rounds of 20 between Hold and Flush (a full bus's
// 10 ms batch of the car's DBC), "paho-batch" through paho's Publish in
// the same rounds, "paho-each" through paho's Publish, one write each
// (as before the Batcher). It reports writes (the system calls of the
// publish path) and the process's CPU per envelope.
func BenchmarkPublish(b *testing.B) {
	for _, bc := range []struct {
		name   string
		round  int
		direct bool
	}{{"direct", 20, true}, {"paho-batch", 20, false}, {"paho-each", 0, false}} {
		b.Run(bc.name, func(b *testing.B) { benchPublish(b, bc.round, bc.direct) })
	}
}

func benchPublish(b *testing.B, round int, direct bool) {
	br := brokertest.Start(b)
	cm, bat := connectBatched(b, br.URL)
	pubs := make([]*Publisher, 50)
	topics := make([]string, len(pubs))
	for i := range pubs {
		topics[i] = "v/" + strconv.Itoa(i)
		pubs[i] = NewPublisher(cm, topics[i], 0, true, "application/json")
	}
	payload := bytes.Repeat([]byte{'x'}, 120)
	ctx := context.Background()
	w0, cpu0 := bat.Writes(), cpuTime(b)
	b.ResetTimer()
	for i := range b.N {
		if round > 0 && i%round == 0 {
			bat.Hold()
		}
		var err error
		if direct {
			err = bat.Publish(topics[i%len(topics)], payload, true, "application/json")
		} else {
			err = pubs[i%len(pubs)].Publish(ctx, payload)
		}
		if err != nil {
			b.Fatal(err)
		}
		if round > 0 && (i%round == round-1 || i == b.N-1) {
			if err := bat.Flush(); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(bat.Writes()-w0)/float64(b.N), "writes/envelope")
	b.ReportMetric(float64(cpuTime(b)-cpu0)/float64(b.N), "cpu-ns/envelope")
}
