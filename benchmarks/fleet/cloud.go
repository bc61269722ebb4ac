package fleet

import (
	"context"
	"fmt"
	"io"
	"path"
	"path/filepath"
	"slices"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/yukart/candec/campaign"
	"github.com/yukart/candec/internal/fleet/mqtt311"
	"github.com/yukart/candec/internal/fleet/rollout"
	"github.com/yukart/candec/internal/lab/mosquitto"
	"github.com/yukart/candec/internal/lab/natscluster"
	"github.com/yukart/candec/mqttclient"
)

// The cloud tiers a run can put between the cars and the ingests.
const (
	// EngineMosquitto is one private mosquitto, the ingests a shared
	// subscription group on it.
	EngineMosquitto = "mosquitto"
	// EngineNATS is a private NATS cluster from deploy/nats: the cars
	// publish over MQTT to its nodes' listeners, each car with its own
	// certificate, and the ingests read its stream (JetStream).
	EngineNATS = "nats"
)

// NATSConfig configures an EngineNATS run.
type NATSConfig struct {
	// Binary is nats-server (natscluster.Find), ConfigDir the
	// repository's deploy/nats.
	Binary, ConfigDir string
	// Nodes is the cluster's size (natscluster.DefaultNodes when 0).
	Nodes int
	// KillNode, when 1 to Nodes, is the node the run SIGKILLs a third
	// into the measured window and starts again KillDown later: the
	// loss and duplicates then say what a node's death cost. KillLeader
	// picks the node that leads the fleet's stream when the run starts
	// instead, KillFollower the first node that does not. No car
	// connects to that node: the cars' reconnection to another node is
	// the bridge's (TestNATSBridgeNodeKill).
	KillNode     int
	KillLeader   bool
	KillFollower bool
	KillDown     time.Duration
}

// NodeUsage is the CPU one node of the cloud used in the window.
type NodeUsage struct {
	Name string        `json:"name"`
	CPU  time.Duration `json:"cpu_ns"`
}

// cloud is the tier between the cars and the ingests.
type cloud interface {
	// carSettings returns where and how car i connects.
	carSettings(i int, c *Car) (mqttclient.Settings, error)
	// redial returns how car i connects again after its connection was
	// lost (its messages to h), nil where the run ends instead.
	redial(i int) redialFunc
	// push publishes a signed campaign, retained, on the policy topic
	// of each of vehicles, as `candec campaign push` does, as the
	// cloud's campaigns user; it returns how many it was published for.
	push(ctx context.Context, payload []byte, vehicles []string) (int, error)
	// ingestArgs returns `candec ingest`'s flags of the connection,
	// and its topic filters.
	ingestArgs() ([]string, error)
	// processes returns the processes whose CPU is the cloud's, by
	// name.
	processes() map[string]int
	// readyMark is what an ingest's log says once it takes windows.
	readyMark() string
	// sampleURL is the broker a subscriber of a few cars' windows
	// reads, "" where no client may (the cluster's ACL).
	sampleURL() string
	stop()
}

// mosquittoCloud is EngineMosquitto.
type mosquittoCloud struct{ b *mosquitto.Process }

func startMosquitto(ctx context.Context, dir string, log io.Writer) (*mosquittoCloud, error) {
	b, err := mosquitto.Start(ctx, mosquitto.Options{Dir: dir, Extra: BrokerConfig})
	if err != nil {
		return nil, fmt.Errorf("fleet: broker: %w", err)
	}
	fmt.Fprintf(log, "fleet: broker %s (PID %d)\n", b.URL, b.PID())
	return &mosquittoCloud{b: b}, nil
}

func (m *mosquittoCloud) carSettings(_ int, c *Car) (mqttclient.Settings, error) {
	return mqttclient.Settings{Broker: m.b.URL, ClientID: c.ID}, nil
}

func (m *mosquittoCloud) redial(int) redialFunc { return nil }

func (m *mosquittoCloud) push(ctx context.Context, payload []byte, vehicles []string) (int, error) {
	pushed, err := rollout.Push(ctx, rollout.Config{Settings: mqttclient.Settings{Broker: m.b.URL, ClientID: "fleet-campaigns"}},
		payload, vehicles)
	return len(pushed), err
}

func (m *mosquittoCloud) ingestArgs() ([]string, error) {
	return []string{"--broker", m.b.URL, "--group", Group, "fleet/+/yukart/window"}, nil
}

func (m *mosquittoCloud) processes() map[string]int { return map[string]int{"broker": m.b.PID()} }
func (m *mosquittoCloud) sampleURL() string         { return m.b.URL }
func (m *mosquittoCloud) readyMark() string         { return "msg=subscribed" }
func (m *mosquittoCloud) stop()                     { _ = m.b.Stop(0) }

// natsCloud is EngineNATS.
type natsCloud struct {
	c      *natscluster.Cluster
	cfg    NATSConfig
	admin  jetstream.JetStream // the operator's connection, for the lag
	victim int                 // the node to kill, -1 for none
	alive  []int               // the nodes the cars connect to
	cars   []Car
}

func startNATS(ctx context.Context, cfg NATSConfig, dir string, cars []Car, log io.Writer) (*natsCloud, error) {
	ids := make([]string, len(cars))
	for i := range cars {
		ids[i] = cars[i].ID
	}
	c, err := natscluster.Start(ctx, natscluster.Options{Binary: cfg.Binary, ConfigDir: cfg.ConfigDir,
		Dir: dir, Nodes: cfg.Nodes, Cars: ids})
	if err != nil {
		return nil, fmt.Errorf("fleet: NATS cluster: %w", err)
	}
	for _, n := range c.Nodes {
		fmt.Fprintf(log, "fleet: %s %s, MQTT %s (PID %d)\n", n.Name, n.ClientURL, n.MQTTURL, n.PID())
	}
	nc := &natsCloud{c: c, cfg: cfg, victim: cfg.KillNode - 1, cars: cars}
	if cfg.KillLeader || cfg.KillFollower {
		leader := c.StreamLeader(ctx)
		for wait := time.Now().Add(30 * time.Second); leader == "" && time.Now().Before(wait) && ctx.Err() == nil; leader = c.StreamLeader(ctx) {
			time.Sleep(100 * time.Millisecond) // just made: its leader is being elected
		}
		nc.victim = slices.IndexFunc(c.Nodes, func(n *natscluster.Node) bool { return (n.Name == leader) == cfg.KillLeader })
		if leader == "" || nc.victim < 0 {
			c.Stop()
			return nil, fmt.Errorf("fleet: NATS cluster: the stream has no leader, or no other node (leader %q)", leader)
		}
	}
	for i := range c.Nodes {
		if i != nc.victim || len(c.Nodes) == 1 {
			nc.alive = append(nc.alive, i)
		}
	}
	return nc, nil
}

// carSettings spreads the cars over the nodes, as their bridges' address
// lines would in another order on each car.
func (n *natsCloud) carSettings(i int, c *Car) (mqttclient.Settings, error) {
	cert, key, err := n.c.Identity(c.ID)
	if err != nil {
		return mqttclient.Settings{}, err
	}
	return mqttclient.Settings{Broker: n.c.Nodes[n.alive[i%len(n.alive)]].MQTTURL, ClientID: c.ID,
		CAFile: n.c.CAFile, CertFile: cert, KeyFile: key}, nil
}

// redial connects car i again to the next node, as its bridge goes on
// to its next address: nats-server closes a car's connection when it
// cannot store its QoS 1 message in time (a node of the MQTT stream
// died), on any node.
func (n *natsCloud) redial(i int) redialFunc {
	return func(ctx context.Context, attempt int, h mqtt311.Handler) (*mqtt311.Client, error) {
		s, err := n.carSettings(i+attempt, &n.cars[i])
		if err != nil {
			return nil, err
		}
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		return mqtt311.Dial(ctx, s, h)
	}
}

// push publishes the campaign as the cluster's campaigns user (its
// certificate; deploy/nats/accounts.conf), over MQTT 3.1.1 as nats-server
// speaks it (rollout's client speaks MQTT 5), to the vehicles the
// campaign is for, and waits for every PUBACK: the node has then
// stored each in $MQTT_rmsgs.
func (n *natsCloud) push(ctx context.Context, payload []byte, vehicles []string) (int, error) {
	body, err := campaign.Peek(payload)
	if err != nil {
		return 0, err
	}
	cert, key, err := n.c.Identity(natscluster.CampaignsUser)
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, rollout.DefaultTimeout)
	defer cancel()
	cl, err := mqtt311.Dial(ctx, mqttclient.Settings{Broker: n.c.Nodes[n.alive[0]].MQTTURL, ClientID: "fleet-campaigns",
		CAFile: n.c.CAFile, CertFile: cert, KeyFile: key}, func(_, _ []byte, _ int64) {})
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	pushed := 0
	for _, id := range vehicles {
		if ok, _ := path.Match(body.Vehicles, id); !ok || !campaign.ValidVehicle(id) {
			continue
		}
		if err := cl.Retain1(campaign.Topic(policyTopic, id), payload); err != nil {
			return pushed, err
		}
		pushed++
	}
	for waiting, _ := cl.Unacked(); waiting > 0; waiting, _ = cl.Unacked() {
		select {
		case <-cl.Done():
			return pushed - waiting, fmt.Errorf("%d of %d pushes unacknowledged: %w", waiting, pushed, cl.Err())
		case <-ctx.Done():
			return pushed - waiting, fmt.Errorf("%d of %d pushes unacknowledged: %w", waiting, pushed, ctx.Err())
		case <-time.After(5 * time.Millisecond):
		}
	}
	return pushed, nil
}

func (n *natsCloud) ingestArgs() ([]string, error) {
	cert, key, err := n.c.Identity("ingest")
	if err != nil {
		return nil, err
	}
	return []string{"--broker", n.c.ClientURLs(), "--ca-file", n.c.CAFile, "--cert-file", cert,
		"--key-file", key, "--group", Group, "--stream", n.c.Stream}, nil
}

func (n *natsCloud) processes() map[string]int {
	ps := map[string]int{}
	for i, node := range n.c.Nodes {
		if i != n.victim { // its PID changes in the window
			ps[node.Name] = node.PID()
		}
	}
	return ps
}

func (n *natsCloud) sampleURL() string { return "" }
func (n *natsCloud) readyMark() string { return "msg=connected" }
func (n *natsCloud) stop() {
	if n.admin != nil {
		n.admin.Conn().Close()
	}
	n.c.Stop()
}

// startCloud starts cfg's cloud in dir/broker (mosquitto) or
// dir/cluster (NATS).
func startCloud(ctx context.Context, cfg Config, log io.Writer) (cloud, error) {
	switch cfg.Engine {
	case "", EngineMosquitto:
		return startMosquitto(ctx, filepath.Join(cfg.Dir, "broker"), log)
	case EngineNATS:
		return startNATS(ctx, cfg.NATS, filepath.Join(cfg.Dir, "cluster"), cfg.Cars, log)
	}
	return nil, fmt.Errorf("fleet: engine %q, want %s or %s", cfg.Engine, EngineMosquitto, EngineNATS)
}
