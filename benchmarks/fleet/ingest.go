package fleet

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"

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
	fams, err := stack.Scrape(ctx, in.metrics)
	if err == nil {
		return sumFamilies(fams, name)
	}
	return 0, fmt.Errorf("fleet: %s metrics: %w", in.p.Name, err)
}

// metricAlways is a counter an ingest always exposes; a page without it
// is no ingest's.
const metricAlways = "candec_ingest_commits_total"

// sumMetric sums the counter name's samples on a page of Prometheus's
// text format. A per-vehicle counter has no sample until the first
// vehicle's window (an ingest whose consumers have not started yet): it
// is 0 where the page is an ingest's (metricAlways there), an error
// otherwise.
func sumMetric(r io.Reader, name string) (float64, error) {
	fams, err := stack.ParseMetrics(r)
	if err != nil {
		return 0, err
	}
	return sumFamilies(fams, name)
}

// sumFamilies sums the counter name's samples (sumMetric).
func sumFamilies(fams map[string]*dto.MetricFamily, name string) (float64, error) {
	f, ok := fams[name]
	if !ok {
		if _, ingest := fams[metricAlways]; ingest {
			return 0, nil
		}
		return 0, fmt.Errorf("no metric %s, nor %s", name, metricAlways)
	}
	var sum float64
	for _, m := range f.GetMetric() {
		sum += m.GetCounter().GetValue()
	}
	return sum, nil
}
