package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/yukart/candec/capture"
	"github.com/yukart/candec/internal/cmdkit/cli"
	"github.com/yukart/candec/internal/cmdkit/outfile"
	"github.com/yukart/candec/internal/lab/chart"
	"github.com/yukart/candec/internal/lab/plot"
	"github.com/yukart/candec/pipeline"
)

func runPlot(ctx context.Context, e cli.Env, args []string) error {
	fs := cli.NewFlags(e, "plot", "--dbc [IFACE=]FILE[,FILE] --signals GLOB -o FILE.svg|FILE.png [--policy FILE] CAPTURE|-")
	dbcs := cli.CarDBCVar(fs)
	signals := fs.String("signals", "", "`GLOB` on signal names or Message.Signal (required), such as \"*Speed*\"")
	out := fs.String("o", "", "output `FILE`: .svg or .png (required)")
	policy := fs.String("policy", "", "policy `FILE`: overlay what the service would publish under it")
	skip := fs.Bool("skip-invalid", false, "skip malformed capture lines instead of stopping")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return cli.Exit(2, errors.New("plot: want one capture file (or - for standard input)"))
	}
	if *signals == "" {
		return cli.Exit(2, errors.New("plot: --signals GLOB is required (\"*\" for every signal of a small DBC)"))
	}
	if *out == "" || *out == "-" {
		return cli.Exit(2, errors.New("plot: -o FILE.svg or FILE.png is required"))
	}
	format, err := chart.FormatOf(*out)
	if err != nil {
		return cli.Exit(2, fmt.Errorf("plot: -o: %w", err))
	}
	inputs := append([]string{fs.Arg(0), *policy}, dbcs.Inputs()...)
	if err := outfile.CheckNotInput(*out, inputs...); err != nil {
		return cli.Exit(2, fmt.Errorf("plot: -o: %w", err))
	}
	sel, _, err := dbcs.Load(ctx)
	if err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	db := sel.DB
	cfg := plot.Config{DB: db, Signals: *signals}
	if *policy != "" {
		if cfg.Policy, err = pipeline.LoadPolicyContext(ctx, *policy); err != nil {
			return err
		}
	}
	// An unmatched glob is a usage error, found before the capture is read.
	if _, err := plot.Match(db, *signals); err != nil {
		return cli.Exit(2, err)
	}
	in, err := capture.OpenContext(ctx, fs.Arg(0), capture.Options{SkipInvalid: *skip, Stdin: e.Stdin})
	if err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	defer in.Close()
	src := sel.Source(in)
	d, err := plot.Collect(ctx, src, cfg)
	// An IFACE= that names no interface of the capture fails plot, once
	// the chart is written; it is most likely why a signal had no frame.
	ferr := src.Finish(e.Stderr, "plot", "candec plot: ", fs.Arg(0))
	if err != nil {
		if errors.Is(err, plot.ErrTooMany) {
			return cli.Exit(2, err)
		}
		if ferr != nil {
			return cli.Exit(2, ferr)
		}
		return err
	}
	if m := d.MissingText(); m != "" {
		fmt.Fprintln(e.Stderr, "warning:", m)
	}
	if err := writePlot(e, d, *out, format, inputs); err != nil {
		return err
	}
	if ferr != nil {
		return cli.Exit(2, ferr)
	}
	return nil
}

// writePlot draws d to out, written aside and renamed into place.
func writePlot(e cli.Env, d *plot.Data, out string, format chart.Format, inputs []string) error {
	w, err := outfile.Create(out, e.Stdout, inputs...)
	if err != nil {
		return fmt.Errorf("plot: -o: %w", err)
	}
	defer w.Abort()
	c, width, height := d.Chart()
	if err := chart.Write(w, c, width, height, format); err != nil {
		return fmt.Errorf("plot: write %s: %w", out, err)
	}
	if err := w.Commit(); err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	fmt.Fprintf(e.Stderr, "wrote %s (%d signals in %d panels)\n", out, len(d.Series), len(d.Panels()))
	return nil
}
