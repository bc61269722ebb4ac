package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/yukart/candec/capture"
	"github.com/yukart/candec/mqttclient"
	"github.com/yukart/candec/replay"
)

func init() {
	commands["replay"] = command{
		summary: "play a capture as raw batches to the broker, at its own timing, faster, or as a flood",
		run:     runReplay,
	}
}

func runReplay(ctx context.Context, e env, args []string) error {
	fs := newFlags(e, "replay", "[flags] CAPTURE|-")
	broker := fs.String("broker", "mqtt://127.0.0.1:1883", "broker `URL`")
	topic := fs.String("topic", "yukart/can/raw", "raw batch `topic`")
	clientID := fs.String("client-id", fmt.Sprintf("candec-replay-%d", os.Getpid()), "MQTT client id")
	speed := fs.Float64("speed", 1, "play `N` times faster than the capture (5: the report's full bus)")
	flood := fs.Bool("flood", false, "send as fast as the broker takes it, ignoring the capture's timing")
	window := fs.Duration("window", replay.DefaultWindow, "batching window")
	perFrame := fs.Bool("per-frame", false, "one message per frame instead of batches")
	loop := fs.Bool("loop", false, "start the capture again when it ends (until Ctrl-C)")
	skip := fs.Bool("skip-invalid", false, "skip malformed capture lines instead of stopping")
	asJSON := fs.Bool("json", false, "print the final counts as one JSON line on standard output")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return &exitError{2, errors.New("replay: want one capture file (or - for standard input)")}
	}
	name := fs.Arg(0)
	if name == "-" && *loop {
		return &exitError{2, errors.New("replay: --loop needs a file: standard input cannot be read twice")}
	}
	opts := capture.Options{SkipInvalid: *skip}
	open := replay.OpenFile(name, opts)
	if name == "-" {
		open = func() (replay.Source, error) { return capture.NewReader(e.stdin, opts), nil }
	}

	// The connection outlives ctx: when ctx ends the replay still sends
	// its open batch, then disconnects cleanly.
	connCtx, cancelConn := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelConn()
	cm, err := mqttclient.Connect(connCtx, mqttclient.Config{URL: *broker, ClientID: *clientID})
	if err != nil {
		return err
	}
	actx, cancel := context.WithTimeout(ctx, 10*time.Second)
	err = cm.AwaitConnection(actx)
	cancel()
	if err != nil {
		return fmt.Errorf("replay: connect to %s: %w", *broker, err)
	}
	pub := mqttclient.NewPublisher(cm, *topic, 0, false, "")
	start := time.Now()
	st, runErr := replay.Run(ctx, open, pub, replay.Options{
		Speed: *speed, Window: *window, PerFrame: *perFrame, Loop: *loop, Flood: *flood,
	})
	elapsed := time.Since(start)
	dctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	_ = cm.Disconnect(dctx)
	cancel()

	if *asJSON {
		if err := json.NewEncoder(e.stdout).Encode(st); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(e.stderr, "replay: %d frames in %d batches in %v (%.0f frames/s), %d passes, %d failed publishes, %d frames skipped\n",
			st.Frames, st.Batches, elapsed.Round(time.Millisecond), float64(st.Frames)/max(elapsed.Seconds(), 1e-9), st.Loops, st.Failed, st.Skipped)
		if st.LastError != "" {
			fmt.Fprintf(e.stderr, "replay: last publish error: %s\n", st.LastError)
		}
	}
	return runErr
}
