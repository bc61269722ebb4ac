package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/yukart/candec/capture"
	"github.com/yukart/candec/internal/replay"
	"github.com/yukart/candec/mqttclient"
)

func runReplay(ctx context.Context, e env, args []string) error {
	fs := newFlags(e, "replay", "[flags] CAPTURE|-")
	conn := brokerFlags(fs, fmt.Sprintf("candec-replay-%d", os.Getpid()))
	topic := fs.String("topic", "yukart/can/raw", "raw batch `topic`")
	speed := fs.Float64("speed", 1, fmt.Sprintf("play `N` times faster than the capture, %g to %g (5: the report's full bus; ignored with --flood)", float64(replay.MinSpeed), float64(replay.MaxSpeed)))
	flood := fs.Bool("flood", false, "send as fast as the broker takes it, ignoring the capture's timing")
	window := fs.Duration("window", replay.DefaultWindow, fmt.Sprintf("batching window `D`, %v to %v", replay.MinWindow, replay.MaxWindow))
	perFrame := fs.Bool("per-frame", false, "one message per frame instead of batches")
	loop := fs.Bool("loop", false, "start the capture again when it ends (until Ctrl-C)")
	skip := fs.Bool("skip-invalid", false, "skip malformed capture lines instead of stopping")
	connectTimeout := fs.Duration("connect-timeout", defaultConnectTimeout, fmt.Sprintf("give up when the broker has not accepted the connection within `D`, at most %v", maxConnectTimeout))
	asJSON := fs.Bool("json", false, "print the final counts as one JSON line on standard output")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return &exitError{2, errors.New("replay: want one capture file (or - for standard input)")}
	}
	var checks []error
	if !*flood {
		checks = append(checks, floatIn("replay", "--speed", *speed, replay.MinSpeed, replay.MaxSpeed))
	}
	if !*perFrame {
		checks = append(checks, durationIn("replay", "--window", *window, replay.MinWindow, replay.MaxWindow))
	}
	checks = append(checks, durationIn("replay", "--connect-timeout", *connectTimeout, time.Millisecond, maxConnectTimeout))
	if err := firstError(checks...); err != nil {
		return err
	}
	settings, err := brokerSettings("replay", conn)
	if err != nil {
		return err
	}
	if *topic == "" || strings.ContainsAny(*topic, "+#\x00") {
		// A broker drops a client that publishes on such a topic.
		return &exitError{2, fmt.Errorf("replay: --topic %q must be a topic name: not empty, without + # or NUL", *topic)}
	}
	name := fs.Arg(0)
	if name == "-" && *loop {
		return &exitError{2, errors.New("replay: --loop needs a file: standard input cannot be read twice")}
	}
	// A FIFO, like standard input, can be read only once.
	fifo := false
	if fi, err := os.Stat(name); err == nil && fi.Mode()&os.ModeNamedPipe != 0 {
		fifo = true
		if *loop {
			return &exitError{2, fmt.Errorf("replay: --loop needs a file: the FIFO %s cannot be read twice", name)}
		}
	}
	opts := capture.Options{SkipInvalid: *skip, Stdin: e.stdin}
	open := replay.OpenFile(ctx, name, opts)
	if name != "-" && !fifo {
		// A capture that cannot be read is the first thing to say, before
		// any connection. (Standard input is read once, when the replay
		// starts, and so is a FIFO.)
		f, err := capture.OpenContext(ctx, name, opts)
		if err != nil {
			return fmt.Errorf("replay: %w", err)
		}
		f.Close()
	}

	// The connection outlives ctx: when ctx ends the replay still sends
	// its open batch, then disconnects cleanly.
	connCtx, cancelConn := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelConn()
	attempts := mqttclient.NewAttempts()
	cm, err := mqttclient.Connect(connCtx, mqttclient.Config{
		Settings: settings, ConnectTimeout: *connectTimeout,
		OnConnectError: attempts.Record,
	})
	if err != nil {
		return &exitError{2, fmt.Errorf("replay: %w", err)}
	}
	if err := attempts.Await(ctx, cm, settings.Broker, *connectTimeout); err != nil {
		disconnect(cm, time.Second)
		return fmt.Errorf("replay: %w", err)
	}
	mp := mqttclient.NewPublisher(cm, *topic, 0, false, "")
	// The batches go at QoS 0, which a broker drops without a word when
	// the user may not write the topic; the first goes at QoS 1, whose
	// PUBACK says whether it may. A refusal ends the replay.
	runCtx, refuse := context.WithCancelCause(ctx)
	defer refuse(nil)
	confirmed := false
	// Say at once when publishing starts failing (the broker went away),
	// rather than only in the summary at the end of a long or looping
	// replay.
	failing := false
	pub := replay.PublisherFunc(func(ctx context.Context, batch []byte) error {
		var err error
		if confirmed {
			err = mp.Publish(ctx, batch)
		} else if err = mp.Confirm(ctx, batch); errors.Is(err, mqttclient.ErrPublishRefused) {
			refuse(err)
			return err
		} else {
			confirmed = err == nil
		}
		if err != nil && !failing && !*asJSON {
			fmt.Fprintf(e.stderr, "replay: publishing to %s fails: %v (the replay goes on, counting the lost frames)\n", settings.Broker, err)
		}
		failing = err != nil
		return err
	})
	start := time.Now()
	st, runErr := replay.Run(runCtx, open, pub, replay.Options{
		Speed: *speed, Window: *window, PerFrame: *perFrame, Loop: *loop, Flood: *flood,
	})
	elapsed := time.Since(start)
	disconnect(cm, 2*time.Second)
	if cause := context.Cause(runCtx); errors.Is(cause, mqttclient.ErrPublishRefused) {
		return fmt.Errorf("replay: %s refused the first batch: %w", settings.Broker, cause)
	}

	if runErr != nil && st.Batches == 0 {
		// Nothing was sent: the error is the whole story.
		return runErr
	}
	if *asJSON {
		if err := json.NewEncoder(e.stdout).Encode(st); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(e.stderr, "replay: %d frames in %d batches in %v (%.0f frames/s), %d passes",
			st.Frames, st.Batches, elapsed.Round(time.Millisecond), float64(st.Frames)/max(elapsed.Seconds(), 1e-9), st.Loops)
		if st.Failed > 0 {
			fmt.Fprintf(e.stderr, "; %d failed publishes (%d frames lost)", st.Failed, st.FailedFrames)
		}
		if st.Skipped > 0 {
			fmt.Fprintf(e.stderr, "; skipped %s", replay.DescribeSkips(st.SkippedBy))
		}
		fmt.Fprintln(e.stderr)
	}
	if runErr == nil && ctx.Err() != nil && !*loop {
		// A signal ended the replay before the capture did: what was
		// read went out, but not the whole capture. (With --loop, a
		// signal is the way to end.)
		shown := name
		if name == "-" {
			shown = "stdin"
		}
		runErr = fmt.Errorf("replay: %s: interrupted after %d frames", shown, st.Frames)
	}
	if runErr == nil && st.Failed > 0 {
		runErr = fmt.Errorf("replay: %d of %d batches failed to publish to %s (%d frames lost); last error: %s",
			st.Failed, st.Batches, settings.Broker, st.FailedFrames, st.LastError)
	}
	return runErr
}

// firstError returns the first non-nil error.
func firstError(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// durationIn checks that a duration flag is in [lo, hi].
func durationIn(cmd, flag string, v, lo, hi time.Duration) error {
	if v < lo || v > hi {
		return &exitError{2, fmt.Errorf("%s: %s must be between %v and %v, got %v", cmd, flag, lo, hi, v)}
	}
	return nil
}

// durationAtLeast checks that a duration flag is at least lo.
func durationAtLeast(cmd, flag string, v, lo time.Duration) error {
	if v >= lo {
		return nil
	}
	if lo == 0 {
		return &exitError{2, fmt.Errorf("%s: %s must not be negative, got %v", cmd, flag, v)}
	}
	return &exitError{2, fmt.Errorf("%s: %s must be positive, got %v", cmd, flag, v)}
}

// floatIn checks that a number flag is in [lo, hi] (NaN is not).
func floatIn(cmd, flag string, v, lo, hi float64) error {
	if !(v >= lo && v <= hi) {
		return &exitError{2, fmt.Errorf("%s: %s must be between %g and %g, got %g", cmd, flag, lo, hi, v)}
	}
	return nil
}
