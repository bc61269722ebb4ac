package benchmarks

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"

	dto "github.com/prometheus/client_model/go"

	"github.com/yukart/candec/benchmarks/report"
	"github.com/yukart/candec/benchmarks/stack"
)

// metrics is a scrape of the Prometheus text format: its metric
// families by name.
type metrics map[string]*dto.MetricFamily

// parseMetrics reads a page of the Prometheus text format
// (stack.ParseMetrics).
func parseMetrics(r io.Reader) (metrics, error) {
	return stack.ParseMetrics(r)
}

// sum returns the sum of every sample of the metric name (a counter's or
// an untyped one's) whose labels hold each of with (`kind="value"`) and
// none of without.
func (m metrics) sum(name string, with, without []string) float64 {
	var s float64
	for _, x := range m[name].GetMetric() {
		labels := make([]string, 0, len(x.GetLabel()))
		for _, l := range x.GetLabel() {
			labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
		}
		in := func(w string) bool { return slices.Contains(labels, w) }
		out := func(w string) bool { return !in(w) }
		if !slices.ContainsFunc(with, out) && !slices.ContainsFunc(without, in) {
			s += x.GetCounter().GetValue() + x.GetUntyped().GetValue()
		}
	}
	return s
}

// decoderStats returns the counters of the decoder that changed between
// two scrapes.
func decoderStats(before, after metrics) *report.DecoderStats {
	d := func(name string, with, without []string) uint64 {
		return uint64(math.Max(0, math.Round(after.sum(name, with, without)-before.sum(name, with, without))))
	}
	return &report.DecoderStats{
		FramesIn:            d("candec_raw_frames_total", nil, nil),
		FramesLost:          d("candec_raw_frames_lost_total", nil, nil),
		Published:           d("candec_envelopes_published_total", nil, []string{`kind="window"`}),
		Windows:             d("candec_envelopes_published_total", []string{`kind="window"`}, nil),
		SuppressedCap:       d("candec_envelopes_suppressed_total", []string{`reason="cap"`}, nil),
		SuppressedUnchanged: d("candec_envelopes_suppressed_total", []string{`reason="unchanged"`}, nil),
		Coalesced:           d("candec_envelopes_suppressed_total", []string{`reason="coalesced"`}, nil),
		PublishErrors:       d("candec_publish_errors_total", nil, nil),
	}
}

// scrape reads http://addr/metrics.
func scrape(ctx context.Context, addr string) (metrics, error) {
	m, err := stack.Scrape(ctx, "http://"+addr+"/metrics")
	if err != nil {
		return nil, fmt.Errorf("bench: decoder metrics: %w", err)
	}
	return m, nil
}
