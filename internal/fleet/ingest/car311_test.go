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
	conn net.Conn
	r    *bufio.Reader
	buf  []byte
	id   uint16
}

const inFlight311 = 200

// dial311 connects to the MQTT listener at addr as clientID, over
// TLS when tc is not nil.
func dial311(t testing.TB, addr string, tc *tls.Config, clientID string) *car311 {
	t.Helper()
	var conn net.Conn
	var err error
	d := &net.Dialer{Timeout: 10 * time.Second}
	if tc != nil {
		conn, err = tls.DialWithDialer(d, "tcp", addr, tc)
	} else {
		conn, err = d.Dial("tcp", addr)
	}
	if err != nil {
		t.Fatal(err)
	}
	c := &car311{conn: conn, r: bufio.NewReader(conn)}
	t.Cleanup(func() { conn.Close() })
	if _, err := conn.Write(wire.AppendConnectV311(nil, clientID, "", "", time.Minute)); err != nil {
		t.Fatal(err)
	}
	typ, body, err := c.read()
	if err != nil || typ>>4 != wire.Connack || len(body) < 2 || body[1] != 0 {
		t.Fatalf("CONNACK of %s: type %#x %x, %v", clientID, typ, body, err)
	}
	return c
}

func (c *car311) read() (byte, []byte, error) {
	if err := c.conn.SetReadDeadline(time.Now().Add(60 * time.Second)); err != nil {
		return 0, nil, err
	}
	return wire.ReadPacket(c.r, &c.buf, 1<<20)
}

// publish publishes payloads on topic at QoS 1, in order, retained or
// not, and returns once every one has its PUBACK.
func (c *car311) publish(t testing.TB, topic string, payloads [][]byte, retain bool) {
	t.Helper()
	if err := c.publishErr(topic, payloads, retain); err != nil {
		t.Fatal(err)
	}
}

func (c *car311) publishErr(topic string, payloads [][]byte, retain bool) error {
	w := bufio.NewWriterSize(c.conn, 64<<10)
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
				return err
			}
			waiting++
		}
		if err := w.Flush(); err != nil {
			return err
		}
		typ, _, err := c.read()
		if err != nil {
			return fmt.Errorf("PUBACK on %s: %w", topic, err)
		}
		if typ>>4 == wire.Puback {
			waiting--
		}
	}
	return nil
}
