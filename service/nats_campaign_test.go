package service

import (
	"bufio"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/yukart/candec/internal/lab/natscluster"
	"github.com/yukart/candec/internal/testkit/brokertest"
	"github.com/yukart/candec/internal/testkit/natstest"
	"github.com/yukart/candec/mqttclient"
	"github.com/yukart/candec/mqttclient/wire"
)

// TestNATSCampaignACL: with deploy/nats as shipped, the campaigns user
// pushes a campaign, retained, to a car's policy topic, and the car is
// sent it when it subscribes later (on another node) and while it is
// subscribed; a car may subscribe to its own policy topic and to no
// other car's (the node refuses the SUBSCRIBE), and cannot write a
// policy topic, its own or another's (acknowledged, dropped: never
// delivered, never retained). The campaigns user reads the cars'
// acknowledgements and cannot write one, nor a window, nor read the
// windows, nor speak NATS; and none of it reaches the fleet's stream,
// which holds the cars' windows only (stream.json's source takes
// fleet.*.yukart.window).
func TestNATSCampaignACL(t *testing.T) {
	c := natstest.Start(t, natstest.Options{Cars: []string{"kart01", "kart02"}})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	const own, other = "fleet/kart01/yukart/policy", "fleet/kart02/yukart/policy"
	natstest.PublishRetained(t, c, 0, "campaigns", own, []byte("v1"))
	// Retained: kart01 subscribes after the push, on another node.
	_, got := listenFor(ctx, t, c, 1, "kart01", own, own+" v1")
	// Live: the next push comes to kart01 subscribed.
	natstest.PublishRetained(t, c, 2, "campaigns", own, []byte("v2"))
	expect(ctx, t, got, own+" v2")
	// Another car's policy topic, or more than its own: refused.
	for _, filter := range []string{other, "fleet/+/yukart/policy", "fleet/kart01/yukart/+", "fleet/kart01/#"} {
		sub, err := natstest.DialCar(c, 1, "kart01", "kart01-sub")
		if err != nil {
			t.Fatal(err)
		}
		err = sub.Subscribe(ctx, filter)
		_ = sub.Close()
		if !errors.Is(err, natstest.ErrRefused) {
			t.Errorf("kart01 subscribing to %s: %v, want refused", filter, err)
		}
	}
	// A car writes no policy topic: each write is acknowledged and
	// dropped. The campaigns user, listening on the same node since
	// before them, hears its next push and nothing before it; so does
	// kart01. Every node learns of a retained message in the order
	// $MQTT_rmsgs stored it: once it lists the push, it would list
	// the car's writes.
	watch, heard := listen(ctx, t, c, 0, "campaigns", "fleet/+/yukart/policy", rolloutFence)
	untilFence(ctx, t, watch, heard) // what it held retained
	for _, topic := range []string{own, other} {
		natstest.PublishRetained(t, c, 0, "kart01", topic, []byte("spoof"))
	}
	natstest.PublishRetained(t, c, 0, "campaigns", own, []byte("v3"))
	expect(ctx, t, heard, own+" v3")
	expect(ctx, t, got, own+" v3")
	retainedBecomes(ctx, t, c, 0, "fleet/+/yukart/policy", own+" v3")
	campaignsUser(ctx, t, c)
	select {
	case m := <-got:
		t.Errorf("kart01 was sent %q", m)
	default:
	}
}

// campaignsUser: the campaigns user reads kart01's acknowledgement (as
// kart01's bridge sends it: retained) and cannot write one, nor a
// window, nor read the windows, nor speak NATS; the fleet's stream
// holds kart01's window only, nothing of the campaigns, acknowledgements
// and writes before.
func campaignsUser(ctx context.Context, t *testing.T, c *natscluster.Cluster) {
	t.Helper()
	const ack, otherAck = "fleet/kart01/yukart/decoder/campaign", "fleet/kart02/yukart/decoder/campaign"
	natstest.PublishRetained(t, c, 1, "campaigns", otherAck, []byte("spoof"))
	natstest.PublishRetained(t, c, 1, "kart01", ack, []byte("applied v3"))
	retainedBecomes(ctx, t, c, 1, "fleet/+/yukart/decoder/campaign", ack+" applied v3")
	sub, err := natstest.DialCar(c, 1, "campaigns", "campaigns-sub")
	if err != nil {
		t.Fatal(err)
	}
	err = sub.Subscribe(ctx, "fleet/+/yukart/window")
	_ = sub.Close()
	if !errors.Is(err, natstest.ErrRefused) {
		t.Errorf("the campaigns user subscribing to the windows: %v, want refused", err)
	}
	natstest.PublishRetained(t, c, 0, "campaigns", "fleet/kart01/yukart/window", []byte("spoof"))
	if nc, err := c.Connect("campaigns", nats.MaxReconnects(0), nats.RetryOnFailedConnect(false)); err == nil {
		nc.Close()
		t.Error("the campaigns user connected over NATS")
	} else if !strings.Contains(strings.ToLower(err.Error()), "authorization violation") {
		t.Errorf("the campaigns user over NATS: %v, want an authorization violation", err)
	}
	mustPublish(t, natstest.Car(t, c, 0, "kart01"), "fleet/kart01/yukart/window", "window")
	readExactly(ctx, t, ingestConsumer(ctx, t, c, "campaigns"), []string{"p.*.fleet.kart01.yukart.window window"})
}

// TestNATSCampaignBridge: a car's mosquitto bridged to the cluster as
// bridge.conf says (its policy topic taken in at QoS 1, a persistent
// session) is sent the campaign pushed while it was off, and the next
// one live; its local subscriber (candec run's campaign_topic) gets
// both. Another car that takes its session (its client id, the session
// kept) is sent none of its campaigns: the session's subscription is
// the other car's to make, and its permissions refuse it. The car's
// acknowledgement, sent retained through the bridge, reaches the
// campaigns user; the fleet's stream holds its window only (no
// acknowledgement, bridge state or policy).
func TestNATSCampaignBridge(t *testing.T) {
	brokertest.RequireMosquitto(t)
	c := natstest.Start(t, natstest.Options{Cars: []string{"kart01", "kart02"}})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	natstest.PublishRetained(t, c, 1, "campaigns", "fleet/kart01/yukart/policy", []byte("v1"))
	car := startBridgedCar(t, c, "kart01", 0)
	got := make(chan string, 16)
	local := natstest.Listen(t, mqttclient.Settings{Broker: car.URL, ClientID: "candec-campaigns"}, collect(got))
	if err := local.Subscribe(ctx, "yukart/policy"); err != nil {
		t.Fatal(err)
	}
	expect(ctx, t, got, "yukart/policy v1")
	natstest.PublishRetained(t, c, 2, "campaigns", "fleet/kart01/yukart/policy", []byte("v2"))
	expect(ctx, t, got, "yukart/policy v2")
	sessionThief(ctx, t, c, func() {
		natstest.PublishRetained(t, c, 0, "campaigns", "fleet/kart01/yukart/policy", []byte("v3"))
	})
	expect(ctx, t, got, "yukart/policy v3") // the bridge, back in its session
	pub := carPublisher(t, car)
	if err := pub.Retain1("yukart/decoder/campaign", []byte("applied v2")); err != nil {
		t.Fatal(err)
	}
	retainedBecomes(ctx, t, c, 0, "fleet/+/yukart/decoder/campaign", "fleet/kart01/yukart/decoder/campaign applied v2")
	if err := pub.Publish1("yukart/window", []byte("window")); err != nil {
		t.Fatal(err)
	}
	readExactly(ctx, t, ingestConsumer(ctx, t, c, "bridge"), []string{"p.*.fleet.kart01.yukart.window window"})
}

// sessionThief connects to node 0 as kart02 with kart01's client id
// and a session kept (clean session 0: kart01's bridge's session, with
// its subscription to its policy topic, is restored), runs push while
// connected, and fails if the node sends it any PUBLISH before it
// closes the connection (kart01's bridge connects again and takes its
// session back) or ten seconds pass.
func sessionThief(ctx context.Context, t *testing.T, c *natscluster.Cluster, push func()) {
	t.Helper()
	cert, key, err := c.Identity("kart02")
	if err != nil {
		t.Fatal(err)
	}
	s := mqttclient.Settings{Broker: c.Nodes[0].MQTTURL, ClientID: "kart01", CAFile: c.CAFile, CertFile: cert, KeyFile: key}
	conn, err := s.Dial(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	connect := wire.AppendConnectV311(nil, s.ClientID, "", "", time.Minute)
	connect[9] &^= 0x02 // after the fixed header (2), "MQTT" (6) and the level (1): clean session off
	if _, err := conn.Write(connect); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(conn)
	var buf []byte
	_ = conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	if typ, body, err := wire.ReadPacket(r, &buf, 1<<10); err != nil || typ>>4 != wire.Connack || len(body) != 2 || body[1] != 0 {
		t.Fatalf("kart02 as kart01's session: CONNACK %d %x, %v", typ>>4, body, err)
	}
	push()
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		typ, body, err := wire.ReadPacket(r, &buf, 1<<20)
		if err != nil {
			return // closed (kart01 is back), or nothing for ten seconds
		}
		if typ>>4 == wire.Publish {
			topic, payload, _ := wire.ParsePublishV311(typ, body)
			t.Fatalf("kart02, in kart01's session, was sent %s %q", topic, payload)
		}
	}
}

// rolloutFence is the campaigns user's fence topic (rollout's
// DefaultFenceTopic).
const rolloutFence = "fleet/campaigns/fence"

// collect returns a handler that sends each message to got as
// "topic payload".
func collect(got chan<- string) natstest.Handler {
	return func(topic, payload []byte, _ int64) { got <- string(topic) + " " + string(payload) }
}

// listen connects to node i over MQTT as identity (client id
// identity-listen) and subscribes to filters: the messages come on the
// channel as "topic payload".
func listen(ctx context.Context, t *testing.T, c *natscluster.Cluster, i int, identity string, filters ...string) (*natstest.Client, chan string) {
	t.Helper()
	cert, key, err := c.Identity(identity)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 64)
	cl := natstest.Listen(t, mqttclient.Settings{Broker: c.Nodes[i].MQTTURL, ClientID: identity + "-listen",
		CAFile: c.CAFile, CertFile: cert, KeyFile: key}, collect(got))
	if err := cl.Subscribe(ctx, filters...); err != nil {
		t.Fatalf("%s subscribing to %q: %v", identity, filters, err)
	}
	return cl, got
}

// listenFor is listen to filter until want comes, on a new connection
// each ten seconds: a retained message stored through one node reaches
// the others' lists of retained messages a little later, and a
// subscription is sent what its node's list holds.
func listenFor(ctx context.Context, t *testing.T, c *natscluster.Cluster, i int, identity, filter, want string) (*natstest.Client, chan string) {
	t.Helper()
	for attempt := 1; ; attempt++ {
		cl, got := listen(ctx, t, c, i, identity, filter)
		select {
		case m := <-got:
			if m != want {
				t.Fatalf("%s was sent %q, want %q", identity, m, want)
			}
			if attempt > 1 {
				t.Logf("%s was sent %q at its subscription %d", identity, want, attempt)
			}
			return cl, got
		case <-time.After(10 * time.Second):
			_ = cl.Close()
		case <-ctx.Done():
			t.Fatalf("%s was never sent %q", identity, want)
		}
	}
}

// expect waits for the next message of got and fails unless it is want.
func expect(ctx context.Context, t *testing.T, got <-chan string, want string) {
	t.Helper()
	select {
	case m := <-got:
		if m != want {
			t.Fatalf("sent %q, want %q", m, want)
		}
	case <-ctx.Done():
		t.Fatalf("never sent %q", want)
	}
}

// untilFence publishes a fence with the campaigns user's cl, subscribed
// to it with heard, and returns what heard held before it ("topic
// payload" each, in the order sent).
func untilFence(ctx context.Context, t *testing.T, cl *natstest.Client, heard <-chan string) []string {
	t.Helper()
	mark := "fence " + time.Now().Format(time.RFC3339Nano)
	if err := cl.Publish1(rolloutFence, []byte(mark)); err != nil {
		t.Fatal(err)
	}
	var got []string
	for {
		select {
		case m := <-heard:
			if m == rolloutFence+" "+mark {
				return got
			}
			got = append(got, m)
		case <-ctx.Done():
			t.Fatalf("no fence back (after %q)", got)
		}
	}
}

// retainedBecomes reads what node i holds retained on filter, as the
// campaigns user (rollout's Read), until it is exactly want (lines of
// "topic payload"): a node learns of a retained message from
// $MQTT_rmsgs a little after the publisher's PUBACK.
func retainedBecomes(ctx context.Context, t *testing.T, c *natscluster.Cluster, i int, filter string, want ...string) {
	t.Helper()
	var got []string
	for ctx.Err() == nil {
		cl, heard := listen(ctx, t, c, i, "campaigns", filter, rolloutFence)
		got = untilFence(ctx, t, cl, heard)
		_ = cl.Close()
		if strings.Join(got, "\n") == strings.Join(want, "\n") {
			return
		}
		time.Sleep(50 * time.Millisecond) // another read, not a wait for something known
	}
	t.Fatalf("%s holds retained on %s %q, want %q", c.Nodes[i].Name, filter, got, want)
}
