package report

import (
	"fmt"
	"image/color"
	"maps"
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/yukart/candec/benchmarks/scenario"
	"github.com/yukart/candec/internal/base/numfmt"
	"github.com/yukart/candec/internal/lab/chart"
)

// The charts' names: a chart is written beside the baseline as
// <baseline>-<name>.svg and embedded under that name (Meta.Charts).
const (
	ChartBroker     = "broker"
	ChartLatency    = "latency"
	ChartDeliveries = "deliveries"
)

// Region is a range of deliveries/s on the report's broker that the
// report names for what the envelopes' latency does there.
type Region struct {
	Name     string
	From, To float64
}

// Regions are the report's: "up to ~22,000 deliveries/s it stays under
// half a core with p99 near 30 ms; around 40,000 the tail goes to
// hundreds of ms; past ~60,000 queues grow by seconds".
var Regions = []Region{
	{"comfortable", 0, 22000},
	{"tail", 22000, 60000},
	{"collapse", 60000, math.Inf(1)},
}

// Scale places this machine's rows on the report's scale.
//
// The broker's cost per delivery depends on the machine, so deliveries/s
// alone do not compare: the same load that one broker carries at half a
// core saturates a slower one. Each broker is measured in µs of CPU per
// delivery, on its heaviest signal-stream row, where its fixed costs
// weigh least; 10⁶ / µs is its saturation point, the deliveries/s that
// would keep its one thread busy. A row's load relative to its broker's
// saturation point then means the same on any machine, and times the
// report's saturation point it is the deliveries/s the report's broker
// would have carried for the same load.
type Scale struct {
	// Here is this machine's broker µs per delivery, measured in the row
	// HereRow.
	Here    float64
	HereRow string
	// Report is the report's broker µs per delivery: its broker CPU over
	// its deliveries in its row ReportRow.
	Report    float64
	ReportRow string
}

// NewScale measures the scale of s against the report's figures refs.
// ok is false when either side has no row to measure it on.
func NewScale(s Summary, refs map[string]*scenario.Reference) (sc Scale, ok bool) {
	var hereD, repD float64
	for _, r := range s.Rows {
		x := &r.Median
		if x.Stream == "signals" && x.BrokerUsPerDelivery > 0 && x.Deliveries > hereD {
			hereD, sc.Here, sc.HereRow = x.Deliveries, x.BrokerUsPerDelivery, r.Scenario
		}
	}
	for _, name := range slices.Sorted(maps.Keys(refs)) { // ties go the same way every time
		ref := refs[name]
		if ref.Deliveries > repD && ref.BrokerCPU > 0 {
			repD, sc.Report, sc.ReportRow = ref.Deliveries, ref.BrokerCPU*1e4/ref.Deliveries, name
		}
	}
	return sc, sc.Here > 0 && sc.Report > 0
}

// Saturation returns the deliveries/s that saturate this machine's
// broker and the report's.
func (sc Scale) Saturation() (here, report float64) { return 1e6 / sc.Here, 1e6 / sc.Report }

// Relative returns deliveries/s on this machine as a share (0..1) of its
// broker's saturation point.
func (sc Scale) Relative(deliveries float64) float64 { return deliveries * sc.Here / 1e6 }

// OnReport returns deliveries/s on this machine as the deliveries/s of
// the same load on the report's broker.
func (sc Scale) OnReport(deliveries float64) float64 { return deliveries * sc.Here / sc.Report }

// sig3 formats v with three significant figures and thousands
// separators: a saturation point is an estimate, not a count.
func sig3(v float64) string {
	if v <= 0 {
		return "0"
	}
	e := math.Pow(10, math.Floor(math.Log10(v))-2)
	return numfmt.Thousands(math.Round(v/e) * e)
}

// Chart is one picture of a summary.
type Chart struct {
	// Name is one of ChartBroker, ChartLatency, ChartDeliveries.
	Name string
	// Alt says what it shows, for the Markdown that embeds it.
	Alt string
	// Plot draws it, at Width × Height.
	Plot          chart.Drawer
	Width, Height vg.Length
}

// Charts returns the summary's pictures: broker CPU against deliveries
// on the report's scale (only with the report's figures), envelope
// latency per scenario, deliveries per scenario on both streams.
func Charts(s Summary, refs map[string]*scenario.Reference) []Chart {
	var out []Chart
	sc, scaled := NewScale(s, refs)
	if scaled {
		out = append(out, Chart{Name: ChartBroker, Alt: "Broker CPU against deliveries/s, this baseline and the report's, on the report's scale",
			Plot: BrokerChart(s, refs, sc), Width: 8 * vg.Inch, Height: 5 * vg.Inch})
	}
	var scp *Scale
	if scaled {
		scp = &sc
	}
	n := vg.Length(len(s.Rows))
	out = append(out,
		Chart{Name: ChartLatency, Alt: "Envelope latency p50 and p99 per scenario",
			Plot: LatencyChart(s), Width: 8 * vg.Inch, Height: 1.4*vg.Inch + n*0.3*vg.Inch},
		Chart{Name: ChartDeliveries, Alt: "Deliveries/s per scenario, on the signal stream and the window stream",
			Plot: DeliveriesChart(s, scp), Width: 8 * vg.Inch, Height: 1.4*vg.Inch + n*0.3*vg.Inch},
	)
	return out
}

// BrokerChart draws broker CPU against deliveries/s: the report's rows
// and this baseline's signal-stream rows as two series, x their load
// relative to their broker's saturation point (sc), with the report's
// deliveries/s under each tick and its regions shaded.
func BrokerChart(s Summary, refs map[string]*scenario.Reference, sc Scale) *plot.Plot {
	_, repSat := sc.Saturation()
	p := chart.New("Broker CPU against deliveries, on the report's scale",
		"deliveries/s as a share of the broker's saturation point\n(under each share: the report's deliveries/s)",
		"broker CPU (% of one core)")
	p.Y.Min, p.Y.Max = 0, 100
	p.X.Min, p.X.Max = 0, 1

	// The regions first, so the points are drawn over them.
	shades := []color.Color{chart.Light(chart.Colour(2), 40), chart.Light(chart.Colour(4), 50), chart.Light(chart.Colour(1), 45)}
	for i, reg := range Regions {
		from, to := reg.From/repSat, math.Min(reg.To/repSat, 1)
		if from >= 1 {
			continue
		}
		p.Add(&chart.Bands{Spans: [][2]float64{{from, to}}, Color: shades[i%len(shades)]})
		chart.Labels(p, plotter.XYs{{X: (from + to) / 2, Y: 96}}, []string{reg.Name}, vg.Points(10), draw.XCenter, draw.YBottom)
	}

	var rep, here plotter.XYs
	for _, name := range slices.Sorted(maps.Keys(refs)) {
		if ref := refs[name]; ref.Deliveries > 0 {
			rep = append(rep, plotter.XY{X: ref.Deliveries / repSat, Y: ref.BrokerCPU})
		}
	}
	for _, r := range s.Rows {
		if x := &r.Median; x.Stream == "signals" && x.Deliveries > 0 {
			here = append(here, plotter.XY{X: sc.Relative(x.Deliveries), Y: x.CPU.Broker})
		}
	}
	here1, _ := sc.Saturation()
	chart.Points(p, rep, fmt.Sprintf("the report: %.1f µs per delivery, saturates at %s/s", sc.Report, sig3(repSat)), chart.Colour(0), draw.CircleGlyph{}, vg.Points(4))
	chart.Points(p, here, fmt.Sprintf("candec on %s: %.1f µs per delivery, saturates at %s/s", s.Host, sc.Here, sig3(here1)), chart.Colour(1), draw.TriangleGlyph{}, vg.Points(4))
	chart.LegendAt(p, false, false)
	var ticks []plot.Tick
	for i := 0; i <= 20; i++ {
		v := float64(i) / 20
		t := plot.Tick{Value: v}
		if i%4 == 0 {
			t.Label = fmt.Sprintf("%d %%\n%s", i*5, sig3(v*repSat))
		}
		ticks = append(ticks, t)
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	p.Add(plotter.NewGrid())
	return p
}

// LatencyChart draws each scenario's envelope latency p50 and p99 on a
// log scale: a line from one to the other, the scenarios top to bottom
// in the summary's order.
func LatencyChart(s Summary) *plot.Plot {
	p := chart.New("Envelope latency per scenario, frame timestamp to subscriber", "latency (ms, log scale)", "")
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = chart.LogTicks{}
	n := len(s.Rows)
	var p50, p99 plotter.XYs
	names := make([]string, n)
	lo, hi := math.Inf(1), 0.0
	for i, r := range s.Rows {
		y := float64(n - 1 - i)
		names[n-1-i] = r.Scenario
		l := r.Median.Latency.Envelopes
		if l.P50 <= 0 || l.P99 <= 0 {
			continue
		}
		p50 = append(p50, plotter.XY{X: l.P50, Y: y})
		p99 = append(p99, plotter.XY{X: l.P99, Y: y})
		lo, hi = math.Min(lo, l.P50), math.Max(hi, l.P99)
		chart.Line(p, plotter.XYs{{X: l.P50, Y: y}, {X: l.P99, Y: y}}, "", color.Gray{0xa0}, vg.Points(2))
	}
	chart.Points(p, p50, "p50", chart.Colour(0), draw.CircleGlyph{}, vg.Points(4))
	chart.Points(p, p99, "p99", chart.Colour(1), draw.CircleGlyph{}, vg.Points(4))
	p.X.Min, p.X.Max = 1, 1000 // no latency measured: an empty but valid scale
	if hi > 0 {
		p.X.Min, p.X.Max = math.Pow(10, math.Floor(math.Log10(lo))), math.Pow(10, math.Ceil(math.Log10(hi)))
		if p.X.Min == p.X.Max {
			p.X.Max *= 10
		}
	}
	p.NominalY(names...)
	p.Y.Min, p.Y.Max = -0.6, float64(n)-0.4
	chart.LegendAt(p, false, false)
	p.Add(plotter.NewGrid())
	return p
}

// DeliveriesChart draws each scenario's deliveries/s: its signal-stream
// row, and beside it the window-stream row of the same load, DBC and
// policy when the summary has one. With a scale (sc not nil), dashed
// lines mark where the report's regions begin on this machine's broker.
func DeliveriesChart(s Summary, sc *Scale) *plot.Plot {
	p := chart.New("Deliveries per scenario, signal stream and window stream",
		fmt.Sprintf("deliveries/s (messages × %d envelope subscribers); dashed: the report's regions on this broker", subscribers(s)), "")
	pairs := deliveryPairs(s)
	n := len(pairs)
	sig, win := make(plotter.Values, n), make(plotter.Values, n)
	names := make([]string, n)
	most := 0.0
	for i, pr := range pairs {
		j := n - 1 - i // the first scenario at the top
		sig[j], win[j], names[j] = pr.signals, pr.window, pr.name
		most = math.Max(most, math.Max(pr.signals, pr.window))
	}
	p.X.Min, p.X.Max = 0, most*1.15 // room for the figures after the bars
	if sc != nil {
		addRegionLines(p, sc, n)
	}
	addDeliveryBars(p, sig, win)
	p.NominalY(names...)
	p.Y.Padding = vg.Points(6)
	p.X.Tick.Marker = chart.ThousandsTicks{}
	chart.LegendAt(p, false, false)
	p.Add(plotter.NewGrid())
	return p
}

// deliveryPair is a scenario's deliveries per second on the signal
// stream and on the window stream.
type deliveryPair struct {
	name            string
	signals, window float64
}

// deliveryPairs pairs each signal-stream row of s with the window-stream
// row of the same load, DBC and policy, in the order of s; a window row
// with no signal row is a pair of its own.
func deliveryPairs(s Summary) []deliveryPair {
	var pairs []deliveryPair
	index := map[string]int{}
	key := func(x *Result) string { return x.Load + "|" + x.DBC + "|" + x.Policy }
	for _, r := range s.Rows {
		if x := &r.Median; x.Stream != "window" {
			index[key(x)] = len(pairs)
			pairs = append(pairs, deliveryPair{name: r.Scenario, signals: x.Deliveries})
		}
	}
	for _, r := range s.Rows {
		if x := &r.Median; x.Stream == "window" {
			if i, ok := index[key(x)]; ok {
				pairs[i].window = x.Deliveries
			} else {
				pairs = append(pairs, deliveryPair{name: r.Scenario, window: x.Deliveries})
			}
		}
	}
	return pairs
}

// addRegionLines draws the report's region boundaries, scaled to this
// broker by sc, as dashed lines across n bars.
func addRegionLines(p *plot.Plot, sc *Scale, n int) {
	for _, reg := range Regions[1:] {
		x := reg.From * sc.Report / sc.Here // the report's boundary, on this broker
		if x > p.X.Max {
			continue
		}
		if chart.Line(p, plotter.XYs{{X: x, Y: -0.5}, {X: x, Y: float64(n) - 0.5}}, "", chart.Colour(1), vg.Points(1), vg.Points(4), vg.Points(3)) == nil {
			continue
		}
		if t := chart.Labels(p, plotter.XYs{{X: x, Y: float64(n) - 0.5}}, []string{fmt.Sprintf(" %s from %s/s", reg.Name, sig3(x))},
			vg.Points(9), draw.XLeft, draw.YTop); t != nil {
			t.TextStyle[0].Color = chart.Colour(1)
		}
	}
}

// addDeliveryBars draws the signal-stream and window-stream bars side by
// side, each with its figure after it.
func addDeliveryBars(p *plot.Plot, sig, win plotter.Values) {
	w := vg.Points(8)
	chart.HBars(p, sig, "signal stream (an envelope per signal)", chart.Colour(0), w, w/2)
	chart.HBars(p, win, "window stream (every signal, one message per window)", chart.Colour(4), w, -w/2)
	var xy plotter.XYs
	var texts []string
	for j := range sig {
		for _, v := range []struct {
			x, dy float64
		}{{sig[j], 0.2}, {win[j], -0.2}} {
			if v.x > 0 {
				xy = append(xy, plotter.XY{X: v.x, Y: float64(j) + v.dy})
				texts = append(texts, " "+numfmt.Thousands(v.x))
			}
		}
	}
	chart.Labels(p, xy, texts, vg.Points(8), draw.XLeft, draw.YCenter)
}

// subscribers is the envelope subscriber count of the summary's runs.
func subscribers(s Summary) int {
	if len(s.Rows) > 0 && s.Rows[0].Median.EnvelopeSubscribers > 0 {
		return s.Rows[0].Median.EnvelopeSubscribers
	}
	return 5
}
