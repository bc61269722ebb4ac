package mqttsub

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/yukart/candec/mqttclient"
)

// Errors.
var (
	// ErrProtocol: the broker sent something this client cannot read.
	ErrProtocol = errors.New("mqttsub: protocol error")
	// ErrRefused: the broker refused the connection or a subscription.
	ErrRefused = errors.New("mqttsub: refused")
	// ErrClosed: the client was closed.
	ErrClosed = errors.New("mqttsub: closed")
)

// Packet types (MQTT 3.1.1, section 2.2.1).
const (
	typeConnect    = 1
	typeConnack    = 2
	typePublish    = 3
	typePuback     = 4
	typeSubscribe  = 8
	typeSuback     = 9
	typePingreq    = 12
	typePingresp   = 13
	typeDisconnect = 14
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
	pubBuf   []byte
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
		return nil, fmt.Errorf("mqttsub: %w", err)
	}
	c := &Client{conn: conn, handler: h, keepAlive: s.KeepAlive, acks: make(chan []byte, 1), done: make(chan struct{})}
	if c.keepAlive == 0 {
		c.keepAlive = KeepAlive
	}
	user, pass := s.User()
	if err := c.handshake(ctx, s.ClientID, user, pass); err != nil {
		conn.Close()
		return nil, err
	}
	go c.readLoop()
	go c.pinger()
	return c, nil
}

// handshake sends CONNECT and reads CONNACK.
func (c *Client) handshake(ctx context.Context, clientID, user, pass string) error {
	flags := byte(0x02) // clean session
	if user != "" {
		flags |= 0x80
		if pass != "" {
			flags |= 0x40 // 3.1.1 allows a password only with a user name
		}
	}
	var vh []byte
	vh = appendString(vh, "MQTT")
	vh = append(vh, 4, flags) // level 3.1.1
	vh = binary.BigEndian.AppendUint16(vh, uint16(c.keepAlive/time.Second))
	vh = appendString(vh, clientID)
	if flags&0x80 != 0 {
		vh = appendString(vh, user)
	}
	if flags&0x40 != 0 {
		vh = appendString(vh, pass)
	}
	if dl, ok := ctx.Deadline(); ok {
		c.conn.SetDeadline(dl)
		defer c.conn.SetDeadline(time.Time{})
	}
	if _, err := c.conn.Write(packet(typeConnect<<4, vh)); err != nil {
		return fmt.Errorf("mqttsub: connect: %w", err)
	}
	var ack [4]byte
	if _, err := io.ReadFull(c.conn, ack[:]); err != nil {
		return fmt.Errorf("mqttsub: connack: %w", err)
	}
	if ack[0]>>4 != typeConnack || ack[1] != 2 {
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
	vh := binary.BigEndian.AppendUint16(nil, id)
	for _, f := range filters {
		vh = appendString(vh, f)
		vh = append(vh, 0)
	}
	if err := c.write(packet(typeSubscribe<<4|0x2, vh)); err != nil {
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
	_ = c.write([]byte{typeDisconnect << 4, 0}) // fails on an ended connection: nothing to tell the broker then
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
			if c.write([]byte{typePingreq << 4, 0}) != nil {
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
		typ, body, err := ReadPacket(r, &buf)
		if err != nil {
			return err
		}
		switch typ >> 4 {
		case typePublish:
			topic, payload, err := ParsePublish(typ, body)
			if err != nil {
				return err
			}
			c.handler(topic, payload, time.Now().UnixNano())
		case typeSuback:
			if len(body) < 2 {
				return fmt.Errorf("%w: short SUBACK", ErrProtocol)
			}
			select {
			case c.acks <- append([]byte(nil), body[2:]...):
			default:
			}
		case typePuback:
			if len(body) < 2 {
				return fmt.Errorf("%w: short PUBACK", ErrProtocol)
			}
			c.acked(binary.BigEndian.Uint16(body))
		case typePingresp:
		default:
			return fmt.Errorf("%w: unexpected packet type %d", ErrProtocol, typ>>4)
		}
	}
}

// ReadPacket reads one packet from r into *buf (grown as needed) and
// returns its first byte and its body (the bytes after the remaining
// length), which is valid until the next call.
func ReadPacket(r *bufio.Reader, buf *[]byte) (byte, []byte, error) {
	typ, err := r.ReadByte()
	if err != nil {
		return 0, nil, err
	}
	var n, shift int
	for i := 0; ; i++ {
		b, err := r.ReadByte()
		if err != nil {
			return 0, nil, unexpected(err)
		}
		n |= int(b&0x7f) << shift
		if b&0x80 == 0 {
			break
		}
		shift += 7
		if i == 3 {
			return 0, nil, fmt.Errorf("%w: remaining length longer than 4 bytes", ErrProtocol)
		}
	}
	if n > MaxPacket {
		return 0, nil, fmt.Errorf("%w: packet of %d bytes (at most %d)", ErrProtocol, n, MaxPacket)
	}
	if cap(*buf) < n {
		*buf = make([]byte, n)
	}
	b := (*buf)[:n]
	if _, err := io.ReadFull(r, b); err != nil {
		return 0, nil, unexpected(err)
	}
	return typ, b, nil
}

// ParsePublish splits a PUBLISH body into topic and payload.
func ParsePublish(typ byte, body []byte) (topic, payload []byte, err error) {
	if len(body) < 2 {
		return nil, nil, fmt.Errorf("%w: PUBLISH shorter than its topic length", ErrProtocol)
	}
	tl := int(binary.BigEndian.Uint16(body))
	rest := body[2:]
	if tl > len(rest) {
		return nil, nil, fmt.Errorf("%w: PUBLISH topic of %d bytes in %d", ErrProtocol, tl, len(rest))
	}
	topic, rest = rest[:tl], rest[tl:]
	if qos := typ >> 1 & 3; qos > 0 {
		if qos == 3 || len(rest) < 2 {
			return nil, nil, fmt.Errorf("%w: PUBLISH with QoS %d", ErrProtocol, qos)
		}
		rest = rest[2:] // packet id: never acknowledged, the subscriptions are QoS 0
	}
	return topic, rest, nil
}

func unexpected(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// packet builds a packet from its first byte and body.
func packet(first byte, body []byte) []byte {
	p := []byte{first}
	n := len(body)
	for {
		b := byte(n & 0x7f)
		n >>= 7
		if n > 0 {
			b |= 0x80
		}
		p = append(p, b)
		if n == 0 {
			break
		}
	}
	return append(p, body...)
}

func appendString(b []byte, s string) []byte {
	b = binary.BigEndian.AppendUint16(b, uint16(len(s)))
	return append(b, s...)
}

// Publish1 publishes payload on topic at QoS 1, not retained, without
// waiting for the PUBACK: Unacked tells how many are still unacknowledged.
// A packet ID still unacknowledged after 65,535 more publishes is
// refused with ErrProtocol, as the ID space is used up. A client that
// publishes does not subscribe: the two would share packet IDs.
func (c *Client) Publish1(topic string, payload []byte) error {
	c.pubMu.Lock()
	if c.pubIDs == nil {
		c.pubIDs = map[uint16]struct{}{}
	}
	if len(c.pubIDs) >= 65535 {
		c.pubMu.Unlock()
		return fmt.Errorf("%w: 65,535 publishes unacknowledged", ErrProtocol)
	}
	id := c.nextPubID()
	c.pubIDs[id] = struct{}{}
	body := appendString(c.pubBuf[:0], topic)
	body = binary.BigEndian.AppendUint16(body, id)
	body = append(body, payload...)
	c.pubBuf = body
	p := packet(typePublish<<4|1<<1, body)
	c.pubMu.Unlock()
	return c.write(p)
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
