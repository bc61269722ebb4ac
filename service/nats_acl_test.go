package service

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/yukart/candec/internal/lab/natscluster"
	"github.com/yukart/candec/internal/testkit/natstest"
)

// TestNATSFleetACL: with deploy/nats as shipped (a 3-node cluster, the
// cars' certificates mapped to users of accounts.conf), a car writes
// under its own prefix and nowhere else, subscribes over MQTT to its
// own policy topic only (TestNATSCampaignACL: what comes there), cannot
// speak NATS at all (so cannot read the stream or make a
// consumer), and a certificate no user is named for cannot connect;
// the ingest reads the stream and makes consumers, and cannot make or
// delete a stream. What the stream holds at the end is exactly what
// the cars may write.
func TestNATSFleetACL(t *testing.T) {
	c := natstest.Start(t, natstest.Options{Cars: []string{"kart01", "kart02"}})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// The ingest's instances announce themselves to each other on
	// candec.ingest.<group>.alive: a car cannot join in.
	presence := natstest.Connect(t, c, "ingest")
	heard, err := presence.SubscribeSync("candec.ingest.>")
	if err != nil {
		t.Fatal(err)
	}
	if err := presence.Publish("candec.ingest.lake.alive", []byte("ingest1")); err != nil {
		t.Fatal(err)
	}
	kart02 := natstest.Car(t, c, 0, "kart02")
	// A car may send on its own prefix: the window, and its bridge's
	// state, retained as the bridge sends it (bridge.conf).
	mustPublish(t, kart02, "fleet/kart02/yukart/window", "own")
	for _, topic := range []string{"fleet/kart01/yukart/window", "fleet/kart01/bridge/state", "yukart/window",
		"fleet/kart020/x", "fleet/kart02", "$JS/API/CONSUMER/CREATE/FLEET/evil", "$JS/API/STREAM/DELETE/FLEET",
		"p/0/fleet/kart01/yukart/window", "$MQTT/msgs/fleet/kart01/yukart/window", "candec/ingest/lake/alive",
		// FLEET's source: its deliveries, its flow control, the API of
		// $MQTT_msgs and of its consumer.
		"fleetsource/FLEET", "$JS/FC/$MQTT_msgs/FLEET/x", "$JS/API/CONSUMER/DELETE/$MQTT_msgs/FLEET",
		// Under its own prefix, but not a subject its bridge sends.
		"fleet/kart02/x", "fleet/kart02/yukart/window/x"} {
		mustPublish(t, kart02, topic, "spoof") // acknowledged (MQTT 3.1.1 has no refusal), and dropped
	}
	// Through another node: the permissions are the cluster's.
	mustPublish(t, natstest.Car(t, c, 2, "kart01"), "fleet/kart01/yukart/window", "kart01's")
	// A car that asks for another's client id takes over that session
	// (nats-server has no use_username_as_clientid: docs/security.md),
	// but stays itself: its certificate, not the id, says what it may
	// write.
	thief, err := natstest.DialCar(c, 1, "kart02", "kart01")
	if err != nil {
		t.Fatal(err)
	}
	mustPublish(t, thief, "fleet/kart01/yukart/window", "spoof")
	_ = thief.Close()
	mustPublish(t, kart02, "fleet/kart02/yukart/window", "after")
	// A window a car left retained is one message of the stream like any
	// other (nats-server keeps the retained copy in $MQTT_rmsgs): no
	// reader is sent it again, and the retain flag does not reach the
	// stream.
	natstest.PublishRetained(t, c, 1, "kart02", "fleet/kart02/yukart/window", []byte("retained"))
	carSubscribes(t, c)
	carSpeaksNATS(t, c)
	if m, err := heard.NextMsg(10 * time.Second); err != nil || string(m.Data) != "ingest1" {
		t.Fatalf("the ingest's own announcement: %v, %v", m, err)
	}
	if m, err := heard.NextMsg(time.Second); err == nil {
		t.Errorf("the ingest heard %q on %s from a car", m.Data, m.Subject)
	}
	strangers(t, c)
	ingestReads(ctx, t, c, kart02, []string{
		"p.*.fleet.kart02.yukart.window own", "p.*.fleet.kart01.yukart.window kart01's",
		"p.*.fleet.kart02.yukart.window after", "p.*.fleet.kart02.yukart.window retained"})
}

// mustPublish publishes at QoS 1 and waits for every PUBACK of car.
func mustPublish(t *testing.T, car *natstest.Client, topic, payload string) {
	t.Helper()
	if err := car.Publish1(topic, []byte(payload)); err != nil {
		t.Fatalf("publish on %s: %v", topic, err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if waiting, _ := car.Unacked(); waiting == 0 {
			return
		}
		if err := car.Err(); err != nil || time.Now().After(deadline) {
			t.Fatalf("publish on %s: no PUBACK: %v", topic, err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// carSubscribes: every subscription of a car is refused (SUBACK 0x80),
// its own prefix's too, but for its own policy topic.
func carSubscribes(t *testing.T, c *natscluster.Cluster) {
	t.Helper()
	sub, err := natstest.DialCar(c, 1, "kart02", "kart02-sub")
	if err != nil {
		t.Fatal(err)
	}
	if err := sub.Subscribe(context.Background(), "fleet/kart02/yukart/policy"); err != nil {
		t.Errorf("kart02 subscribing to its policy topic: %v", err)
	}
	_ = sub.Close()
	for _, filter := range []string{"fleet/kart01/#", "fleet/#", "#", "fleet/kart02/#", "$share/lake/fleet/+/yukart/window", "$JS/#",
		"fleet/kart01/yukart/policy", "fleet/+/yukart/policy", "fleet/kart02/yukart/+", "fleet/kart02/yukart/window",
		"fleet/kart01/yukart/decoder/campaign", "$share/g/fleet/kart02/yukart/policy", "$MQTT/sub/#", "$MQTT/msgs/fleet/kart02/yukart/policy"} {
		sub, err := natstest.DialCar(c, 1, "kart02", "kart02-sub")
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		err = sub.Subscribe(ctx, filter)
		cancel()
		_ = sub.Close()
		if !errors.Is(err, natstest.ErrRefused) {
			t.Errorf("kart02 subscribing to %s: %v, want refused", filter, err)
		}
	}
}

// carSpeaksNATS: a car's certificate is refused on the NATS port
// (allowed_connection_types MQTT), so it can neither read the stream
// nor make a consumer.
func carSpeaksNATS(t *testing.T, c *natscluster.Cluster) {
	t.Helper()
	nc, err := c.Connect("kart02", nats.MaxReconnects(0), nats.RetryOnFailedConnect(false))
	if err == nil {
		nc.Close()
		t.Fatal("kart02 connected over NATS")
	}
	if !strings.Contains(strings.ToLower(err.Error()), "authorization violation") {
		t.Errorf("kart02 over NATS: %v, want an authorization violation", err)
	}
}

// strangers: a certificate of the fleet's CA that no user is named for,
// whatever its name, cannot connect over MQTT.
func strangers(t *testing.T, c *natscluster.Cluster) {
	t.Helper()
	for _, name := range []string{"kart03", "..", "kart02/yukart", "*", ">", "kart02.x", "ingest"} {
		cl, err := natstest.DialCar(c, 0, name, "x"+fmt.Sprint(len(name)))
		if err == nil {
			_ = cl.Close()
			t.Errorf("certificate %q connected over MQTT", name)
		}
	}
}

// ingestReads: the ingest makes a consumer of the stream and reads
// exactly want (subject and payload; * any partition), in order; it
// cannot make or delete a stream, nor touch FLEET's source (its
// consumer of $MQTT_msgs, its deliveries, its flow control), and car's
// next window still comes.
func ingestReads(ctx context.Context, t *testing.T, c *natscluster.Cluster, car *natstest.Client, want []string) {
	t.Helper()
	violations := make(chan error, 10)
	nc := natstest.Connect(t, c, "ingest", nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
		select {
		case violations <- err:
		default:
		}
	}))
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	st, err := js.Stream(ctx, c.Stream)
	if err != nil {
		t.Fatal(err)
	}
	cons, err := st.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{Durable: "acl", AckPolicy: jetstream.AckExplicitPolicy})
	if err != nil {
		t.Fatalf("the ingest's consumer: %v", err)
	}
	readExactly(ctx, t, cons, want)
	for what, call := range map[string]func(context.Context) error{
		"made a stream": func(ctx context.Context) error {
			_, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "EVIL", Subjects: []string{"fleet.>"}})
			return err
		},
		"deleted the fleet's stream": func(ctx context.Context) error { return js.DeleteStream(ctx, c.Stream) },
		"deleted FLEET's source consumer": func(ctx context.Context) error {
			return js.DeleteConsumer(ctx, natscluster.MsgsStream, c.Source)
		},
		"published on FLEET's source": func(ctx context.Context) error {
			return published(nc.Publish("fleetsource."+c.Source, []byte("spoof")))
		},
		"replied to FLEET's flow control": func(ctx context.Context) error {
			return published(nc.Publish("$JS.FC."+natscluster.MsgsStream+"."+c.Source+".x", nil))
		},
	} {
		short, cancel := context.WithTimeout(ctx, 2*time.Second)
		err := call(short)
		cancel()
		if err == nil {
			t.Errorf("the ingest %s", what)
		}
		select {
		case err := <-violations:
			if !errors.Is(err, nats.ErrPermissionViolation) {
				t.Errorf("the ingest %s: %v, want a permissions violation", what, err)
			}
		case <-ctx.Done():
			t.Fatalf("the ingest %s: no permissions violation", what)
		}
	} // None of it changed FLEET or its source: the car's next window
	// comes, alone.
	mustPublish(t, car, "fleet/kart02/yukart/window", "last")
	readExactly(ctx, t, cons, []string{"p.*.fleet.kart02.yukart.window last"})
}

// errPublished: a publish was sent; the server answers it with a
// permissions violation, or not at all.
var errPublished = errors.New("published")

func published(err error) error {
	if err == nil {
		return errPublished
	}
	return err
}

// readExactly reads cons until it has held want (subject and payload;
// * any partition), in order, and a second more of nothing.
func readExactly(ctx context.Context, t *testing.T, cons jetstream.Consumer, want []string) {
	t.Helper()
	var got []string
	for len(got) < len(want)+1 && ctx.Err() == nil {
		batch, err := cons.Fetch(10, jetstream.FetchMaxWait(time.Second))
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for m := range batch.Messages() {
			n++
			p := strings.SplitN(m.Subject(), ".", 3)
			got = append(got, p[0]+".*."+p[2]+" "+string(m.Data()))
			// What the ingest learns of a message beside its subject: its
			// QoS and where FLEET sourced it from, nothing of a retain
			// flag.
			if h := m.Headers(); len(h) != 2 || h.Get("Nmqtt-Pub") != "1" || !strings.HasPrefix(h.Get("Nats-Stream-Source"), natscluster.MsgsStream) {
				t.Errorf("%s %q: headers %v, want Nmqtt-Pub: 1 and Nats-Stream-Source only", m.Subject(), m.Data(), h)
			}
			if err := m.Ack(); err != nil {
				t.Fatal(err)
			}
		}
		if n == 0 && len(got) >= len(want) {
			break // a second of nothing more
		}
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the stream held\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
