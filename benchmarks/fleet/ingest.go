package fleet

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/yukart/candec/benchmarks/stack"
	"github.com/yukart/candec/internal/base/child"
	"github.com/yukart/candec/internal/lab/mosquitto"
)

// The ingest's counters the bench reads (docs/ingest.md).
const (
	metricWindows = "candec_ingest_windows_total"
	metricValues  = "candec_ingest_values_total"
)

// Group is the shared subscription's group of the bench's ingests.
const Group = "fleet"

// ingest is one `candec ingest` process and its metrics endpoint.
type ingest struct {
	p       *stack.Process
	metrics string
}

// startIngest starts ingest i with conn, the cloud's connection flags
// and topic filters (cloud.ingestArgs).
func startIngest(ctx context.Context, cfg Config, conn []string, lake string, i int) (*ingest, error) {
	port, err := mosquitto.FreePort()
	if err != nil {
		return nil, err
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	name := fmt.Sprintf("ingest%d", i)
	args := []string{"ingest", "--dbc", cfg.DBC, "--out-dir", lake, "--id", name, "--metrics", addr}
	if cfg.RollAge > 0 {
		args = append(args, "--roll-age", cfg.RollAge.String())
	}
	args = append(args, conn...)
	p, err := stack.StartProcess(name, stack.Options{Dir: filepath.Join(cfg.Dir, "logs")}, cfg.Exe, args...)
	if err != nil {
		return nil, err
	}
	return &ingest{p: p, metrics: "http://" + addr + "/metrics"}, nil
}

// ready waits until the ingest has subscribed (or connected, on NATS,
// whose stream keeps what comes before): its log says mark.
func (in *ingest) ready(ctx context.Context, mark string) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		if err := in.p.Running(); err != nil {
			return err
		}
		if b, err := os.ReadFile(in.p.Log); err == nil && strings.Contains(string(b), mark) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("fleet: %s: no %q in its log after 30 s: %s", in.p.Name, mark, child.Tail(in.p.Log, 3))
		}
		if err := sleepUntil(ctx, time.Now().Add(50*time.Millisecond)); err != nil {
			return err
		}
	}
}

// metric returns the sum of a metric's samples, over its labels.
func (in *ingest) metric(ctx context.Context, name string) (float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, in.metrics, nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, fmt.Errorf("fleet: %s metrics: %w", in.p.Name, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("fleet: %s metrics: %s", in.p.Name, resp.Status)
	}
	return sumMetric(resp.Body, name)
}

// sumMetric sums the samples of metric name in Prometheus's text
// format; an error when there is none.
func sumMetric(r io.Reader, name string) (float64, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	var sum float64
	found := false
	for sc.Scan() {
		line := sc.Text()
		rest, ok := strings.CutPrefix(line, name)
		if !ok || rest == "" || rest[0] != ' ' && rest[0] != '{' {
			continue
		}
		if i := strings.LastIndexByte(rest, '}'); i >= 0 {
			rest = rest[i+1:]
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			continue
		}
		v, err := strconv.ParseFloat(f[0], 64)
		if err != nil {
			return 0, fmt.Errorf("fleet: metric %s: %q: %w", name, line, err)
		}
		sum, found = sum+v, true
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	if !found {
		return 0, fmt.Errorf("fleet: no metric %s", name)
	}
	return sum, nil
}
