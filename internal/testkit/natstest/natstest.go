package natstest

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/yukart/candec/internal/base/child"
	"github.com/yukart/candec/internal/fleet/mqtt311"
	"github.com/yukart/candec/internal/lab/natscluster"
	"github.com/yukart/candec/mqttclient"
	"github.com/yukart/candec/mqttclient/wire"
)

// RequireEnv names the environment variable that turns a nats-server
// that cannot be built from a skip into a failure (CI sets it to 1).
const RequireEnv = "CANDEC_REQUIRE_NATS"

// Options configure Start: natscluster's, whose Binary, ConfigDir and
// Dir Start fills.
type Options = natscluster.Options

var (
	findOnce sync.Once
	repo     string
	binary   string
	findErr  error
)

// Binary returns nats-server, built once per test binary, or skips the
// test (fails it with RequireEnv=1) when it cannot be built.
func Binary(t testing.TB) string {
	t.Helper()
	findOnce.Do(func() {
		wd, err := os.Getwd()
		if err != nil {
			findErr = err
			return
		}
		if repo, findErr = natscluster.Repo(wd); findErr != nil {
			return
		}
		binary, findErr = natscluster.Find(repo)
	})
	if findErr != nil {
		if os.Getenv(RequireEnv) == "1" {
			t.Fatalf("natstest: %v (and %s=1)", findErr, RequireEnv)
		}
		t.Skipf("natstest: no cluster can start here: %v", findErr)
	}
	return binary
}

// ConfigDir returns the repository's deploy/nats (after Binary).
func ConfigDir(t testing.TB) string {
	t.Helper()
	Binary(t)
	return repo + "/" + natscluster.ConfigDir
}

// Start starts a cluster as o says (3 nodes unless o.Nodes) in a
// temporary directory, with its stream, and stops it when the test
// ends.
func Start(t testing.TB, o Options) *natscluster.Cluster {
	t.Helper()
	o.Binary = Binary(t)
	o.ConfigDir = ConfigDir(t)
	if o.Dir == "" {
		o.Dir = t.TempDir()
	}
	c, err := natscluster.Start(context.Background(), o)
	if err != nil {
		t.Fatalf("natstest: %v", err)
	}
	t.Cleanup(func() {
		c.Stop()
		if t.Failed() {
			for _, n := range c.Nodes {
				t.Logf("natstest: %s's log: %s\n%s", n.Name, n.Log, child.Tail(n.Log, 20))
			}
		}
	})
	return c
}

// Connect connects to c over NATS as name (a certificate of c's CA with
// that common name), and closes the connection when the test ends.
func Connect(t testing.TB, c *natscluster.Cluster, name string, opts ...nats.Option) *nats.Conn {
	t.Helper()
	nc, err := c.Connect(name, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// Car connects to node i's MQTT listener as car id, over TLS with the
// car's own certificate, as its bridge would (MQTT 3.1.1), with id as
// its client id; the connection is closed when the test ends.
//
// The first MQTT client of the account has the node make MQTT's own
// streams, which on a loaded machine can outlast the node's patience
// (it closes the connection): like a bridge, Car tries again, for up to
// a minute.
func Car(t testing.TB, c *natscluster.Cluster, i int, id string) *mqtt311.Client {
	t.Helper()
	var cl *mqtt311.Client
	var err error
	for deadline := time.Now().Add(time.Minute); ; {
		if cl, err = DialCar(c, i, id, id); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("natstest: car %s on %s: %v", id, c.Nodes[i].Name, err)
		}
		time.Sleep(200 * time.Millisecond) // a bridge's restart_timeout, shortened
	}
	t.Cleanup(func() { _ = cl.Close() })
	return cl
}

// DialCar connects to node i's MQTT listener with the certificate of
// identity and the given client id (an attacker's may differ), and
// returns the connection or why the node refused it.
func DialCar(c *natscluster.Cluster, i int, identity, clientID string) (*mqtt311.Client, error) {
	cert, key, err := c.Identity(identity)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return mqtt311.Dial(ctx, mqttclient.Settings{Broker: c.Nodes[i].MQTTURL, ClientID: clientID,
		CAFile: c.CAFile, CertFile: cert, KeyFile: key}, func(_, _ []byte, _ int64) {})
}

// Client is the MQTT 3.1.1 client Car and DialCar return (a car's
// bridge speaks 3.1.1, as nats-server does).
type Client = mqtt311.Client

// ErrRefused: a SUBSCRIBE (or CONNECT) the server refused.
var ErrRefused = mqtt311.ErrRefused

// Handler receives a message of a Client.
type Handler = mqtt311.Handler

// Dial connects an MQTT 3.1.1 client with s (a car's own mosquitto, for
// one), and closes it when the test ends.
func Dial(t testing.TB, s mqttclient.Settings) *Client {
	t.Helper()
	return Listen(t, s, func(_, _ []byte, _ int64) {})
}

// Listen is Dial with the messages the client is sent to h.
func Listen(t testing.TB, s mqttclient.Settings, h Handler) *Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cl, err := mqtt311.Dial(ctx, s, h)
	if err != nil {
		t.Fatalf("natstest: %s: %v", s.Broker, err)
	}
	t.Cleanup(func() { _ = cl.Close() })
	return cl
}

// PublishRetained connects to node i's MQTT listener as car id, sends
// one retained QoS 1 PUBLISH of payload on topic, and returns once it
// is acknowledged (what a bridge's notifications do), whatever the
// node's permissions make of it (PUBLISH as package wire makes it).
func PublishRetained(t testing.TB, c *natscluster.Cluster, i int, id, topic string, payload []byte) {
	t.Helper()
	pub := wire.AppendPublishV311(nil, topic, 1, 1, payload)
	pub[0] |= 1 // RETAIN
	if err := Send(c, i, id, pub); err != nil {
		t.Fatalf("natstest: retained publish on %s: %v", topic, err)
	}
}

// Send connects to node i's MQTT listener as car id (client id
// id+"-raw"), writes pub (one PUBLISH as package wire makes it, of any
// QoS, flags and size) and then a PINGREQ, and returns once the node
// has answered both: the PUBACK of a QoS 1 PUBLISH, and the PINGRESP
// (so a QoS 0 PUBLISH was read). An error says what the node did
// instead (closed the connection, as for a PUBLISH over max_payload).
func Send(c *natscluster.Cluster, i int, id string, pub []byte) error {
	cert, key, err := c.Identity(id)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s := mqttclient.Settings{Broker: c.Nodes[i].MQTTURL, ClientID: id + "-raw", CAFile: c.CAFile, CertFile: cert, KeyFile: key}
	conn, err := s.Dial(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	// The CONNACK comes first; the PUBACK follows the store in
	// JetStream, so it may come after the PINGRESP.
	want := map[byte]bool{wire.Pingresp: true}
	if pub[0]>>1&3 == 1 {
		want[wire.Puback] = true
	}
	packets := append(wire.AppendConnectV311(nil, s.ClientID, "", "", time.Minute), pub...)
	if _, err := conn.Write(append(packets, wire.Pingreq<<4, 0)); err != nil {
		return fmt.Errorf("%s: %w", c.Nodes[i].Name, err)
	}
	r := bufio.NewReader(conn)
	var buf []byte
	for first := true; len(want) > 0; first = false {
		typ, body, err := wire.ReadPacket(r, &buf, 1<<10)
		if err != nil || first && typ>>4 != wire.Connack || !first && !want[typ>>4] {
			return fmt.Errorf("%s: packet %d (%x), %v; want %v", c.Nodes[i].Name, typ>>4, body, err, want)
		}
		delete(want, typ>>4)
	}
	return nil
}
