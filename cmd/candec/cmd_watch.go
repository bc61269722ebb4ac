package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
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
	// subscribeTimeout bounds the wait for a SUBACK.
	subscribeTimeout = 10 * time.Second
	// maxSubscribeDrops is how many times in a row the broker may close
	// the connection before answering the SUBSCRIBE before watch gives
	// up: a broker drops a client whose filter it refuses, and the
	// client would otherwise reconnect and subscribe again forever.
	maxSubscribeDrops = 3
)

func runWatch(ctx context.Context, e env, args []string) error {
	fs := newFlags(e, "watch", "[flags] [FILTER...]  (default: yukart/vehicle/+ and the decoder's status)")
	broker := fs.String("broker", "mqtt://127.0.0.1:1883", "broker `URL`")
	clientID := fs.String("client-id", fmt.Sprintf("candec-watch-%d", time.Now().UnixNano()%1e6), "MQTT client id")
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
	sub := &paho.Subscribe{}
	for _, f := range filters {
		sub.Subscriptions = append(sub.Subscriptions, paho.SubscribeOptions{Topic: f})
	}
	subs := &subscriber{ctx: ctx, sub: sub, filters: filters, fatal: make(chan error, 1)}
	var lastErr atomic.Value
	cm, err := mqttclient.Connect(ctx, mqttclient.Config{
		URL:            *broker,
		ClientID:       *clientID,
		ConnectTimeout: *connectTimeout,
		OnPublish: func(p *paho.Publish) {
			// MQTT v5 sets the retain flag only on messages sent
			// because of the subscription, not on live ones.
			if p.Retain {
				mon.ObserveRetained(p.Topic, p.Payload, time.Now())
				return
			}
			mon.Observe(p.Topic, p.Payload, time.Now())
		},
		// Subscribe again on every connection: the session is clean.
		OnUp:           func(cm *autopaho.ConnectionManager, _ *paho.Connack) { subs.up(cm) },
		OnDown:         subs.down,
		OnConnectError: func(err error) { lastErr.Store(err) },
	})
	if err != nil {
		return &exitError{2, fmt.Errorf("watch: %w", err)}
	}
	defer func() {
		dctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = cm.Disconnect(dctx)
	}()
	if err := awaitConnection(ctx, cm, *broker, *connectTimeout, &lastErr); err != nil {
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
		case err := <-subs.fatal:
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
				fmt.Fprintln(e.stderr, watch.Truncate(fmt.Sprintf("candec watch %s %v   %s   (Ctrl-C for the summary)", *broker, filters, now.Format("15:04:05")), width))
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

// subscriber subscribes on every connection and tells a refusal, which
// ends the watch, from a connection that dropped for another reason.
type subscriber struct {
	ctx     context.Context
	sub     *paho.Subscribe
	filters []string
	fatal   chan error

	mu      sync.Mutex
	gen     int  // connections so far
	pending bool // a SUBSCRIBE on this connection awaits its SUBACK
	drops   int  // connections in a row dropped before the SUBACK
}

func (s *subscriber) up(cm *autopaho.ConnectionManager) {
	s.mu.Lock()
	s.gen++
	gen := s.gen
	s.pending = true
	s.mu.Unlock()
	go func() {
		ctx, cancel := context.WithTimeout(s.ctx, subscribeTimeout)
		defer cancel()
		sa, err := cm.Subscribe(ctx, s.sub)
		s.mu.Lock()
		defer s.mu.Unlock()
		if gen != s.gen || !s.pending || s.ctx.Err() != nil {
			return // a later connection took over, or the watch ends
		}
		s.pending = false
		switch {
		case sa != nil && err != nil:
			s.fail(refusal(s.filters, sa))
		case err != nil:
			s.fail(fmt.Errorf("watch: subscribe to %v: %w", s.filters, err))
		default:
			s.drops = 0
		}
	}()
}

func (s *subscriber) down() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.pending {
		return
	}
	s.pending = false
	s.drops++
	if s.drops >= maxSubscribeDrops {
		s.fail(fmt.Errorf("watch: the broker closed the connection %d times in a row before answering the subscription to %v: it refuses a filter, or this client", s.drops, s.filters))
	}
}

func (s *subscriber) fail(err error) {
	select {
	case s.fatal <- err:
	default:
	}
}

// refusal names the filters whose SUBACK reason code is a failure.
func refusal(filters []string, sa *paho.Suback) error {
	var errs []error
	for i, code := range sa.Reasons {
		if code >= 0x80 && i < len(filters) {
			errs = append(errs, fmt.Errorf("%q: reason code 0x%02X", filters[i], code))
		}
	}
	if len(errs) == 0 {
		return errors.New("watch: the broker refused the subscription")
	}
	return fmt.Errorf("watch: the broker refused the subscription to %w", errors.Join(errs...))
}
