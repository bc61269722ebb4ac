package benchmarks

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/yukart/candec/internal/base/child"
	"github.com/yukart/candec/internal/base/numfmt"
	"github.com/yukart/candec/internal/cmdkit/brokerflags"
	"github.com/yukart/candec/mqttclient"

	"github.com/yukart/candec/benchmarks/procstat"
	"github.com/yukart/candec/benchmarks/report"
	"github.com/yukart/candec/benchmarks/scenario"
	"github.com/yukart/candec/benchmarks/stack"
	"github.com/yukart/candec/capture"
	"github.com/yukart/candec/envelope"
	"github.com/yukart/candec/internal/cmdkit/progress"
	"github.com/yukart/candec/internal/fleet/mqtt311"
	"github.com/yukart/candec/internal/lab/jitter"
	"github.com/yukart/candec/internal/lab/latency"
	"github.com/yukart/candec/internal/lab/mosquitto"
)

// run is one scenario being run.
type run struct {
	cfg   Config
	sc    scenario.Run
	label string
	dir   string

	url           string
	conn          mqttclient.Settings // reaches url
	brokerPID     int
	brokerVersion string
	broker        *stack.Mosquitto
	decoder       *stack.Process
	replay        *stack.Process
	metricsAddr   string

	raws    []*rawMeter
	envs    []*envMeter
	clients []*client

	warnings         []string
	rawHist, envHist *latency.Histogram
	// cyclic is how many topics are cyclic (signalSet's period); jitHist
	// their jitter over the envelope subscribers.
	cyclic  int
	jitHist *jitter.Histogram
}

func (r *run) warn(format string, args ...any) {
	r.warnings = append(r.warnings, fmt.Sprintf(format, args...))
}

func (r *run) progress(s progress.State) {
	if r.cfg.Progress != nil {
		s.Label = r.label
		r.cfg.Progress.Update(time.Now(), s)
	}
}

// runOne runs one scenario from start to end and returns its result.
func runOne(ctx context.Context, cfg Config, sc scenario.Run, label, dir string) (*report.Result, error) {
	r := &run{cfg: cfg, sc: sc, label: label, dir: dir}
	defer r.teardown()
	if cfg.IdleWait > 0 {
		r.progress(progress.State{Phase: "waiting for a quiet machine"})
		if busy, err := waitIdle(ctx, cfg.BusyLimit, cfg.IdleWait); err != nil {
			return nil, err
		} else if busy > cfg.BusyLimit {
			r.warn("the machine was busy before the run (%.0f %% of a core for %v)", busy, cfg.IdleWait)
		}
	}
	r.progress(progress.State{Phase: "starting"})
	if err := r.start(ctx); err != nil {
		return nil, err
	}
	// The readiness gate: every subscriber has proven its subscription
	// works by receiving a valid message.
	r.progress(progress.State{Phase: "waiting for every subscriber"})
	if err := r.gate(ctx); err != nil {
		return nil, err
	}
	if err := r.wait(ctx, time.Now(), sc.Warmup, "warm-up", nil); err != nil {
		return nil, err
	}
	m, err := r.measure(ctx)
	if err != nil {
		return nil, err
	}

	// Stop the load, wait for the topics to go quiet, stop the decoder.
	r.progress(progress.State{Phase: "drain"})
	final, err := r.stopReplay()
	if err != nil {
		r.warn("replay: %v", err)
	}
	tStop := time.Now()
	drain := r.drain(ctx, tStop)
	if err := r.decoder.Stop(0); err != nil {
		r.warn("decoder did not stop cleanly: %v", err)
	}
	r.settle(ctx)
	retained, err := r.retained(ctx)
	if err != nil {
		r.warn("retained envelopes not read: %v", err)
	}

	res := r.result(m.t0, m.t1, m.usage, m.raw, m.env, final, retained, drain, m.dec)
	res.CPU.Machine, res.CPU.Other = round(m.busy, 2), round(m.other, 2)
	if m.other > r.cfg.BusyLimit {
		r.warn("other processes used %.0f %% of a core during the window: the figures are not a baseline", m.other)
		res.Warnings = r.warnings
	}
	r.printHistograms(res)
	return res, nil
}

// start checks the scenario's files, then starts the stack: the broker,
// the decoder, the subscribers and the replay.
func (r *run) start(ctx context.Context) error {
	set, err := signalTopics(r.sc)
	if err != nil {
		return err
	}
	if err := checkCapture(r.sc.Capture); err != nil {
		return err
	}
	if err := r.startBroker(ctx); err != nil {
		return err
	}
	if err := r.startDecoder(ctx); err != nil {
		return err
	}
	r.cyclic = len(set.period)
	if err := r.startSubscribers(ctx, set); err != nil {
		return err
	}
	return r.startReplay()
}

// measurement is what the measured window saw: its bounds, each
// process's CPU and the machine's, each subscriber's counts and the
// decoder's metrics (nil when they could not be read).
type measurement struct {
	t0, t1      time.Time
	usage       []procstat.Usage
	busy, other float64
	raw, env    []counts
	dec         *report.DecoderStats
}

// measure runs the measured window: it meters the processes' CPU and
// the subscribers' counts, and the decoder's metrics before and after.
func (r *run) measure(ctx context.Context) (measurement, error) {
	var m measurement
	var meter procstat.Meter
	meter.Add("decoder", r.decoder.PID())
	meter.Add("replay", r.replay.PID())
	meter.Add("subscribers", os.Getpid())
	if r.brokerPID > 0 {
		meter.Add("broker", r.brokerPID)
	}
	before, scrapeErr := scrape(ctx, r.metricsAddr)
	m.t0 = time.Now()
	if err := meter.Start(m.t0); err != nil {
		return m, err
	}
	for _, s := range r.raws {
		s.open()
	}
	for _, s := range r.envs {
		s.open()
	}
	if err := r.wait(ctx, m.t0, r.sc.Duration, "window", r.liveRates); err != nil {
		return m, err
	}
	m.t1 = time.Now()
	usage, err := meter.Stop(m.t1)
	if err != nil {
		return m, fmt.Errorf("bench: a process exited during the window: %w", err)
	}
	m.usage = usage
	m.busy, m.other = meter.Machine()
	m.raw = make([]counts, len(r.raws))
	for i, s := range r.raws {
		m.raw[i] = s.close()
	}
	m.env = make([]counts, len(r.envs))
	for i, s := range r.envs {
		m.env[i] = s.close()
	}
	if after, err := scrape(ctx, r.metricsAddr); err == nil && scrapeErr == nil {
		m.dec = decoderStats(before, after)
	} else {
		r.warn("decoder metrics not read: %v", firstErr(scrapeErr, err))
	}
	return m, nil
}

// checkCapture opens the capture the replay will play and reads its
// head, so that a capture that is missing or of no known format is said
// before anything starts, as a bad DBC or policy is, rather than by a
// replay that exits once the stack is up.
func checkCapture(path string) error {
	c, err := capture.Open(path, capture.Options{})
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	return c.Close()
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// id returns the client id of one of the run's clients: "candec-bench-"
// and its role.
func (r *run) id(role string) string { return r.conn.ClientID + "-" + role }

func (r *run) startBroker(ctx context.Context) error {
	if r.cfg.Broker.Broker != "" {
		r.conn = r.cfg.Broker
		r.url, r.brokerPID, r.brokerVersion = r.conn.Broker, r.cfg.BrokerPID, "external broker"
		return nil
	}
	m, err := stack.StartMosquitto(ctx, r.dir)
	if err != nil {
		return err
	}
	r.broker, r.url, r.brokerPID, r.brokerVersion = m, m.URL, m.PID(), m.Version
	r.conn = mqttclient.Settings{Broker: m.URL, ClientID: r.cfg.Broker.ClientID}
	return nil
}

func (r *run) startDecoder(ctx context.Context) error {
	port, err := mosquitto.FreePort()
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	r.metricsAddr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	// The status client sees the decoder's retained "online".
	online := make(chan struct{})
	var once sync.Once
	st, err := connect(ctx, r.conn, r.id("status"), func(_, p []byte, _ int64) {
		if string(p) == "online" {
			once.Do(func() { close(online) })
		}
	})
	if err != nil {
		return err
	}
	r.clients = append(r.clients, st)
	if err := st.subscribe(ctx, StatusTopic); err != nil {
		return err
	}
	args := append([]string{"run"}, brokerflags.Args(r.conn)...)
	args = append(args,
		"--client-id", r.id("decoder"),
		"--dbc", r.sc.DBC.File,
		"--metrics-addr", r.metricsAddr,
		"--log-level", "warn",
	)
	if r.sc.Policy.File != "" {
		args = append(args, "--policy", r.sc.Policy.File)
	}
	if r.sc.Stream == scenario.StreamWindow {
		args = append(args, "--window-topic", WindowTopic)
	}
	p, err := stack.StartProcess("decoder", stack.Options{Dir: r.dir, Env: cleanEnv(r.conn)}, r.cfg.Exe, args...)
	if err != nil {
		return err
	}
	r.decoder = p
	select {
	case <-online:
		return nil
	case <-p.Exited():
		return p.Running()
	case <-time.After(r.cfg.ReadyTimeout):
		return fmt.Errorf("%w: the decoder published no \"online\" on %s within %v\n%s", ErrNotReady, StatusTopic, r.cfg.ReadyTimeout, child.Tail(p.Log, 15))
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (r *run) startSubscribers(ctx context.Context, set signalSet) error {
	for i := range r.sc.RawSubscribers {
		m := newRawMeter()
		if err := r.subscriber(ctx, fmt.Sprintf("raw-%d", i+1), RawTopic, func(_, p []byte, now int64) { m.observe(p, now) }); err != nil {
			return err
		}
		r.raws = append(r.raws, m)
	}
	onWindow := r.sc.Stream == scenario.StreamWindow
	filter := SignalFilter
	if onWindow {
		filter = WindowTopic
	}
	for i := range r.sc.EnvelopeSubscribers {
		m := newEnvMeter(onWindow, set)
		if err := r.subscriber(ctx, fmt.Sprintf("env-%d", i+1), filter, m.observe); err != nil {
			return err
		}
		r.envs = append(r.envs, m)
	}
	return nil
}

// subscriber connects the bench's client name, subscribes it to filter
// and hands what it receives to on; the run closes it.
func (r *run) subscriber(ctx context.Context, name, filter string, on mqtt311.Handler) error {
	c, err := connect(ctx, r.conn, r.id(name), on)
	if err != nil {
		return err
	}
	r.clients = append(r.clients, c)
	return c.subscribe(ctx, filter)
}

func (r *run) startReplay() error {
	args := append([]string{"replay"}, brokerflags.Args(r.conn)...)
	args = append(args,
		"--topic", RawTopic,
		"--client-id", r.id("replay"),
		"--loop",
		"--json",
	)
	switch {
	case r.sc.Load.Flood:
		args = append(args, "--flood")
	default:
		args = append(args, "--speed", strconv.FormatFloat(r.sc.Load.Speed, 'g', -1, 64))
	}
	if r.sc.Load.PerFrame {
		args = append(args, "--per-frame")
	}
	args = append(args, r.sc.Capture)
	out, err := os.Create(filepath.Join(r.dir, "replay.json"))
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	defer out.Close() // the child has its own descriptor
	p, err := stack.StartProcess("replay", stack.Options{Dir: r.dir, Stdout: out, Env: cleanEnv(r.conn)}, r.cfg.Exe, args...)
	if err != nil {
		return err
	}
	r.replay = p
	return nil
}

// gate waits until every subscriber has received a valid message.
func (r *run) gate(ctx context.Context) error {
	deadline := time.After(r.cfg.ReadyTimeout)
	wait := func(name string, ready <-chan struct{}) error {
		select {
		case <-ready:
			return nil
		case <-deadline:
			return fmt.Errorf("%w: %s received no valid message within %v", ErrNotReady, name, r.cfg.ReadyTimeout)
		case <-r.decoder.Exited():
			return r.decoder.Running()
		case <-r.replay.Exited():
			return r.replay.Running()
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	for i, m := range r.raws {
		if err := wait(fmt.Sprintf("raw subscriber %d", i+1), m.ready); err != nil {
			return err
		}
	}
	for i, m := range r.envs {
		if err := wait(fmt.Sprintf("envelope subscriber %d", i+1), m.ready); err != nil {
			return err
		}
	}
	return nil
}

// alive returns an error when a process the run needs has exited.
func (r *run) alive() error {
	for _, p := range []*stack.Process{r.decoder, r.replay} {
		if err := p.Running(); err != nil {
			return err
		}
	}
	if r.broker != nil {
		return r.broker.Running()
	}
	return nil
}

// wait waits until d after start, showing the phase (and detail's text
// of the time elapsed, when not nil), and fails when a process exits.
func (r *run) wait(ctx context.Context, start time.Time, d time.Duration, phase string, detail func(time.Duration) string) error {
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		el := time.Since(start)
		if el >= d {
			return nil
		}
		st := progress.State{Phase: phase, Done: el, Total: d}
		if detail != nil {
			st.Detail = detail(el)
		}
		r.progress(st)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		case <-time.After(d - el):
		}
		if err := r.alive(); err != nil {
			return err
		}
	}
}

// liveRates formats the window's rates so far.
func (r *run) liveRates(el time.Duration) string {
	if el < time.Second {
		return ""
	}
	var raw, env uint64
	if len(r.raws) > 0 {
		m := r.raws[0]
		m.mu.Lock()
		raw = m.window.Items
		m.mu.Unlock()
	}
	if len(r.envs) > 0 {
		m := r.envs[0]
		m.mu.Lock()
		env = m.window.Items
		m.mu.Unlock()
	}
	s := el.Seconds()
	return fmt.Sprintf("raw %s frames/s  envelopes %s/s", numfmt.Thousands(float64(raw)/s), numfmt.Thousands(float64(env)/s))
}

// replaySummary is what `candec replay --json` prints when it stops.
type replaySummary struct {
	Frames  uint64 `json:"frames"`
	Batches uint64 `json:"batches"`
	NextSeq uint64 `json:"next_seq"`
}

// stopReplay stops the replay and returns the seq after its last frame.
func (r *run) stopReplay() (uint64, error) {
	if err := r.replay.Stop(0); err != nil {
		return 0, err
	}
	b, err := os.ReadFile(filepath.Join(r.dir, "replay.json"))
	if err != nil {
		return 0, err
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	var s replaySummary
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &s); err != nil {
		return 0, fmt.Errorf("no summary line from the replay: %w", err)
	}
	return s.NextSeq, nil
}

// lastData returns the latest data arrival over every subscriber.
func (r *run) lastData() int64 {
	var last int64
	for _, m := range r.raws {
		last = max(last, m.lastDataAt())
	}
	for _, m := range r.envs {
		last = max(last, m.lastDataAt())
	}
	return last
}

// drain waits until no data has arrived for Quiet and returns how long
// data kept arriving after stop.
func (r *run) drain(ctx context.Context, stop time.Time) time.Duration {
	for {
		now := time.Now()
		last := time.Unix(0, r.lastData())
		if last.Before(stop) {
			last = stop
		}
		if now.Sub(last) >= r.cfg.Quiet {
			return last.Sub(stop)
		}
		if now.Sub(stop) > r.cfg.MaxDrain {
			r.warn("still draining %v after the load stopped", r.cfg.MaxDrain)
			return now.Sub(stop)
		}
		select {
		case <-ctx.Done():
			return now.Sub(stop)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// settle waits for the decoder's last envelopes (its shutdown flush) to
// arrive: until no message of any kind arrived for a short while.
func (r *run) settle(ctx context.Context) {
	const quiet = 300 * time.Millisecond
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		var last int64
		for _, m := range r.envs {
			m.mu.Lock()
			last = max(last, m.lastAny)
			m.mu.Unlock()
		}
		if time.Since(time.Unix(0, last)) >= quiet {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// retained reads the last envelope the broker retained on each signal
// topic: the final seq of each, against which tail loss is counted.
func (r *run) retained(ctx context.Context) (map[string]finalSeq, error) {
	var (
		mu   sync.Mutex
		out  = map[string]finalSeq{}
		last = time.Now()
	)
	c, err := connect(ctx, r.conn, r.id("check"), func(topic, p []byte, _ int64) {
		var e envelope.Envelope
		if envelope.Parse(p, &e) != nil {
			return
		}
		mu.Lock()
		out[string(topic)] = finalSeq{Epoch: e.Epoch, Seq: e.Seq}
		last = time.Now()
		mu.Unlock()
	})
	if err != nil {
		return nil, err
	}
	defer c.close()
	if err := c.subscribe(ctx, SignalFilter); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		mu.Lock()
		quiet := time.Since(last) > 300*time.Millisecond
		mu.Unlock()
		if quiet {
			break
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	mu.Lock()
	defer mu.Unlock()
	return out, nil
}

// teardown stops whatever is still running: subscribers, replay,
// decoder, broker.
func (r *run) teardown() {
	for _, c := range r.clients {
		c.close()
	}
	for _, p := range []*stack.Process{r.replay, r.decoder} {
		if p != nil {
			_ = p.Stop(0)
		}
	}
	if r.broker != nil {
		_ = r.broker.Stop(0)
	}
}

// waitIdle waits until the machine used less than limit % of one core
// over a second, or for at most wait, and returns the last second's
// figure.
func waitIdle(ctx context.Context, limit float64, wait time.Duration) (float64, error) {
	deadline := time.Now().Add(wait)
	hz := float64(procstat.ClockTicks())
	for {
		a, err := procstat.ReadSystem()
		if err != nil {
			return 0, nil // no /proc/stat: nothing to wait for
		}
		start := time.Now()
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(time.Second):
		}
		b, err := procstat.ReadSystem()
		if err != nil {
			return 0, nil
		}
		busy := float64(b.Busy-min(a.Busy, b.Busy)) / hz / time.Since(start).Seconds() * 100
		if busy < limit || time.Now().After(deadline) {
			return busy, nil
		}
	}
}

// result computes the run's result line.
func (r *run) result(t0, t1 time.Time, usage []procstat.Usage, rawCounts, envCounts []counts,
	final uint64, retained map[string]finalSeq, drain time.Duration, dec *report.DecoderStats) *report.Result {
	sc := r.sc
	secs := t1.Sub(t0).Seconds()
	res := &report.Result{
		Scenario: sc.Scenario, Profile: sc.Profile, Time: t0.UTC().Truncate(time.Millisecond), Host: r.cfg.Host,
		Load: sc.Load.Label, Speed: sc.Load.Speed, Flood: sc.Load.Flood, PerFrame: sc.Load.PerFrame,
		DBC: filepath.Base(sc.DBC.File), Signals: sc.DBC.Label,
		Policy: "default", Cap: sc.Policy.Label, Stream: sc.Stream,
		DurationS: round(secs, 3), WarmupS: sc.Warmup.Seconds(),
		RawSubscribers: len(r.raws), EnvelopeSubscribers: len(r.envs),
		DrainS:   round(drain.Seconds(), 3),
		Decoder:  dec,
		Versions: r.cfg.Versions,
		Warnings: r.warnings,
	}
	if sc.Policy.File != "" {
		res.Policy = filepath.Base(sc.Policy.File)
	}
	res.Versions.Broker = r.brokerVersion
	if sc.Load.Flood {
		res.Speed = 0
	}

	raw := r.rawStream(res, rawCounts, final, secs)
	env := r.envelopeStream(res, envCounts, retained, dec, secs)
	// The decoder takes the raw stream too: one more raw subscriber.
	var decMsgs, decBytes uint64
	if n := len(r.raws); n > 0 {
		decMsgs, decBytes = raw.msgs/uint64(n), raw.bytes/uint64(n)
	}
	res.Bytes.Delivered = round(float64(raw.bytes+decBytes+env.bytes)/secs, 0)
	r.cpu(res, usage, raw.msgs+decMsgs+env.msgs, decMsgs, dec)
	r.resultWarnings(res, raw, env, dec)
	res.Warnings = r.warnings
	if res.Warnings == nil {
		res.Warnings = []string{}
	}
	r.rawHist, r.envHist = raw.hist, env.hist
	return res
}

// streamSums are a stream's totals over its subscribers.
type streamSums struct {
	msgs, bytes, lost uint64
	// windowLost counts the window stream's lost messages.
	windowLost uint64
	hist       *latency.Histogram
}

// rawStream fills res's figures of the raw stream: frames offered and
// delivered, bytes, loss and latency.
func (r *run) rawStream(res *report.Result, rawCounts []counts, final uint64, secs float64) streamSums {
	var sent, rawItems, rawExpected uint64
	s := streamSums{hist: new(latency.Histogram)}
	for i, m := range r.raws {
		sent = max(sent, m.sent())
		rawItems += rawCounts[i].Items
		s.msgs += rawCounts[i].Messages
		s.bytes += rawCounts[i].Bytes
		s.lost += m.lost(final)
		rawExpected += m.expected(final)
		s.hist.Merge(m.histogram())
		if n := m.invalidCount(); n > 0 {
			r.warn("raw subscriber %d: %d messages that are not raw batches", i+1, n)
		}
	}
	res.FramesOffered = round(float64(sent)/secs, 1)
	if n := len(r.raws); n > 0 {
		res.FramesDelivered = round(float64(rawItems)/float64(n)/secs, 1)
		res.Bytes.Raw = round(float64(s.bytes)/float64(n)/secs, 0)
	}
	res.RawLost = s.lost
	if rawExpected > 0 {
		res.RawLossPct = round(float64(s.lost)/float64(rawExpected)*100, 4)
	}
	res.Latency.Raw = s.hist.Summary()
	return s
}

// envelopeStream fills res's figures of the envelopes: rates offered,
// published and delivered, bytes, loss (against the topics the broker
// retained) and latency.
func (r *run) envelopeStream(res *report.Result, envCounts []counts, retained map[string]finalSeq, dec *report.DecoderStats, secs float64) streamSums {
	var envItems, envReceived uint64
	s := streamSums{hist: new(latency.Histogram)}
	r.jitHist = new(jitter.Histogram)
	for i, m := range r.envs {
		envItems += envCounts[i].Items
		s.msgs += envCounts[i].Messages
		s.bytes += envCounts[i].Bytes
		lost, wl, unseen := m.lost(retained)
		s.lost += lost
		s.windowLost += wl
		envReceived += m.received()
		s.hist.Merge(m.histogram())
		r.jitHist.Merge(m.jitter())
		if len(unseen) > 0 {
			r.warn("envelope subscriber %d never received %d topics the broker retained (%s…)", i+1, len(unseen), unseen[0])
		}
		if n := m.invalidCount(); n > 0 {
			r.warn("envelope subscriber %d: %d messages that did not parse", i+1, n)
		}
	}
	if n := len(r.envs); n > 0 {
		res.Envelopes = round(float64(envItems)/float64(n)/secs, 1)
		res.Bytes.Envelopes = round(float64(s.bytes)/float64(n)/secs, 0)
		if r.sc.Stream == scenario.StreamWindow {
			res.Windows = round(float64(s.msgs)/float64(n)/secs, 1)
		}
	}
	if dec != nil {
		// What the decoder published is exact; what a subscriber
		// received is short of it by the loss.
		res.Envelopes = round(float64(dec.Published)/secs, 1)
		res.EnvelopesOffered = round(float64(dec.Published+dec.Coalesced)/secs, 1)
	}
	res.Deliveries = round(float64(s.msgs)/secs, 1)
	res.EnvelopesLost = s.lost
	if envReceived+s.lost > 0 {
		res.EnvelopeLossPct = round(float64(s.lost)/float64(envReceived+s.lost)*100, 4)
	}
	res.Latency.Envelopes = s.hist.Summary()
	if r.cyclic > 0 && len(r.envs) > 0 {
		j := r.jitHist.Summary()
		j.Topics = r.cyclic
		res.Jitter = &j
	}
	return s
}

// cpu fills res's CPU shares and the broker's cost per delivery (of
// deliveries) and per message, decMsgs being the raw batches the
// decoder took.
func (r *run) cpu(res *report.Result, usage []procstat.Usage, deliveries, decMsgs uint64, dec *report.DecoderStats) {
	var brokerCPU time.Duration
	for _, u := range usage {
		p := round(u.Percent, 2)
		switch u.Name {
		case "broker":
			res.CPU.Broker, brokerCPU = p, u.CPU
		case "decoder":
			res.CPU.Decoder = p
		case "replay":
			res.CPU.Replay = p
		case "subscribers":
			res.CPU.Subscribers = p
			if n := len(r.raws) + len(r.envs); n > 0 {
				res.CPU.Each = round(u.Percent/float64(n), 2)
			}
		}
	}
	if deliveries > 0 && brokerCPU > 0 {
		res.BrokerUsPerDelivery = round(brokerCPU.Seconds()*1e6/float64(deliveries), 2)
	}
	if dec != nil && brokerCPU > 0 {
		// In: the replay's batches (as many as one raw subscriber got)
		// and everything the decoder published.
		in := decMsgs + dec.Published + dec.Windows
		res.BrokerUsPerMessage = round(brokerCPU.Seconds()*1e6/float64(in+deliveries), 2)
	}
}

// resultWarnings warns of what makes the run's figures doubtful: loss,
// short samples, negative latencies, lost connections, coalescing.
func (r *run) resultWarnings(res *report.Result, raw, env streamSums, dec *report.DecoderStats) {
	if raw.lost > 0 {
		r.warn("raw loss: %d frames (%.4f %%)", raw.lost, res.RawLossPct)
	}
	if env.lost > 0 {
		r.warn("envelope loss: %d (%.4f %%)", env.lost, res.EnvelopeLossPct)
	}
	if env.windowLost > 0 {
		r.warn("window-stream loss: %d messages", env.windowLost)
	}
	if len(r.raws) > 0 && res.Latency.Raw.N < MinLatencySamples {
		r.warn("short sample: %d raw latency samples", res.Latency.Raw.N)
	}
	if len(r.envs) > 0 && res.Latency.Envelopes.N < MinLatencySamples {
		r.warn("short sample: %d envelope latency samples", res.Latency.Envelopes.N)
	}
	if neg := raw.hist.Negative() + env.hist.Negative(); neg > 0 {
		r.warn("%d latency samples were negative (a clock step?)", neg)
	}
	for _, c := range r.clients {
		if err := c.lost(); err != nil {
			r.warn("%s lost its connection: %v", c.name, err)
		}
	}
	if dec != nil && dec.Coalesced > 0 {
		r.warn("the decoder coalesced %d envelopes a slow broker did not take", dec.Coalesced)
	}
	if dec != nil && dec.FramesLost > 0 {
		r.warn("the decoder lost %d raw frames", dec.FramesLost)
	}
	if w := predictionWarning(r.sc.PredictedDeliveries, res.Deliveries); w != "" {
		r.warn("%s", w)
	}
}

func round(v float64, digits int) float64 {
	p := 1.0
	for range digits {
		p *= 10
	}
	return float64(int64(v*p+0.5)) / p
}

// printHistograms writes the run's latency histograms and percentile
// tables for a person.
func (r *run) printHistograms(res *report.Result) {
	w := r.cfg.Log
	fmt.Fprintf(w, "\n%s: %s frames/s offered, %s envelopes/s, %s deliveries/s; broker %s, decoder %s; loss raw %d, envelopes %d; drain %.2f s\n",
		res.Scenario, numfmt.Thousands(res.FramesOffered), numfmt.Thousands(res.Envelopes), numfmt.Thousands(res.Deliveries),
		numfmt.Pct(res.CPU.Broker), numfmt.Pct(res.CPU.Decoder), res.RawLost, res.EnvelopesLost, res.DrainS)
	for _, s := range []struct {
		name string
		h    *latency.Histogram
	}{{"raw frames", r.rawHist}, {"envelopes", r.envHist}} {
		if s.h == nil || s.h.Count() == 0 {
			continue
		}
		fmt.Fprintf(w, "  latency of %s (from the frame timestamp):\n", s.name)
		_ = s.h.WriteHistogram(w, 10)
		_ = s.h.WriteDistribution(w)
	}
	if j := res.Jitter; j != nil && j.N > 0 {
		fmt.Fprintf(w, "  cyclic jitter, |arrival interval − period| of %d cyclic topics: p50 %.3f ms (%.1f %%), p99 %.3f ms (%.1f %%), max %.3f ms (%.1f %%); the path's part p50 %.3f, p99 %.3f, max %.3f ms\n",
			j.Topics, j.P50, j.P50Pct, j.P99, j.P99Pct, j.Max, j.MaxPct, j.PathP50, j.PathP99, j.PathMax)
		_ = r.jitHist.Deviations().WriteDistribution(w)
	}
	for _, warning := range res.Warnings {
		fmt.Fprintf(w, "  warning: %s\n", warning)
	}
}

// predictionWarning says how far deliveries/s got is from predicted,
// when more than scenario.PredictionTolerance; "" otherwise, or without
// a prediction.
func predictionWarning(predicted, got float64) string {
	if predicted <= 0 || math.Abs(got-predicted) <= scenario.PredictionTolerance*predicted {
		return ""
	}
	return fmt.Sprintf("%.0f deliveries/s, %+.1f %% from the %.0f candec tune predicted", got, (got-predicted)/predicted*100, predicted)
}
