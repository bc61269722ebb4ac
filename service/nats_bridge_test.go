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
// through a SIGKILL of a node, started again: every window the car sent
// is in the stream FLEET, and none twice but for the bridge's resends
// (each its own message of $MQTT_msgs, which the ingest skips by
// vehicle, epoch and sequence). The node killed is the bridge's own, or
// FLEET's leader, or $MQTT_msgs' leader with the bridge on another node:
// a window is acknowledged to the bridge once stored in $MQTT_msgs, and
// leaves it only once FLEET has stored it (docs/fleet.md, "Where a
// window is acknowledged").
func TestNATSBridgeNodeKill(t *testing.T) {
	brokertest.RequireMosquitto(t) // the car's broker and its bridge
	for _, tc := range []struct {
		name string
		// fleet and msgs are the nodes to lead FLEET and $MQTT_msgs,
		// victim the one to kill, bridge the bridge's first address;
		// node 0 led FLEET when the cluster started.
		fleet, msgs, victim, bridge int
	}{
		{"the bridge's node", 0, 0, 1, 1},
		{"FLEET's leader", 0, 1, 0, 2},
		{"$MQTT_msgs' leader", 0, 1, 1, 2},
		{"both leaders", 0, 0, 0, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := natstest.Start(t, natstest.Options{Cars: []string{"kart01"}})
			ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
			defer cancel()
			// Node indexes counted from FLEET's first leader.
			at := func(i int) int { return (nodeIndex(t, c, c.StreamLeader(ctx)) + i) % len(c.Nodes) }
			fleetAt, msgsAt, victim, first := at(tc.fleet), at(tc.msgs), at(tc.victim), at(tc.bridge)
			for s, n := range map[string]int{c.Stream: fleetAt, natscluster.MsgsStream: msgsAt} {
				if err := c.MoveLeader(ctx, s, c.Nodes[n].Name); err != nil {
					t.Fatal(err)
				}
			}
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
			led := []string{}
			for _, s := range []string{c.Stream, natscluster.MsgsStream} {
				if c.Leader(ctx, s) == c.Nodes[victim].Name {
					led = append(led, s)
				}
			}
			killAndRestart(ctx, t, c, victim, send)
			send(2 * time.Second)
			copies := streamPayloads(ctx, t, c, sent)
			lost, resent, twice := 0, 0, 0
			for i := 1; i <= sent; i++ {
				seqs := copies[fmt.Sprint(i)]
				if len(seqs) == 0 {
					lost++
				}
				distinct := map[string]bool{}
				for _, q := range seqs {
					distinct[q] = true
				}
				resent += len(distinct) - min(len(distinct), 1)
				twice += len(seqs) - len(distinct)
			}
			t.Logf("%s killed (%s, leading %v), the bridge on %s: %d windows sent, %d lost, %d copies resent by the bridge, %d stored twice from one message of $MQTT_msgs",
				c.Nodes[victim].Name, tc.name, led, c.Nodes[first].Name, sent, lost, resent, twice)
			if lost != 0 || len(copies) != sent || twice != 0 {
				t.Errorf("%d of %d windows lost (%d distinct in the stream), %d stored twice", lost, sent, len(copies), twice)
			}
			if nodes := bridgeAddresses(t, car.Log); victim == first && len(nodes) < 2 {
				t.Errorf("the bridge connected to %v only: it never failed over", nodes)
			}
		})
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
// held want distinct payloads and 2 s more pass with nothing, or nothing
// more comes for 10 s, and
// returns the copies of each payload: the sequence in $MQTT_msgs each
// was sourced from (its Nats-Stream-Source header).
func streamPayloads(ctx context.Context, t *testing.T, c *natscluster.Cluster, want int) map[string][]string {
	t.Helper()
	cons := ingestConsumer(ctx, t, c, "count")
	copies := map[string][]string{}
	// Every payload, then 2 s of nothing (a copy may come late).
	for idle := time.Now(); ctx.Err() == nil; {
		if quiet := time.Since(idle); len(copies) >= want && quiet > 2*time.Second || quiet > 10*time.Second {
			break
		}
		batch, err := cons.Fetch(1000, jetstream.FetchMaxWait(time.Second))
		if err != nil {
			t.Fatal(err)
		}
		for m := range batch.Messages() {
			if strings.HasSuffix(m.Subject(), ".yukart.window") {
				// "$MQTT_msgs:C=… <sequence> <filter> <transform> <subject> …"
				src := strings.Fields(m.Headers().Get("Nats-Stream-Source"))
				if len(src) < 2 || !strings.HasPrefix(src[0], natscluster.MsgsStream) {
					t.Fatalf("%s %q: Nats-Stream-Source %q, want $MQTT_msgs' sequence", m.Subject(), m.Data(), src)
				}
				copies[string(m.Data())] = append(copies[string(m.Data())], src[1])
				idle = time.Now()
			}
			_ = m.Ack()
		}
	}
	return copies
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

// ingestConsumer makes the durable consumer name of the fleet's
// stream, connected as the ingest.
func ingestConsumer(ctx context.Context, t *testing.T, c *natscluster.Cluster, name string) jetstream.Consumer {
	t.Helper()
	js, err := jetstream.New(natstest.Connect(t, c, "ingest"))
	if err != nil {
		t.Fatal(err)
	}
	st, err := js.Stream(ctx, c.Stream)
	if err != nil {
		t.Fatal(err)
	}
	cons, err := st.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{Durable: name, AckPolicy: jetstream.AckExplicitPolicy})
	if err != nil {
		t.Fatal(err)
	}
	return cons
}
