package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/yukart/candec/internal/cmdkit/outfile"
	"github.com/yukart/candec/internal/lab/simulate"
)

// runGenerate writes a simulated capture. Its defaults reproduce
// testdata/idle.log, from any directory (the car's DBC is built in).
func runGenerate(ctx context.Context, e Env, args []string) (err error) {
	defer func() { err = Interrupted(ctx, "generate", err, "; -o is left as it was") }()
	fs := NewFlags(e, "generate", "[flags]")
	d := simulate.DefaultOptions()
	dbcs := carDBC(fs, "DBC `FILE[,FILE]` whose cyclic messages are sent")
	scenario := fs.String("scenario", string(d.Scenario), "what the kart does: "+scenarioNames())
	fs.DurationVar(&d.Duration, "duration", d.Duration, fmt.Sprintf("length of the capture, at most %v", simulate.MaxDuration))
	fs.Int64Var(&d.Seed, "seed", d.Seed, "random seed; the same seed gives the same capture")
	start := fs.String("start", d.Start.Format(time.RFC3339Nano), "time of the capture's start (RFC 3339)")
	fs.StringVar(&d.Interface, "iface", d.Interface, "interface name written in the log")
	out := fs.String("o", "-", "output `FILE` (- for standard output)")
	if err := ParseArgs(fs, args, 0, ""); err != nil {
		return err
	}
	d.Scenario = simulate.Scenario(*scenario)
	t, err := time.Parse(time.RFC3339Nano, *start)
	if err != nil {
		return &ExitError{2, fmt.Errorf("generate: --start: %w", err)}
	}
	// Zero values mean "the default" to simulate.Options, so a zero or
	// negative flag would silently become one: refuse them here.
	switch {
	case d.Duration <= 0:
		return &ExitError{2, fmt.Errorf("generate: --duration %s: want a positive duration such as 20s", d.Duration)}
	case d.Duration > simulate.MaxDuration:
		return &ExitError{2, fmt.Errorf("generate: --duration %s: at most %s (a day of the kart's bus is about 3.5 GB)", d.Duration, simulate.MaxDuration)}
	case t.Before(time.Unix(0, 0)):
		return &ExitError{2, fmt.Errorf("generate: --start %s: want a time from 1970-01-01T00:00:00Z on", *start)}
	case d.Interface == "":
		return &ExitError{2, errors.New("generate: --iface is empty: want an interface name such as can0")}
	}
	d.Start = t
	if err := d.Validate(); err != nil {
		return &ExitError{2, fmt.Errorf("generate: %w", err)}
	}
	inputs, builtIn := carDBCFiles(fs, SplitList(*dbcs))
	db, _, err := loadCarDBC(ctx, inputs, builtIn)
	if err != nil {
		return err
	}

	// The capture is written under a temporary name and renamed over -o
	// only when it is whole: a failed or interrupted run leaves a file
	// that was there as it was, and never removes a device.
	of, err := outfile.Create(*out, e.Stdout, inputs...)
	if err != nil {
		return fmt.Errorf("generate: -o: %w", err)
	}
	defer of.Abort()
	n, err := simulate.WriteLog(ctx, of, db, d)
	if err != nil {
		return fmt.Errorf("generate: %w", err)
	}
	if err := of.Commit(); err != nil {
		return fmt.Errorf("generate: %w", err)
	}
	if *out != "-" {
		fmt.Fprintf(e.Stderr, "generate: %d frames, %s %s, seed %d, to %s\n", n, d.Duration, d.Scenario, d.Seed, *out)
	}
	return nil
}

// Interrupted returns err, or when it is ctx's end (a signal) the
// command's "interrupted" with what it left (then), for a command that
// would otherwise say "context canceled".
func Interrupted(ctx context.Context, cmd string, err error, then string) error {
	if err == nil || ctx.Err() == nil || !errors.Is(err, ctx.Err()) {
		return err
	}
	return fmt.Errorf("%s: interrupted%s", cmd, then)
}

func scenarioNames() string {
	names := make([]string, len(simulate.Scenarios))
	for i, s := range simulate.Scenarios {
		names[i] = string(s)
	}
	return strings.Join(names, ", ")
}
