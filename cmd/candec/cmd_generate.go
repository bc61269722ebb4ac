package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/simulate"
)

func init() {
	commands["generate"] = command{
		summary: "generate a simulated capture of the kart (candump -l format)",
		run:     runGenerate,
	}
}

// runGenerate writes a simulated capture. Its defaults reproduce
// testdata/idle.log when run from the repository root.
func runGenerate(ctx context.Context, e env, args []string) error {
	fs := newFlags(e, "generate", "[flags]")
	d := simulate.DefaultOptions()
	dbcs := fs.String("dbc", "testdata/yukart.dbc", "DBC `FILE[,FILE]` whose cyclic messages are sent")
	scenario := fs.String("scenario", string(d.Scenario), "what the kart does: "+scenarioNames())
	fs.DurationVar(&d.Duration, "duration", d.Duration, "length of the capture")
	fs.Int64Var(&d.Seed, "seed", d.Seed, "random seed; the same seed gives the same capture")
	start := fs.String("start", d.Start.Format(time.RFC3339Nano), "time of the capture's start (RFC 3339)")
	fs.StringVar(&d.Interface, "iface", d.Interface, "interface name written in the log")
	out := fs.String("o", "-", "output `FILE` (- for standard output)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return &exitError{2, fmt.Errorf("generate: unexpected argument %q", fs.Arg(0))}
	}
	d.Scenario = simulate.Scenario(*scenario)
	t, err := time.Parse(time.RFC3339Nano, *start)
	if err != nil {
		return &exitError{2, fmt.Errorf("generate: --start: %w", err)}
	}
	d.Start = t
	if err := d.Validate(); err != nil {
		return &exitError{2, fmt.Errorf("generate: %w", err)}
	}
	db, err := dbc.Load(strings.Split(*dbcs, ",")...)
	if err != nil {
		return err
	}

	w, closeOut := io.Writer(e.stdout), func() error { return nil }
	if *out != "-" {
		f, err := os.Create(*out)
		if err != nil {
			return fmt.Errorf("generate: %w", err)
		}
		w, closeOut = f, f.Close
	}
	n, err := simulate.WriteLog(ctx, w, db, d)
	if cerr := closeOut(); err == nil && cerr != nil {
		err = fmt.Errorf("generate: %w", cerr)
	}
	if err != nil {
		if *out != "-" {
			os.Remove(*out) // a partial capture would pass for a whole one
		}
		return err
	}
	if *out != "-" {
		fmt.Fprintf(e.stderr, "generate: %d frames, %s %s, seed %d, to %s\n", n, d.Duration, d.Scenario, d.Seed, *out)
	}
	return nil
}

func scenarioNames() string {
	names := make([]string, len(simulate.Scenarios))
	for i, s := range simulate.Scenarios {
		names[i] = string(s)
	}
	return strings.Join(names, ", ")
}
