package mqttclient

import (
	"bufio"
	"net"
	"sync"
	"sync/atomic"
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
}

func newConn(c net.Conn) *conn {
	return &conn{Conn: c, r: bufio.NewReaderSize(c, readBufferSize), writes: new(atomic.Uint64)}
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
	_, err := c.Conn.Write(c.buf)
	c.writes.Add(1)
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
// current connection. Outside a hold every packet leaves as soon as it
// is written. Hold and Flush are for one goroutine; they do not
// allocate.
//
// A client must not hold the connection while it waits for an answer
// to a packet it wrote (a QoS 1 publish waits for its PUBACK): the
// packet would wait in the buffer and the answer would never come.
type Batcher struct {
	mu     sync.Mutex
	cur    *conn // the current connection
	held   *conn // the connection Hold held
	writes atomic.Uint64
}

// attach makes c the current connection; its writes count in b's.
// c is new: nothing has written to it yet.
func (b *Batcher) attach(c *conn) {
	c.writes = &b.writes
	b.mu.Lock()
	b.cur = c
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

// unwrap returns the connection under c, if c is one Dial made.
func unwrap(c net.Conn) net.Conn {
	if bc, ok := c.(*conn); ok {
		return bc.Conn
	}
	return c
}
