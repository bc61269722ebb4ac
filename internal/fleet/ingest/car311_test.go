package ingest

import (
	"bufio"
	"crypto/tls"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/yukart/candec/mqttclient/wire"
)

// car311 is a car's bridge as the cluster sees it: MQTT 3.1.1, QoS 1,
// a window per PUBLISH, up to inFlight311 awaiting their PUBACK.
type car311 struct {
	addr, clientID string
	tc             *tls.Config
	conn           net.Conn
	r              *bufio.Reader
	buf            []byte
	id             uint16
}

const inFlight311 = 200

// dial311 connects to the MQTT listener at addr as clientID, over
// TLS when tc is not nil. A connection the listener closes before its
// CONNACK is tried again, as a bridge would: a node that is creating
// the account's MQTT streams for many first connections at once may
// close some (seen with 10 cars connecting at once).
func dial311(t testing.TB, addr string, tc *tls.Config, clientID string) *car311 {
	t.Helper()
	var err error
	for range 5 {
		var c *car311
		if c, err = tryDial311(addr, tc, clientID); err == nil {
			t.Cleanup(func() { c.conn.Close() })
			return c
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Fatal(err)
	return nil
}

func tryDial311(addr string, tc *tls.Config, clientID string) (*car311, error) {
	var conn net.Conn
	var err error
	d := &net.Dialer{Timeout: 10 * time.Second}
	if tc != nil {
		conn, err = tls.DialWithDialer(d, "tcp", addr, tc)
	} else {
		conn, err = d.Dial("tcp", addr)
	}
	if err != nil {
		return nil, err
	}
	c := &car311{addr: addr, clientID: clientID, tc: tc, conn: conn, r: bufio.NewReader(conn)}
	if _, err := conn.Write(wire.AppendConnectV311(nil, clientID, "", "", time.Minute)); err != nil {
		conn.Close()
		return nil, err
	}
	typ, body, err := c.read()
	if err != nil || typ>>4 != wire.Connack || len(body) < 2 || body[1] != 0 {
		conn.Close()
		return nil, fmt.Errorf("CONNACK of %s: type %#x %x, %v", clientID, typ, body, err)
	}
	return c, nil
}

func (c *car311) read() (byte, []byte, error) {
	if err := c.conn.SetReadDeadline(time.Now().Add(60 * time.Second)); err != nil {
		return 0, nil, err
	}
	return wire.ReadPacket(c.r, &c.buf, 1<<20)
}

// publish publishes payloads on topic at QoS 1, in order, retained or
// not, and returns once every one has its PUBACK. A connection the
// node closes is made again and what was not acknowledged sent again,
// as a bridge does (a window may then reach the stream twice: the
// ingest skips the second as a window taken).
func (c *car311) publish(t testing.TB, topic string, payloads [][]byte, retain bool) {
	t.Helper()
	var err error
	for range 5 {
		var acked int
		if acked, err = c.publishFrom(topic, payloads, retain); err == nil {
			return
		}
		payloads = payloads[acked:]
		c.conn.Close()
		time.Sleep(200 * time.Millisecond)
		n, derr := tryDial311(c.addr, c.tc, c.clientID)
		if derr != nil {
			err = derr
			continue
		}
		c.conn, c.r = n.conn, n.r
		t.Cleanup(func() { n.conn.Close() })
	}
	t.Fatal(err)
}

// publishErr is publish without the reconnection.
func (c *car311) publishErr(topic string, payloads [][]byte, retain bool) error {
	_, err := c.publishFrom(topic, payloads, retain)
	return err
}

// publishFrom publishes payloads and returns how many of them have
// their PUBACK (the broker acknowledges in order).
func (c *car311) publishFrom(topic string, payloads [][]byte, retain bool) (int, error) {
	w := bufio.NewWriterSize(c.conn, 64<<10)
	acked := 0
	var pkt []byte
	waiting := 0
	for i := 0; i < len(payloads) || waiting > 0; {
		for ; i < len(payloads) && waiting < inFlight311; i++ {
			c.id++
			if c.id == 0 {
				c.id = 1
			}
			pkt = wire.AppendPublishV311(pkt[:0], topic, 1, c.id, payloads[i])
			if retain {
				pkt[0] |= 1
			}
			if _, err := w.Write(pkt); err != nil {
				return acked, err
			}
			waiting++
		}
		if err := w.Flush(); err != nil {
			return acked, err
		}
		typ, _, err := c.read()
		if err != nil {
			return acked, fmt.Errorf("PUBACK on %s: %w", topic, err)
		}
		if typ>>4 == wire.Puback {
			waiting--
			acked++
		}
	}
	return acked, nil
}
