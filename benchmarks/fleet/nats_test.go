package fleet

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/yukart/candec/internal/testkit/natstest"
)

// TestRunNATS runs a small fleet through the 3-node NATS cluster of
// deploy/nats into a `candec ingest` instance reading its stream:
// counted from the lake's commit record against what the cars sent, no
// window is lost and none is written twice, and the run reports each
// node's CPU and the stream's lag. Timing figures are not asserted.
func TestRunNATS(t *testing.T) {
	// The ingest's consumers start about 1.5 s after it connects.
	res, want := runNATS(t, 1, 4*time.Second, NATSConfig{})
	if res.Lost != 0 || res.CommittedWindows != want {
		t.Errorf("committed %d, lost %d; want %d, 0", res.CommittedWindows, res.Lost, want)
	}
	if len(res.Nodes) != 3 || res.KilledNode != "" {
		t.Errorf("nodes metered %+v, killed %q; want the 3 nodes metered, none killed", res.Nodes, res.KilledNode)
	}
	t.Logf("%d windows: lost %d, duplicates %d, sent again %d; stream lag at most %d", want, res.Lost, res.Duplicates, res.Resent, res.StreamLagMax)
}

// TestRunNATSNodeKill: the same fleet, and a node of the cluster
// SIGKILLed a third into the window and started again 3 s later, while
// the ingests read the stream (the consumers whose leader it was elect
// another, about 10 s on a loaded machine). The ingests go on through
// it and exit 0 at SIGTERM (Run fails otherwise), and no window is
// lost or written twice, whichever node dies: the fleet's stream's
// leader too, since FLEET sources $MQTT_msgs, where each car's PUBACK
// waits, and a window leaves $MQTT_msgs only once FLEET holds it
// (docs/fleet.md, "Where a window is acknowledged").
func TestRunNATSNodeKill(t *testing.T) {
	for _, tc := range []struct {
		name    string
		ingests int
		leader  bool
	}{
		{"follower-1-ingest", 1, false},
		{"leader-1-ingest", 1, true},
		{"follower-2-ingests", 2, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, want := runNATS(t, tc.ingests, 9*time.Second,
				NATSConfig{KillLeader: tc.leader, KillFollower: !tc.leader, KillDown: 3 * time.Second})
			if res.KilledNode == "" || len(res.Nodes) != 2 {
				t.Errorf("killed %q, nodes metered %+v; want one killed and the 2 others metered", res.KilledNode, res.Nodes)
			}
			if res.Lost != 0 || res.CommittedWindows != want {
				t.Errorf("committed %d, lost %d; want %d, 0", res.CommittedWindows, res.Lost, want)
			}
			t.Logf("%d windows, %s killed: lost %d, duplicates %d, sent again %d; stream lag at most %d, left in it %d",
				want, res.KilledNode, res.Lost, res.Duplicates, res.Resent, res.StreamLagMax, res.StreamLeft)
		})
	}
}

// runNATS builds candec and runs 6 cars for window (after 4 s of
// warm-up) on a NATS cluster as nc says (its binary and configuration
// filled in) into ingests instances; it checks what holds of every run
// (every window published, none committed twice, the figures there)
// and returns the result and the windows the cars sent.
func runNATS(t *testing.T, ingests int, window time.Duration, nc NATSConfig) (*Result, int) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds candec and starts a NATS cluster and the ingests")
	}
	nc.Binary, nc.ConfigDir = natstest.Binary(t), natstest.ConfigDir(t)
	exe := filepath.Join(t.TempDir(), "candec")
	cmd := exec.Command("go", "build", "-o", exe, "./cmd/candec")
	cmd.Dir = filepath.Join("..", "..")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/candec: %v\n%s", err, out)
	}
	const warmup = 4 * time.Second
	cars := testCarsAt(t, 6, warmup+window, time.Now().UnixNano())
	dbc, err := filepath.Abs("../../testdata/yukart.dbc")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	res, err := Run(ctx, Config{Exe: exe, DBC: dbc, Cars: cars, Ingests: ingests, Warmup: warmup, Duration: window,
		Dir: t.TempDir(), RollAge: time.Second, Engine: EngineNATS, NATS: nc})
	if err != nil {
		t.Fatal(err)
	}
	want, values := 0, 0
	for _, c := range cars {
		want += len(c.Windows)
		values += c.Values()
	}
	if res.PublishedWindows != want || res.Duplicates != 0 || res.Engine != EngineNATS {
		t.Errorf("published %d, duplicates %d, engine %q; want %d, 0, nats", res.PublishedWindows, res.Duplicates, res.Engine, want)
	}
	if res.Lost == 0 && res.CommittedValues != values {
		t.Errorf("committed values %d, want %d", res.CommittedValues, values)
	}
	if res.IngestCPU <= 0 || res.BrokerCPU <= 0 || res.WindowValues <= 0 || res.CommitP50 <= 0 || res.StreamLagMax == 0 {
		t.Errorf("a figure is missing: %+v", res)
	}
	return res, want
}
