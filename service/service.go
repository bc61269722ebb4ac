package service

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/eclipse/paho.golang/autopaho"
	"github.com/eclipse/paho.golang/paho"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"golang.org/x/sync/errgroup"

	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/envelope"
	"github.com/yukart/candec/frame"
	"github.com/yukart/candec/mqttclient"
	"github.com/yukart/candec/pipeline"
	"github.com/yukart/candec/rawbatch"
)

// Status payloads of the status topic.
const (
	StatusOnline  = "online"
	StatusOffline = "offline"
	// statusContentType is the MQTT v5 content type of status messages.
	statusContentType = "text/plain"
)

// Internal sizes and periods.
const (
	// inQueue is how many raw batches may wait for the engine: 2.5 s of
	// 10 ms batches. When it is full, batches are dropped and counted.
	inQueue = 256
	// tick is how often the engine's clock is moved on while frames are
	// quiet, and how often its counters reach the metrics.
	tick = 10 * time.Millisecond
	// opTimeout bounds a status publish and the subscription.
	opTimeout = 10 * time.Second
	// retryDelay is the pause after a failed publish before the next try.
	retryDelay = 100 * time.Millisecond
	// badBatchLogPeriod is the least time between two log lines about
	// invalid batches.
	badBatchLogPeriod = 10 * time.Second
	// connLogPeriod is the least time between two log lines of one kind
	// about the connection (connected, lost, taken over, attempt failed):
	// a broker that keeps dropping the service, or another client that
	// keeps taking its client id, costs a line every few seconds.
	connLogPeriod = 10 * time.Second
)

// retainHandlingNone is MQTT v5's retain handling 2 (3.8.3.1): the
// broker sends no retained message when the subscription is made.
const retainHandlingNone = 2

// Errors.
var (
	// errRetained counts a raw delivery that carries the retain flag
	// among the invalid batches (reason "retained").
	errRetained = errors.New("service: retained raw batch")
	// ErrRunning: Run was called a second time.
	ErrRunning = errors.New("service: Run called twice")
	// ErrGatherer: metrics_addr needs a Registerer that is also a
	// prometheus.Gatherer (such as a *prometheus.Registry).
	ErrGatherer = errors.New("service: metrics_addr set but the registerer is not a prometheus.Gatherer")
)

// Service is the decoder service. Build it with New and run it with Run.
type Service struct {
	cfg     Config
	log     *slog.Logger
	m       *metrics
	engine  *pipeline.Engine
	out     *outbox
	gather  prometheus.Gatherer
	mqttCfg mqttclient.Config
	qos     byte
	ctype   string // the envelopes' content type

	// Between the MQTT client's receiving goroutine and the engine
	// goroutine: batches travel in buffers that come back through free.
	in   chan rawMsg
	free chan []byte

	up        chan struct{} // a connection came up (room for one)
	connMu    sync.Mutex
	connCtx   context.Context    // ends when the current connection drops
	connEnd   context.CancelFunc // ends connCtx
	republish chan chan struct{} // the publisher asks the engine to republish; closed when done
	connected atomic.Bool
	upAt      atomic.Int64 // when the current connection came up, Unix ns
	// shortCloses counts the connections in a row that the broker
	// closed without a word soon after accepting them (onConnectionLost).
	shortCloses atomic.Int32
	stopBy      atomic.Int64 // when the final publishes must end, Unix ns (once ctx ended)
	// hardStopped: the shutdown ran out of time and ended the
	// connection under a write or a publish.
	hardStopped atomic.Bool
	running     atomic.Bool
	batch       mqttclient.Batcher                         // the envelopes of a batch leave in one write (QoS 0)
	cm          *autopaho.ConnectionManager                // set by Run before its goroutines start
	conn        atomic.Pointer[autopaho.ConnectionManager] // cm, for other goroutines (tests)

	// Owned by the engine goroutine.
	seq      seqStreams
	f        frame.Frame
	lastTS   int64     // the engine's newest frame time on its timebase
	lastWall time.Time // when the batch that brought it was handled
	started  bool      // a frame has been seen
	stats    pipeline.Stats
	badLog   rateLimit

	// The choice of a DBC by interface (NewBuses), nil with New; owned
	// by the engine goroutine too.
	buses *busCheck

	// The raw topic's publishers, as their seq streams tell them; owned
	// by the engine goroutine too.
	publishers                int
	restartLog, publishersLog rateLimit

	// Log limits of the MQTT client's callbacks, one per kind of line.
	upLog, downLog, takeoverLog, failLog, retainLog lockedLimit
	closedLog                                       lockedLimit
	setupLog                                        rateLimit // owned by the publisher goroutine

	// now is the wall clock; tests replace it.
	now func() time.Time

	reload reloader    // policy reloads (reload.go)
	camp   *campaigner // campaigns (campaign.go); nil while off
	health health      // what /healthz says (health.go)
	// notify speaks to systemd (notify.go).
	notify *notifier
}

// New builds the service: it validates cfg, loads the policy file,
// compiles every signal's policy and topic against db, checks the TLS
// files and registers the metrics on reg. Errors name the file, key or
// line at fault.
func New(cfg Config, db *dbc.Database, log *slog.Logger, reg prometheus.Registerer) (*Service, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	enc, _ := envelope.ParseEncoding(cfg.Encoding) // checked by Validate
	loadedAt := time.Now()
	pcfg, err := pipelineConfig(cfg, enc)
	if err != nil {
		return nil, err
	}
	s := newService(cfg, db, log, enc)
	if reg == nil {
		reg = prometheus.NewRegistry()
	}
	var version uint64
	if cfg.Campaign.Topic != "" {
		var p *pipeline.PolicyFile
		if s.camp, p, err = newCampaigner(s, reg); err != nil {
			return nil, err
		}
		if p != nil { // the applied campaign's policy wins over the file
			pcfg.Policies, version = p, s.camp.applied()
		}
	}
	if s.engine, err = pipeline.New(db, pcfg, pipeline.SinkFunc(s.put)); err != nil {
		return nil, err
	}
	s.engine.SetPolicyVersion(version)
	s.mqttCfg = s.clientConfig()
	if _, err := s.mqttCfg.AutopahoConfig(); err != nil { // reads the TLS files
		return nil, err
	}
	if err := s.initMetrics(reg); err != nil {
		return nil, err
	}
	if err := s.initReload(reg, loadedAt); err != nil {
		return nil, err
	}
	return s, nil
}

// pipelineConfig is the pipeline's configuration of cfg, its policy
// file loaded, with a new epoch.
func pipelineConfig(cfg Config, enc envelope.Encoding) (pipeline.Config, error) {
	pcfg := pipeline.Config{
		TopicTemplate: cfg.TopicTemplate,
		Encoding:      enc,
		// A new epoch at each start lets subscribers tell this run's
		// seq from the previous run's.
		Epoch: uint64(time.Now().UnixNano()),
	}
	if cfg.Policy != "" {
		p, err := pipeline.LoadPolicy(cfg.Policy)
		if err != nil {
			if w := cfg.Where("policy"); w != "" {
				return pcfg, fmt.Errorf("%s: %w", w, err)
			}
			return pcfg, err
		}
		pcfg.Policies = p
	}
	if cfg.WindowTopic != "" {
		pcfg.Window = &pipeline.WindowConfig{Topic: cfg.WindowTopic, Period: cfg.WindowPeriod}
	}
	return pcfg, nil
}

// newService returns a service of cfg with its queues and its log
// limits, before its engine, client and metrics.
func newService(cfg Config, db *dbc.Database, log *slog.Logger, enc envelope.Encoding) *Service {
	s := &Service{
		cfg:       cfg,
		log:       log,
		out:       newOutbox(1+len(db.Signals), windowSlot),
		qos:       byte(cfg.QoS),
		ctype:     enc.ContentType(),
		in:        make(chan rawMsg, inQueue),
		free:      make(chan []byte, inQueue),
		up:        make(chan struct{}, 1),
		republish: make(chan chan struct{}),
		badLog:    rateLimit{period: badBatchLogPeriod},
		now:       time.Now,
		notify:    newNotifier(log),
	}
	for _, l := range []*lockedLimit{&s.upLog, &s.downLog, &s.takeoverLog, &s.failLog, &s.closedLog} {
		l.period = connLogPeriod
	}
	s.retainLog.period = badBatchLogPeriod
	s.restartLog.period, s.publishersLog.period = badBatchLogPeriod, badBatchLogPeriod
	s.setupLog.period = connLogPeriod
	for range inQueue {
		s.free <- nil
	}
	return s
}

// clientConfig is the service's MQTT client: its settings, the
// "offline" will on the status topic, and the service's handlers.
func (s *Service) clientConfig() mqttclient.Config {
	c := mqttclient.Config{
		Settings:     s.cfg.Settings,
		ReconnectMax: s.cfg.ReconnectMax,
		Will:         &mqttclient.Message{Topic: s.cfg.StatusTopic, Payload: []byte(StatusOffline), QoS: 1, Retain: true},
		// The DISCONNECT's share of the shutdown (see Run).
		DisconnectTimeout: s.shutdownGrace(),
		OnUp:              s.onUp,
		OnDown:            s.onDown,
		OnConnectError:    s.onConnectError,
		OnPublish:         s.receive,
	}
	if s.qos == 0 {
		c.Batcher = &s.batch
	}
	// How a connection ended tells a takeover of the client id.
	c.OnServerDisconnect = s.onServerDisconnect
	c.OnConnectionLost = s.onConnectionLost
	return c
}

// initMetrics registers the service's metrics with reg, which must also
// be a Gatherer when the service serves them (MetricsAddr).
func (s *Service) initMetrics(reg prometheus.Registerer) error {
	if s.cfg.MetricsAddr != "" {
		g, ok := reg.(prometheus.Gatherer)
		if !ok {
			return ErrGatherer
		}
		s.gather = g
	}
	var err error
	s.m, err = newMetrics(reg,
		func() float64 { return float64(s.out.len()) },
		func() float64 {
			if s.connected.Load() {
				return 1
			}
			return 0
		})
	return err
}

// Topics returns the topics of the published signals.
func (s *Service) Topics() []string { return s.engine.Topics() }

// Run connects to the broker and decodes until ctx ends. Then it
// publishes the values rate caps still hold back, publishes "offline" on
// the status topic, disconnects cleanly and returns nil. It returns an
// error only when it cannot start (the metrics address cannot be
// bound) or a goroutine fails. Every goroutine it starts has ended when
// it returns.
func (s *Service) Run(ctx context.Context) error {
	if !s.running.CompareAndSwap(false, true) {
		return ErrRunning
	}
	var metricsLn net.Listener
	if s.cfg.MetricsAddr != "" {
		var err error
		if metricsLn, err = net.Listen("tcp", s.cfg.MetricsAddr); err != nil {
			return fmt.Errorf("service: metrics_addr: %w", err)
		}
		s.log.Info("metrics listening", "addr", metricsLn.Addr().String())
	}
	// The connection outlives ctx: "offline" is published after ctx ends.
	connCtx, stopConn := context.WithCancel(context.WithoutCancel(ctx))
	defer stopConn()
	unbind := s.bindShutdown(ctx, stopConn)
	defer unbind()
	cm, err := mqttclient.Connect(connCtx, s.mqttCfg)
	if err != nil {
		if metricsLn != nil {
			metricsLn.Close()
		}
		return err
	}
	s.cm = cm
	s.conn.Store(cm)
	s.log.Info("connecting", "broker", s.cfg.Broker, "client_id", s.cfg.ClientID, "raw_topic", s.cfg.RawTopic,
		"topics", len(s.engine.Topics()))

	g, gctx := errgroup.WithContext(ctx)
	engineDone := make(chan struct{})
	g.Go(func() error {
		defer close(engineDone)
		s.runEngine(gctx)
		return nil
	})
	g.Go(func() error { return s.runPublisher(gctx, engineDone) })
	g.Go(func() error { s.notify.run(gctx); return nil })
	if s.camp != nil {
		g.Go(func() error { s.camp.run(gctx); return nil })
	}
	if metricsLn != nil {
		srv := &http.Server{Handler: s.httpHandler(), ReadHeaderTimeout: 5 * time.Second}
		g.Go(func() error {
			if err := srv.Serve(metricsLn); !errors.Is(err, http.ErrServerClosed) {
				return fmt.Errorf("service: metrics: %w", err)
			}
			return nil
		})
		g.Go(func() error {
			<-gctx.Done()
			sctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			return srv.Shutdown(sctx)
		})
	}
	err = g.Wait()
	unbind() // the DISCONNECT is bounded by the client (DisconnectTimeout)

	// A DISCONNECT with reason 0 makes the broker drop the will: the
	// "offline" the publisher sent stays the last word. The client
	// closes the socket at the latest shutdownGrace after this.
	dctx, cancel := context.WithTimeout(context.Background(), s.cfg.ShutdownTimeout+time.Second)
	defer cancel()
	if derr := cm.Disconnect(dctx); derr != nil {
		s.log.Warn("disconnect", "err", derr)
	}
	stopConn()
	<-cm.Done()
	if s.hardStopped.Load() {
		s.log.Warn("shutdown_timeout reached with the broker connected but not taking what was written: the connection was closed; what was in the last write is not delivered (the broker publishes the \"offline\" will)",
			"broker", s.cfg.Broker, "shutdown_timeout", s.cfg.ShutdownTimeout)
	}
	s.log.Info("stopped")
	return err
}

// bindShutdown bounds the shutdown once ctx ends: within
// ShutdownTimeout whatever the broker does. The final values and
// "offline" have until the end less the DISCONNECT's grace
// (shutdownGrace); then stopConn ends the connection, whose socket is
// closed once the grace is over, which releases a write blocked on a
// broker that stopped reading. It returns the function that undoes it,
// which may be called more than once.
func (s *Service) bindShutdown(ctx context.Context, stopConn context.CancelFunc) func() {
	var hardStop atomic.Pointer[time.Timer]
	stop := context.AfterFunc(ctx, func() {
		hardStop.Store(time.AfterFunc(time.Until(s.shutdownDeadline()), func() {
			// Connected: the broker did not take what was written in
			// time (else it is away, and the log says so already).
			s.hardStopped.Store(s.connected.Load())
			stopConn()
		}))
	})
	return func() {
		stop()
		if t := hardStop.Load(); t != nil {
			t.Stop()
		}
	}
}

// httpHandler serves /metrics and /healthz.
func (s *Service) httpHandler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(s.gather, promhttp.HandlerOpts{}))
	mux.HandleFunc("/healthz", s.healthz)
	return mux
}

// MQTT client callbacks. They run on autopaho's and paho's goroutines
// and must not block.

func (s *Service) onUp(*autopaho.ConnectionManager, *paho.Connack) {
	s.upAt.Store(s.now().UnixNano())
	s.connMu.Lock()
	s.connCtx, s.connEnd = context.WithCancel(context.Background())
	s.connMu.Unlock()
	s.out.setConnected(true)
	s.connected.Store(true)
	s.health.up()
	s.m.connections.Inc()
	if ok, held := s.upLog.allow(s.now()); ok {
		s.log.Info("connected", "broker", s.cfg.Broker, "suppressed_since_last", held)
	}
	select {
	case s.up <- struct{}{}:
	default:
	}
}

func (s *Service) onDown() {
	s.connMu.Lock()
	s.connEnd()
	s.connMu.Unlock()
	s.connected.Store(false)
	s.health.down()
	if n := s.out.setConnected(false); n > 0 {
		s.m.coalesced.Add(float64(n))
	}
	s.notify.status("broker connection lost; reconnecting")
	if ok, held := s.downLog.allow(s.now()); ok {
		s.log.Warn("broker connection lost; reconnecting", "broker", s.cfg.Broker, "suppressed_since_last", held)
	}
}

func (s *Service) onConnectError(err error) {
	s.shortCloses.Store(0) // the broker is not there: no takeover
	reason, cause := connectCause(err)
	s.m.connectFailures.WithLabelValues(reason).Inc()
	s.health.problem(reason, cause, err, s.now())
	s.notify.status("connect to " + s.cfg.Broker + " failed (" + reason + "); retrying: " + cause)
	if ok, held := s.failLog.allow(s.now()); ok {
		s.log.Warn("connect failed; retrying with backoff", "broker", s.cfg.Broker, "reason", reason, "cause", cause, "err", err,
			"reconnect_max", s.cfg.ReconnectMax, "suppressed_since_last", held)
	}
}

// onServerDisconnect hears the reason the broker gave for ending the
// connection. Session taken over means another client connected with
// the same client id: two services fight over it, each connection
// ending the other's, until one is stopped or given its own id.
func (s *Service) onServerDisconnect(reason byte) {
	if reason != mqttclient.ReasonSessionTakenOver {
		s.log.Warn("the broker ended the connection", "broker", s.cfg.Broker, "reason", fmt.Sprintf("%#x", reason))
		return
	}
	s.takenOver("MQTT v5 DISCONNECT reason 0x8E, session taken over")
}

// onConnectionLost hears why a connection failed without a DISCONNECT
// from the broker. Brokers that predate reason 0x8E (mosquitto 2.0
// among them) close the older of two connections with one client id
// without a word: the client reads end of file, as it does when the
// broker goes down. One such close, sooner than a connection is deemed
// stable, is said as what it is (the broker closed the connection N
// after accepting it: another client with this id, or the broker
// going down) and not counted. A takeover is counted only on evidence:
// a second such close in a row, the broker having accepted the
// reconnection in between at once (no failed attempt: it did not go
// down), which is the fight of two clients over one id. A broker that
// went down refuses the next attempt, which clears the evidence.
func (s *Service) onConnectionLost(err error) {
	if !errors.Is(err, io.EOF) {
		s.shortCloses.Store(0)
		return // the connection's lost line says enough
	}
	lasted := s.now().Sub(time.Unix(0, s.upAt.Load()))
	if lasted >= mqttclient.StableAfter(s.cfg.ReconnectMax) {
		s.shortCloses.Store(0)
		return
	}
	if s.shortCloses.Add(1) >= 2 {
		s.takenOver(fmt.Sprintf("the broker closed the connection %v after accepting it, and the one before as soon, the reconnection accepted at once in between: as mosquitto does to the older of two connections with one client id",
			lasted.Round(time.Millisecond)))
		return
	}
	if ok, held := s.closedLog.allow(s.now()); ok {
		s.log.Warn(fmt.Sprintf("the broker closed the connection %v after accepting it: another client with client id %s, or the broker going down; reconnecting",
			lasted.Round(time.Millisecond), s.cfg.ClientID), "broker", s.cfg.Broker, "suppressed_since_last", held)
	}
}

// takenOver counts a takeover and says, at most once per connLogPeriod,
// what is going on and what to do.
func (s *Service) takenOver(how string) {
	s.m.takeovers.Inc()
	if ok, held := s.takeoverLog.allow(s.now()); ok {
		s.log.Error("another client took over client id "+s.cfg.ClientID+"; give each instance its own client_id (its own user, on a broker with use_username_as_clientid)",
			"broker", s.cfg.Broker, "how", how, "suppressed_since_last", held)
	}
}

// rawMsg is a received raw batch on its way to the engine: the payload
// in a buffer of the free list, and the topic it came on.
type rawMsg struct {
	b     []byte
	topic string
}

// receive takes a raw batch from the MQTT client. It copies the payload
// into a free buffer and queues it for the engine; when every buffer is
// taken (the engine is behind by inQueue batches) it drops the batch and
// counts its frames, rather than stall the client.
//
// A delivery with the retain flag is dropped and counted as invalid
// (reason "retained"): a retained batch was published before this
// subscription, maybe days ago, and decoding it would publish its old
// values as fresh ones under this run's epoch, at every start. The
// subscription asks for no retained messages (retain handling 2), so
// only a broker that ignores that sends one.
func (s *Service) receive(p *paho.Publish) {
	if s.camp != nil && p.Topic == s.cfg.Campaign.Topic {
		s.camp.take(p.Payload)
		return
	}
	s.m.rawBatches.Inc()
	if p.Retain {
		s.m.invalid(errRetained).Inc()
		if ok, held := s.retainLog.allow(s.now()); ok {
			s.log.Warn("retained raw batch ignored: a bridge must not publish raw batches retained", "topic", p.Topic,
				"bytes", len(p.Payload), "suppressed_since_last", held)
		}
		return
	}
	var buf []byte
	select {
	case buf = <-s.free:
	default:
		if b, err := rawbatch.Parse(p.Payload); err == nil {
			s.m.rawDropped.Add(float64(b.Len()))
		}
		return
	}
	s.in <- rawMsg{append(buf[:0], p.Payload...), p.Topic} // never blocks: in has room for every buffer
}

// runEngine owns the pipeline engine: it feeds it the queued batches,
// moves its clock on while frames are quiet, republishes on request, and
// flushes it when ctx ends. After each step it wakes the publisher for
// what the step produced (outbox.ready).
func (s *Service) runEngine(ctx context.Context) {
	defer close(s.reload.gone)
	// The clock ticks only while frames are quiet: after a batch the
	// watermark stays behind the engine's clock, so an advance does
	// nothing, until clock_lag has passed (see quiet).
	quiet := s.quiet()
	t := time.NewTimer(quiet)
	defer t.Stop()
	for {
		select {
		case m := <-s.in:
			s.handleBatch(m.b, m.topic)
			s.free <- m.b
			s.out.ready()
			s.notify.beat()
			t.Reset(quiet)
		case <-t.C:
			s.notify.beat()
			s.advance()
			s.out.ready()
			t.Reset(tick)
		case done := <-s.republish:
			s.engine.Republish()
			s.out.ready()
			close(done)
		case r := <-s.reload.req:
			s.applyPolicy(r)
			s.out.ready()
		case <-ctx.Done():
			// Batches that arrived before the end are decoded, for at
			// most half the shutdown timeout: an overloaded decoder's
			// queue can hold more work than that, and what is left is
			// counted as dropped so that shutdown stays bounded.
			deadline := s.now().Add(s.cfg.ShutdownTimeout / 2)
			for {
				select {
				case m := <-s.in:
					if s.now().Before(deadline) {
						s.handleBatch(m.b, m.topic)
					} else if batch, err := rawbatch.Parse(m.b); err == nil {
						s.m.rawDropped.Add(float64(batch.Len()))
					}
					s.free <- m.b
					continue
				default:
				}
				break
			}
			s.engine.Flush(max(s.engine.Now(), s.watermark()))
			s.syncStats()
			return
		}
	}
}

// handleBatch validates one raw batch, which came on topic, counts lost
// frames from its seq and runs its frames through the engine. It does
// not allocate.
func (s *Service) handleBatch(b []byte, topic string) {
	batch, err := rawbatch.Parse(b)
	if err != nil {
		s.m.invalid(err).Inc()
		if ok, held := s.badLog.allow(s.now()); ok {
			s.log.Warn("invalid raw batch ignored", "topic", topic, "bytes", len(b), "err", err,
				"suppressed_since_last", held)
		}
		return
	}
	n := batch.Len()
	s.m.rawFrames.Add(float64(n))
	now := s.now()
	lost, restarted := s.seq.observe(batch.Seq(), n, now)
	if lost > 0 {
		s.m.rawLost.Add(float64(lost))
	}
	if restarted {
		s.m.bridgeRestarts.Inc()
		if ok, held := s.restartLog.allow(now); ok {
			s.log.Info("raw batch seq went back: the bridge restarted", "seq", batch.Seq(), "suppressed_since_last", held)
		}
	}
	if pubs := s.seq.active(now); pubs != s.publishers {
		s.publishers = pubs
		s.m.rawPublishers.Set(float64(pubs))
	}
	if s.publishers > 1 {
		if ok, held := s.publishersLog.allow(now); ok {
			s.log.Warn("more than one publisher on the raw topic: their batches carry separate seq streams, followed apart",
				"topic", s.cfg.RawTopic, "publishers", s.publishers, "suppressed_since_last", held)
		}
	}
	for i := range n {
		batch.Frame(i, &s.f)
		if s.buses == nil || s.take() {
			s.engine.Frame(&s.f)
		}
	}
	if n > 0 {
		// The engine's newest frame time on its timebase: a frame it
		// dropped for an implausible timestamp must not drag the
		// watermark along, and a new timebase must.
		s.lastTS = s.engine.Latest()
		s.lastWall = now
		s.started = true
	}
	s.syncStats()
}

// quiet is how long after a batch the engine's clock first needs
// moving on: the watermark (the batch's newest frame time, plus the
// wall time since, minus clock_lag) reaches the engine's clock only
// clock_lag after the batch. Every deadline before the newest frame
// has fired with it, so until then an advance fires nothing, and the
// clock ticks (every tick) only from then on. Waking the engine every
// tick while batches arrive every 10 ms would double its wake-ups for
// nothing.
func (s *Service) quiet() time.Duration { return max(tick, s.cfg.ClockLag) }

// watermark is the frame time that no frame still in flight can
// precede: the newest frame time plus the wall time since it arrived,
// minus the clock lag. Before the first frame it is 0.
func (s *Service) watermark() int64 {
	if !s.started {
		return 0
	}
	return s.lastTS + int64(s.now().Sub(s.lastWall)) - int64(s.cfg.ClockLag)
}

// advance moves the engine's clock to the watermark, which fires the
// trailing values, heartbeats and stale marks that are due.
func (s *Service) advance() {
	if w := s.watermark(); w > s.engine.Now() {
		s.engine.Advance(w)
	}
	s.syncStats()
}

func (s *Service) syncStats() {
	s.syncBuses()
	cur := s.engine.Stats()
	s.m.add(&s.stats, &cur)
	s.m.clock.log(s.log, s.now(), s.engine.Now(), &cur)
	s.stats = cur
}

// windowSlot is the window stream's outbox slot; a signal topic's is
// its Out.Stream + 1.
const windowSlot = 0

// put is the engine's sink: it queues the envelope under its topic.
func (s *Service) put(o *pipeline.Out) {
	i := 1 + o.Stream // windowSlot for a window
	if n := s.out.put(i, o, o.Kind != pipeline.KindWindow); n > 0 {
		if i == windowSlot {
			s.m.windowOverflow.Add(float64(n))
		} else {
			s.m.coalesced.Add(float64(n))
		}
	}
}

// runPublisher hands waiting envelopes to the broker. On each
// (re)connection it first publishes "online", has the engine republish
// every signal's state (on a reconnect: a broker without persistence
// lost the retained messages) and subscribes to the raw topic. After the
// engine has flushed (engineDone), it publishes what is left and
// "offline".
func (s *Service) runPublisher(ctx context.Context, engineDone <-chan struct{}) error {
	p := &publisher{s: s, pub: paho.Publish{QoS: s.qos, Properties: &paho.PublishProperties{ContentType: s.ctype}}}
	retry := time.NewTimer(0)
	<-retry.C
	connections := 0
	for {
		select {
		case <-s.up:
			connections++
			s.setUpConnection(ctx, engineDone, connections > 1)
		case <-s.out.wake:
		case <-retry.C:
		case <-engineDone:
			s.shutdown(p)
			return nil
		}
		if !p.drain(ctx) {
			retry.Reset(retryDelay)
		}
	}
}

// connection returns ctx limited to the current connection: paho's
// Subscribe does not return when the connection drops under it.
func (s *Service) connection(ctx context.Context) (context.Context, context.CancelFunc) {
	s.connMu.Lock()
	conn := s.connCtx
	s.connMu.Unlock()
	if conn == nil {
		return context.WithCancel(ctx)
	}
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(conn, cancel)
	return ctx, func() { stop(); cancel() }
}

// announce publishes "online", has the engine republish the retained
// state when asked to (and clears *republish once it has), and
// subscribes to the raw topic. On the first connection nothing was
// published yet: frames arrive only through the subscription, so there
// is nothing to republish, and an offline run of the same frames gives
// the same seq. It returns a *setupError when the broker refused a step
// or did not answer while the connection stayed up (setUpConnection
// tries again), else nil.
func (s *Service) announce(ctx context.Context, engineDone <-chan struct{}, republish *bool) error {
	ctx, cancel := s.connection(ctx)
	defer cancel()
	if err := s.publishStatus(ctx, StatusOnline); err != nil {
		return s.setupFailed(ctx, opPublishStatus, s.cfg.StatusTopic, err)
	}
	if *republish {
		*republish = false
		done := make(chan struct{})
		select {
		case s.republish <- done:
			// Wait, so that the republished state goes out before the
			// subscription brings new frames.
			select {
			case <-done:
			case <-engineDone:
			}
		case <-engineDone:
		}
	}
	sctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	// Retain handling 2: no retained batch at subscribe (see receive).
	// No local: never the decoder's own messages, should a broker match
	// them (Config.Validate refuses a raw topic that overlaps them).
	sa, err := s.cm.Subscribe(sctx, &paho.Subscribe{Subscriptions: []paho.SubscribeOptions{
		{Topic: s.cfg.RawTopic, QoS: s.qos, RetainHandling: retainHandlingNone, NoLocal: true}}})
	if sa != nil && len(sa.Reasons) > 0 && sa.Reasons[0] >= 0x80 {
		// paho returns an error without the code along with the SUBACK.
		err = &refusedError{code: sa.Reasons[0]}
	}
	if err != nil {
		s.notify.status("subscribe to " + s.cfg.RawTopic + " failed: " + err.Error())
		return s.setupFailed(ctx, opSubscribe, s.cfg.RawTopic, err)
	}
	if s.camp != nil {
		s.camp.up()
		if err := s.camp.subscribe(ctx); err != nil {
			return s.setupFailed(ctx, opSubscribeCampaign, s.cfg.Campaign.Topic, err)
		}
	}
	s.health.subscribed()
	s.notify.subscribed(s.cfg.Broker, s.cfg.RawTopic)
	return nil
}

func (s *Service) publishStatus(ctx context.Context, status string) error {
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	r, err := s.cm.Publish(ctx, &paho.Publish{Topic: s.cfg.StatusTopic, QoS: 1, Retain: true, Payload: []byte(status),
		Properties: &paho.PublishProperties{ContentType: statusContentType}})
	if r != nil && r.ReasonCode >= 0x80 {
		// mosquitto answers a publish the ACL denies with 0x87.
		return &refusedError{code: r.ReasonCode}
	}
	return err
}

// shutdownGrace is the part of ShutdownTimeout kept for the
// DISCONNECT: at most mqttclient.DefaultDisconnectTimeout, and a
// quarter of a short shutdown_timeout.
func (s *Service) shutdownGrace() time.Duration {
	return min(mqttclient.DefaultDisconnectTimeout, s.cfg.ShutdownTimeout/4)
}

// shutdownDeadline is when the final publishes must end: the first call,
// once ctx ended, sets it.
func (s *Service) shutdownDeadline() time.Time {
	s.stopBy.CompareAndSwap(0, time.Now().Add(s.cfg.ShutdownTimeout-s.shutdownGrace()).UnixNano())
	return time.Unix(0, s.stopBy.Load())
}

// shutdown publishes what the engine flushed and "offline", until the
// shutdown's deadline (stopBy) at most, for a broker that is away or
// does not read.
func (s *Service) shutdown(p *publisher) {
	ctx, cancel := context.WithDeadline(context.Background(), s.shutdownDeadline())
	defer cancel()
	for s.out.len() > 0 {
		if err := s.cm.AwaitConnection(ctx); err != nil {
			if s.hardStopped.Load() {
				s.log.Warn("the broker did not take the final values within shutdown_timeout (connected, not reading); values not published", "waiting", s.out.len())
			} else {
				s.log.Warn("broker unreachable at shutdown; values not published", "waiting", s.out.len())
			}
			return
		}
		if !p.drain(ctx) {
			select {
			case <-ctx.Done():
			case <-time.After(retryDelay):
			}
		}
	}
	if err := s.publishStatus(ctx, StatusOffline); err != nil {
		s.log.Warn("publish status", "status", StatusOffline, "err", err)
	}
}

// publisher is the publishing goroutine's state: a reusable publish
// packet and a spare buffer.
type publisher struct {
	s     *Service
	pub   paho.Publish
	spare []byte
}

// drain publishes waiting messages until none is left or one fails; it
// reports false when one failed (it waits again in the outbox). At QoS 0
// it publishes in rounds: the messages waiting when a round starts are
// encoded into the connection's buffer (mqttclient.Batcher) and leave in
// one write when the round ends, a microsecond or so a message later.
// A lone message is a round of one and leaves at once. (At QoS 1 each
// publish goes through paho and waits for its PUBACK, so each leaves on
// its own.)
func (p *publisher) drain(ctx context.Context) bool {
	s := p.s
	if p.pub.QoS > 0 {
		// A QoS 1 publish waits for its acknowledgement: not beyond the
		// connection. (At QoS 0 Publish only writes; no context needed,
		// and none is made, so that draining allocates nothing.)
		var cancel context.CancelFunc
		ctx, cancel = s.connection(ctx)
		defer cancel()
	}
	for {
		n := s.out.len()
		if n == 0 {
			return true
		}
		if !p.round(ctx, n) {
			return false
		}
	}
}

// round publishes up to n waiting messages, at QoS 0 in one write. It
// reports false when the connection is down, ctx ended, or a publish or
// the write failed.
func (p *publisher) round(ctx context.Context, n int) bool {
	s := p.s
	batch := p.pub.QoS == 0
	if batch {
		s.batch.Hold()
	}
	ok := true
	for range n {
		if !s.connected.Load() || ctx.Err() != nil {
			ok = false
			break
		}
		m, more := s.out.take(p.spare)
		if !more {
			break
		}
		if !p.publish(ctx, m) {
			ok = false
			break
		}
	}
	if batch {
		if err := s.batch.Flush(); err != nil {
			// The connection is closed: the client reconnects and
			// republishes every signal's state. (A publish that met
			// the same error has counted it.)
			if ok {
				s.m.publishErrors.Inc()
				s.log.Debug("write failed; reconnecting", "err", err)
			}
			return false
		}
	}
	return ok
}

// publish hands one message to the MQTT client. When it fails the
// message goes back to the outbox and publish reports false.
func (p *publisher) publish(ctx context.Context, m msg) bool {
	s := p.s
	var err error
	if p.pub.QoS == 0 {
		// Encoded straight into the connection's buffer.
		err = s.batch.Publish(m.topic, m.payload, m.retain, s.ctype)
	} else {
		// paho may keep a QoS 1 message for a retransmission after
		// Publish returns, so it gets its own copy.
		p.pub.Topic, p.pub.Retain, p.pub.Payload = m.topic, m.retain, append([]byte(nil), m.payload...)
		_, err = s.cm.Publish(ctx, &p.pub)
		p.pub.Payload = nil
	}
	if err != nil {
		if !errors.Is(err, autopaho.ConnectionDownError) {
			s.m.publishErrors.Inc()
			s.log.Debug("publish failed; will retry", "topic", m.topic, "err", err)
		}
		var replaced bool
		if p.spare, replaced = s.out.giveBack(m); replaced {
			if m.slot == windowSlot {
				s.m.windowOverflow.Inc()
			} else {
				s.m.coalesced.Inc()
			}
		}
		return false
	}
	p.spare = m.payload
	s.m.published[m.kind].Inc()
	switch m.kind {
	case pipeline.KindValue, pipeline.KindTrailing, pipeline.KindFlush:
		s.m.latency.Observe(float64(s.now().UnixNano()-m.ts) / 1e9)
	}
	return true
}
