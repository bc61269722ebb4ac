package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/internal/base/flagenv"
	"github.com/yukart/candec/internal/cmdkit/brokerflags"
	"github.com/yukart/candec/internal/cmdkit/cli"
	"github.com/yukart/candec/internal/fleet/ingest"
	"github.com/yukart/candec/internal/fleet/lake"
	"github.com/yukart/candec/internal/fleet/lake/s3store"
	"github.com/yukart/candec/mqttclient"
)

// runIngest is `candec ingest`: the fleet's window streams from the
// cloud broker into a lake, one instance of a group (docs/ingest.md).
func runIngest(ctx context.Context, e cli.Env, args []string) error {
	fs := cli.NewFlags(e, "ingest", "--broker URL[,URL...] --dbc [IFACE=]FILE --out-dir LAKE [flags] [TOPIC-FILTER...]  (default: "+ingest.DefaultFilter+")")
	conn := cli.BrokerFlags(fs, ingest.ClientIDPrefix+"ID")
	fs.Lookup("broker").Usage += "; nats://HOST:PORT or tls://HOST:PORT, several comma-separated for a cluster, reads a NATS JetStream stream instead (docs/ingest.md)"
	jsFlags := addJetStreamFlags(fs)
	bf := fs.Lookup("broker")
	bf.Value = &lastValue{Value: bf.Value, last: &jsFlags.broker}
	fs.Lookup("client-id").Usage = "refused: the client id is " + ingest.ClientIDPrefix + "<--id>"
	var dbcs dbc.BusFiles
	fs.Var(&dbcs, "dbc", "the car's "+cli.DBCHelp)
	outDir := fs.String("out-dir", "", "the lake: a `DIR`, or s3://bucket/prefix (docs/lake.md), shared with the other instances")
	group := fs.String("group", "", "subscribe as $share/`NAME`/FILTER: the instances of a group split the messages")
	leave := fs.Bool("leave", false, "at SIGTERM, leave for good: unsubscribe, take what is on its way, commit, end the session (the group's others take this instance's share)")
	host, _ := os.Hostname()
	id := fs.String("id", host, "this instance's `ID`, stable across restarts: its session on the broker, its files and manifests")
	rollBytes := fs.Int64("roll-bytes", ingest.DefaultRollBytes, "commit after `N` bytes of window payload")
	rollAge := fs.Duration("roll-age", ingest.DefaultRollAge, "commit at least every `D`")
	maxUnacked := fs.Int("max-unacked", ingest.DefaultMaxUnacked, fmt.Sprintf("commit after `N` messages, at most %d", ingest.ReceiveMaximum))
	rollMemory := fs.Int64("roll-memory", ingest.DefaultRollMemory, "commit once the rows waiting for the commit take `N` bytes of memory")
	maxWindow := fs.Int("max-window-bytes", ingest.DefaultMaxWindowBytes, "skip (and count) a window payload of more than `N` bytes")
	metrics := fs.String("metrics", "", "serve Prometheus metrics on `ADDR` (host:port) at /metrics")
	connectTimeout := fs.Duration("connect-timeout", cli.DefaultConnectTimeout, fmt.Sprintf("give up when the broker has not accepted the first connection within `D`, at most %v", cli.MaxConnectTimeout))
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := refuseClientID(fs); err != nil {
		return err
	}
	if dbcs.Empty() {
		return cli.Exit(2, errors.New("ingest: --dbc is required"))
	}
	if *outDir == "" {
		return cli.Exit(2, errors.New("ingest: --out-dir is required"))
	}
	if err := cli.FirstError(
		cli.DurationIn("ingest", "--connect-timeout", *connectTimeout, time.Millisecond, cli.MaxConnectTimeout),
		cli.DurationAtLeast("ingest", "--roll-age", *rollAge, time.Millisecond),
		intIn("ingest", "--max-unacked", *maxUnacked, 1, ingest.ReceiveMaximum),
		intIn("ingest", "--roll-bytes", *rollBytes, 1, 1<<50),
		intIn("ingest", "--roll-memory", *rollMemory, 1<<20, 1<<50),
		intIn("ingest", "--max-window-bytes", *maxWindow, 1<<10, 1<<28),
	); err != nil {
		return err
	}
	settings, js, err := ingestSource(fs, conn, jsFlags)
	if err != nil {
		return err
	}
	buses, hash, err := ingestBuses(ctx, dbcs)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(e.Stderr, nil))
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	cfg := ingest.Config{Conn: settings, ID: *id, Group: *group, Leave: *leave, Filters: fs.Args(), Buses: buses,
		Dir: *outDir, DBCHash: hash, RollBytes: *rollBytes, RollAge: *rollAge, MaxUnacked: *maxUnacked,
		RollMemory: *rollMemory, MaxWindowBytes: *maxWindow, ConnectTimeout: *connectTimeout, Registerer: reg, Log: log, JetStream: js}
	in, closeStore, err := openIngest(ctx, e, cfg)
	if err != nil {
		return err
	}
	defer closeStore()
	stop, err := serveMetrics(*metrics, reg)
	if err != nil {
		return err
	}
	defer stop()
	err = in.Run(ctx)
	writeIngestSummary(e, in.Counters())
	return err
}

// jetStreamFlags are the flags of the JetStream source.
type jetStreamFlags struct {
	broker             string // --broker as given
	stream             *string
	partitions         *int
	pinnedTTL, ackWait *time.Duration
}

func addJetStreamFlags(fs *flag.FlagSet) jetStreamFlags {
	return jetStreamFlags{
		stream:     fs.String("stream", ingest.DefaultStream, "with a nats:// --broker: the `NAME` of the stream of the fleet's windows"),
		partitions: fs.Int("partitions", ingest.DefaultPartitions, "with a nats:// --broker: the stream's `N` partitions (its subject transform's partition(N,1)); a durable consumer each"),
		pinnedTTL:  fs.Duration("pinned-ttl", ingest.DefaultPinnedTTL, "with a nats:// --broker: a partition whose instance has not asked for messages for `D` goes to another"),
		ackWait:    fs.Duration("ack-wait", 0, "with a nats:// --broker: the server sends a window again when it is not acknowledged within `D` (default 2×--roll-age + 30s)"),
	}
}

// ingestSource returns the MQTT settings and, for a nats:// --broker,
// the JetStream source; the connection flags' TLS files and user apply
// to both.
func ingestSource(fs *flag.FlagSet, conn *brokerflags.Flags, jf jetStreamFlags) (mqttclient.Settings, *ingest.JetStream, error) {
	broker := jf.broker
	if broker == "" {
		broker = os.Getenv(flagenv.EnvName("broker"))
	}
	if !ingest.IsNATS(broker) {
		for _, name := range []string{"stream", "partitions", "pinned-ttl", "ack-wait"} {
			if flagGiven(fs, name) {
				return mqttclient.Settings{}, nil, cli.Exit(2, fmt.Errorf("ingest: --%s is for a nats:// --broker", name))
			}
		}
		s, err := cli.BrokerSettings("ingest", conn)
		return s, nil, err
	}
	if flagGiven(fs, "leave") {
		return mqttclient.Settings{}, nil, cli.Exit(2, errors.New("ingest: --leave is for an MQTT broker: on JetStream an instance hands its partitions over at every end"))
	}
	// The MQTT settings' checks, of the TLS files and the user, on an
	// MQTT URL that stands for the cluster.
	if err := fs.Set("broker", "mqtts://jetstream.invalid:8883"); err != nil {
		return mqttclient.Settings{}, nil, cli.Exit(2, fmt.Errorf("ingest: %w", err))
	}
	s, err := cli.BrokerSettings("ingest", conn)
	if err != nil {
		return s, nil, err
	}
	s.Broker = ""
	if err := cli.FirstError(
		intIn("ingest", "--partitions", *jf.partitions, 1, ingest.MaxPartitions),
		cli.DurationIn("ingest", "--pinned-ttl", *jf.pinnedTTL, 2*time.Second, 24*time.Hour),
	); err != nil {
		return s, nil, err
	}
	return s, &ingest.JetStream{URLs: strings.Split(broker, ","), Stream: *jf.stream, Partitions: *jf.partitions,
		PinnedTTL: *jf.pinnedTTL, AckWait: *jf.ackWait}, nil
}

// lastValue is a flag's value that keeps the last one given.
type lastValue struct {
	flag.Value
	last *string
}

func (v *lastValue) Set(s string) error {
	*v.last = s
	return v.Value.Set(s)
}

// flagGiven reports whether the command line set the flag name.
func flagGiven(fs *flag.FlagSet, name string) bool {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	return given
}

// openIngest opens the lake of cfg (its store for an s3:// lake) and
// the instance. The object store's requests end on a signal while the
// lake opens (a store that never answers cannot hold the ingest); once
// it is open, they outlive the signal: the last commit must still reach
// the bucket, until closeStore, which the caller calls once it is done.
func openIngest(ctx context.Context, e cli.Env, cfg ingest.Config) (in *ingest.Ingest, closeStore func(), err error) {
	storeCtx, endStore := context.WithCancel(context.WithoutCancel(ctx))
	opening := context.AfterFunc(ctx, endStore)
	store, err := ingestStore(storeCtx, cfg.Dir, e.Stderr)
	if err != nil {
		endStore()
		return nil, nil, openInterrupted(ctx, cfg.Dir, err)
	}
	cfg.Store = store
	if err := cfg.Validate(); err != nil {
		endStore()
		return nil, nil, cli.Exit(2, err)
	}
	in, err = ingest.New(cfg)
	if err != nil {
		endStore()
		return nil, nil, openInterrupted(ctx, cfg.Dir, err)
	}
	if !opening() {
		endStore()
		return nil, nil, openInterrupted(ctx, cfg.Dir, context.Canceled)
	}
	return in, endStore, nil
}

// refuseClientID refuses --client-id, which the connection flags
// define for every command: an instance's client id is
// candec-ingest-<--id>, and a --client-id taken and not used would
// have the user believe they chose it.
func refuseClientID(fs *flag.FlagSet) error {
	var err error
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "client-id" {
			err = cli.Exit(2, fmt.Errorf("ingest: --client-id is not taken: the client id is %s<--id> (--id names the instance)", ingest.ClientIDPrefix))
		}
	})
	return err
}

// ingestStore is the store of an s3:// lake, nil for a directory, its
// requests bounded by ctx; each retry is a line on stderr.
func ingestStore(ctx context.Context, dir string, stderr io.Writer) (lake.Store, error) {
	s, err := s3store.LakeStore(ctx, dir, s3store.Options{Retried: s3store.RetryLine(stderr)})
	if err != nil {
		return nil, fmt.Errorf("ingest: %w", err)
	}
	return s, nil
}

// openInterrupted is err, or when a signal (ctx's end) came while the
// lake at dir opened, the ingest's "interrupted" naming it.
func openInterrupted(ctx context.Context, dir string, err error) error {
	if ctx.Err() == nil {
		return err
	}
	return fmt.Errorf("ingest: interrupted while opening the lake %s", dir)
}

// ingestBuses loads the DBC files of spec, one set per interface, and
// returns them with the hash the lake records.
func ingestBuses(ctx context.Context, spec dbc.BusFiles) ([]ingest.Bus, string, error) {
	b, err := dbc.LoadBuses(ctx, spec)
	if err != nil {
		return nil, "", fmt.Errorf("ingest: %w", err)
	}
	hash, err := spec.Hash(ctx)
	if err != nil {
		return nil, "", fmt.Errorf("ingest: %w", err)
	}
	var buses []ingest.Bus
	if b.All != nil {
		buses = append(buses, ingest.Bus{DB: b.All})
	}
	for _, name := range spec.Names() {
		buses = append(buses, ingest.Bus{Interface: name, DB: b.Interfaces[name]})
	}
	return buses, hash, nil
}

// serveMetrics serves reg's metrics on addr until stop; "" serves none.
func serveMetrics(addr string, reg *prometheus.Registry) (stop func(), err error) {
	if addr == "" {
		return func() {}, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, cli.Exit(2, fmt.Errorf("ingest: --metrics: %w", err))
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}, nil
}

// writeIngestSummary says what the instance took in and wrote.
func writeIngestSummary(e cli.Env, c ingest.Counters) {
	fmt.Fprintf(e.Stderr, "candec ingest: %d messages, %d windows of %d vehicles, %d rows (%d values) in %d files, %d commits; %d duplicates skipped",
		c.Messages, c.Windows, len(c.Vehicles), c.Rows, c.Values, c.Files, c.Commits, c.Duplicates)
	for _, r := range []string{ingest.ReasonVehicle, ingest.ReasonWindow, ingest.ReasonSize, ingest.ReasonSignal, ingest.ReasonValue, ingest.ReasonTime, ingest.ReasonRetained} {
		if n := c.Malformed[r]; n > 0 {
			fmt.Fprintf(e.Stderr, ", %d malformed (%s)", n, r)
		}
	}
	fmt.Fprintf(e.Stderr, "; gaps: %d windows, %d envelopes\n", c.WindowGaps, c.EnvelopeGaps)
}

// intIn refuses v outside lo..hi, naming the flag: exit status 2.
func intIn[T int | int64](cmd, flag string, v, lo, hi T) error {
	if v >= lo && v <= hi {
		return nil
	}
	return cli.Exit(2, fmt.Errorf("%s: %s must be from %d to %d, got %d", cmd, flag, lo, hi, v))
}
