package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/yukart/candec/internal/numfmt"

	"github.com/eclipse/paho.golang/autopaho"
	"github.com/eclipse/paho.golang/paho"
	"golang.org/x/term"

	"github.com/yukart/candec/internal/watch"
	"github.com/yukart/candec/mqttclient"
)

// Ranges of watch's flags.
const (
	minWatchInterval = 50 * time.Millisecond
	maxWatchInterval = time.Hour
)

func runWatch(ctx context.Context, e env, args []string) error {
	fs := newFlags(e, "watch", "[flags] [FILTER...]  (default: yukart/vehicle/+ and the decoder's status)")
	conn := brokerFlags(fs, fmt.Sprintf("candec-watch-%d", time.Now().UnixNano()%1e6))
	interval := fs.Duration("interval", time.Second, fmt.Sprintf("refresh the live view every `D`, %v to %v", minWatchInterval, maxWatchInterval))
	duration := fs.Duration("duration", 0, "stop after `D`; 0: at Ctrl-C")
	staleAfter := fs.Duration("stale", watch.DefaultStaleAfter, "flag a signal or raw topic OLD when its last live message is older than `D` (positive)")
	connectTimeout := fs.Duration("connect-timeout", defaultConnectTimeout, fmt.Sprintf("give up when the broker has not accepted the connection within `D`, at most %v", maxConnectTimeout))
	quiet := fs.Bool("quiet", false, "no live view: only the summary at the end")
	asJSON := fs.Bool("json", false, "write the summary as JSON (for scripts)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := firstError(
		durationIn("watch", "--interval", *interval, minWatchInterval, maxWatchInterval),
		durationAtLeast("watch", "--duration", *duration, 0),
		durationAtLeast("watch", "--stale", *staleAfter, time.Nanosecond),
		durationIn("watch", "--connect-timeout", *connectTimeout, time.Millisecond, maxConnectTimeout),
	); err != nil {
		return err
	}
	settings, err := brokerSettings("watch", conn)
	if err != nil {
		return err
	}
	filters := fs.Args()
	if len(filters) == 0 {
		filters = []string{"yukart/vehicle/+", "yukart/decoder/status"}
	}
	for _, f := range filters {
		if err := watch.ValidateFilter(f); err != nil {
			return &exitError{2, err}
		}
	}
	if *duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *duration)
		defer cancel()
	}

	mon := watch.New(watch.Config{StaleAfter: *staleAfter})
	subs := watch.NewSubscriber(ctx, filters)
	attempts := mqttclient.NewAttempts()
	cm, err := mqttclient.Connect(ctx, mqttclient.Config{
		Settings:       settings,
		ConnectTimeout: *connectTimeout,
		OnPublish:      func(p *paho.Publish) { mon.Publish(p, time.Now()) },
		OnUp:           func(cm *autopaho.ConnectionManager, _ *paho.Connack) { subs.Up(cm.Subscribe) },
		OnDown:         subs.Down,
		OnConnectError: attempts.Record,
	})
	if err != nil {
		return &exitError{2, fmt.Errorf("watch: %w", err)}
	}
	defer func() {
		dctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = cm.Disconnect(dctx)
	}()
	if err := attempts.Await(ctx, cm, settings.Broker, *connectTimeout); err != nil {
		return fmt.Errorf("watch: %w", err)
	}

	live := !*quiet && !*asJSON
	tty := isTerminal(e.stderr)
	tick := time.NewTicker(*interval)
	defer tick.Stop()
loop:
	for {
		select {
		case <-ctx.Done():
			break loop
		case err := <-subs.Fatal():
			return err
		case now := <-tick.C:
			if !live {
				continue
			}
			stats := mon.Snapshot(now)
			if tty {
				width, height := 0, 0
				if w, h, err := term.GetSize(int(e.stderr.(*os.File).Fd())); err == nil {
					width, height = w, h
				}
				// Two lines of heading above the table, and the last
				// line left empty so that the screen does not scroll.
				rows := 0
				if height > 0 {
					rows = max(height-3, 1)
				}
				fmt.Fprint(e.stderr, "\x1b[H\x1b[2J") // home, clear
				fmt.Fprintln(e.stderr, watch.Truncate(fmt.Sprintf("candec watch %s %v   %s   (Ctrl-C for the summary)", settings.Broker, filters, now.Format("15:04:05")), width))
				fmt.Fprintln(e.stderr)
				_ = watch.WriteTableFit(e.stderr, stats, width, rows)
			} else {
				s := mon.Summary(now)
				fmt.Fprintf(e.stderr, "%s  %d topics  %s messages  lost %s\n", now.Format("15:04:05"), s.Topics, numfmt.Count(s.Messages), numfmt.Count(s.Lost))
			}
		}
	}

	now := time.Now()
	s := mon.Summary(now)
	if *asJSON {
		enc := json.NewEncoder(e.stdout)
		return enc.Encode(s)
	}
	if !*quiet {
		_ = watch.WriteTable(e.stdout, s.TopicStats)
		fmt.Fprintln(e.stdout)
	}
	return watch.WriteSummary(e.stdout, s, mon.Histogram())
}
