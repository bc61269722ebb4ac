// Command subscriber is what a program on the car that reads candec's
// signals starts from (a navigation service, a dashboard): it subscribes
// to the envelopes, tracks each topic's loss with envelope.Tracker, and
// prints it.
//
//	go run ./examples/subscriber --broker mqtt://127.0.0.1:1883
//
// It prints a line when an envelope shows a gap in its topic's seq or a
// restart of the decoder, the totals every --every, and each topic's
// counts when it ends (Ctrl-C, SIGTERM or --duration). See
// examples/README.md for running it against `candec demo`.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/eclipse/paho.golang/autopaho"
	"github.com/eclipse/paho.golang/paho"

	"github.com/yukart/candec/envelope"
	"github.com/yukart/candec/mqttclient"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "subscriber:", err)
		os.Exit(1)
	}
}

// run subscribes as args say and prints to out until ctx ends or the
// duration passes.
func run(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("subscriber", flag.ContinueOnError)
	fs.SetOutput(out)
	broker := fs.String("broker", "mqtt://127.0.0.1:1883", "broker `URL` (mqtt:// or mqtts://)")
	topic := fs.String("topic", "yukart/vehicle/+", "topic `filter` of the envelopes (candec demo --broker publishes on candec-demo/vehicle/+)")
	every := fs.Duration("every", 5*time.Second, "print the totals every `D` (0: only at the end)")
	duration := fs.Duration("duration", 0, "stop after `D` (0: at Ctrl-C or SIGTERM)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if *every < 0 || *duration < 0 {
		return errors.New("--every and --duration must not be negative")
	}
	if *duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *duration)
		defer cancel()
	}
	l := &lossPrinter{out: out, tracker: envelope.NewTracker()}
	cm, err := subscribe(ctx, *broker, *topic, l)
	if err != nil {
		return err
	}
	defer cm.Disconnect(context.Background())
	var tick <-chan time.Time
	if *every > 0 {
		t := time.NewTicker(*every)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-tick:
			l.totals()
		case <-ctx.Done():
			l.final()
			return nil
		}
	}
}

// subscribe connects to broker and subscribes to filter on each
// (re)connection, handing every message to l. It returns once the
// first connection is up; a broker that refuses the client, or none
// within 10 s, is an error.
func subscribe(ctx context.Context, broker, filter string, l *lossPrinter) (*autopaho.ConnectionManager, error) {
	attempts := mqttclient.NewAttempts()
	cfg := mqttclient.Config{
		Settings: mqttclient.Settings{Broker: broker, ClientID: fmt.Sprintf("subscriber-%d", os.Getpid())},
		OnUp: func(cm *autopaho.ConnectionManager, _ *paho.Connack) {
			go func() {
				_, err := cm.Subscribe(ctx, &paho.Subscribe{Subscriptions: []paho.SubscribeOptions{{Topic: filter, QoS: 1}}})
				if err != nil {
					l.printf("subscribe %s: %v\n", filter, err)
					return
				}
				l.printf("subscribed to %s on %s\n", filter, broker)
			}()
		},
		OnConnectError: attempts.Record,
		OnPublish:      l.observe,
	}
	cm, err := mqttclient.Connect(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if err := attempts.Await(ctx, cm, broker, 10*time.Second); err != nil {
		cm.Disconnect(context.Background())
		return nil, err
	}
	return cm, nil
}

// lossPrinter tracks the envelopes of every topic and prints their loss.
// Its methods are safe for concurrent use: paho calls observe from its
// own goroutine.
type lossPrinter struct {
	mu      sync.Mutex
	out     io.Writer
	tracker *envelope.Tracker
	env     envelope.Envelope
	topics  []string // in the order first seen
	invalid uint64   // messages that are no envelope
}

// printf prints a line under the lock.
func (l *lossPrinter) printf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.out, format, args...)
}

// observe takes one message: an envelope goes to the tracker, and a gap
// or a restart is printed.
func (l *lossPrinter) observe(p *paho.Publish) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := envelope.Parse(p.Payload, &l.env); err != nil {
		l.invalid++
		fmt.Fprintf(l.out, "%q: not an envelope: %v\n", p.Topic, err)
		return
	}
	if _, seen := l.tracker.Topic(p.Topic); !seen {
		l.topics = append(l.topics, p.Topic)
	}
	o := l.tracker.Observe(p.Topic, &l.env)
	switch {
	case o.Restart:
		fmt.Fprintf(l.out, "%q: publisher restarted (epoch %d, seq %d)\n", p.Topic, l.env.Epoch, l.env.Seq)
	case o.Lost > 0:
		fmt.Fprintf(l.out, "%q: %d lost before seq %d\n", p.Topic, o.Lost, l.env.Seq)
	}
}

// totals prints the counts of all topics together.
func (l *lossPrinter) totals() {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.out, "all %d topics: %s\n", l.tracker.Topics(), counts(l.tracker.Totals()))
}

// final prints each topic's counts, by name, then the totals.
func (l *lossPrinter) final() {
	l.mu.Lock()
	topics := slices.Sorted(slices.Values(l.topics))
	for _, t := range topics {
		st, _ := l.tracker.Topic(t)
		fmt.Fprintf(l.out, "%q: %s\n", t, counts(st))
	}
	if l.invalid > 0 {
		fmt.Fprintf(l.out, "%d messages were no envelope\n", l.invalid)
	}
	l.mu.Unlock()
	l.totals()
}

// counts formats a topic's (or all topics') counters.
func counts(st envelope.TopicStats) string {
	pct := 0.0
	if n := st.Received + st.Lost; n > 0 {
		pct = float64(st.Lost) / float64(n) * 100
	}
	return fmt.Sprintf("received %d, lost %d (%.2f %%), duplicates %d, restarts %d",
		st.Received, st.Lost, pct, st.Duplicates, st.Restarts)
}
