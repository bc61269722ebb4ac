package fleet

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"time"

	"github.com/goccy/go-json"
	"golang.org/x/sync/errgroup"

	"github.com/yukart/candec/benchmarks/report"
)

// NewCars makes n cars' drives, on every core.
func NewCars(ctx context.Context, cfg CarConfig, n int) ([]Car, error) {
	cars := make([]Car, n)
	var g errgroup.Group
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i := range cars {
		g.Go(func() error {
			if err := ctx.Err(); err != nil {
				return err
			}
			var err error
			cars[i], err = NewCar(cfg, i)
			return err
		})
	}
	return cars, g.Wait()
}

// Record is one fleet run as the results file keeps it: a JSON line.
type Record struct {
	Result
	Host    string        `json:"host"`
	Version string        `json:"version"`
	Time    time.Time     `json:"time"`
	Capture string        `json:"capture"`
	DBC     string        `json:"dbc"`
	Seed    uint64        `json:"seed"`
	Window  time.Duration `json:"window_ns"`
	RollAge time.Duration `json:"roll_age_ns"`
	Cores   int           `json:"cores"`
	// CampaignFile is bench's --campaign, pushed mid-run (Campaign).
	CampaignFile string `json:"campaign_file,omitempty"`
}

// Append appends rec to the results file path as one JSON line, as the
// profile runs' results are appended (report.AppendLine).
func Append(path string, rec *Record) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	return report.AppendLine(path, append(b, '\n'))
}

// WriteTable writes rec as the table the bench prints.
func WriteTable(w io.Writer, rec *Record) {
	r := &rec.Result
	pct := func(d time.Duration) float64 { return 100 * d.Seconds() / r.Measured.Seconds() }
	fmt.Fprintf(w, "fleet: %d cars (%v windows) into %d ingests, %v measured (%s, %d cores)\n", r.Cars, rec.Window, r.Ingests, r.Measured, rec.Host, rec.Cores)
	fmt.Fprintf(w, "  %-34s %12d windows %12d values\n", "published", r.PublishedWindows, r.PublishedValues)
	fmt.Fprintf(w, "  %-34s %12d windows %12d values\n", "committed to the lake (distinct)", r.CommittedWindows, r.CommittedValues)
	fmt.Fprintf(w, "  %-34s %12d windows (duplicates %d)\n", "lost", r.Lost, r.Duplicates)
	fmt.Fprintf(w, "  %-34s %12.0f values/s\n", "taken by the ingests in the window", r.WindowValues/r.Measured.Seconds())
	fmt.Fprintf(w, "  %-34s %12.0f values/s per core\n", "ingest", r.ValuesPerCoreSecond())
	fmt.Fprintf(w, "  %-34s %11.1f %% of a core  (%.2f cores per 1,000 cars)\n", "ingest CPU", pct(r.IngestCPU), r.PerThousandCars(r.IngestCPU))
	fmt.Fprintf(w, "  %-34s %11.1f %% of a core  (%.2f cores per 1,000 cars)\n", "broker CPU", pct(r.BrokerCPU), r.PerThousandCars(r.BrokerCPU))
	if r.Engine == EngineNATS {
		writeNATS(w, r, pct)
	}
	fmt.Fprintf(w, "  %-34s %11.1f %% of a core\n", "cars (the bench process)", pct(r.CarsCPU))
	if r.Engine == EngineNATS {
		fmt.Fprintf(w, "  %-34s not sampled (no MQTT reader on the cluster)  (cars at most %v late)\n", "delivery latency", r.PublishLate)
	} else {
		fmt.Fprintf(w, "  %-34s p50 %v  p99 %v  (cars at most %v late)\n", "delivery latency", r.DeliveryP50, r.DeliveryP99, r.PublishLate)
	}
	fmt.Fprintf(w, "  %-34s p50 %v  p99 %v  (roll age %v)\n", "latency to the lake", r.CommitP50, r.CommitP99, rec.RollAge)
	if r.Campaign != nil {
		writeCampaign(w, r.Campaign, r.Engine != EngineNATS)
	}
}

// writeCampaign writes a campaign's part of the table: who took it, the
// figures before and after the push (the delivery latency where it was
// sampled), and the lake's windows by version.
func writeCampaign(w io.Writer, c *CampaignResult, sampled bool) {
	refused := "none"
	if len(c.Refused) > 0 {
		refused = fmt.Sprint(c.Refused)
	}
	fmt.Fprintf(w, "campaign version %d for vehicles %q, pushed %v into the window to %d cars: applied by %d (%v to %v after the push), refused by %s\n",
		c.Version, c.Vehicles, c.At, c.Pushed, c.Applied, c.ApplyFirst.Round(time.Microsecond), c.ApplyLast.Round(time.Microsecond), refused)
	b, a := &c.Before, &c.After
	row := func(label string, f func(p *Phase) string) {
		fmt.Fprintf(w, "  %-34s %22s %22s\n", label, f(b), f(a))
	}
	cpu := func(d func(p *Phase) time.Duration) func(p *Phase) string {
		return func(p *Phase) string {
			return fmt.Sprintf("%.1f %% of a core", 100*d(p).Seconds()/p.Measured.Seconds())
		}
	}
	row("", func(p *Phase) string {
		return map[bool]string{true: "after", false: "before"}[p == a] + " the push (" + p.Measured.String() + ")"
	})
	row("taken by the ingests", func(p *Phase) string { return fmt.Sprintf("%.0f values/s", p.WindowValues/p.Measured.Seconds()) })
	row("ingest CPU", cpu(func(p *Phase) time.Duration { return p.IngestCPU }))
	row("broker CPU", cpu(func(p *Phase) time.Duration { return p.BrokerCPU }))
	row("cars (the bench process)", cpu(func(p *Phase) time.Duration { return p.CarsCPU }))
	row("delivery latency p50 / p99", func(p *Phase) string {
		if !sampled {
			return "not sampled"
		}
		return p.DeliveryP50.Round(10*time.Microsecond).String() + " / " + p.DeliveryP99.Round(10*time.Microsecond).String()
	})
	fmt.Fprintf(w, "  committed to the lake, by policy version (each car's time split at its switch, or the push):\n")
	fmt.Fprintf(w, "  %-8s %8s %5s %10s %10s %12s %16s %15s\n", "", "version", "cars", "car-s", "windows", "values", "windows/s a car", "values/s a car")
	for i := range c.Versions {
		v := &c.Versions[i]
		phase := "before"
		if v.After {
			phase = "after"
		}
		fmt.Fprintf(w, "  %-8s %8d %5d %10.1f %10d %12d %16.1f %15.1f\n", phase, v.Version, v.Cars, v.CarSeconds,
			v.Windows, v.Values, v.PerCarSecond(v.Windows), v.PerCarSecond(v.Values))
	}
}

// writeNATS writes a NATS run's own lines: each node's CPU, the stream's
// lag and the node killed.
func writeNATS(w io.Writer, r *Result, pct func(time.Duration) float64) {
	for _, n := range r.Nodes {
		fmt.Fprintf(w, "  %-34s %11.1f %% of a core\n", "  node "+n.Name, pct(n.CPU))
	}
	if r.KilledNode != "" {
		fmt.Fprintf(w, "  %-34s SIGKILL a third into the window, %v down (its CPU not metered)\n", "  node "+r.KilledNode, r.KillDown)
	}
	fmt.Fprintf(w, "  %-34s %12d windows held at the end (%d not yet delivered), at most %d\n", "stream lag", r.StreamLag, r.StreamPending, r.StreamLagMax)
	fmt.Fprintf(w, "  %-34s %12d windows (unacknowledged when a car's connection was lost)\n", "sent again by the cars", r.Resent)
	fmt.Fprintf(w, "  %-34s %12d messages, unacknowledged once the ingests stopped\n", "left in the stream", r.StreamLeft)
}
