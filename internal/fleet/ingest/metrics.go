package ingest

import (
	"github.com/prometheus/client_golang/prometheus"
)

// Reasons a message or an envelope is skipped as malformed or foreign
// (the reason label of candec_ingest_malformed_total).
const (
	// ReasonVehicle: the topic's vehicle level is empty, too long or
	// not UTF-8.
	ReasonVehicle = "vehicle"
	// ReasonWindow: the payload is no window (envelope.ParseWindow).
	ReasonWindow = "window"
	// ReasonSize: the payload is larger than Config.MaxWindowBytes.
	ReasonSize = "size"
	// ReasonSignal: a window's item is on a topic whose signal the DBC
	// does not have (or shares with another signal); the item only.
	ReasonSignal = "signal"
	// ReasonRetained: a message the broker kept retained and sent on
	// subscribing. A car never retains a window; one that did would be
	// written again at every start.
	ReasonRetained = "retained"
	// ReasonValue: a window item whose value its signal's column cannot
	// hold (an INT64 column given 2^64-1, 3.7, 1e308 or NaN); the item
	// only.
	ReasonValue = "value"
	// ReasonTime: a window item whose ts the lake's time column does not
	// hold (lake.MinTime to lake.MaxTime); the item only.
	ReasonTime = "time"
)

// metrics are the Prometheus metrics of an instance. Per-vehicle
// series carry the vehicle as its partition names it (escaped).
type metrics struct {
	windows, envelopes, rows, values *prometheus.CounterVec
	windowGaps, envelopeGaps         *prometheus.CounterVec
	duplicates, stale                prometheus.Counter
	malformed                        *prometheus.CounterVec
	commits, takeovers               prometheus.Counter
	commitSeconds                    prometheus.Histogram
	unacked                          prometheus.Gauge
	partitions                       prometheus.Gauge
}

// newMetrics makes an instance's metrics, labelled instance=<id> so
// that several instances (a bench's) can share reg.
func newMetrics(reg prometheus.Registerer, id string) *metrics {
	if reg != nil {
		reg = prometheus.WrapRegistererWith(prometheus.Labels{"instance": id}, reg)
	}
	vec := func(name, help string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: "candec_ingest_" + name, Help: help}, []string{"vehicle"})
	}
	m := &metrics{
		windows:      vec("windows_total", "Windows taken in, per vehicle (duplicates not counted)."),
		envelopes:    vec("envelopes_total", "Envelopes in the windows taken in, per vehicle."),
		rows:         vec("rows_total", "Rows written, per vehicle."),
		values:       vec("values_total", "Values written, per vehicle."),
		windowGaps:   vec("window_gaps_total", "Windows missing from gaps in a vehicle's window seq (in a group: each instance sees its share, the others' count here)."),
		envelopeGaps: vec("envelope_gaps_total", "Envelopes missing from gaps in a topic's seq, per vehicle (in a group: each instance sees its share, the others' count here)."),
		duplicates: prometheus.NewCounter(prometheus.CounterOpts{Name: "candec_ingest_duplicates_total",
			Help: "Windows skipped because this instance had taken them already (a QoS 1 resend, or a restart between commit and acknowledgement)."}),
		stale: prometheus.NewCounter(prometheus.CounterOpts{Name: "candec_ingest_stale_total",
			Help: "Stale marks seen: they repeat a value already written and make no row."}),
		malformed: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "candec_ingest_malformed_total",
			Help: "Messages (reason vehicle, window, retained, size) or window items (reason signal, value, time) skipped: malformed or foreign."}, []string{"reason"}),
		commits: prometheus.NewCounter(prometheus.CounterOpts{Name: "candec_ingest_commits_total", Help: "Commits."}),
		takeovers: prometheus.NewCounter(prometheus.CounterOpts{Name: "candec_ingest_takeovers_total",
			Help: "Sessions taken over by another client with the instance's client id (MQTT v5 DISCONNECT reason 0x8E): the instance stopped."}),
		commitSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "candec_ingest_commit_seconds",
			Help: "Time a commit takes: data files, manifest, acknowledgements.", Buckets: prometheus.ExponentialBuckets(0.005, 2, 14)}),
		unacked: prometheus.NewGauge(prometheus.GaugeOpts{Name: "candec_ingest_unacked",
			Help: "Messages taken in and not yet acknowledged (committed at the next commit)."}),
		partitions: prometheus.NewGauge(prometheus.GaugeOpts{Name: "candec_ingest_partitions",
			Help: "JetStream: the stream's partitions this instance consumes."}),
	}
	if reg != nil {
		reg.MustRegister(m.windows, m.envelopes, m.rows, m.values, m.windowGaps, m.envelopeGaps,
			m.duplicates, m.stale, m.malformed, m.commits, m.takeovers, m.commitSeconds, m.unacked, m.partitions)
	}
	return m
}

// vehicleMetrics are one vehicle's series, looked up once.
type vehicleMetrics struct {
	windows, envelopes, rows, values, windowGaps, envelopeGaps prometheus.Counter
}

func (m *metrics) vehicle(label string) vehicleMetrics {
	return vehicleMetrics{
		windows: m.windows.WithLabelValues(label), envelopes: m.envelopes.WithLabelValues(label),
		rows: m.rows.WithLabelValues(label), values: m.values.WithLabelValues(label),
		windowGaps: m.windowGaps.WithLabelValues(label), envelopeGaps: m.envelopeGaps.WithLabelValues(label),
	}
}
