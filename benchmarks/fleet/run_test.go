package fleet

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/yukart/candec/internal/testkit/brokertest"
)

// TestRun runs a small fleet through a real mosquitto into two
// `candec ingest` processes of one group: every window the cars
// published is committed once, and every part of the result is there.
// Timing figures are not asserted.
func TestRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds candec and starts mosquitto and two ingests")
	}
	brokertest.RequireMosquitto(t)
	exe := buildCandec(t)
	const warmup, window = time.Second, 2 * time.Second
	// Made for a start already past when the run starts them: the
	// latencies allow for it.
	cars := testCarsAt(t, 6, warmup+window, time.Now().UnixNano())
	dbc, err := filepath.Abs("../../testdata/yukart.dbc")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := Run(ctx, Config{Exe: exe, DBC: dbc, Cars: cars, Ingests: 2, Warmup: warmup, Duration: window,
		Dir: t.TempDir(), RollAge: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	values := 0
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
	if res.IngestCPU <= 0 || res.BrokerCPU <= 0 || res.WindowValues <= 0 || res.CommitP50 <= 0 || res.DeliveryP50 <= 0 {
		t.Errorf("a figure is missing: %+v", res)
	}
}

// buildCandec builds the candec binary whose ingest a run starts.
func buildCandec(t *testing.T) string {
	t.Helper()
	exe := filepath.Join(t.TempDir(), "candec")
	cmd := exec.Command("go", "build", "-o", exe, "./cmd/candec")
	cmd.Dir = filepath.Join("..", "..")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/candec: %v\n%s", err, out)
	}
	return exe
}
