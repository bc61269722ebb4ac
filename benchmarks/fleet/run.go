package fleet

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/yukart/candec/benchmarks/procstat"
	"github.com/yukart/candec/campaign"
	"github.com/yukart/candec/internal/base/child"
	"github.com/yukart/candec/internal/lab/latency"
)

// BrokerConfig is the fleet broker's configuration beyond a plain
// listener: what deploy/mosquitto/fleet.conf sets for its consumers. No
// message is dropped for a slow ingest (no bound on its queue and its
// messages in flight), so that loss measured is loss of the path.
const BrokerConfig = `max_inflight_messages 0
max_queued_messages 0
max_queued_bytes 0
`

// Config configures one fleet run.
type Config struct {
	// Exe is the candec binary whose `ingest` the run starts.
	Exe string
	// DBC is the file the ingest decodes the cars' signals with (the
	// cars' own).
	DBC string
	// Cars are the drives, made with NewCar for Warmup+Duration.
	Cars []Car
	// Ingests is how many `candec ingest` instances share the fleet
	// (one group, $share).
	Ingests int
	// Warmup runs before the measured window opens; Duration is the
	// window.
	Warmup, Duration time.Duration
	// Dir holds the broker's files, the lake and the logs.
	Dir string
	// RollAge is the ingest's --roll-age.
	RollAge time.Duration
	// Log receives progress lines; nil discards them.
	Log io.Writer
	// Campaign, when set, is pushed in the measured window: every car
	// takes campaigns on its policy topic, and the cars it is for must
	// have been made live (CarConfig.LiveFrom) before the push.
	Campaign *Campaign
	// Engine is the cloud tier, EngineMosquitto ("" too) or
	// EngineNATS, which NATS configures.
	Engine string
	NATS   NATSConfig
}

// Result is what one fleet run measured.
type Result struct {
	Cars    int `json:"cars"`
	Ingests int `json:"ingests"`
	// Measured is the window's length.
	Measured time.Duration `json:"measured_ns"`
	// Published are the windows and values the cars sent in all;
	// Committed the distinct windows and their values the lake's
	// manifests name, Duplicates the windows named more than once.
	PublishedWindows int `json:"published_windows"`
	PublishedValues  int `json:"published_values"`
	CommittedWindows int `json:"committed_windows"`
	CommittedValues  int `json:"committed_values"`
	Duplicates       int `json:"duplicates"`
	// Lost is PublishedWindows - CommittedWindows.
	Lost int `json:"lost"`
	// WindowValues are the values the ingests took in the window, by
	// their counters; IngestCPU their CPU in it, summed; BrokerCPU and
	// CarsCPU (the bench process: the cars' connections) likewise.
	WindowValues float64       `json:"window_values"`
	IngestCPU    time.Duration `json:"ingest_cpu_ns"`
	BrokerCPU    time.Duration `json:"broker_cpu_ns"`
	CarsCPU      time.Duration `json:"cars_cpu_ns"`
	// Delivery is the time from a window's end to its arrival at a
	// subscriber of a few cars through the broker; Commit from its end
	// to the manifest that commits it in the lake.
	DeliveryP50 time.Duration `json:"delivery_p50_ns"`
	DeliveryP99 time.Duration `json:"delivery_p99_ns"`
	// PublishLate is the most a car's publish came after its window's
	// end (the bench's own lag: a loaded machine's cars run late).
	PublishLate time.Duration `json:"publish_late_ns"`
	CommitP50   time.Duration `json:"commit_p50_ns"`
	CommitP99   time.Duration `json:"commit_p99_ns"`
	// Campaign is what a run with Config.Campaign measured of it.
	Campaign *CampaignResult `json:"campaign,omitempty"`
	// Engine is the cloud tier (EngineNATS; empty for mosquitto). On
	// NATS, BrokerCPU is its nodes' sum and Nodes each one's (a node
	// killed in the window is left out); the stream's lag is the windows
	// it held, not yet acknowledged by an ingest (so not yet in the
	// lake), at the window's end and at most over it (sampled every
	// LagEvery), and StreamPending those not yet even delivered.
	Engine        string      `json:"engine,omitempty"`
	Nodes         []NodeUsage `json:"nodes,omitempty"`
	StreamLag     uint64      `json:"stream_lag,omitempty"`
	StreamLagMax  uint64      `json:"stream_lag_max,omitempty"`
	StreamPending uint64      `json:"stream_pending,omitempty"`
	// KilledNode is the node SIGKILLed in the window and started again
	// (NATSConfig.KillNode), and KillDown how long it was down.
	KilledNode string        `json:"killed_node,omitempty"`
	KillDown   time.Duration `json:"kill_down_ns,omitempty"`
	// Resent are the windows the cars sent again after their connection
	// was lost and made again (NATS), as their bridges would.
	Resent int `json:"resent,omitempty"`
	// StreamLeft are the messages the stream still held once the ingests
	// had stopped (NATS): not acknowledged, so an ingest that starts
	// takes them again (and skips those committed already); the lake's
	// record, not this, says what was lost.
	StreamLeft uint64 `json:"stream_left,omitempty"`
}

// ValuesPerCoreSecond returns the values the ingests took in the window
// per second of their CPU: what one ingest core sustains at this load.
func (r *Result) ValuesPerCoreSecond() float64 {
	if r.IngestCPU <= 0 {
		return 0
	}
	return r.WindowValues / r.IngestCPU.Seconds()
}

// PerThousandCars returns the CPU, in cores, that 1,000 such cars cost
// a process that used cpu over the window.
func (r *Result) PerThousandCars(cpu time.Duration) float64 {
	if r.Measured <= 0 || r.Cars == 0 {
		return 0
	}
	return cpu.Seconds() / r.Measured.Seconds() * 1000 / float64(r.Cars)
}

// Run runs the fleet through a private mosquitto into cfg.Ingests
// instances of `candec ingest` and returns what it measured.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	r := &run{cfg: cfg, log: cfg.Log}
	r.log = cmp.Or(r.log, io.Discard)
	defer r.stop()
	if err := r.start(ctx); err != nil {
		return nil, err
	}
	return r.drive(ctx)
}

type run struct {
	cfg     Config
	log     io.Writer
	cloud   cloud
	ingests []*ingest
	cars    []*car
	sample  *sampler
	lake    string
	offset  int64 // the drives' start less the start they were made for, ns
	camp    *campaign.Campaign
	pushed  int
	pushAt  time.Duration // when the push started, from the drives' start
}

// stop stops whatever is still running.
func (r *run) stop() {
	for _, c := range r.cars {
		c.close()
	}
	if r.sample != nil {
		r.sample.close()
	}
	for _, in := range r.ingests {
		_ = in.p.Stop(0)
	}
	if r.cloud != nil {
		r.cloud.stop()
	}
}

// start starts the broker, the ingests and the cars' connections.
func (r *run) start(ctx context.Context) error {
	cfg := r.cfg
	if cfg.Ingests < 1 || len(cfg.Cars) == 0 {
		return fmt.Errorf("fleet: %d cars into %d ingests, want at least one of each", len(cfg.Cars), cfg.Ingests)
	}
	if cfg.Campaign != nil {
		var err error
		if r.camp, err = openCampaign(cfg); err != nil {
			return err
		}
	}
	r.lake = filepath.Join(cfg.Dir, "lake")
	for _, d := range []string{filepath.Join(cfg.Dir, "broker"), filepath.Join(cfg.Dir, "logs")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("fleet: %w", err)
		}
	}
	cl, err := startCloud(ctx, cfg, r.log)
	if err != nil {
		return err
	}
	r.cloud = cl
	conn, err := cl.ingestArgs()
	if err != nil {
		return err
	}
	for i := range cfg.Ingests {
		in, err := startIngest(ctx, cfg, conn, r.lake, i)
		if err != nil {
			return err
		}
		r.ingests = append(r.ingests, in)
	}
	for _, in := range r.ingests {
		if err := in.ready(ctx, cl.readyMark()); err != nil {
			return err
		}
	}
	if url := cl.sampleURL(); url != "" {
		if r.sample, err = newSampler(ctx, url, cfg.Cars); err != nil {
			return err
		}
	}
	for i := range cfg.Cars {
		s, err := cl.carSettings(i, &cfg.Cars[i])
		if err != nil {
			return err
		}
		c, err := dialCar(ctx, s, &cfg.Cars[i], cl.redial(i), cfg.Campaign)
		if err != nil {
			return err
		}
		r.cars = append(r.cars, c)
	}
	return nil
}

// drive runs the cars' drives, measures the window, drains the path
// and stops the ingests so that they commit, then reads the lake.
func (r *run) drive(ctx context.Context) (*Result, error) {
	cfg := r.cfg
	// The drives were made for a start that may have passed while the
	// broker and the ingests started: they start now, and every time
	// in their windows is that much early (offset), which the
	// latencies take into account.
	start := time.Unix(0, cfg.Cars[0].Start)
	if now := time.Now().Add(100 * time.Millisecond); now.After(start) {
		start = now
	}
	r.offset = start.UnixNano() - cfg.Cars[0].Start
	if r.sample != nil {
		r.sample.offset = r.offset
	}
	var wg sync.WaitGroup
	errs := make(chan error, len(r.cars))
	for _, c := range r.cars {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := c.drive(ctx, start); err != nil {
				errs <- err
			}
		}()
	}
	res := &Result{Cars: len(cfg.Cars), Ingests: cfg.Ingests}
	if cfg.Engine == EngineNATS {
		res.Engine = EngineNATS
	}
	err := r.measure(ctx, start, res)
	wg.Wait()
	close(errs)
	if err != nil {
		return nil, err
	}
	if err := <-errs; err != nil {
		return nil, err
	}
	for _, c := range r.cars {
		res.PublishLate = max(res.PublishLate, c.late)
	}
	err = r.drain(ctx, res)
	for _, c := range r.cars {
		res.Resent += c.resent
	}
	if err != nil {
		return nil, err
	}
	if res.Campaign != nil {
		res.Campaign.takers(r.cars, r.pushAt)
	}
	return res, r.count(res)
}

// measure waits for the window's start, reads every process's CPU and
// the ingests' counters, and again at its end.
func (r *run) measure(ctx context.Context, start time.Time, res *Result) error {
	var m procstat.Meter
	for _, in := range r.ingests {
		m.Add(in.p.Name, in.p.PID())
	}
	for name, pid := range r.cloud.processes() {
		m.Add(name, pid)
	}
	m.Add("cars", os.Getpid())
	edges := []time.Duration{0, r.cfg.Duration}
	if r.cfg.Campaign != nil {
		edges = []time.Duration{0, r.cfg.Campaign.At, r.cfg.Duration}
	}
	open := start.Add(r.cfg.Warmup)
	if err := sleepUntil(ctx, open); err != nil {
		return err
	}
	v, err := r.sum(ctx, metricValues)
	if err != nil {
		return err
	}
	if err := m.Start(time.Now()); err != nil {
		return err
	}
	if r.sample != nil {
		r.sample.reset()
	}
	phases, err := r.phases(ctx, start, open, edges, &m, &v, res)
	if err != nil {
		return err
	}
	res.Measured = r.cfg.Duration
	nodes := map[string]time.Duration{}
	for _, p := range phases {
		res.WindowValues += p.WindowValues
		res.IngestCPU += p.IngestCPU
		res.BrokerCPU += p.BrokerCPU
		res.CarsCPU += p.CarsCPU
		for _, n := range p.nodes {
			nodes[n.Name] += n.CPU
		}
	}
	for name, cpu := range nodes {
		res.Nodes = append(res.Nodes, NodeUsage{Name: name, CPU: cpu})
	}
	slices.SortFunc(res.Nodes, func(a, b NodeUsage) int { return strings.Compare(a.Name, b.Name) })
	if r.sample != nil {
		res.DeliveryP50, res.DeliveryP99 = r.sample.quantiles()
	}
	if r.camp != nil {
		res.Campaign = &CampaignResult{Version: r.camp.Version, Vehicles: r.camp.Vehicles, At: r.cfg.Campaign.At,
			Pushed: r.pushed, Before: phases[0], After: phases[1]}
	}
	return nil
}

// phases measures the window's parts between edges, pushing the
// campaign at the second part's start, while duringWindow does its work
// (a node's kill) over the whole window.
func (r *run) phases(ctx context.Context, start, open time.Time, edges []time.Duration, m *procstat.Meter, v *float64, res *Result) ([]Phase, error) {
	finish := r.duringWindow(ctx, open, res)
	var phases []Phase
	for i := 1; i < len(edges); i++ {
		var err error
		if i == 2 {
			r.pushAt = time.Since(start)
			r.pushed, err = r.push(ctx)
		}
		if err == nil {
			err = sleepUntil(ctx, open.Add(edges[i]))
		}
		if err != nil {
			_ = finish()
			return nil, err
		}
		if i+1 == len(edges) {
			if err := finish(); err != nil {
				return nil, err
			}
		}
		p, err := r.phaseEnd(ctx, m, v, edges[i]-edges[i-1])
		if err != nil {
			return nil, err
		}
		phases = append(phases, p)
		if i+1 < len(edges) {
			if err := m.Start(time.Now()); err != nil {
				return nil, err
			}
		}
	}
	return phases, nil
}

// phaseEnd ends a part of the measured window of length d: the
// processes' CPU, the values the ingests took since *v (which it moves
// on), the delivery latency.
func (r *run) phaseEnd(ctx context.Context, m *procstat.Meter, v *float64, d time.Duration) (Phase, error) {
	us, err := m.Stop(time.Now())
	if err != nil {
		return Phase{}, err
	}
	v1, err := r.sum(ctx, metricValues)
	if err != nil {
		return Phase{}, err
	}
	p := Phase{Measured: d, WindowValues: v1 - *v}
	*v = v1
	for _, u := range us {
		switch _, cloud := r.cloud.processes()[u.Name]; {
		case cloud:
			p.BrokerCPU += u.CPU
			if r.cfg.Engine == EngineNATS {
				p.nodes = append(p.nodes, NodeUsage{Name: u.Name, CPU: u.CPU})
			}
		case u.Name == "cars":
			p.CarsCPU = u.CPU
		default:
			p.IngestCPU += u.CPU
		}
	}
	if r.sample != nil {
		p.DeliveryP50, p.DeliveryP99 = r.sample.split()
	}
	return p, nil
}

// sum sums a counter of every ingest.
func (r *run) sum(ctx context.Context, metric string) (float64, error) {
	var sum float64
	for _, in := range r.ingests {
		v, err := in.metric(ctx, metric)
		if err != nil {
			return 0, err
		}
		sum += v
	}
	return sum, nil
}

// drain waits until every car's publishes are acknowledged and the
// ingests have taken every window, then stops the ingests (SIGTERM:
// each commits what it holds).
func (r *run) drain(ctx context.Context, res *Result) error {
	for _, c := range r.cars {
		res.PublishedWindows += len(c.c.Windows)
		res.PublishedValues += c.c.Values()
	}
	deadline := time.Now().Add(60 * time.Second)
	for _, c := range r.cars {
		for c.waiting() > 0 {
			if err := c.resendIfGone(ctx); err != nil {
				return err
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("fleet: car %s: %d publishes unacknowledged after the drive", c.c.ID, c.waiting())
			}
			if err := sleepUntil(ctx, time.Now().Add(10*time.Millisecond)); err != nil {
				return err
			}
		}
	}
	if err := r.waitTaken(ctx, res, deadline); err != nil {
		return err
	}
	var errs []error
	for _, in := range r.ingests {
		if err := in.p.Stop(30 * time.Second); err != nil {
			errs = append(errs, fmt.Errorf("fleet: %s: %w (%s)", in.p.Name, err, child.Tail(in.p.Log, 3)))
		}
	}
	if n, ok := r.cloud.(*natsCloud); ok {
		try, cancel := context.WithTimeout(ctx, 10*time.Second)
		l, err := n.lag(try)
		cancel()
		if err != nil {
			errs = append(errs, err)
		}
		res.StreamLeft = l.held
	}
	return errors.Join(errs...)
}

// waitTaken waits until the ingests have taken every window published,
// or their count stands still for 2 s (a window lost on the way), or
// deadline. On NATS the stream says what is still to come: while it
// holds windows not yet delivered to an ingest, or delivered and not
// acknowledged (a delivery lost with an ingest's connection to a node
// that died comes again after the ack wait), a count standing still is
// a slow ingest, and the wait goes on, up to three minutes.
func (r *run) waitTaken(ctx context.Context, res *Result, deadline time.Time) error {
	n, nats := r.cloud.(*natsCloud)
	if nats {
		deadline = time.Now().Add(3 * time.Minute)
	}
	var last float64
	for stable := 0; stable < 20 && time.Now().Before(deadline); {
		v, err := r.sum(ctx, metricWindows)
		if err != nil {
			return err
		}
		if v >= float64(res.PublishedWindows) && (!nats || n.settled(ctx)) {
			return nil // on NATS, windows taken twice count too: the stream says when all are in
		}
		if v == last {
			stable++
		} else {
			stable, last = 0, v
		}
		if nats && stable > 0 {
			try, cancel := context.WithTimeout(ctx, 5*time.Second)
			l, err := n.lag(try)
			cancel()
			if err != nil || l.pending > 0 || l.unacked > 0 {
				stable = 0
			}
		}
		if err := sleepUntil(ctx, time.Now().Add(100*time.Millisecond)); err != nil {
			return err
		}
	}
	return nil
}

// settled reports whether the stream holds no window that is still to
// be delivered or acknowledged.
func (n *natsCloud) settled(ctx context.Context) bool {
	try, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	l, err := n.lag(try)
	return err == nil && l.pending == 0 && l.unacked == 0
}

// sleepUntil sleeps until t or ctx ends.
func sleepUntil(ctx context.Context, t time.Time) error {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err()
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// count reads the lake's commit record: the windows committed, once or
// more, against those published, and when each commit was made.
func (r *run) count(res *Result) error {
	ms, err := readManifests(r.lake)
	if err != nil {
		return err
	}
	type key struct {
		vehicle string
		epoch   uint64
	}
	cars := map[key]*Car{}
	for i := range r.cfg.Cars {
		c := &r.cfg.Cars[i]
		cars[key{c.ID, c.Epoch}] = c
	}
	seen := map[key][]uint8{}
	var lat latency.Histogram
	var vs *versions
	if res.Campaign != nil {
		vs = newVersions(r.cfg, r.cars, r.pushAt)
	}
	for _, m := range ms {
		for _, w := range m.Windows {
			k := key{w.Vehicle, w.Epoch}
			c := cars[k]
			if c == nil {
				return fmt.Errorf("fleet: %s names vehicle %q epoch %d, which no car is", m.path, w.Vehicle, w.Epoch)
			}
			if seen[k] == nil {
				seen[k] = make([]uint8, len(c.Windows)+1)
			}
			for _, rg := range w.Seqs {
				if rg[0] < 1 || rg[1] < rg[0] || rg[1] > uint64(len(c.Windows)) {
					return fmt.Errorf("fleet: %s: vehicle %s: seqs %d-%d, the car sent 1-%d", m.path, w.Vehicle, rg[0], rg[1], len(c.Windows))
				}
				for s := rg[0]; s <= rg[1]; s++ {
					if seen[k][s]++; seen[k][s] > 1 {
						res.Duplicates++
						continue
					}
					cw := &c.Windows[s-1]
					res.CommittedWindows++
					res.CommittedValues += cw.Values
					vs.add(c, cw)
					lat.Record(m.time - (c.Start + int64(cw.At) + r.offset))
				}
			}
		}
	}
	res.Lost = res.PublishedWindows - res.CommittedWindows
	res.CommitP50, res.CommitP99 = lat.Quantile(0.5), lat.Quantile(0.99)
	if vs != nil {
		res.Campaign.Versions = vs.figures()
	}
	return nil
}
