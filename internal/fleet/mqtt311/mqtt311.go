package mqtt311

import (
	"bufio"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/yukart/candec/mqttclient"
	"github.com/yukart/candec/mqttclient/wire"
)

// Errors.
var (
	// ErrProtocol: the broker sent something this client cannot read.
	ErrProtocol = errors.New("mqtt311: protocol error")
	// ErrRefused: the broker refused the connection or a subscription.
	ErrRefused = errors.New("mqtt311: refused")
	// ErrClosed: the client was closed.
	ErrClosed = errors.New("mqtt311: closed")
)

// Limits.
const (
	// KeepAlive is the keep-alive the client asks for when its settings
	// give none; it pings at half of it.
	KeepAlive = mqttclient.DefaultKeepAlive
	// MaxPacket is the largest packet the client accepts.
	MaxPacket = 64 << 20
)

// Handler receives a message. topic and payload are valid only during
// the call; now is the arrival time in ns since the Unix epoch.
type Handler func(topic, payload []byte, now int64)

// Client is one subscriber connection.
type Client struct {
	conn      net.Conn
	handler   Handler
	keepAlive time.Duration

	wmu     sync.Mutex // writes
	nextID  uint16
	acks    chan []byte // SUBACK return codes
	done    chan struct{}
	errMu   sync.Mutex
	err     error
	closing bool

	// Both Close and readLoop close the connection (the broker ends it
	// on DISCONNECT, so readLoop often gets there first); the second
	// close must not turn into an error.
	closeOnce sync.Once
	closeErr  error

	// QoS 1 publishes (Publish1): the packet IDs waiting for PUBACK.
	pubMu    sync.Mutex
	pubIDs   map[uint16]struct{}
	pubNext  uint16
	pubAcked uint64
	// waiters are PublishAcked's packet IDs: closed at their PUBACK.
	waiters map[uint16]chan struct{}
}

// Dial connects to the broker of s (its URL, TLS files, user name and
// password, keep-alive: as every candec client, through mqttclient) as
// s.ClientID with a clean session and starts reading; messages go to h.
func Dial(ctx context.Context, s mqttclient.Settings, h Handler) (*Client, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	conn, err := s.Dial(ctx)
	if err != nil {
		return nil, fmt.Errorf("mqtt311: %w", err)
	}
	c := &Client{conn: conn, handler: h, keepAlive: s.KeepAlive, acks: make(chan []byte, 1), done: make(chan struct{})}
	c.keepAlive = cmp.Or(c.keepAlive, KeepAlive)
	user, pass := s.User()
	if err := c.handshake(ctx, s.ClientID, user, pass); err != nil {
		conn.Close()
		return nil, err
	}
	go c.readLoop()
	go c.pinger()
	return c, nil
}

// protocol marks a malformed packet as ErrProtocol.
func protocol(err error) error {
	if errors.Is(err, wire.ErrMalformed) {
		return fmt.Errorf("%w: %w", ErrProtocol, err)
	}
	return err
}

// handshake sends CONNECT and reads CONNACK.
func (c *Client) handshake(ctx context.Context, clientID, user, pass string) error {
	if dl, ok := ctx.Deadline(); ok {
		c.conn.SetDeadline(dl)
		defer c.conn.SetDeadline(time.Time{})
	}
	if _, err := c.conn.Write(wire.AppendConnectV311(nil, clientID, user, pass, c.keepAlive)); err != nil {
		return fmt.Errorf("mqtt311: connect: %w", err)
	}
	var ack [4]byte
	if _, err := io.ReadFull(c.conn, ack[:]); err != nil {
		return fmt.Errorf("mqtt311: connack: %w", err)
	}
	if ack[0]>>4 != wire.Connack || ack[1] != 2 {
		return fmt.Errorf("%w: expected CONNACK, got % x", ErrProtocol, ack)
	}
	if ack[3] != 0 {
		why := ""
		switch ack[3] {
		case 4:
			why = " (bad user name or password)"
		case 5:
			why = " (not authorized)"
		}
		return fmt.Errorf("%w: connection refused with return code %d%s", ErrRefused, ack[3], why)
	}
	return nil
}

// Subscribe subscribes to filters at QoS 0 and waits for the broker to
// grant them.
func (c *Client) Subscribe(ctx context.Context, filters ...string) error {
	c.wmu.Lock()
	c.nextID++
	id := c.nextID
	c.wmu.Unlock()
	if err := c.write(wire.AppendSubscribeV311(nil, id, filters...)); err != nil {
		return err
	}
	select {
	case codes := <-c.acks:
		for i, rc := range codes {
			if rc >= 0x80 && i < len(filters) {
				return fmt.Errorf("%w: subscription to %s", ErrRefused, filters[i])
			}
		}
		return nil
	case <-c.done:
		return c.Err()
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Done is closed when the connection ends.
func (c *Client) Done() <-chan struct{} { return c.done }

// Err returns why the connection ended, ErrClosed after Close, or nil
// while it runs.
func (c *Client) Err() error {
	c.errMu.Lock()
	defer c.errMu.Unlock()
	return c.err
}

// Close sends DISCONNECT, closes the connection and waits for the reader
// to end. It returns an error only when closing the connection failed; a
// connection that had already ended (Done closed, Err saying why) closes
// without one. It is safe to call more than once.
func (c *Client) Close() error {
	c.errMu.Lock()
	c.closing = true
	c.errMu.Unlock()
	_ = c.write([]byte{wire.Disconnect << 4, 0}) // fails on an ended connection: nothing to tell the broker then
	err := c.closeConn()
	<-c.done
	return err
}

// closeConn closes the connection once and returns that close's error.
func (c *Client) closeConn() error {
	c.closeOnce.Do(func() { c.closeErr = c.conn.Close() })
	return c.closeErr
}

func (c *Client) write(p []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.conn.SetWriteDeadline(time.Now().Add(5 * time.Second))
	_, err := c.conn.Write(p)
	return err
}

func (c *Client) pinger() {
	t := time.NewTicker(c.keepAlive / 2)
	defer t.Stop()
	for {
		select {
		case <-c.done:
			return
		case <-t.C:
			if c.write([]byte{wire.Pingreq << 4, 0}) != nil {
				return
			}
		}
	}
}

func (c *Client) readLoop() {
	err := c.read(bufio.NewReaderSize(c.conn, 64<<10))
	c.errMu.Lock()
	if c.closing {
		err = ErrClosed
	}
	c.err = err
	c.errMu.Unlock()
	_ = c.closeConn()
	close(c.done)
}

// read reads packets until the connection fails.
func (c *Client) read(r *bufio.Reader) error {
	var buf []byte
	for {
		typ, body, err := wire.ReadPacket(r, &buf, MaxPacket)
		if err != nil {
			return protocol(err)
		}
		switch typ >> 4 {
		case wire.Publish:
			topic, payload, err := wire.ParsePublishV311(typ, body)
			if err != nil {
				return protocol(err)
			}
			c.handler(topic, payload, time.Now().UnixNano())
		case wire.Suback:
			if len(body) < 2 {
				return fmt.Errorf("%w: short SUBACK", ErrProtocol)
			}
			select {
			case c.acks <- append([]byte(nil), body[2:]...):
			default:
			}
		case wire.Puback:
			if len(body) < 2 {
				return fmt.Errorf("%w: short PUBACK", ErrProtocol)
			}
			c.acked(binary.BigEndian.Uint16(body))
		case wire.Pingresp:
		default:
			return fmt.Errorf("%w: unexpected packet type %d", ErrProtocol, typ>>4)
		}
	}
}

// Publish1 publishes payload on topic at QoS 1, not retained, without
// waiting for the PUBACK: Unacked tells how many are still unacknowledged.
// A packet ID still unacknowledged after 65,535 more publishes is
// refused with ErrProtocol, as the ID space is used up. SUBSCRIBE and
// PUBLISH share the packet IDs: a client that does both subscribes
// first (Subscribe returns at the SUBACK), and publishes after.
func (c *Client) Publish1(topic string, payload []byte) error {
	return c.publish1(topic, payload, false)
}

// Retain1 is Publish1 of a retained message: a campaign pushed to a
// car's policy topic, a car's acknowledgement.
func (c *Client) Retain1(topic string, payload []byte) error { return c.publish1(topic, payload, true) }

func (c *Client) publish1(topic string, payload []byte, retain bool) error {
	_, err := c.send1(topic, payload, retain, nil)
	return err
}

// PublishAcked publishes payload on topic at QoS 1, retained or not,
// and returns once the broker acknowledged it (its PUBACK), the
// connection ended or ctx did. An MQTT 3.1.1 PUBACK carries no reason:
// a broker whose permissions refuse the message may acknowledge it and
// drop it (nats-server does), or end the connection.
func (c *Client) PublishAcked(ctx context.Context, topic string, payload []byte, retain bool) error {
	acked := make(chan struct{})
	id, err := c.send1(topic, payload, retain, acked)
	if err != nil {
		return err
	}
	select {
	case <-acked:
		return nil
	case <-c.done:
		if err := c.Err(); err != nil {
			return fmt.Errorf("mqtt311: no PUBACK for %s: %w", topic, err)
		}
		return fmt.Errorf("mqtt311: no PUBACK for %s: %w", topic, ErrClosed)
	case <-ctx.Done():
		c.pubMu.Lock()
		delete(c.waiters, id)
		c.pubMu.Unlock()
		return fmt.Errorf("mqtt311: no PUBACK for %s: %w", topic, ctx.Err())
	}
}

// send1 writes a QoS 1 PUBLISH; acked, when not nil, is closed at its
// PUBACK.
func (c *Client) send1(topic string, payload []byte, retain bool, acked chan struct{}) (uint16, error) {
	c.pubMu.Lock()
	if c.pubIDs == nil {
		c.pubIDs = map[uint16]struct{}{}
	}
	if len(c.pubIDs) >= 65535 {
		c.pubMu.Unlock()
		return 0, fmt.Errorf("%w: 65,535 publishes unacknowledged", ErrProtocol)
	}
	id := c.nextPubID()
	c.pubIDs[id] = struct{}{}
	if acked != nil {
		if c.waiters == nil {
			c.waiters = map[uint16]chan struct{}{}
		}
		c.waiters[id] = acked
	}
	p := wire.AppendPublishV311(make([]byte, 0, 9+len(topic)+len(payload)), topic, 1, id, payload)
	if retain {
		p[0] |= 1 // RETAIN
	}
	c.pubMu.Unlock()
	return id, c.write(p)
}

// nextPubID returns a packet ID not waiting for its PUBACK; called with
// pubMu held and fewer than 65,535 waiting.
func (c *Client) nextPubID() uint16 {
	for {
		c.pubNext++
		if c.pubNext == 0 {
			continue
		}
		if _, busy := c.pubIDs[c.pubNext]; !busy {
			return c.pubNext
		}
	}
}

// acked takes a PUBACK of id.
func (c *Client) acked(id uint16) {
	c.pubMu.Lock()
	if _, ok := c.pubIDs[id]; ok {
		delete(c.pubIDs, id)
		c.pubAcked++
		if w, ok := c.waiters[id]; ok {
			delete(c.waiters, id)
			close(w)
		}
	}
	c.pubMu.Unlock()
}

// Unacked returns how many QoS 1 publishes wait for their PUBACK, and
// how many were acknowledged.
func (c *Client) Unacked() (waiting int, acked uint64) {
	c.pubMu.Lock()
	defer c.pubMu.Unlock()
	return len(c.pubIDs), c.pubAcked
}
