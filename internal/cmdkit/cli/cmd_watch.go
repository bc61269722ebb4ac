package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/yukart/candec/internal/base/numfmt"

	"github.com/eclipse/paho.golang/autopaho"
	"github.com/eclipse/paho.golang/paho"
	"golang.org/x/term"

	"github.com/yukart/candec/internal/cmdkit/brokerflags"
	"github.com/yukart/candec/internal/cmdkit/watch"
	"github.com/yukart/candec/mqttclient"
)

// Ranges of watch's flags.
const (
	minWatchInterval = 50 * time.Millisecond
	maxWatchInterval = time.Hour
)

// watchFlags are watch's flags.
type watchFlags struct {
	conn           *brokerflags.Flags
	interval       *time.Duration
	duration       *time.Duration
	staleAfter     *time.Duration
	connectTimeout *time.Duration
	maxTopics      *int
	quiet          *bool
	asJSON         *bool
}

// maxWatchTopics bounds --max-topics: 10 million topics hold about
// 18 GB.
const maxWatchTopics = 10_000_000

func runWatch(ctx context.Context, e Env, args []string) error {
	fs := NewFlags(e, "watch", "[flags] [FILTER...]  (default: yukart/vehicle/+ and the decoder's status)")
	f := defineWatchFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := f.check(); err != nil {
		return err
	}
	settings, err := BrokerSettings("watch", f.conn)
	if err != nil {
		return err
	}
	filters, err := watchFilters(fs.Args())
	if err != nil {
		return err
	}
	if *f.duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *f.duration)
		defer cancel()
	}

	mon := watch.New(watch.Config{StaleAfter: *f.staleAfter, MaxTopics: *f.maxTopics})
	subs := watch.NewSubscriber(ctx, filters)
	attempts := mqttclient.NewAttempts()
	cm, err := mqttclient.Connect(ctx, mqttclient.Config{
		Settings:       settings,
		ConnectTimeout: *f.connectTimeout,
		OnPublish:      func(p *paho.Publish) { mon.Publish(p, time.Now()) },
		OnUp:           func(cm *autopaho.ConnectionManager, _ *paho.Connack) { subs.Up(cm.Subscribe) },
		OnDown:         subs.Down,
		OnConnectError: attempts.Record,
	})
	if err != nil {
		return &ExitError{2, fmt.Errorf("watch: %w", err)}
	}
	defer disconnect(cm, time.Second)
	if err := attempts.Await(ctx, cm, settings.Broker, *f.connectTimeout); err != nil {
		return fmt.Errorf("watch: %w", err)
	}

	view := liveView{e: e, broker: settings.Broker, filters: filters, mon: mon, tty: IsTerminal(e.Stderr)}
	if err := view.run(ctx, subs, *f.interval, !*f.quiet && !*f.asJSON); err != nil {
		return err
	}
	return writeWatchSummary(e, mon, *f.quiet, *f.asJSON)
}

// defineWatchFlags defines watch's flags on fs.
func defineWatchFlags(fs *flag.FlagSet) *watchFlags {
	return &watchFlags{
		conn:           BrokerFlags(fs, fmt.Sprintf("candec-watch-%d", time.Now().UnixNano()%1e6)),
		interval:       fs.Duration("interval", time.Second, fmt.Sprintf("refresh the live view every `D`, %v to %v", minWatchInterval, maxWatchInterval)),
		duration:       fs.Duration("duration", 0, "stop after `D`; 0: at Ctrl-C"),
		staleAfter:     fs.Duration("stale", watch.DefaultStaleAfter, "flag a signal or raw topic OLD when its last live message is older than `D` (positive)"),
		connectTimeout: fs.Duration("connect-timeout", DefaultConnectTimeout, fmt.Sprintf("give up when the broker has not accepted the connection within `D`, at most %v", MaxConnectTimeout)),
		maxTopics:      fs.Int("max-topics", watch.DefaultMaxTopics, fmt.Sprintf("follow at most `N` topics, and N window item topics (about 1.8 KB each), 1 to %d: a message on another is counted, not followed", maxWatchTopics)),
		quiet:          fs.Bool("quiet", false, "no live view: only the summary at the end"),
		asJSON:         fs.Bool("json", false, "write the summary as JSON (for scripts)"),
	}
}

// check refuses a duration out of its range, naming the flag.
func (f *watchFlags) check() error {
	return FirstError(
		DurationIn("watch", "--interval", *f.interval, minWatchInterval, maxWatchInterval),
		DurationAtLeast("watch", "--duration", *f.duration, 0),
		DurationAtLeast("watch", "--stale", *f.staleAfter, time.Nanosecond),
		DurationIn("watch", "--connect-timeout", *f.connectTimeout, time.Millisecond, MaxConnectTimeout),
		maxTopicsIn(*f.maxTopics),
	)
}

// maxTopicsIn refuses a --max-topics out of its range.
func maxTopicsIn(n int) error {
	if n < 1 || n > maxWatchTopics {
		return &ExitError{2, fmt.Errorf("watch: --max-topics must be from 1 to %d, got %d", maxWatchTopics, n)}
	}
	return nil
}

// watchFilters returns the topic filters to watch: those given, or the
// signals' and the decoder's status. A bad one is exit status 2.
func watchFilters(args []string) ([]string, error) {
	filters := args
	if len(filters) == 0 {
		filters = []string{"yukart/vehicle/+", "yukart/decoder/status"}
	}
	for _, f := range filters {
		if err := watch.ValidateFilter(f); err != nil {
			return nil, &ExitError{2, err}
		}
	}
	return filters, nil
}

// liveView is what watch shows while it runs, on standard error: the
// table, redrawn on a terminal, or a line of counts per tick.
type liveView struct {
	e       Env
	broker  string
	filters []string
	mon     *watch.Monitor
	tty     bool
}

// run shows the view every interval (when live) until ctx ends, or
// returns the subscription's fatal error.
func (v liveView) run(ctx context.Context, subs *watch.Subscriber, interval time.Duration, live bool) error {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case err := <-subs.Fatal():
			return err
		case now := <-tick.C:
			if !live {
				continue
			}
			if v.tty {
				v.drawTable(now)
			} else {
				s := v.mon.Summary(now)
				fmt.Fprintf(v.e.Stderr, "%s  %d topics  %s messages  lost %s", now.Format("15:04:05"), s.Topics, numfmt.Count(s.Messages), numfmt.Count(s.Lost))
				if s.Untracked > 0 || s.UntrackedItems > 0 {
					fmt.Fprintf(v.e.Stderr, "  not followed (over %s topics): %s messages, %s window items", numfmt.Count(uint64(s.MaxTopics)), numfmt.Count(s.Untracked), numfmt.Count(s.UntrackedItems))
				}
				fmt.Fprintln(v.e.Stderr)
			}
		}
	}
}

// drawTable clears the terminal and draws the table, fitted to it.
func (v liveView) drawTable(now time.Time) {
	stats := v.mon.Snapshot(now)
	width, height := 0, 0
	if w, h, err := term.GetSize(int(v.e.Stderr.(*os.File).Fd())); err == nil {
		width, height = w, h
	}
	// Two lines of heading above the table, and the last line left
	// empty so that the screen does not scroll.
	rows := 0
	if height > 0 {
		rows = max(height-3, 1)
	}
	fmt.Fprint(v.e.Stderr, "\x1b[H\x1b[2J") // home, clear
	fmt.Fprintln(v.e.Stderr, watch.Truncate(fmt.Sprintf("candec watch %s %v   %s   (Ctrl-C for the summary)", v.broker, v.filters, now.Format("15:04:05")), width))
	// The second line says what the topic bound leaves out, if any.
	if s := v.mon.Summary(now); s.Untracked > 0 || s.UntrackedItems > 0 {
		fmt.Fprintln(v.e.Stderr, watch.Truncate(watch.Untracked(s), width))
	} else {
		fmt.Fprintln(v.e.Stderr)
	}
	_ = watch.WriteTableFit(v.e.Stderr, stats, width, rows)
}

// writeWatchSummary writes what was seen, on standard output: JSON, or
// the table (unless quiet) and the summary.
func writeWatchSummary(e Env, mon *watch.Monitor, quiet, asJSON bool) error {
	s := mon.Summary(time.Now())
	if asJSON {
		return json.NewEncoder(e.Stdout).Encode(s)
	}
	if !quiet {
		_ = watch.WriteTable(e.Stdout, s.TopicStats)
		fmt.Fprintln(e.Stdout)
	}
	return watch.WriteSummary(e.Stdout, s, mon.Histogram())
}
