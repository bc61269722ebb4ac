package ingest

import (
	"crypto/tls"
	"crypto/x509"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/yukart/candec/internal/lab/natscluster"
	"github.com/yukart/candec/internal/testkit/natstest"
	"github.com/yukart/candec/mqttclient"
)

// jsFleet is the fleet's NATS cluster as deploy/nats ships it (3
// nodes, TLS by the fleet's CA, an MQTT listener each, the stream
// FLEET in 16 partitions), started for a test, with the cars it lets
// publish.
type jsFleet struct {
	c    *natscluster.Cluster
	urls []string
	conn mqttclient.Settings // the ingest's certificate
	next atomic.Int64        // the node the next car connects to
}

func startJS(t testing.TB, cars ...string) *jsFleet {
	t.Helper()
	c := natstest.Start(t, natstest.Options{Cars: cars})
	cert, key, err := c.Identity("ingest")
	if err != nil {
		t.Fatal(err)
	}
	return &jsFleet{c: c, urls: strings.Split(c.ClientURLs(), ","), conn: mqttclient.Settings{CAFile: c.CAFile, CertFile: cert, KeyFile: key}}
}

// car connects car id to a node's MQTT listener (the nodes in turn),
// with its certificate, as its bridge does.
func (f *jsFleet) car(t testing.TB, id string) *car311 {
	t.Helper()
	cert, key, err := f.c.Identity(id)
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.LoadX509KeyPair(cert, key)
	if err != nil {
		t.Fatal(err)
	}
	pem, err := os.ReadFile(f.c.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	n := f.c.Nodes[int(f.next.Add(1))%len(f.c.Nodes)]
	addr := strings.TrimPrefix(n.MQTTURL, "mqtts://")
	return dial311(t, addr, &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{pair}, ServerName: "127.0.0.1"}, id)
}
