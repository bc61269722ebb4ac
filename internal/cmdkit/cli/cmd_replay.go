package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/eclipse/paho.golang/autopaho"

	"github.com/yukart/candec/capture"
	"github.com/yukart/candec/internal/cmdkit/brokerflags"
	"github.com/yukart/candec/internal/cmdkit/replay"
	"github.com/yukart/candec/mqttclient"
)

// replayFlags are replay's flags.
type replayFlags struct {
	conn           *brokerflags.Flags
	topic          *string
	speed          *float64
	flood          *bool
	window         *time.Duration
	perFrame       *bool
	loop           *bool
	skip           *bool
	connectTimeout *time.Duration
	asJSON         *bool
}

func runReplay(ctx context.Context, e Env, args []string) error {
	fs := NewFlags(e, "replay", "[flags] CAPTURE|-")
	f := defineReplayFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return &ExitError{2, errors.New("replay: want one capture file (or - for standard input)")}
	}
	if err := f.check(); err != nil {
		return err
	}
	settings, err := BrokerSettings("replay", f.conn)
	if err != nil {
		return err
	}
	if *f.topic == "" || strings.ContainsAny(*f.topic, "+#\x00") {
		// A broker drops a client that publishes on such a topic.
		return &ExitError{2, fmt.Errorf("replay: --topic %q must be a topic name: not empty, without + # or NUL", *f.topic)}
	}
	name := fs.Arg(0)
	open, err := replayInput(ctx, e, name, f)
	if err != nil {
		return err
	}
	// The connection outlives ctx: when ctx ends the replay still sends
	// its open batch, then disconnects cleanly.
	connCtx, cancelConn := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelConn()
	cm, err := connectReplay(ctx, connCtx, settings, *f.connectTimeout)
	if err != nil {
		return err
	}
	// The open batch has replayGrace after ctx ends; then the
	// connection ends, its socket closed at the latest
	// mqttclient.DefaultDisconnectTimeout later: a broker that stopped
	// reading cannot hold the replay (a publish blocked in its write
	// fails, and is counted).
	var cut atomic.Bool // the grace ran out: the connection was ended under the replay
	stopGrace := context.AfterFunc(ctx, func() {
		time.AfterFunc(replayGrace, func() { cut.Store(true); cancelConn() })
	})
	defer stopGrace()
	// The batches go at QoS 0; the first at QoS 1, whose PUBACK says
	// whether the user may write the topic (replay.RunConfirmed).
	var failing func(error)
	if !*f.asJSON {
		failing = func(err error) {
			fmt.Fprintf(e.Stderr, "replay: publishing to %s fails: %v (the replay goes on, counting the lost frames)\n", settings.Broker, err)
		}
	}
	start := time.Now()
	st, runErr := replay.RunConfirmed(ctx, open, mqttclient.NewPublisher(cm, *f.topic, 0, false, ""), replay.Options{
		Speed: *f.speed, Window: *f.window, PerFrame: *f.perFrame, Loop: *f.loop, Flood: *f.flood,
	}, failing)
	elapsed := time.Since(start)
	disconnect(cm, 2*time.Second)
	if errors.Is(runErr, mqttclient.ErrPublishRefused) {
		return fmt.Errorf("replay: %s refused the first batch: %w", settings.Broker, runErr)
	}
	if runErr != nil && st.Batches == 0 {
		// Nothing was sent: the error is the whole story.
		return runErr
	}
	if err := reportReplay(e, st, elapsed, *f.asJSON); err != nil {
		return err
	}
	if cut.Load() {
		return fmt.Errorf("replay: %s did not take what was written within %v of the signal (connected, not reading): the connection was closed, and what was written to it last is lost", settings.Broker, replayGrace)
	}
	return replayOutcome(ctx, runErr, st, name, settings.Broker, *f.loop)
}

// replayGrace is how long the replay may go on sending its open batch
// once a signal came: with the connection's end, it stops within 3 s
// whatever the broker does.
const replayGrace = 2 * time.Second

// defineReplayFlags defines replay's flags on fs.
func defineReplayFlags(fs *flag.FlagSet) *replayFlags {
	return &replayFlags{
		conn:           BrokerFlags(fs, fmt.Sprintf("candec-replay-%d", os.Getpid())),
		topic:          fs.String("topic", "yukart/can/raw", "raw batch `topic`"),
		speed:          fs.Float64("speed", 1, fmt.Sprintf("play `N` times faster than the capture, %g to %g (5: the report's full bus; ignored with --flood)", float64(replay.MinSpeed), float64(replay.MaxSpeed))),
		flood:          fs.Bool("flood", false, "send as fast as the broker takes it, ignoring the capture's timing"),
		window:         fs.Duration("window", replay.DefaultWindow, fmt.Sprintf("batching window `D`, %v to %v", replay.MinWindow, replay.MaxWindow)),
		perFrame:       fs.Bool("per-frame", false, "one message per frame instead of batches"),
		loop:           fs.Bool("loop", false, "start the capture again when it ends (until Ctrl-C)"),
		skip:           fs.Bool("skip-invalid", false, "skip malformed capture lines instead of stopping"),
		connectTimeout: fs.Duration("connect-timeout", DefaultConnectTimeout, fmt.Sprintf("give up when the broker has not accepted the connection within `D`, at most %v", MaxConnectTimeout)),
		asJSON:         fs.Bool("json", false, "print the final counts as one JSON line on standard output"),
	}
}

// check refuses a number out of its range, naming the flag: the speed
// unless flooding, the window unless one frame a message.
func (f *replayFlags) check() error {
	var checks []error
	if !*f.flood {
		checks = append(checks, FloatIn("replay", "--speed", *f.speed, replay.MinSpeed, replay.MaxSpeed))
	}
	if !*f.perFrame {
		checks = append(checks, DurationIn("replay", "--window", *f.window, replay.MinWindow, replay.MaxWindow))
	}
	checks = append(checks, DurationIn("replay", "--connect-timeout", *f.connectTimeout, time.Millisecond, MaxConnectTimeout))
	return FirstError(checks...)
}

// replayInput returns the opener of the capture name. --loop needs a
// file that can be read twice; a file that cannot be read is the first
// thing to say, before any connection.
func replayInput(ctx context.Context, e Env, name string, f *replayFlags) (replay.Opener, error) {
	if name == "-" && *f.loop {
		return nil, &ExitError{2, errors.New("replay: --loop needs a file: standard input cannot be read twice")}
	}
	// A FIFO, like standard input, can be read only once.
	fifo := false
	if fi, err := os.Stat(name); err == nil && fi.Mode()&os.ModeNamedPipe != 0 {
		fifo = true
		if *f.loop {
			return nil, &ExitError{2, fmt.Errorf("replay: --loop needs a file: the FIFO %s cannot be read twice", name)}
		}
	}
	opts := capture.Options{SkipInvalid: *f.skip, Stdin: e.Stdin}
	if name != "-" && !fifo {
		// Standard input is read once, when the replay starts, and so
		// is a FIFO.
		c, err := capture.OpenContext(ctx, name, opts)
		if err != nil {
			return nil, fmt.Errorf("replay: %w", err)
		}
		c.Close()
	}
	return replay.OpenFile(ctx, name, opts), nil
}

// connectReplay connects on connCtx and waits, within ctx and timeout,
// for the broker to accept the connection.
func connectReplay(ctx, connCtx context.Context, settings mqttclient.Settings, timeout time.Duration) (*autopaho.ConnectionManager, error) {
	attempts := mqttclient.NewAttempts()
	cm, err := mqttclient.Connect(connCtx, mqttclient.Config{
		Settings: settings, ConnectTimeout: timeout,
		OnConnectError: attempts.Record,
	})
	if err != nil {
		return nil, &ExitError{2, fmt.Errorf("replay: %w", err)}
	}
	if err := attempts.Await(ctx, cm, settings.Broker, timeout); err != nil {
		disconnect(cm, time.Second)
		return nil, fmt.Errorf("replay: %w", err)
	}
	return cm, nil
}

// reportReplay writes the counts: one JSON line on standard output, or
// a sentence on standard error.
func reportReplay(e Env, st replay.Stats, elapsed time.Duration, asJSON bool) error {
	if asJSON {
		return json.NewEncoder(e.Stdout).Encode(st)
	}
	fmt.Fprintf(e.Stderr, "replay: %d frames in %d batches in %v (%.0f frames/s), %d passes",
		st.Frames, st.Batches, elapsed.Round(time.Millisecond), float64(st.Frames)/max(elapsed.Seconds(), 1e-9), st.Loops)
	if st.Failed > 0 {
		fmt.Fprintf(e.Stderr, "; %d failed publishes (%d frames lost)", st.Failed, st.FailedFrames)
	}
	if st.Skipped > 0 {
		fmt.Fprintf(e.Stderr, "; skipped %s", replay.DescribeSkips(st.SkippedBy))
	}
	fmt.Fprintln(e.Stderr)
	return nil
}

// replayOutcome is the replay's error once its counts are out: the
// run's, an interrupt before the capture's end, or the lost batches.
func replayOutcome(ctx context.Context, runErr error, st replay.Stats, name, broker string, loop bool) error {
	if runErr == nil && ctx.Err() != nil && !loop {
		// A signal ended the replay before the capture did: what was
		// read went out, but not the whole capture. (With --loop, a
		// signal is the way to end.)
		shown := name
		if name == "-" {
			shown = "stdin"
		}
		return fmt.Errorf("replay: %s: interrupted after %d frames", shown, st.Frames)
	}
	if runErr == nil && st.Failed > 0 {
		return fmt.Errorf("replay: %d of %d batches failed to publish to %s (%d frames lost); last error: %s",
			st.Failed, st.Batches, broker, st.FailedFrames, st.LastError)
	}
	return runErr
}
