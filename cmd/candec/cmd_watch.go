package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/eclipse/paho.golang/autopaho"
	"github.com/eclipse/paho.golang/paho"

	"github.com/yukart/candec/bench/report"
	"github.com/yukart/candec/bench/watch"
	"github.com/yukart/candec/mqttclient"
)

func init() {
	commands["watch"] = command{
		summary: "show live what the broker carries: per-topic rate, value, age, seq loss, latency",
		run:     runWatch,
	}
}

func runWatch(ctx context.Context, e env, args []string) error {
	fs := newFlags(e, "watch", "[flags] [FILTER...]  (default: yukart/vehicle/+ and the decoder's status)")
	broker := fs.String("broker", "mqtt://127.0.0.1:1883", "broker `URL`")
	clientID := fs.String("client-id", fmt.Sprintf("candec-watch-%d", time.Now().UnixNano()%1e6), "MQTT client id")
	interval := fs.Duration("interval", time.Second, "refresh the live view every `D`")
	duration := fs.Duration("duration", 0, "stop after `D` (default: at Ctrl-C)")
	staleAfter := fs.Duration("stale", watch.DefaultStaleAfter, "flag a topic OLD when its last message is older than `D`")
	quiet := fs.Bool("quiet", false, "no live view: only the summary at the end")
	asJSON := fs.Bool("json", false, "write the summary as JSON (for scripts)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	filters := fs.Args()
	if len(filters) == 0 {
		filters = []string{"yukart/vehicle/+", "yukart/decoder/status"}
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
	subErr := make(chan error, 1)
	cm, err := mqttclient.Connect(ctx, mqttclient.Config{
		URL:      *broker,
		ClientID: *clientID,
		OnPublish: func(p *paho.Publish) {
			mon.Observe(p.Topic, p.Payload, time.Now())
		},
		// Subscribe again on every connection: the session is clean.
		OnUp: func(cm *autopaho.ConnectionManager, _ *paho.Connack) {
			go func() {
				if _, err := cm.Subscribe(ctx, sub); err != nil && ctx.Err() == nil {
					select {
					case subErr <- err:
					default:
					}
				}
			}()
		},
	})
	if err != nil {
		return err
	}
	defer func() {
		dctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = cm.Disconnect(dctx)
	}()

	live := !*quiet && !*asJSON
	tty := isTerminal(e.stderr)
	tick := time.NewTicker(*interval)
	defer tick.Stop()
loop:
	for {
		select {
		case <-ctx.Done():
			break loop
		case err := <-subErr:
			return fmt.Errorf("watch: subscribe %v: %w", filters, err)
		case now := <-tick.C:
			if !live {
				continue
			}
			stats := mon.Snapshot(now)
			if tty {
				fmt.Fprint(e.stderr, "\x1b[H\x1b[2J") // home, clear
				fmt.Fprintf(e.stderr, "candec watch %s %v   %s   (Ctrl-C for the summary)\n\n", *broker, filters, now.Format("15:04:05"))
				_ = watch.WriteTable(e.stderr, stats)
			} else {
				s := mon.Summary(now)
				fmt.Fprintf(e.stderr, "%s  %d topics  %s messages  lost %s\n", now.Format("15:04:05"), s.Topics, report.Count(s.Messages), report.Count(s.Lost))
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
