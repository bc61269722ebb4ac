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
	if testing.Short() {
		t.Skip("builds candec and starts a NATS cluster and an ingest")
	}
	bin, confDir := natstest.Binary(t), natstest.ConfigDir(t)
	exe := filepath.Join(t.TempDir(), "candec")
	cmd := exec.Command("go", "build", "-o", exe, "./cmd/candec")
	cmd.Dir = filepath.Join("..", "..")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/candec: %v\n%s", err, out)
	}
	// The ingest's consumers start about 1.5 s after it connects.
	const warmup, window = 4 * time.Second, 4 * time.Second
	cars := testCarsAt(t, 6, warmup+window, time.Now().UnixNano())
	dbc, err := filepath.Abs("../../testdata/yukart.dbc")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	res, err := Run(ctx, Config{Exe: exe, DBC: dbc, Cars: cars, Ingests: 1, Warmup: warmup, Duration: window,
		Dir: t.TempDir(), RollAge: time.Second, Engine: EngineNATS,
		NATS: NATSConfig{Binary: bin, ConfigDir: confDir}})
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
	if len(res.Nodes) != 3 || res.Engine != EngineNATS || res.KilledNode != "" {
		t.Errorf("nodes metered %+v, engine %q, killed %q; want the 3 nodes metered, on NATS, none killed", res.Nodes, res.Engine, res.KilledNode)
	}
	if res.IngestCPU <= 0 || res.BrokerCPU <= 0 || res.WindowValues <= 0 || res.CommitP50 <= 0 || res.StreamLagMax == 0 {
		t.Errorf("a figure is missing: %+v", res)
	}
	t.Logf("%d windows: lost %d, duplicates %d, sent again %d; stream lag at most %d", want, res.Lost, res.Duplicates, res.Resent, res.StreamLagMax)
}
