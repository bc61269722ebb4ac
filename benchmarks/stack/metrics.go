package stack

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// MaxMetricsPage bounds the metrics page Scrape reads.
const MaxMetricsPage = 16 << 20

// Scrape reads a process's metrics page at url (within 2 s) and parses
// it (ParseMetrics).
func Scrape(ctx context.Context, url string) (map[string]*dto.MetricFamily, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s", url, resp.Status)
	}
	return ParseMetrics(io.LimitReader(resp.Body, MaxMetricsPage))
}

// ParseMetrics reads a page of the Prometheus text exposition format
// into its metric families by name; a page it cannot read whole is an
// error. expfmt before v0.71 panics on a page whose line opens with
// "{}" (prometheus/common#922): an error too.
func ParseMetrics(r io.Reader) (m map[string]*dto.MetricFamily, err error) {
	defer func() {
		if v := recover(); v != nil {
			m, err = nil, fmt.Errorf("unreadable metrics page: %v", v)
		}
	}()
	p := expfmt.NewTextParser(model.UTF8Validation)
	return p.TextToMetricFamilies(r)
}
