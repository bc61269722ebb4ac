package natstest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/yukart/candec/internal/lab/natscluster"
	"github.com/yukart/candec/service"
)

// TestClusterKillRestart starts the deploy's 3-node cluster, stores a
// message in the R3 stream, SIGKILLs the stream's leader, finds the
// message on the two others, restarts the node and stores again.
func TestClusterKillRestart(t *testing.T) {
	c := Start(t, Options{Cars: []string{"kart01", "kart02"}})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	nc := Connect(t, c, "fleet-admin")
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	st, err := js.Stream(ctx, c.Stream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.Config.Replicas != 3 || info.Cluster == nil || len(info.Cluster.Replicas) != 2 {
		t.Fatalf("stream %s: %d replicas, cluster %+v; want R3 over 3 nodes", c.Stream, info.Config.Replicas, info.Cluster)
	}
	publish(t, c, 0, "kart01", "one")
	leader := c.StreamLeader(ctx)
	i := nodeIndex(t, c.Nodes, leader)
	pid := c.Nodes[i].PID()
	if err := c.Kill(i); err != nil {
		t.Fatal(err)
	}
	if got := c.Nodes[i].PID(); got != 0 {
		t.Fatalf("%s: PID %d after Kill, want 0", leader, got)
	}
	if err := waitMsgs(ctx, js, c.Stream, 1); err != nil {
		t.Fatalf("after killing %s (PID %d), the leader: %v", leader, pid, err)
	}
	if err := c.Restart(ctx, i); err != nil {
		t.Fatal(err)
	}
	publish(t, c, i, "kart02", "two")
	if err := waitMsgs(ctx, js, c.Stream, 2); err != nil {
		t.Fatal(err)
	}
}

func nodeIndex(t *testing.T, nodes []*natscluster.Node, name string) int {
	t.Helper()
	for i, n := range nodes {
		if n.Name == name {
			return i
		}
	}
	t.Fatalf("no node is named %q (the stream's leader)", name)
	return -1
}

// waitMsgs waits until the stream holds want messages, as its leader
// says.
func waitMsgs(ctx context.Context, js jetstream.JetStream, stream string, want uint64) error {
	var last error
	for ctx.Err() == nil {
		// One try's request may be lost with the node it went to: each
		// has a deadline of its own.
		try, cancel := context.WithTimeout(ctx, 2*time.Second)
		st, err := js.Stream(try, stream)
		if err == nil {
			var info *jetstream.StreamInfo
			info, err = st.Info(try)
			if err == nil && info.State.Msgs == want {
				cancel()
				return nil
			}
			if err == nil {
				err = fmt.Errorf("%d messages, want %d", info.State.Msgs, want)
			}
		}
		cancel()
		last = err
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("%v (last: %v)", ctx.Err(), last)
}

// publish publishes one window at QoS 1 as car id on node i's MQTT
// listener and waits for its PUBACK.
func publish(t *testing.T, c *natscluster.Cluster, i int, id, payload string) {
	t.Helper()
	car := Car(t, c, i, id)
	if err := car.Publish1("fleet/"+id+"/yukart/window", []byte(payload)); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		waiting, acked := car.Unacked()
		if waiting == 0 && acked == 1 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("car %s on %s: no PUBACK in 20 s (%d waiting): %v", id, c.Nodes[i].Name, waiting, car.Err())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestRequireEnvAllowed: CI exports RequireEnv to every test, so candec's
// commands must let it pass (an unknown CANDEC_ variable is an error).
func TestRequireEnvAllowed(t *testing.T) {
	if !slices.Contains(service.OtherEnv, RequireEnv) {
		t.Fatalf("service.OtherEnv %q lacks %s: every command run under CI would refuse it", service.OtherEnv, RequireEnv)
	}
}
