package fleet

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/yukart/candec/internal/testkit/natstest"
)

// TestRunNATSNodeKill runs a small fleet through the 3-node NATS cluster
// of deploy/nats into two `candec ingest` instances, and SIGKILLs the
// node that leads the fleet's stream a third into the window, starting
// it again 3 s later: counted from the lake's commit record against
// what the cars sent, no window is lost and none is written twice; the
// run reports the two other nodes' CPU and the stream's lag.
func TestRunNATSNodeKill(t *testing.T) {
	if testing.Short() {
		t.Skip("builds candec and starts a NATS cluster and two ingests")
	}
	bin, confDir := natstest.Binary(t), natstest.ConfigDir(t)
	exe := filepath.Join(t.TempDir(), "candec")
	cmd := exec.Command("go", "build", "-o", exe, "./cmd/candec")
	cmd.Dir = filepath.Join("..", "..")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/candec: %v\n%s", err, out)
	}
	// The ingests' consumers start about 1.5 s after they connect.
	const warmup, window = 4 * time.Second, 9 * time.Second
	cars := testCarsAt(t, 6, warmup+window, time.Now().UnixNano())
	dbc, err := filepath.Abs("../../testdata/yukart.dbc")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	res, err := Run(ctx, Config{Exe: exe, DBC: dbc, Cars: cars, Ingests: 2, Warmup: warmup, Duration: window,
		Dir: t.TempDir(), RollAge: time.Second, Engine: EngineNATS,
		NATS: NATSConfig{Binary: bin, ConfigDir: confDir, KillLeader: true, KillDown: 3 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	want, values := 0, 0
	for _, c := range cars {
		want += len(c.Windows)
		values += c.Values()
	}
	if res.PublishedWindows != want || res.CommittedWindows != want || res.Lost != 0 || res.Duplicates != 0 {
		t.Errorf("published %d, committed %d, lost %d, duplicates %d; want %d, %d, 0, 0",
			res.PublishedWindows, res.CommittedWindows, res.Lost, res.Duplicates, want, want)
	}
	if res.CommittedValues != values {
		t.Errorf("committed values %d, want %d", res.CommittedValues, values)
	}
	if res.KilledNode == "" || len(res.Nodes) != 2 || res.Engine != EngineNATS {
		t.Errorf("killed %q, nodes metered %+v, engine %q; want one killed and the 2 others metered, on NATS", res.KilledNode, res.Nodes, res.Engine)
	}
	if res.IngestCPU <= 0 || res.BrokerCPU <= 0 || res.WindowValues <= 0 || res.CommitP50 <= 0 || res.StreamLagMax == 0 {
		t.Errorf("a figure is missing: %+v", res)
	}
	t.Logf("%d windows, %s killed: lost %d, duplicates %d; stream lag at most %d", want, res.KilledNode, res.Lost, res.Duplicates, res.StreamLagMax)
}
