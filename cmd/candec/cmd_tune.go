package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path/filepath"

	"github.com/yukart/candec/capture"
	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/internal/cmdkit/cli"
	"github.com/yukart/candec/internal/cmdkit/decodejob"
	"github.com/yukart/candec/internal/cmdkit/outfile"
	"github.com/yukart/candec/internal/lab/chart"
	"github.com/yukart/candec/internal/tune"
	"github.com/yukart/candec/pipeline"
	"gonum.org/v1/plot/vg"
)

func runTune(ctx context.Context, e cli.Env, args []string) (err error) {
	defer func() { err = cli.Interrupted(ctx, "tune", err, "") }()
	fs := cli.NewFlags(e, "tune", "--dbc [IFACE=]FILE[,FILE] [--policy FILE] [flags] CAPTURE|-\n       candec tune --dbc [IFACE=]FILE --budget N --write-policy OUT.yaml [pins] CAPTURE[=DBC[,DBC]]...")
	f := tuneFlags{
		dbcs:     cli.CarDBCVar(fs),
		policy:   fs.String("policy", "", "policy `FILE` (default: the built-in default policy); with --write-policy, the base the optimizer starts from and --keep keeps"),
		subs:     fs.Int("subscribers", tune.DefaultSubscribers, "all-signal subscribers the deliveries are counted for (`N` ≥ 1)"),
		top:      fs.Int("top", 20, "show the `N` costliest signals (0: all)"),
		template: fs.String("topic-template", "", "topic `TEMPLATE`: {signal}, {message}, {bus}, {sa} (default yukart/vehicle/{signal}; a DBC that repeats signal names needs {message})"),
		window:   fs.Bool("window", false, "also count the window stream's messages"),
		asJSON:   fs.Bool("json", false, "write the report as JSON"),
		skip:     fs.Bool("skip-invalid", false, "skip malformed capture lines instead of stopping"),
		svg:      fs.String("svg", "", "also draw the envelopes/s per signal, before and after the policy (with --write-policy: total error against deliveries/s), to `FILE` (.svg or .png)"),
		budget:   fs.Float64("budget", tune.ComfortableDeliveriesPerS, "deliveries/s `N` the broker may take: drawn with --svg, the limit of --write-policy; the default is the report's comfortable limit"),
	}
	f.optimizeFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := checkOptimizeOnly(fs, *f.write != ""); err != nil {
		return err
	}
	if *f.write == "" && fs.NArg() != 1 {
		fs.Usage()
		return cli.Exit(2, fmt.Errorf("tune: want one capture file (or - for standard input); several only with --write-policy"))
	}
	if err := checkTuneCounts(*f.subs, *f.top, *f.budget); err != nil {
		return err
	}
	f.inputs = append(append([]string{*f.policy}, fs.Args()...), f.dbcs.Inputs()...)
	if *f.svg != "" {
		var err error
		if f.format, err = checkTuneChart(*f.svg, f.inputs); err != nil {
			return err
		}
	}
	sel, dbcName, err := f.dbcs.Load(ctx)
	f.dbcName = dbcName
	if err != nil {
		return fmt.Errorf("tune: %w", err)
	}
	warnRanges(e, sel.DB, dbcName)
	var pol *pipeline.PolicyFile
	if *f.policy != "" {
		if pol, err = pipeline.LoadPolicyContext(ctx, *f.policy); err != nil {
			return err
		}
	}
	if *f.write != "" {
		return runOptimize(ctx, e, &f, sel, pol, fs.Args())
	}
	return runTuneReport(ctx, e, &f, sel, pol, fs.Arg(0))
}

// tuneFlags are tune's flags, parsed.
type tuneFlags struct {
	dbcs                  *cli.CarDBCFlag
	policy, template, svg *string
	subs, top             *int
	window, asJSON, skip  *bool
	budget                *float64
	inputs                []string
	dbcName               string
	format                chart.Format
	optimizeOpts
}

// runTuneReport reports what policy pol (the default when nil) costs and
// loses on one capture.
func runTuneReport(ctx context.Context, e cli.Env, f *tuneFlags, sel *decodejob.Selector, pol *pipeline.PolicyFile, name string) error {
	in, err := capture.OpenContext(ctx, name, capture.Options{SkipInvalid: *f.skip, Stdin: e.Stdin})
	if err != nil {
		return fmt.Errorf("tune: %w", err)
	}
	defer in.Close()
	src := sel.Source(in)
	rep, err := tune.Analyze(src, tune.Config{
		DB: sel.DB, Policy: pol, Subscribers: *f.subs, Window: *f.window, TopicTemplate: *f.template,
	})
	// An IFACE= that names no interface of the capture fails tune, once
	// the report is out.
	ferr := src.Finish(e.Stderr, "tune", "candec tune: ", name)
	if err != nil {
		if ferr != nil && errors.Is(err, tune.ErrEmpty) {
			// No frame decoded: most likely because of the IFACE=.
			return cli.Exit(2, ferr)
		}
		return err
	}
	if err := writeTuneReport(e, f, rep, pol); err != nil {
		return err
	}
	if ferr != nil {
		return cli.Exit(2, ferr)
	}
	return nil
}

// writeTuneReport writes the report rep of policy pol (nil: the
// default), and its chart with --svg.
func writeTuneReport(e cli.Env, f *tuneFlags, rep *tune.Report, pol *pipeline.PolicyFile) error {
	polName := "default"
	if pol != nil {
		polName = pol.Name()
	}
	if *f.svg != "" {
		cc := tune.ChartConfig{Budget: *f.budget}
		if pol != nil {
			cc.Policy = filepath.Base(polName)
		}
		c, width, height := rep.Chart(cc)
		if err := writeTuneChart(e, c, width, height, *f.svg, f.format, f.inputs); err != nil {
			return err
		}
	}
	if *f.asJSON {
		enc := json.NewEncoder(e.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	fmt.Fprintf(e.Stdout, "policy: %s   DBC: %s\n", polName, f.dbcName)
	return rep.WriteText(e.Stdout, *f.top)
}

// checkTuneCounts checks tune's counts. Zero or negative counts are
// mistakes, not requests for the defaults: say so rather than report
// something else.
func checkTuneCounts(subs, top int, budget float64) error {
	if subs < 1 {
		return cli.Exit(2, fmt.Errorf("tune: --subscribers must be 1 or more, got %d", subs))
	}
	if top < 0 {
		return cli.Exit(2, fmt.Errorf("tune: --top must be 0 (all signals) or more, got %d", top))
	}
	if !(budget > 0) || math.IsInf(budget, 1) {
		return cli.Exit(2, fmt.Errorf("tune: --budget must be a number of deliveries/s more than 0, got %g", budget))
	}
	return nil
}

// checkTuneChart returns the format of the chart file svg, which must
// be a file (the report goes to standard output) and none of inputs.
func checkTuneChart(svg string, inputs []string) (chart.Format, error) {
	if svg == "-" {
		return "", cli.Exit(2, errors.New("tune: --svg wants a file: the report goes to standard output"))
	}
	format, err := chart.FormatOf(svg)
	if err != nil {
		return "", cli.Exit(2, fmt.Errorf("tune: --svg: %w", err))
	}
	if err := outfile.CheckNotInput(svg, inputs...); err != nil {
		return "", cli.Exit(2, fmt.Errorf("tune: --svg: %w", err))
	}
	return format, nil
}

// writeTuneChart draws c to name, written aside and renamed into place.
func writeTuneChart(e cli.Env, c chart.Drawer, width, height vg.Length, name string, format chart.Format, inputs []string) error {
	w, err := outfile.Create(name, e.Stdout, inputs...)
	if err != nil {
		return fmt.Errorf("tune: --svg: %w", err)
	}
	defer w.Abort()
	if err := chart.Write(w, c, width, height, format); err != nil {
		return fmt.Errorf("tune: write %s: %w", name, err)
	}
	if err := w.Commit(); err != nil {
		return fmt.Errorf("tune: %w", err)
	}
	fmt.Fprintf(e.Stderr, "wrote %s\n", name)
	return nil
}

// warnRanges warns when every range db states is beyond what its
// signal's bits carry: the DBC most likely gives each signal's raw full
// scale as its physical range. A warning, not an error: the DBC decodes
// correctly, and the tuner normalises by the observed ranges instead
// (range_from in --json), so the report and the plan are sound; a
// person should still know the ranges are not the DBC's.
func warnRanges(e cli.Env, db *dbc.Database, name string) {
	if n, of := tune.ImplausibleRanges(db); n > 0 && n == of {
		fmt.Fprintf(e.Stderr, "tune: warning: %s: every range it states (%d signals) is beyond what the signal's bits carry, most likely the raw full scale: errors are normalised by the observed ranges (range_from in --json)\n", name, of)
	}
}
