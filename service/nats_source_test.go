package service

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/yukart/candec/internal/lab/natscluster"
	"github.com/yukart/candec/internal/testkit/natstest"
	"github.com/yukart/candec/mqttclient/wire"
)

// TestNATSSourceHostile: FLEET takes every car's windows through one
// source consumer of $MQTT_msgs, in order, so a message FLEET could not
// store would hold every later window of every car (the source tries it
// again without end). After each hostile PUBLISH of kart02 (on node 1),
// a window of kart01 (on node 2) still reaches FLEET, and FLEET holds
// of the hostile one what the table says: a payload at the server's
// max_payload is stored (FLEET has no smaller bound), one over it
// closes kart02's connection, a QoS 0 window is never stored ($MQTT_msgs
// keeps QoS 1 and 2 only: the car's bridge sends QoS 1), and a topic
// longer than a car may publish is dropped (acknowledged: MQTT 3.1.1
// has no refusal).
func TestNATSSourceHostile(t *testing.T) {
	c := natstest.Start(t, natstest.Options{Cars: []string{"kart01", "kart02"}})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	good := natstest.Car(t, c, 2, "kart01")
	fleet := fleetReader(ctx, t, c)
	// fleet.conf's max_payload (1MB: 1 MiB) bounds the NATS message the
	// server makes of a PUBLISH: its Nmqtt-Pub header and the payload.
	const maxPayload = 1 << 20
	atMax := maxPayload - len("NATS/1.0\r\nNmqtt-Pub:1\r\n\r\n")
	win := "fleet/kart02/yukart/window"
	long := "fleet/kart02/" + strings.Repeat("t", 65450-len("fleet/kart02/"))
	retained := wire.AppendPublishV311(nil, win, 1, 1, []byte("retained"))
	retained[0] |= 1
	for _, tc := range []struct {
		name    string
		pub     []byte
		refused bool   // the node closes the connection
		stored  string // FLEET's message of it: subject after the partition, payload's length; "" none
	}{
		{"malformed window", wire.AppendPublishV311(nil, win, 1, 1, []byte("not a window")), false, "fleet.kart02.yukart.window 12"},
		{"retained window", retained, false, "fleet.kart02.yukart.window 8"},
		{"QoS 0 window", wire.AppendPublishV311(nil, win, 0, 0, []byte("qos0")), false, ""},
		{"payload at max_payload", wire.AppendPublishV311(nil, win, 1, 1, bytes.Repeat([]byte{'x'}, atMax)), false, fmt.Sprintf("fleet.kart02.yukart.window %d", atMax)},
		{"payload over max_payload", wire.AppendPublishV311(nil, win, 1, 1, bytes.Repeat([]byte{'x'}, atMax+1)), true, ""},
		// A topic whose subject, named in the header FLEET's source adds,
		// would make a header over 64 KiB: FLEET would refuse it again
		// and again. No car may publish it (natscluster.CarSubjects).
		{"65,450-byte topic", wire.AppendPublishV311(nil, long, 1, 1, []byte("long")), false, ""},
	} {
		// On the node that leads $MQTT_msgs: the store is not routed.
		at := nodeIndex(t, c, c.Leader(ctx, natscluster.MsgsStream))
		start := time.Now()
		err := natstest.Send(c, at, "kart02", tc.pub)
		if (err != nil) != tc.refused {
			t.Errorf("%s: the node answered %v, want refused %v", tc.name, err, tc.refused)
		}
		after := "after " + tc.name
		mustPublish(t, good, "fleet/kart01/yukart/window", after)
		got := fleet(after)
		t.Logf("%s: kart01's next window in FLEET %v after", tc.name, time.Since(start).Round(time.Millisecond))
		var hostile []string
		for _, m := range got {
			if strings.Contains(m, ".kart02.") {
				hostile = append(hostile, m)
			}
		}
		if tc.stored == "" && len(hostile) != 0 || tc.stored != "" && (len(hostile) != 1 || hostile[0] != tc.stored) {
			t.Errorf("%s: FLEET holds %d of kart02's: %.200q, want %.200q", tc.name, len(hostile), hostile, tc.stored)
		}
	}
}

// fleetReader makes a consumer of FLEET as the ingest, and returns a
// function that reads it until a window of payload until comes, and
// returns what it read before (each as its subject without the
// partition, and its payload's length). A window that does not come in
// two minutes fails the test: the source is stalled.
func fleetReader(ctx context.Context, t *testing.T, c *natscluster.Cluster) func(until string) []string {
	t.Helper()
	cons := ingestConsumer(ctx, t, c, "hostile")
	return func(until string) []string {
		t.Helper()
		var got []string
		for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline) && ctx.Err() == nil; {
			batch, err := cons.Fetch(10, jetstream.FetchMaxWait(time.Second))
			if err != nil {
				t.Fatal(err)
			}
			// The whole batch: what is left of a pull request would be
			// delivered to nobody, and come again only after the ack wait.
			found := false
			for m := range batch.Messages() {
				if err := m.DoubleAck(ctx); err != nil {
					t.Fatal(err)
				}
				if found = found || string(m.Data()) == until; !found {
					_, rest, _ := strings.Cut(strings.TrimPrefix(m.Subject(), natscluster.PartitionPrefix+"."), ".")
					got = append(got, fmt.Sprintf("%s %d", rest, len(m.Data())))
				}
			}
			if found {
				return got
			}
		}
		t.Fatalf("%q never reached FLEET (after %.200q): its source is stalled", until, got)
		return nil
	}
}
