package service

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/yukart/candec/internal/lab/mosquitto"
	"github.com/yukart/candec/internal/lab/natscluster"
	"github.com/yukart/candec/internal/testkit/brokertest"
	"github.com/yukart/candec/internal/testkit/natstest"
	"github.com/yukart/candec/mqttclient"
)

// TestNATSBridgeNodeKill: the car's mosquitto, bridged as bridge.conf
// says to the three nodes of the NATS cluster (deploy/nats), goes on
// through a SIGKILL of the node its bridge is connected to, started
// again: every window the car sent is in the stream, none twice. The
// node is not the one that leads the fleet's stream: a window published
// while that stream has no leader is acknowledged to the car and lost
// (docs/fleet.md, "Where NATS can drop a window").
func TestNATSBridgeNodeKill(t *testing.T) {
	brokertest.RequireMosquitto(t) // the car's broker and its bridge
	c := natstest.Start(t, natstest.Options{Cars: []string{"kart01"}})
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	// The bridge starts on the first address: a node that does not
	// lead the stream.
	first := (nodeIndex(t, c, c.StreamLeader(ctx)) + 1) % len(c.Nodes)
	car := startBridgedCar(t, c, "kart01", first)
	pub := carPublisher(t, car)
	sent := 0
	send := func(d time.Duration) { // 200 windows a second, as 5 ms windows would
		for end := time.Now().Add(d); time.Now().Before(end); {
			sent++
			if err := pub.Publish1("yukart/window", []byte(fmt.Sprint(sent))); err != nil {
				t.Fatal(err)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	send(2 * time.Second)
	killAndRestart(ctx, t, c, first, send)
	send(2 * time.Second)
	counts := streamPayloads(ctx, t, c, sent)
	lost, twice := 0, 0
	for i := 1; i <= sent; i++ {
		switch n := counts[fmt.Sprint(i)]; {
		case n == 0:
			lost++
		case n > 1:
			twice += n - 1
		}
	}
	t.Logf("%d windows sent, %d lost, %d in the stream twice (the bridge's resends)", sent, lost, twice)
	if lost != 0 || len(counts) != sent {
		t.Errorf("%d of %d windows lost (%d distinct payloads in the stream)", lost, sent, len(counts))
	}
	if nodes := bridgeAddresses(t, car.Log); len(nodes) < 2 {
		t.Errorf("the bridge connected to %v only: it never failed over", nodes)
	}
}

// nodeIndex returns the index of the node called name.
func nodeIndex(t *testing.T, c *natscluster.Cluster, name string) int {
	t.Helper()
	for i, n := range c.Nodes {
		if n.Name == name {
			return i
		}
	}
	t.Fatalf("no node is called %q", name)
	return -1
}

// killAndRestart SIGKILLs node i while the car sends, starts it again,
// and sends on.
func killAndRestart(ctx context.Context, t *testing.T, c *natscluster.Cluster, i int, send func(time.Duration)) {
	t.Helper()
	if err := c.Kill(i); err != nil {
		t.Fatal(err)
	}
	send(3 * time.Second)
	if err := c.Restart(ctx, i); err != nil {
		t.Fatal(err)
	}
	send(time.Second)
}

// startBridgedCar starts car id's mosquitto with bridge.conf as shipped,
// its address line naming every node of c from node first on, and the
// car's certificate.
func startBridgedCar(t *testing.T, c *natscluster.Cluster, id string, first int) *mosquitto.Process {
	t.Helper()
	text, err := os.ReadFile(filepath.Join("..", "deploy", "mosquitto", "bridge.conf"))
	if err != nil {
		t.Fatal(err)
	}
	var addrs []string
	for i := range c.Nodes {
		n := c.Nodes[(first+i)%len(c.Nodes)]
		addrs = append(addrs, strings.TrimPrefix(n.MQTTURL, "mqtts://"))
	}
	cert, key, err := c.Identity(id)
	if err != nil {
		t.Fatal(err)
	}
	conf := replaceLines(t, string(text), map[string]string{
		"address ":         "address " + strings.Join(addrs, " "),
		"bridge_cafile ":   "bridge_cafile " + c.CAFile,
		"bridge_certfile ": "bridge_certfile " + cert,
		"bridge_keyfile ":  "bridge_keyfile " + key,
		// bridge.conf's 2 to 30 s backoff, shortened: the test waits on it.
		"restart_timeout ": "restart_timeout 1 2",
	})
	conf = strings.ReplaceAll(conf, "kart01", id)
	dir := filepath.Join(t.TempDir(), "car")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	return brokertest.StartMosquitto(t, mosquitto.Options{Dir: dir, Verbose: true, Persistence: true, Extra: conf})
}

// carPublisher connects to the car's broker as candec would publish
// its windows there.
func carPublisher(t *testing.T, car *mosquitto.Process) *natstest.Client {
	t.Helper()
	return natstest.Dial(t, mqttclient.Settings{Broker: car.URL, ClientID: "candec"})
}

// streamPayloads reads the fleet's stream as the ingest until it has
// held want distinct payloads, or nothing more comes for 10 s, and
// returns how many times each payload came.
func streamPayloads(ctx context.Context, t *testing.T, c *natscluster.Cluster, want int) map[string]int {
	t.Helper()
	js, err := jetstream.New(natstest.Connect(t, c, "ingest"))
	if err != nil {
		t.Fatal(err)
	}
	st, err := js.Stream(ctx, c.Stream)
	if err != nil {
		t.Fatal(err)
	}
	cons, err := st.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{Durable: "count", AckPolicy: jetstream.AckExplicitPolicy})
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for idle := time.Now(); len(counts) < want && time.Since(idle) < 10*time.Second && ctx.Err() == nil; {
		batch, err := cons.Fetch(1000, jetstream.FetchMaxWait(time.Second))
		if err != nil {
			t.Fatal(err)
		}
		for m := range batch.Messages() {
			if strings.HasSuffix(m.Subject(), ".yukart.window") {
				counts[string(m.Data())]++
				idle = time.Now()
			}
			_ = m.Ack()
		}
	}
	return counts
}

// bridgeAddresses returns the addresses the car's bridge connected to,
// from its broker's log.
func bridgeAddresses(t *testing.T, log string) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, line := range strings.Split(string(b), "\n") {
		// "Connecting bridge (step 1) fleet (127.0.0.1:46305)"
		if strings.Contains(line, "Connecting bridge") && strings.HasSuffix(line, ")") {
			seen[line[strings.LastIndex(line, "(")+1:len(line)-1]] = true
		}
	}
	return seen
}
