package mqttclient

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/eclipse/paho.golang/autopaho"
	"github.com/eclipse/paho.golang/paho"

	"github.com/yukart/candec/mqttclient/wire"
)

// Buffer sizes of a connection Dial made.
const (
	// FlushSize is how many bytes a held connection gathers before it
	// writes them out without waiting for Batcher.Flush.
	FlushSize = 64 << 10
	// readBufferSize is the read buffer: paho reads a packet's header a
	// byte at a time, which without a buffer costs a system call each;
	// with it, one read brings every packet that has arrived (a full
	// bus's 10 ms raw batch is about 1 KiB).
	readBufferSize = 32 << 10
)

// conn is the connection Dial returns. It gathers what paho writes for
// one packet (paho locks the connection around a packet, through
// sync.Locker, and writes its header and body apart) and writes the
// packet in one write when paho unlocks it. While a Batcher holds it,
// the packets wait until Batcher.Flush, or until FlushSize bytes wait,
// so that a batch of PUBLISH packets leaves in one write. Reads go
// through a buffer.
type conn struct {
	net.Conn // the TCP or TLS connection
	r        *bufio.Reader

	pmu sync.Mutex // one packet at a time: Lock and Unlock

	mu     sync.Mutex // the fields below
	buf    []byte     // written, not yet sent
	packet bool       // between Lock and Unlock
	held   bool       // a Batcher holds the connection
	err    error      // the first failed write: every later write fails

	writes *atomic.Uint64 // counts the writes to Conn: its Batcher's, or its own
	// writeTimeout, when not 0, bounds each write to Conn
	// (Config.WriteTimeout); set before the first write.
	writeTimeout time.Duration

	endMu   sync.Mutex  // the fields below
	closed  bool        // Close was called
	endStop func() bool // stops the context.AfterFunc of endWith
	endTime *time.Timer // closes Conn once the end has had its time
}

func newConn(c net.Conn) *conn {
	return &conn{Conn: c, r: bufio.NewReaderSize(c, readBufferSize), writes: new(atomic.Uint64)}
}

// endWith bounds the end of c: once ctx ends (the client is asked to
// disconnect, or its context ended), what paho and the publisher still
// write (the DISCONNECT, a batch under way) has grace; then the socket
// is closed under them, whether the broker reads or not. A write
// blocked on a broker that stopped reading (its socket buffers full)
// then fails, and so does every write after it, so no lock paho takes
// around a packet is held for longer: a clean disconnect from a
// broker that reads costs nothing more.
func (c *conn) endWith(ctx context.Context, grace time.Duration) {
	c.endMu.Lock()
	defer c.endMu.Unlock()
	if c.closed {
		return
	}
	c.endStop = context.AfterFunc(ctx, func() {
		c.endMu.Lock()
		defer c.endMu.Unlock()
		if !c.closed && c.endTime == nil {
			c.endTime = time.AfterFunc(grace, func() { _ = c.Conn.Close() })
		}
	})
}

// Close closes the socket and stops what endWith started.
func (c *conn) Close() error {
	c.endMu.Lock()
	c.closed = true
	if c.endStop != nil {
		c.endStop()
	}
	if c.endTime != nil {
		c.endTime.Stop()
	}
	c.endMu.Unlock()
	return c.Conn.Close()
}

// Read reads through the buffer. Only paho's receiving goroutine reads.
func (c *conn) Read(p []byte) (int, error) { return c.r.Read(p) }

// Lock starts a packet: what is written until Unlock is one packet.
func (c *conn) Lock() {
	c.pmu.Lock()
	c.mu.Lock()
	c.packet = true
	c.mu.Unlock()
}

// Unlock ends a packet and writes what waits, unless a Batcher holds
// the connection and less than FlushSize bytes wait.
func (c *conn) Unlock() {
	c.mu.Lock()
	c.packet = false
	if !c.held || len(c.buf) >= FlushSize {
		c.flush()
	}
	c.mu.Unlock()
	c.pmu.Unlock()
}

// Write adds p to what waits. A write outside a packet (not from paho's
// packet writer) is written at once unless the connection is held.
func (c *conn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return 0, c.err
	}
	c.buf = append(c.buf, p...)
	if !c.packet && !c.held {
		if err := c.flush(); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// flush writes what waits in one write. A failed write closes the
// connection, so that paho's reader ends it and the client reconnects:
// the packets that were waiting are lost, as the socket's own buffer
// is when a connection breaks. c.mu is held.
func (c *conn) flush() error {
	if c.err != nil || len(c.buf) == 0 {
		c.buf = c.buf[:0]
		return c.err
	}
	// Counted before it is made: what it carries may be answered before
	// Write returns.
	c.writes.Add(1)
	if c.writeTimeout > 0 {
		_ = c.Conn.SetWriteDeadline(time.Now().Add(c.writeTimeout))
	}
	_, err := c.Conn.Write(c.buf)
	c.buf = c.buf[:0]
	if err != nil {
		c.err = err
		_ = c.Conn.Close()
	}
	return err
}

// hold makes packets wait for release.
func (c *conn) hold() {
	c.mu.Lock()
	c.held = true
	c.mu.Unlock()
}

// release writes what waits and ends the hold.
func (c *conn) release() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.held = false
	if c.packet {
		return nil // the packet's Unlock writes it all
	}
	return c.flush()
}

// Batcher lets one goroutine send many packets in one write: the
// packets written to the connection between Hold and Flush leave
// together at Flush (or sooner, when FlushSize bytes wait). Other
// goroutines' packets written meanwhile (a PINGREQ, an acknowledgement)
// wait with them. Give it to Config.Batcher; it follows the client's
// current connection, from the broker's CONNACK to the connection's
// loss. Outside a hold every packet leaves as soon as it is written.
// Hold, Flush and Publish are for one goroutine; they do not allocate.
//
// A client must not hold the connection while it waits for an answer
// to a packet it wrote (a QoS 1 publish waits for its PUBACK): the
// packet would wait in the buffer and the answer would never come.
type Batcher struct {
	mu      sync.Mutex
	pending *conn // the connection of the current attempt
	cur     *conn // the connection the broker accepted; nil while down
	held    *conn // the connection Hold held
	retain  bool  // the broker takes retained messages (CONNACK)
	writes  atomic.Uint64
}

// install has cfg's connections made through b.
func (b *Batcher) install(cfg *autopaho.ClientConfig) {
	attempt, onUp, onDown := cfg.AttemptConnection, cfg.OnConnectionUp, cfg.OnConnectionDown
	cfg.AttemptConnection = func(ctx context.Context, cc autopaho.ClientConfig, u *url.URL) (net.Conn, error) {
		nc, err := attempt(ctx, cc, u)
		if c, ok := nc.(*conn); ok && err == nil {
			b.dialed(c)
		}
		return nc, err
	}
	cfg.OnConnectionUp = func(cm *autopaho.ConnectionManager, ca *paho.Connack) {
		b.up(ca)
		if onUp != nil {
			onUp(cm, ca)
		}
	}
	cfg.OnConnectionDown = func() bool {
		b.down()
		return onDown == nil || onDown()
	}
}

// dialed notes c, the connection of a new attempt; its writes count in
// b's. Nothing has written to c yet.
func (b *Batcher) dialed(c *conn) {
	c.writes = &b.writes
	b.mu.Lock()
	b.pending = c
	b.mu.Unlock()
}

// up makes the attempt's connection, which the broker accepted with
// ca, the current one.
func (b *Batcher) up(ca *paho.Connack) {
	b.mu.Lock()
	b.cur, b.pending = b.pending, nil
	b.retain = ca == nil || ca.Properties == nil || ca.Properties.RetainAvailable
	b.mu.Unlock()
}

// down leaves b without a connection until the next up.
func (b *Batcher) down() {
	b.mu.Lock()
	b.cur = nil
	b.mu.Unlock()
}

// Writes returns how many writes (system calls, over plain TCP) the
// connections of b have made so far, held or not: what went to the
// broker, divided by this, is how many packets a write carried.
func (b *Batcher) Writes() uint64 { return b.writes.Load() }

// Hold makes the packets written from now on wait for Flush.
func (b *Batcher) Hold() {
	b.mu.Lock()
	c := b.cur
	b.held = c
	b.mu.Unlock()
	if c != nil {
		c.hold()
	}
}

// Flush writes the packets that wait in one write and ends the hold. It
// returns the write's error; the connection is then closed and the
// client reconnects.
func (b *Batcher) Flush() error {
	b.mu.Lock()
	c := b.held
	b.held = nil
	b.mu.Unlock()
	if c == nil {
		return nil
	}
	return c.release()
}

// Publish writes payload on topic at QoS 0, with the MQTT v5 content
// type contentType unless it is empty, to the current connection: in
// the hold when there is one, else at once. It encodes the PUBLISH
// packet itself, into the connection's buffer: paho's Publish builds
// the packet anew, in eight allocations, for every message. It returns
// autopaho.ConnectionDownError while the broker has not accepted a
// connection, ErrPublishArgs for a message MQTT cannot carry (or a
// retained one the broker does not take), or the write's error.
func (b *Batcher) Publish(topic string, payload []byte, retain bool, contentType string) error {
	b.mu.Lock()
	c, retainOK := b.cur, b.retain
	b.mu.Unlock()
	if c == nil {
		return autopaho.ConnectionDownError
	}
	if retain && !retainOK {
		return fmt.Errorf("%w: %s: the broker takes no retained messages", ErrPublishArgs, topic)
	}
	if err := checkPublish(topic, payload, contentType); err != nil {
		return err
	}
	c.Lock()
	c.mu.Lock()
	err := c.err
	if err == nil {
		c.buf = wire.AppendPublishV5(c.buf, topic, payload, retain, contentType)
	}
	c.mu.Unlock()
	c.Unlock() // writes it unless held
	if err == nil {
		c.mu.Lock()
		err = c.err // the write's
		c.mu.Unlock()
	}
	return err
}
