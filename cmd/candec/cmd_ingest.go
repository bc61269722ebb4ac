//go:build !car

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/internal/decodejob"
	"github.com/yukart/candec/internal/ingest"
	"github.com/yukart/candec/internal/lake"
	"github.com/yukart/candec/internal/lake/s3store"
)

// runIngest is `candec ingest`: the fleet's window streams from the
// cloud broker into a lake, one instance of a group (docs/ingest.md).
func runIngest(ctx context.Context, e env, args []string) error {
	fs := newFlags(e, "ingest", "--broker URL --dbc [IFACE=]FILE --out-dir LAKE [flags] [TOPIC-FILTER...]  (default: "+ingest.DefaultFilter+")")
	conn := brokerFlags(fs, ingest.ClientIDPrefix+"ID")
	fs.Lookup("client-id").Usage = "not used: the client id is " + ingest.ClientIDPrefix + "<--id>"
	var dbcs dbcFlag
	fs.Var(&dbcs, "dbc", "DBC `[IFACE=]FILE[,FILE]`: the car's, for every interface or with IFACE= for one (repeatable)")
	outDir := fs.String("out-dir", "", "the lake: a `DIR`, or s3://bucket/prefix (docs/lake.md), shared with the other instances")
	group := fs.String("group", "", "subscribe as $share/`NAME`/FILTER: the instances of a group split the messages")
	leave := fs.Bool("leave", false, "at SIGTERM, leave for good: unsubscribe, take what is on its way, commit, end the session (the group's others take this instance's share)")
	host, _ := os.Hostname()
	id := fs.String("id", host, "this instance's `ID`, stable across restarts: its session on the broker, its files and manifests")
	rollBytes := fs.Int64("roll-bytes", ingest.DefaultRollBytes, "commit after `N` bytes of window payload")
	rollAge := fs.Duration("roll-age", ingest.DefaultRollAge, "commit at least every `D`")
	maxUnacked := fs.Int("max-unacked", ingest.DefaultMaxUnacked, fmt.Sprintf("commit after `N` messages, at most %d", ingest.ReceiveMaximum))
	metrics := fs.String("metrics", "", "serve Prometheus metrics on `ADDR` (host:port) at /metrics")
	connectTimeout := fs.Duration("connect-timeout", defaultConnectTimeout, fmt.Sprintf("give up when the broker has not accepted the first connection within `D`, at most %v", maxConnectTimeout))
	if err := fs.Parse(args); err != nil {
		return err
	}
	if len(dbcs.all) == 0 && len(dbcs.iface) == 0 {
		return &exitError{2, errors.New("ingest: --dbc is required")}
	}
	if *outDir == "" {
		return &exitError{2, errors.New("ingest: --out-dir is required")}
	}
	if err := firstError(
		durationIn("ingest", "--connect-timeout", *connectTimeout, time.Millisecond, maxConnectTimeout),
		durationAtLeast("ingest", "--roll-age", *rollAge, time.Millisecond),
		intIn("ingest", "--max-unacked", *maxUnacked, 1, ingest.ReceiveMaximum),
		intIn("ingest", "--roll-bytes", *rollBytes, 1, 1<<50),
	); err != nil {
		return err
	}
	settings, err := brokerSettings("ingest", conn)
	if err != nil {
		return err
	}
	spec := decodejob.DBCs{All: dbcs.all, Interfaces: dbcs.iface}
	buses, hash, err := ingestBuses(ctx, spec)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(e.stderr, nil))
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	// The object store's requests end on a signal while the lake opens
	// (a store that never answers cannot hold the ingest); once it is
	// open, they outlive the signal: the last commit must still reach
	// the bucket.
	storeCtx, endStore := context.WithCancel(context.WithoutCancel(ctx))
	defer endStore()
	opening := context.AfterFunc(ctx, endStore)
	store, err := ingestStore(storeCtx, *outDir, e.stderr)
	if err != nil {
		return openInterrupted(ctx, *outDir, err)
	}
	cfg := ingest.Config{Conn: settings, ID: *id, Group: *group, Leave: *leave, Filters: fs.Args(), Buses: buses,
		Dir: *outDir, Store: store, DBCHash: hash, RollBytes: *rollBytes, RollAge: *rollAge, MaxUnacked: *maxUnacked,
		ConnectTimeout: *connectTimeout, Registerer: reg, Log: log}
	if err := cfg.Validate(); err != nil {
		return &exitError{2, err}
	}
	in, err := ingest.New(cfg)
	if err != nil {
		return openInterrupted(ctx, *outDir, err)
	}
	if !opening() {
		return openInterrupted(ctx, *outDir, context.Canceled)
	}
	stop, err := serveMetrics(*metrics, reg)
	if err != nil {
		return err
	}
	defer stop()
	err = in.Run(ctx)
	writeIngestSummary(e, in.Counters())
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
func ingestBuses(ctx context.Context, spec decodejob.DBCs) ([]ingest.Bus, string, error) {
	hash, err := spec.Hash()
	if err != nil {
		return nil, "", fmt.Errorf("ingest: %s", strings.TrimPrefix(err.Error(), "decode: "))
	}
	var buses []ingest.Bus
	if len(spec.All) > 0 {
		db, err := dbc.LoadContext(ctx, spec.All...)
		if err != nil {
			return nil, "", err
		}
		buses = append(buses, ingest.Bus{DB: db})
	}
	names := make([]string, 0, len(spec.Interfaces))
	for name := range spec.Interfaces {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		db, err := dbc.LoadContext(ctx, spec.Interfaces[name]...)
		if err != nil {
			return nil, "", err
		}
		buses = append(buses, ingest.Bus{Interface: name, DB: db})
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
		return nil, &exitError{2, fmt.Errorf("ingest: --metrics: %w", err)}
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
func writeIngestSummary(e env, c ingest.Counters) {
	fmt.Fprintf(e.stderr, "candec ingest: %d messages, %d windows of %d vehicles, %d rows (%d values) in %d files, %d commits; %d duplicates skipped",
		c.Messages, c.Windows, len(c.Vehicles), c.Rows, c.Values, c.Files, c.Commits, c.Duplicates)
	for _, r := range []string{ingest.ReasonVehicle, ingest.ReasonWindow, ingest.ReasonSignal, ingest.ReasonRetained} {
		if n := c.Malformed[r]; n > 0 {
			fmt.Fprintf(e.stderr, ", %d malformed (%s)", n, r)
		}
	}
	fmt.Fprintf(e.stderr, "; gaps: %d windows, %d envelopes\n", c.WindowGaps, c.EnvelopeGaps)
}

// intIn refuses v outside lo..hi, naming the flag: exit status 2.
func intIn[T int | int64](cmd, flag string, v, lo, hi T) error {
	if v >= lo && v <= hi {
		return nil
	}
	return &exitError{2, fmt.Errorf("%s: %s must be from %d to %d, got %d", cmd, flag, lo, hi, v)}
}
