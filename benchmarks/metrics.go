package benchmarks

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/yukart/candec/benchmarks/report"
)

// metrics is a scrape of the Prometheus text format: each sample line's
// name with labels ("candec_envelopes_published_total{kind=\"value\"}")
// and its value.
type metrics map[string]float64

// parseMetrics reads the Prometheus text exposition format, skipping
// comments and lines it cannot read.
func parseMetrics(r io.Reader) metrics {
	m := metrics{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		// name{labels} value [timestamp]; label values may hold spaces,
		// so the value is found after the closing brace.
		rest := line
		name := ""
		if i := strings.IndexByte(line, '{'); i >= 0 {
			j := strings.LastIndexByte(line, '}')
			if j < i {
				continue
			}
			name, rest = line[:j+1], line[j+1:]
		} else {
			f := strings.Fields(line)
			if len(f) < 2 {
				continue
			}
			name, rest = f[0], strings.Join(f[1:], " ")
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			continue
		}
		v, err := strconv.ParseFloat(f[0], 64)
		if err != nil {
			continue
		}
		m[name] = v
	}
	return m
}

// sum returns the sum of every sample of the metric name whose labels
// contain each of with (`kind="value"`) and none of without.
func (m metrics) sum(name string, with, without []string) float64 {
	var s float64
outer:
	for k, v := range m {
		if k != name && !strings.HasPrefix(k, name+"{") {
			continue
		}
		for _, w := range with {
			if !strings.Contains(k, w) {
				continue outer
			}
		}
		for _, w := range without {
			if strings.Contains(k, w) {
				continue outer
			}
		}
		s += v
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
	return parseMetrics(bytes.NewReader(b)), nil
}
