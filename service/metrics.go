package service

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/yukart/candec/internal/base/buildinfo"
	"github.com/yukart/candec/pipeline"
	"github.com/yukart/candec/rawbatch"
)

// Reasons an envelope was not published, the label of
// candec_envelopes_suppressed_total.
const (
	// reasonCap: a rate cap held the value back and a newer one replaced
	// it (the latest value is published when the cap's window closes).
	reasonCap = "cap"
	// reasonUnchanged: the value was within the on-change deadband.
	reasonUnchanged = "unchanged"
	// reasonCoalesced: the broker did not take the envelope before the
	// next one for the same topic replaced it (a slow or absent broker);
	// subscribers see the gap in seq.
	reasonCoalesced = "coalesced"
	// reasonOverflow: a window-stream message dropped because 512 of
	// them waited for a broker that is away or too slow (the window
	// stream is never coalesced).
	reasonOverflow = "overflow"
)

// invalidReasons label candec_raw_batches_invalid_total: the rawbatch
// error a batch failed with, in the order they are checked.
var invalidReasons = []struct {
	err   error
	label string
}{
	{rawbatch.ErrShort, "short"},
	{rawbatch.ErrVersion, "version"},
	{rawbatch.ErrFlags, "flags"},
	{rawbatch.ErrLength, "length"},
	{rawbatch.ErrID, "id"},
	{rawbatch.ErrDataLength, "data_length"},
	{rawbatch.ErrReserved, "reserved"},
	{errRetained, "retained"}, // not rawbatch's: the delivery's retain flag
	{nil, "other"},            // the last: anything else
}

// invalid returns the counter of batches that failed with err. It does
// not allocate.
func (m *metrics) invalid(err error) prometheus.Counter {
	for i, r := range invalidReasons[:len(invalidReasons)-1] {
		if errors.Is(err, r.err) {
			return m.rawInvalid[i]
		}
	}
	return m.rawInvalid[len(m.rawInvalid)-1]
}

// metrics are the service's Prometheus metrics. Counters are resolved
// once, so updating them never allocates.
type metrics struct {
	rawBatches     prometheus.Counter
	rawFrames      prometheus.Counter
	rawLost        prometheus.Counter
	rawDropped     prometheus.Counter
	rawInvalid     []prometheus.Counter // by invalidReasons' index
	bridgeRestarts prometheus.Counter
	unknownID      prometheus.Counter
	noDBC          prometheus.Counter
	decoded        prometheus.Counter
	values         prometheus.Counter
	published      []prometheus.Counter // by pipeline.OutKind
	suppressedCap  prometheus.Counter
	suppressedSame prometheus.Counter
	coalesced      prometheus.Counter
	publishErrors  prometheus.Counter
	connections    prometheus.Counter
	latency        prometheus.Histogram
	clock          *clockMetrics

	// The connection's health.
	connectFailures *prometheus.CounterVec // by failReasons
	takeovers       prometheus.Counter
	windowOverflow  prometheus.Counter

	// The raw topic's publishers.
	rawPublishers prometheus.Gauge

	// J1939 sources, with {sa} in the topic template.
	sources prometheus.Gauge
	clashes prometheus.Counter
}

func newMetrics(reg prometheus.Registerer, queueDepth, connected func() float64) (*metrics, error) {
	counter := func(name, help string) prometheus.Counter {
		return prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help})
	}
	m := &metrics{
		rawBatches:     counter("candec_raw_batches_total", "Raw batches received from the broker, valid or not."),
		rawFrames:      counter("candec_raw_frames_total", "Frames in valid raw batches."),
		rawLost:        counter("candec_raw_frames_lost_total", "Raw frames lost before decoding, from gaps in each publisher's batch seq (includes candec_raw_frames_dropped_total)."),
		rawDropped:     counter("candec_raw_frames_dropped_total", "Raw frames dropped by the service because its input queue was full."),
		bridgeRestarts: counter("candec_bridge_restarts_total", "Times the raw batches' seq went backwards (the bridge restarted)."),
		unknownID:      counter("candec_frames_unknown_id_total", "Frames whose CAN ID is not in the DBC."),
		noDBC:          counter("candec_frames_no_dbc_total", "Frames of an interface without a DBC (dbc IFACE=FILE names others), left out."),
		decoded:        counter("candec_frames_decoded_total", "Frames of a message in the DBC, decoded."),
		values:         counter("candec_values_decoded_total", "Signal values decoded."),
		publishErrors:  counter("candec_publish_errors_total", "Publishes the MQTT client failed (the message is retried)."),
		connections:    counter("candec_broker_connections_total", "Connections made to the broker (the first and every reconnect)."),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "candec_publish_latency_seconds",
			Help:    "From a value's frame timestamp to its publish, for new, trailing and flushed values.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 14), // 0.5 ms … 4 s
		}),
	}
	m.connectFailures = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "candec_broker_connect_failures_total",
		Help: "Connection attempts that failed, and connections whose status publish or raw subscription the broker refused, by reason: network, tls, auth (credentials), acl (a missing ACL right), timeout, other; the service keeps retrying, with backoff up to reconnect_max.",
	}, []string{"reason"})
	for _, r := range failReasons {
		m.connectFailures.WithLabelValues(r)
	}
	m.takeovers = counter("candec_broker_takeovers_total",
		"Connections lost because another client connected with the same client id: a DISCONNECT with reason 0x8E, or the broker closing the connection soon after accepting it, as mosquitto 2.0 does.")
	m.sources = prometheus.NewGauge(prometheus.GaugeOpts{Name: "candec_j1939_sources",
		Help: "J1939 sources seen, one message from one source address each, when the topic template has {sa}: each has its own topics."})
	m.clashes = counter("candec_j1939_topic_clashes_total",
		"Signals of J1939 sources not published because the topic template gave them another signal's topic.")
	m.rawPublishers = prometheus.NewGauge(prometheus.GaugeOpts{Name: "candec_raw_publishers",
		Help: "Publishers on the raw topic, told apart by their seq streams, that sent a batch in the last 2 s; more than 1 means more than one bridge or replay publishes there."})
	invalid, pub, sup := m.labelled()
	m.clock = newClockMetrics()
	build := buildInfo()

	cs := []prometheus.Collector{
		build,
		m.rawBatches, m.rawFrames, m.rawLost, m.rawDropped, invalid, m.bridgeRestarts,
		m.unknownID, m.noDBC, m.decoded, m.values, m.publishErrors,
		m.connections, m.latency, pub, sup,
		m.connectFailures, m.takeovers, m.rawPublishers, m.sources, m.clashes,
		m.clock.late, m.clock.outliers, m.clock.discontinuities,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "candec_publish_queue_depth",
			Help: "Envelopes waiting for the broker: up to 8 per signal topic while connected and 1 while not (the latest wins), and up to 512 window-stream messages.",
		}, queueDepth),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "candec_broker_connected",
			Help: "1 while the service is connected to the broker.",
		}, connected),
	}
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("service: register metrics: %w", err)
		}
	}
	return m, nil
}

// labelled makes m's counters that have a label: raw batches invalid
// by reason, envelopes published by kind and suppressed by reason; it
// returns their vectors, to register.
func (m *metrics) labelled() (invalid, pub, sup *prometheus.CounterVec) {
	invalid = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "candec_raw_batches_invalid_total",
		Help: "Raw batches that failed validation and were ignored, by what was wrong (docs/wire-format.md, Validation); retained: a delivery with the retain flag, an old batch.",
	}, []string{"reason"})
	for _, r := range invalidReasons {
		m.rawInvalid = append(m.rawInvalid, invalid.WithLabelValues(r.label))
	}
	pub = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "candec_envelopes_published_total",
		Help: "Envelopes handed to the broker, by why they were published (kind=window counts window-stream messages).",
	}, []string{"kind"})
	for _, k := range pipeline.Kinds() {
		m.published = append(m.published, pub.WithLabelValues(k.String()))
	}
	sup = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "candec_envelopes_suppressed_total",
		Help: "Values not published: held back by a rate cap and replaced (cap), within the on-change deadband (unchanged), replaced before a slow broker took them (coalesced), or window-stream messages dropped when 512 waited (overflow).",
	}, []string{"reason"})
	m.suppressedCap = sup.WithLabelValues(reasonCap)
	m.suppressedSame = sup.WithLabelValues(reasonUnchanged)
	m.coalesced = sup.WithLabelValues(reasonCoalesced)
	m.windowOverflow = sup.WithLabelValues(reasonOverflow)
	return invalid, pub, sup
}

// buildInfo is the candec_build_info gauge of this binary.
func buildInfo() *prometheus.GaugeVec {
	b := buildinfo.Read()
	build := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "candec_build_info",
		Help: "Always 1; its labels say what the running candec was built from: the version (a tag, a pseudo-version, or the revision), the VCS revision and the Go version.",
	}, []string{"version", "revision", "goversion"})
	build.WithLabelValues(b.Short(), b.Revision, b.Go).Set(1)
	return build
}

// add moves the engine's counters into the metrics: the difference
// between two snapshots of its Stats.
func (m *metrics) add(prev, cur *pipeline.Stats) {
	m.decoded.Add(float64(cur.Decoded - prev.Decoded))
	m.unknownID.Add(float64(cur.Unknown - prev.Unknown))
	m.values.Add(float64(cur.Values - prev.Values))
	m.suppressedCap.Add(float64(cur.SuppressedCap - prev.SuppressedCap))
	m.suppressedSame.Add(float64(cur.SuppressedUnchanged - prev.SuppressedUnchanged))
	m.sources.Set(float64(cur.Sources))
	m.clashes.Add(float64(cur.Clashes - prev.Clashes))
	m.clock.add(prev, cur)
}

// clockMetrics count and log the frames the engine's clock did not take
// as they came (see "Clock jumps" in package pipeline): late frames,
// frames dropped for an implausible timestamp, new timebases.
type clockMetrics struct {
	late, future, past, discontinuities prometheus.Counter
	outliers                            *prometheus.CounterVec

	// Each kind of event is logged at most once per badBatchLogPeriod,
	// with the counts since the last line.
	outlierLog, jumpLog         rateLimit
	loggedOutliers, loggedJumps uint64
}

func newClockMetrics() *clockMetrics {
	jump := pipeline.DefaultMaxClockJump
	c := &clockMetrics{
		late: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "candec_frames_late_total",
			Help: fmt.Sprintf("Frames behind the policy clock by at most %s, run at the clock's time.", jump),
		}),
		outliers: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "candec_frames_clock_outliers_total",
			Help: fmt.Sprintf("Frames more than %s ahead of (future) or behind (past) the policy clock that no run of %d frames confirmed as a new timebase: dropped, never published.", jump, pipeline.DefaultClockConfirm),
		}, []string{"direction"}),
		discontinuities: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "candec_clock_discontinuities_total",
			Help: "New timebases of the frames' clock (a bridge restart, a clock step): the policies' timing restarted.",
		}),
		outlierLog: rateLimit{period: badBatchLogPeriod},
		jumpLog:    rateLimit{period: badBatchLogPeriod},
	}
	c.future = c.outliers.WithLabelValues("future")
	c.past = c.outliers.WithLabelValues("past")
	return c
}

func (c *clockMetrics) add(prev, cur *pipeline.Stats) {
	c.late.Add(float64(cur.Late - prev.Late))
	c.future.Add(float64(cur.Future - prev.Future))
	c.past.Add(float64(cur.Past - prev.Past))
	c.discontinuities.Add(float64(cur.Discontinuities - prev.Discontinuities))
}

// log reports new outliers and discontinuities in cur; clock is the
// engine's time.
func (c *clockMetrics) log(l *slog.Logger, now time.Time, clock int64, cur *pipeline.Stats) {
	if n := cur.Future + cur.Past; n > c.loggedOutliers {
		if ok, _ := c.outlierLog.allow(now); ok {
			l.Warn("frames with implausible timestamps dropped: too far from the policy clock",
				"frames", n-c.loggedOutliers, "latest_ts", time.Unix(0, cur.LastOutlier).UTC(),
				"clock", time.Unix(0, clock).UTC(), "max_jump", pipeline.DefaultMaxClockJump)
			c.loggedOutliers = n
		}
	}
	if cur.Discontinuities > c.loggedJumps {
		if ok, _ := c.jumpLog.allow(now); ok {
			l.Warn("the frames' clock jumped: policy timing restarted on the new timebase",
				"discontinuities", cur.Discontinuities-c.loggedJumps, "latest_step", time.Duration(cur.LastJump),
				"clock", time.Unix(0, clock).UTC())
			c.loggedJumps = cur.Discontinuities
		}
	}
}
