package benchmarks

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/yukart/candec/benchmarks/report"
)

// metrics is a scrape of the Prometheus text format: its metric
// families by name.
type metrics map[string]*dto.MetricFamily

// parseMetrics reads the Prometheus text exposition format; a page it
// cannot read whole is an error. expfmt before v0.71 panics on a page
// whose line opens with "{}" (prometheus/common#922): an error too.
func parseMetrics(r io.Reader) (m metrics, err error) {
	defer func() {
		if v := recover(); v != nil {
			m, err = nil, fmt.Errorf("unreadable metrics page: %v", v)
		}
	}()
	p := expfmt.NewTextParser(model.UTF8Validation)
	return p.TextToMetricFamilies(r)
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
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/metrics", nil)
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("bench: scrape decoder metrics: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("bench: scrape decoder metrics: %s", resp.Status)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, fmt.Errorf("bench: scrape decoder metrics: %w", err)
	}
	m, err := parseMetrics(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("bench: decoder metrics: %w", err)
	}
	return m, nil
}
