package ingest

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/yukart/candec/internal/base/defaults"
	"github.com/yukart/candec/internal/fleet/lake"
	"github.com/yukart/candec/mqttclient"
)

// Defaults of Config.
const (
	// DefaultFilter is the fleet's window stream, as the cars' bridges
	// forward it: the + is the vehicle.
	DefaultFilter = "fleet/+/yukart/window"
	// DefaultRollBytes is the window payload taken in after which the
	// ingest commits.
	DefaultRollBytes = 64 << 20
	// DefaultRollAge is the longest a window waits to be committed.
	DefaultRollAge = time.Minute
	// DefaultRollMemory is the memory of the rows the vehicles' writers
	// may hold before the ingest commits, whatever the bytes, age and
	// count of the messages: sized for an instance of 1 GB (the Go heap
	// grows to about twice what is live, and a commit needs its own).
	DefaultRollMemory = 256 << 20
	// DefaultMaxWindowBytes is the largest window payload taken in; a
	// larger one is counted (ReasonSize) and skipped before it is
	// parsed. A window holds what a car published in one window_period:
	// the kart's are about 1.4 kB at 10 ms, 13 kB at 100 ms; by
	// arithmetic, four 1 Mbit/s buses full of frames (8,000 a second
	// each, a dozen signals a frame, about 130 bytes an item in JSON)
	// make about 5 MB at 100 ms, so 16 MiB takes that car's windows up
	// to about 300 ms. The window at the bound costs the ingest 8 to 12
	// times its size while it is taken in (BenchmarkLargestWindow).
	DefaultMaxWindowBytes = 16 << 20
	// ReceiveMaximum is the Receive Maximum the ingest sends the broker
	// (MQTT v5): how many QoS 1 messages it may hold unacknowledged.
	// Without it, mosquitto would hold the ingest to its
	// max_inflight_messages, 20 by default.
	ReceiveMaximum = 65535
	// DefaultMaxUnacked is how many messages the ingest takes before it
	// commits, whatever their size and age: below ReceiveMaximum, so that
	// the broker never stops sending while the ingest waits to commit.
	DefaultMaxUnacked = 50000
	// DefaultSessionExpiry is how long the broker keeps the session of
	// an instance that went away: its subscription, its unacknowledged
	// messages and the queue of what came meanwhile.
	DefaultSessionExpiry = 7 * 24 * time.Hour
)

// ClientIDPrefix starts an instance's MQTT client id: candec-ingest-<ID>.
const ClientIDPrefix = "candec-ingest-"

// Errors.
var (
	// ErrConfig: the Config cannot be used.
	ErrConfig = errors.New("ingest: bad config")
	// ErrCommit: a commit failed; nothing of it was acknowledged.
	ErrCommit = errors.New("ingest: commit failed")
	// ErrTakenOver: another client connected with the instance's client
	// id and the broker gave it the session (MQTT v5 DISCONNECT reason
	// 0x8E): two instances of one id. The instance stops without
	// committing what it holds; the broker sends that to the other.
	ErrTakenOver = errors.New("ingest: another client took over the session")
	// ErrRecordTaken: the commit the instance was to make is in its
	// record already, written by another instance of its id (two
	// instances of one id on one object store prefix).
	ErrRecordTaken = errors.New("ingest: another instance writes this instance's commit record")
)

// Config configures one ingest instance.
type Config struct {
	// Conn is the broker and how to reach it; its ClientID is replaced
	// by ClientIDPrefix+ID.
	Conn mqttclient.Settings
	// ID names the instance: its client id (the broker keeps its
	// session across restarts), its files' names and its manifests.
	// Two instances running at once need two IDs.
	ID string
	// Group, when set, subscribes as $share/<Group>/<filter>: the
	// instances of one group split the messages between them.
	Group string
	// Leave makes the end of Run leave for good: unsubscribe, so that
	// the broker gives this instance's share to the others, take what
	// was already on its way, commit it, and end the session. Without
	// it the session stays, and so does the instance's share, waiting
	// for it to come back.
	Leave bool
	// Filters are the topic filters; default DefaultFilter. The level
	// of a filter's first + is the vehicle.
	Filters []string
	// SignalPrefix is the topic of a window item less its signal's
	// name; default DefaultSignalPrefix.
	SignalPrefix string
	// Buses are the DBC files, the car's, by interface.
	Buses []Bus
	// Dir is the lake; Store, when set, holds its files instead of the
	// directory (an object store).
	Dir   string
	Store lake.Store
	// DBCHash identifies the DBC files in the lake's marker (as decode's
	// --out-dir records them).
	DBCHash string
	// RollBytes, RollAge and MaxUnacked say when to commit: after that
	// much window payload, that long, or that many messages; defaults
	// DefaultRollBytes, DefaultRollAge, DefaultMaxUnacked.
	RollBytes  int64
	RollAge    time.Duration
	MaxUnacked int
	// RollMemory commits once the rows held for the next commit take
	// that much memory (every vehicle's writer, lake.Writer.Buffered);
	// default DefaultRollMemory.
	RollMemory int64
	// MaxWindowBytes bounds a window's payload; default
	// DefaultMaxWindowBytes.
	MaxWindowBytes int
	// SessionExpiry is the session's expiry on the broker; default
	// DefaultSessionExpiry.
	SessionExpiry time.Duration
	// ConnectTimeout bounds the wait for the first connection; default
	// mqttclient.DefaultConnectTimeout.
	ConnectTimeout time.Duration
	// JetStream, when set, takes the windows from a NATS JetStream
	// cluster instead of Conn's MQTT broker (Conn's TLS files and user
	// still apply). Group then names the consumers and their priority
	// group (default DefaultJetStreamGroup); Leave does not apply (an
	// instance always hands its partitions over at its end).
	JetStream *JetStream
	// Registerer receives the metrics, labelled instance=<ID> (several
	// instances may share one); nil for none.
	Registerer prometheus.Registerer
	// Log receives what happens; nil discards it.
	Log *slog.Logger
	// Now is the clock; nil is time.Now.
	Now func() time.Time

	// afterManifest, in tests, runs after a commit's manifest is written
	// and before its messages are acknowledged; an error from it ends
	// Run there, as a crash would.
	afterManifest func(n uint64) error
}

// withDefaults fills in the defaults.
func (c Config) withDefaults() Config {
	if len(c.Filters) == 0 {
		c.Filters = []string{DefaultFilter}
	}
	c.SignalPrefix = cmp.Or(c.SignalPrefix, DefaultSignalPrefix)
	c.RollBytes = defaults.Positive(c.RollBytes, DefaultRollBytes)
	c.RollAge = defaults.Positive(c.RollAge, DefaultRollAge)
	c.MaxUnacked = defaults.Positive(c.MaxUnacked, DefaultMaxUnacked)
	c.RollMemory = defaults.Positive(c.RollMemory, DefaultRollMemory)
	c.MaxWindowBytes = defaults.Positive(c.MaxWindowBytes, DefaultMaxWindowBytes)
	c.SessionExpiry = defaults.Positive(c.SessionExpiry, DefaultSessionExpiry)
	c.ConnectTimeout = defaults.Positive(c.ConnectTimeout, mqttclient.DefaultConnectTimeout)
	c.Log = cmp.Or(c.Log, slog.New(slog.DiscardHandler))
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

// Validate reports what makes c unusable, naming the setting.
func (c Config) Validate() error {
	c = c.withDefaults()
	switch {
	case c.ID == "":
		return fmt.Errorf("%w: no instance id", ErrConfig)
	case len(c.ID) > 100 || lake.Escape(c.ID) != c.ID:
		return fmt.Errorf("%w: instance id %q: want at most 100 letters, digits, '_', '-' and '.' (not leading)", ErrConfig, c.ID)
	case len(c.Buses) == 0:
		return fmt.Errorf("%w: no DBC", ErrConfig)
	case c.Dir == "" && c.Store == nil:
		return fmt.Errorf("%w: no lake", ErrConfig)
	case c.MaxUnacked > ReceiveMaximum:
		return fmt.Errorf("%w: max unacked %d: above the receive maximum, %d", ErrConfig, c.MaxUnacked, ReceiveMaximum)
	case strings.ContainsAny(c.Group, "/+#") || strings.HasPrefix(c.Group, "$"):
		return fmt.Errorf("%w: group %q: a shared subscription's name has no /, + or #", ErrConfig, c.Group)
	}
	for _, f := range c.Filters {
		if _, err := vehicleLevel(f); err != nil {
			return err
		}
	}
	if c.JetStream != nil {
		if c.Group != "" && !natsName(c.Group) {
			return fmt.Errorf("%w: group %q: a JetStream group is letters, digits, '_' and '-'", ErrConfig, c.Group)
		}
		return c.JetStream.validate(c.RollAge)
	}
	return nil
}

// jsGroup is the JetStream consumers' group.
func (c Config) jsGroup() string {
	if c.Group == "" {
		return DefaultJetStreamGroup
	}
	return c.Group
}

// vehicleLevel returns the level of filter's first +, the vehicle's.
func vehicleLevel(filter string) (int, error) {
	if strings.HasPrefix(filter, "$share/") {
		return 0, fmt.Errorf("%w: filter %q: give the group with Group (--group), not in the filter", ErrConfig, filter)
	}
	levels := strings.Split(filter, "/")
	for i, l := range levels {
		switch {
		case l == "+":
			return i, nil
		case l == "#" || strings.ContainsAny(l, "+#"):
			return 0, fmt.Errorf("%w: filter %q: no + level before %q (the + is the vehicle)", ErrConfig, filter, l)
		}
	}
	return 0, fmt.Errorf("%w: filter %q: no + level (the + is the vehicle)", ErrConfig, filter)
}

// subscription returns filter as subscribed: under $share/<group>/ in
// a group.
func (c Config) subscription(filter string) string {
	if c.Group == "" {
		return filter
	}
	return "$share/" + c.Group + "/" + filter
}
