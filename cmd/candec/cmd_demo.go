package main

import (
	"context"
	"os"
	"time"

	"golang.org/x/term"

	"github.com/yukart/candec/demo"
)

func init() {
	commands["demo"] = command{
		summary: "see it work: replay the car's capture through an embedded broker and the decoder, live",
		run:     runDemo,
	}
}

// nonTerminalDuration is how long the demo runs by default when its
// output is not a terminal (a pipe, a CI log).
const nonTerminalDuration = 10 * time.Second

func runDemo(ctx context.Context, e env, args []string) error {
	fs := newFlags(e, "demo", "[flags]")
	var o demo.Options
	fs.StringVar(&o.Broker, "broker", "", "use the broker at `URL` instead of the embedded one")
	fs.StringVar(&o.DBC, "dbc", demo.DefaultDBC, "DBC `file`")
	fs.StringVar(&o.Capture, "capture", demo.DefaultCapture, "candump `file` to replay in a loop")
	fs.StringVar(&o.Policy, "policy", "", "policy `file` (default: the built-in policy)")
	fs.Float64Var(&o.Speed, "speed", 1, "play the capture `N` times faster")
	duration := fs.Duration("duration", -1, "stop after `D` (default: at Ctrl-C on a terminal, 10s otherwise)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	o.Out = e.stdout
	o.TTY = isTerminal(e.stdout)
	if o.TTY {
		if _, h, err := term.GetSize(int(e.stdout.(*os.File).Fd())); err == nil {
			o.Rows = h
		}
	}
	switch {
	case *duration >= 0:
		o.Duration = *duration
	case !o.TTY:
		o.Duration = nonTerminalDuration
	}
	return demo.Run(ctx, o)
}
