package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"golang.org/x/term"

	"github.com/yukart/candec/internal/cmdkit/cli"
	"github.com/yukart/candec/internal/cmdkit/replay"
	"github.com/yukart/candec/internal/lab/demo"
)

// nonTerminalDuration is how long the demo runs by default when its
// output is not a terminal (a pipe, a CI log).
const nonTerminalDuration = 10 * time.Second

// autoDuration is the --duration flag of demo: a duration, or "auto"
// (the default): until Ctrl-C on a terminal, nonTerminalDuration
// otherwise.
type autoDuration struct {
	auto bool
	d    time.Duration
}

func (a *autoDuration) String() string {
	if a == nil || a.auto {
		return "auto"
	}
	return a.d.String()
}

func (a *autoDuration) Set(s string) error {
	if s == "auto" {
		*a = autoDuration{auto: true}
		return nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("want a duration such as 30s, or auto")
	}
	if d < 0 {
		return fmt.Errorf("must not be negative, got %v", d)
	}
	*a = autoDuration{d: d}
	return nil
}

func runDemo(ctx context.Context, e cli.Env, args []string) error {
	fs := cli.NewFlags(e, "demo", "[flags]")
	var o demo.Options
	conn := cli.OwnBrokerFlags(fs, fmt.Sprintf("candec-demo-%d", os.Getpid()), "use the broker at `URL` instead of the embedded one")
	fs.StringVar(&o.Prefix, "prefix", "", fmt.Sprintf("topic `prefix` for the raw batches, signals and status (default %s with --broker, %s on the embedded broker)", demo.DefaultPrefix, demo.EmbeddedPrefix))
	fs.BoolVar(&o.Force, "force", false, "run even when a decoder says online on the prefix's status topic (it would decode the demo's frames)")
	fs.DurationVar(&o.ConnectTimeout, "connect-timeout", demo.DefaultConnectTimeout, fmt.Sprintf("give up when the broker has not accepted the connection within `D`, at most %v", cli.MaxConnectTimeout))
	fs.StringVar(&o.DBC, "dbc", demo.DefaultDBC, "DBC `file`"+cli.BuiltInDBCHelp)
	fs.StringVar(&o.Capture, "capture", demo.DefaultCapture, "capture `file` to replay in a loop (any format the frame source reads); where the default file is missing, the car's idle capture built into candec")
	fs.StringVar(&o.Policy, "policy", "", "policy `file` (default: the built-in policy)")
	fs.Float64Var(&o.Speed, "speed", 1, fmt.Sprintf("play the capture `N` times faster, %g to %g", float64(replay.MinSpeed), float64(replay.MaxSpeed)))
	duration := autoDuration{auto: true}
	given := map[string]bool{}
	fs.Var(&duration, "duration", "stop after `D`; 0: at Ctrl-C; auto: at Ctrl-C on a terminal, after 10s otherwise")
	if err := cli.ParseArgs(fs, args, 0, ""); err != nil {
		return err
	}
	// An empty file is the default, or its built-in copy where it is
	// missing; a file given is that file.
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	if !given["dbc"] {
		o.DBC = ""
	}
	if !given["capture"] {
		o.Capture = ""
	}
	if err := cli.FirstError(
		cli.FloatIn("demo", "--speed", o.Speed, replay.MinSpeed, replay.MaxSpeed),
		cli.DurationIn("demo", "--connect-timeout", o.ConnectTimeout, time.Millisecond, cli.MaxConnectTimeout),
	); err != nil {
		return err
	}
	var err error
	if o.Broker, err = cli.OwnBrokerSettings("demo", conn); err != nil {
		return err
	}
	o.Out = e.Stdout
	o.TTY = cli.IsTerminal(e.Stdout)
	if f, ok := cli.FileOf(e.Stdout); ok && o.TTY {
		if _, h, err := term.GetSize(int(f.Fd())); err == nil {
			o.Rows = h
		}
	}
	switch {
	case !duration.auto:
		o.Duration = duration.d
	case !o.TTY:
		o.Duration = nonTerminalDuration
		fmt.Fprintf(e.Stderr, "demo: standard output is not a terminal: stopping after %v (--duration 0 runs until Ctrl-C, --duration D for D)\n", nonTerminalDuration)
	}
	return demo.Run(ctx, o)
}
