package benchmarks

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/yukart/candec/benchmarks/report"
	"github.com/yukart/candec/benchmarks/scenario"
	"github.com/yukart/candec/internal/testkit/brokertest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// Connections closing in the background of net/http's client.
		goleak.IgnoreTopFunction("internal/poll.runtime_pollWait"),
		goleak.IgnoreTopFunction("net/http.(*persistConn).writeLoop"),
	)
}

// buildCandec builds the candec binary into a temporary directory.
func buildCandec(t *testing.T) string {
	t.Helper()
	exe := filepath.Join(t.TempDir(), "candec")
	cmd := exec.Command("go", "build", "-o", exe, "./cmd/candec")
	cmd.Dir = filepath.Join("..")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/candec: %v\n%s", err, out)
	}
	return exe
}

// TestSmoke runs the smoke profile, shortened, against a private
// mosquitto and checks that nothing is lost at the car's rate and that
// every part of the result is there. Timing figures are not asserted.
func TestSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("starts mosquitto and three processes per run")
	}
	brokertest.RequireMosquitto(t)
	exe := buildCandec(t)
	f, err := scenario.LoadFile("scenarios.yaml")
	if err != nil {
		t.Fatal(err)
	}
	runs, err := f.Plan("smoke", scenario.Overrides{Duration: 3 * time.Second, Warmup: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	results := t.TempDir()
	var out, log bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	start := time.Now()
	rs, err := Run(ctx, Config{
		Exe:        exe,
		Host:       "smoke",
		ResultsDir: results,
		Out:        &out,
		Log:        &log,
		Versions:   report.Versions{Candec: "test", Go: runtime.Version()},
		// Other tests share the machine: its load is not this test's
		// business, loss is.
		BusyLimit: 1e9,
		IdleWait:  -1,
	}, runs)
	t.Logf("%d runs in %v\n%s", len(rs), time.Since(start).Round(time.Millisecond), log.String())
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != len(runs) {
		t.Fatalf("got %d results, want %d", len(rs), len(runs))
	}
	for _, r := range rs {
		t.Run(r.Scenario, func(t *testing.T) {
			if r.RawLost != 0 || r.EnvelopesLost != 0 {
				t.Errorf("lost %d raw frames and %d envelopes at car load, want none", r.RawLost, r.EnvelopesLost)
			}
			if r.FramesOffered <= 0 || r.FramesDelivered <= 0 {
				t.Errorf("frames offered %v, delivered %v; want both positive", r.FramesOffered, r.FramesDelivered)
			}
			if r.Envelopes <= 0 || r.Deliveries <= 0 {
				t.Errorf("envelopes %v/s, deliveries %v/s; want both positive", r.Envelopes, r.Deliveries)
			}
			if r.Latency.Raw.N == 0 || r.Latency.Envelopes.N == 0 {
				t.Errorf("latency samples raw %d, envelopes %d; want both", r.Latency.Raw.N, r.Latency.Envelopes.N)
			}
			if r.Decoder == nil || r.Decoder.FramesIn == 0 {
				t.Errorf("decoder stats %+v, want frames counted", r.Decoder)
			}
			if !strings.HasPrefix(r.Versions.Broker, "mosquitto") {
				t.Errorf("broker version %q, want mosquitto's", r.Versions.Broker)
			}
			if r.Jitter == nil || r.Jitter.N == 0 || r.Jitter.Topics == 0 {
				t.Errorf("cyclic jitter %+v, want intervals of the cyclic topics measured", r.Jitter)
			}
			if r.Stream == scenario.StreamWindow && r.Windows <= 0 {
				t.Errorf("window stream run with %v windows/s", r.Windows)
			}
			if len(r.Warnings) != 0 {
				t.Errorf("warnings: %v", r.Warnings)
			}
			if r.CPU.Machine <= 0 {
				t.Errorf("machine CPU %v, want it measured", r.CPU.Machine)
			}
		})
	}
	// One JSON line per run, printed and appended.
	if got := strings.Count(out.String(), "\n"); got != len(runs) {
		t.Errorf("printed %d lines, want %d", got, len(runs))
	}
	back, err := report.ReadDir(results, "smoke")
	if err != nil {
		t.Fatal(err)
	}
	if len(back) != len(runs) {
		t.Errorf("results file holds %d lines, want %d", len(back), len(runs))
	}
	s := report.Summarize(back, nil, 3)
	var md bytes.Buffer
	if err := report.WriteMarkdown(&md, s, report.Meta{Source: "smoke"}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "## Cyclic jitter") {
		t.Errorf("summary lacks the cyclic jitter:\n%s", md.String())
	}
	for _, r := range runs {
		if !strings.Contains(md.String(), "| "+r.Scenario+" |") {
			t.Errorf("summary lacks %s:\n%s", r.Scenario, md.String())
		}
	}
}
