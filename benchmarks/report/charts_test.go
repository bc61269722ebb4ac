package report

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/yukart/candec/benchmarks/scenario"
	"github.com/yukart/candec/internal/lab/chart"
	"github.com/yukart/candec/internal/lab/chart/charttest"
)

// chartSummary is a summary like the mix baseline's: light and heavy
// signal-stream rows and a window-stream twin of one of them.
func chartSummary() (Summary, map[string]*scenario.Reference) {
	light := sample("car-8-50hz", t0, 4000, 38, 16)
	light.BrokerUsPerDelivery = 18.5
	heavy := sample("fullbus-8-none", t0.Add(time.Minute), 10000, 75, 3000)
	heavy.Load, heavy.Policy, heavy.BrokerUsPerDelivery = "full bus", "none.yaml", 15
	win := heavy
	win.Scenario, win.Stream, win.Deliveries, win.BrokerUsPerDelivery, win.Time = "fullbus-8-none-window", "window", 500, 600, t0.Add(2*time.Minute)
	s := Summarize([]Result{light, heavy, win}, nil, 3)
	refs := map[string]*scenario.Reference{
		"car-8-50hz":     {Envelopes: 4300, Deliveries: 21600, BrokerCPU: 47, P50: 16, P99: 32},
		"fullbus-3-none": {Envelopes: 12800, Deliveries: 64000, BrokerCPU: 80, P50: 636, P99: 1472},
		"fullbus-8-none": {Envelopes: 16300, BrokerCPU: 75, P50: 5380, P99: 5994}, // collapsed: no deliveries
	}
	return s, refs
}

func TestNewScale(t *testing.T) {
	s, refs := chartSummary()
	sc, ok := NewScale(s, refs)
	if !ok {
		t.Fatal("NewScale: not ok, want a scale")
	}
	// This machine: the heaviest signal-stream row (the window row, with
	// its few deliveries, is no measure of the cost per delivery).
	if sc.Here != 15 || sc.HereRow != "fullbus-8-none" {
		t.Errorf("here = %v µs from %s, want 15 from fullbus-8-none", sc.Here, sc.HereRow)
	}
	// The report: 80 % of a core at 64,000/s is 12.5 µs.
	if sc.Report != 12.5 || sc.ReportRow != "fullbus-3-none" {
		t.Errorf("report = %v µs from %s, want 12.5 from fullbus-3-none", sc.Report, sc.ReportRow)
	}
	here, rep := sc.Saturation()
	if math.Abs(here-66667) > 1 || rep != 80000 {
		t.Errorf("saturation = %v here, %v in the report; want 66,667 and 80,000", here, rep)
	}
	// 33,333 deliveries/s here is half this broker's saturation point:
	// half the report's, 40,000.
	if got := sc.Relative(100000.0 / 3); math.Abs(got-0.5) > 1e-9 {
		t.Errorf("Relative = %v, want 0.5", got)
	}
	if got := sc.OnReport(100000.0 / 3); math.Abs(got-40000) > 1e-6 {
		t.Errorf("OnReport = %v, want 40,000", got)
	}
	if _, ok := NewScale(s, nil); ok {
		t.Error("NewScale without the report's figures: ok, want not ok")
	}
}

func TestCharts(t *testing.T) {
	s, refs := chartSummary()
	cs := Charts(s, refs)
	tests := []struct {
		name string
		// want: title, axis labels and one legend entry per series.
		want   []string
		series []string
	}{
		{ChartBroker, []string{"Broker CPU against deliveries, on the report's scale", "broker CPU (% of one core)",
			"deliveries/s as a share of the broker's saturation point", "comfortable", "tail", "collapse"},
			[]string{"the report: 12.5 µs per delivery, saturates at 80,000/s", "candec on desk: 15.0 µs per delivery, saturates at 66,700/s"}},
		{ChartLatency, []string{"Envelope latency per scenario, frame timestamp to subscriber", "latency (ms, log scale)",
			"car-8-50hz", "fullbus-8-none", "fullbus-8-none-window"},
			[]string{"p50", "p99"}},
		{ChartDeliveries, []string{"Deliveries per scenario, signal stream and window stream",
			"deliveries/s (messages × 5 envelope subscribers); dashed: the report's regions on this broker", "car-8-50hz", "fullbus-8-none", "50,000", "500"},
			[]string{"signal stream (an envelope per signal)", "window stream (every signal, one message per window)"}},
	}
	if len(cs) != len(tests) {
		t.Fatalf("Charts returned %d charts, want %d", len(cs), len(tests))
	}
	for i, tt := range tests {
		c := cs[i]
		if c.Name != tt.name {
			t.Errorf("chart %d is %s, want %s", i, c.Name, tt.name)
			continue
		}
		var buf bytes.Buffer
		if err := chart.Write(&buf, c.Plot, c.Width, c.Height, chart.SVG); err != nil {
			t.Fatal(err)
		}
		charttest.Check(t, buf.Bytes(), append(tt.want, tt.series...)...)
	}
	// Without the report's figures there is no scale: no broker chart.
	if cs := Charts(s, nil); len(cs) != 2 || cs[0].Name != ChartLatency {
		t.Errorf("Charts without references: %d charts, want latency and deliveries", len(cs))
	}
}

func TestMarkdownEmbedsChartsAndScale(t *testing.T) {
	s, refs := chartSummary()
	var buf bytes.Buffer
	err := WriteMarkdown(&buf, s, Meta{Generated: t0, References: refs,
		Charts: map[string]string{ChartBroker: "b-broker.svg", ChartLatency: "b-latency.svg"}})
	if err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"](b-broker.svg)", "](b-latency.svg)",
		"the broker took 15.0 µs of CPU per delivery here (fullbus-8-none, the heaviest signal-stream row), so one core saturates at 66,700 deliveries/s",
		"the report's took 12.5 (fullbus-3-none: 80 % of a core at 64,000 deliveries/s), saturating at 80,000",
		"| Note | On the report's scale |",
		// 20,000 deliveries/s at 15 µs: 30 % of saturation, 24,000 on the report's broker.
		"| 32 → 16 |  | 24,000 (30 %) |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("markdown lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "deliveries.svg") {
		t.Errorf("markdown embeds a chart it was not given:\n%s", out)
	}
}
