package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/yukart/candec/capture"
	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/internal/cmdkit/cli"
	"github.com/yukart/candec/internal/cmdkit/decodejob"
	"github.com/yukart/candec/internal/cmdkit/outfile"
	"github.com/yukart/candec/internal/tune"
	"github.com/yukart/candec/pipeline"
)

// optimizeOpts are tune's flags of the optimizer.
type optimizeOpts struct {
	write       *string
	keep        listFlag
	minRate     listFlag
	maxLag      listFlag
	transitions *string
	jobs        *int
}

// listFlag collects a repeatable flag's comma-separated values.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(v string) error {
	*l = append(*l, cli.SplitList(v)...)
	return nil
}

func (o *optimizeOpts) optimizeFlags(fs *flag.FlagSet) {
	o.write = fs.String("write-policy", "", "choose per signal the policy that fits --budget on the worst capture with the least error, and write it to `OUT.yaml`; a capture given as CAPTURE=DBC[,DBC] is decoded with its own DBC files, which must agree with the others'")
	fs.Var(&o.keep, "keep", "with --write-policy: keep the policy of the signals matching `GLOB[,GLOB]` as --policy has it (repeatable); brings back a housekeeping signal (checksum, counter), which is otherwise not published")
	fs.Var(&o.minRate, "min-rate", "with --write-policy: publish the signals matching GLOB at least `[GLOB=]HZ` times a second (no GLOB: all; repeatable)")
	fs.Var(&o.maxLag, "max-lag", "with --write-policy: publish a change of the signals matching GLOB within `[GLOB=]DURATION` (no GLOB: all; repeatable)")
	o.transitions = fs.String("transitions", "enums", "with --write-policy: the signals that must lose no transition: enums (those with a value table), none, or `GLOB[,GLOB]`")
	o.jobs = fs.Int("jobs", 0, "with --write-policy: candidate policies run at once (`N`; 0: one per CPU)")
}

// pins reads the optimizer's flags into pins.
func (o *optimizeOpts) pins() (tune.Pins, error) {
	p := tune.Pins{Keep: o.keep}
	for _, v := range o.minRate {
		glob, num := globValue(v)
		hz, err := strconv.ParseFloat(num, 64)
		if err != nil {
			return p, fmt.Errorf("tune: --min-rate %q: want [GLOB=]HZ, a number", v)
		}
		p.MinRate = append(p.MinRate, tune.RateRule{Glob: glob, Hz: hz})
	}
	for _, v := range o.maxLag {
		glob, dur := globValue(v)
		d, err := time.ParseDuration(dur)
		if err != nil {
			return p, fmt.Errorf("tune: --max-lag %q: want [GLOB=]DURATION such as 200ms", v)
		}
		p.MaxLag = append(p.MaxLag, tune.LagRule{Glob: glob, Max: d})
	}
	switch *o.transitions {
	case "enums":
	case "none":
		p.AnyLoss = true
	default:
		p.Transitions = cli.SplitList(*o.transitions)
	}
	return p, nil
}

// globValue splits "GLOB=VALUE"; without a GLOB, it is "*".
func globValue(v string) (glob, value string) {
	if g, val, ok := strings.Cut(v, "="); ok {
		return g, val
	}
	return "*", v
}

// runOptimize reads every capture, optimizes and writes the policy file,
// aside and renamed into place: an interrupt leaves no half-written file.
func runOptimize(ctx context.Context, e cli.Env, f *tuneFlags, sel *decodejob.Selector, pol *pipeline.PolicyFile, names []string) error {
	pins, err := f.pins()
	if err != nil {
		return cli.Exit(2, err)
	}
	if *f.write == "-" || *f.jobs < 0 {
		return cli.Exit(2, errors.New("tune: --write-policy wants a file (the report goes to standard output), --jobs 0 or more"))
	}
	caps := splitCaptures(names)
	for _, c := range caps {
		f.inputs = append(f.inputs, c.file)
		f.inputs = append(f.inputs, c.dbcs...)
	}
	w, err := outfile.Create(*f.write, e.Stdout, f.inputs...)
	if err != nil {
		return fmt.Errorf("tune: --write-policy: %w", err)
	}
	defer w.Abort()
	db, err := agreeingDBC(ctx, caps, sel.DB, f.dbcName)
	if err != nil {
		return err
	}
	var recs []*tune.Recording
	for _, c := range caps {
		// A capture of its own DBC files is decoded with them on every
		// interface; the others as --dbc says.
		var s *decodejob.Selector
		if len(c.dbcs) == 0 {
			s = sel
		}
		r, err := recordCapture(ctx, e, c.file, db, s, *f.skip)
		if err != nil {
			return err
		}
		recs = append(recs, r)
	}
	plan, err := tune.Optimize(ctx, recs, tune.OptimizeConfig{
		Config: tune.Config{DB: db, Policy: pol, Subscribers: *f.subs, TopicTemplate: *f.template},
		Budget: *f.budget, Pins: pins, Jobs: *f.jobs,
	})
	if err != nil {
		return err
	}
	if _, err := w.Write(plan.PolicyYAML(db)); err != nil {
		return fmt.Errorf("tune: write %s: %w", *f.write, err)
	}
	if err := w.Commit(); err != nil {
		return fmt.Errorf("tune: %w", err)
	}
	fmt.Fprintf(e.Stderr, "wrote %s\n", *f.write)
	if *f.svg != "" {
		c, width, height := plan.Chart()
		if err := writeTuneChart(e, c, width, height, *f.svg, f.format, f.inputs); err != nil {
			return err
		}
	}
	if err := writePlan(e, plan, *f.asJSON, *f.top); err != nil {
		return err
	}
	if !plan.Met {
		return cli.Exit(1, fmt.Errorf("tune: the budget of %g deliveries/s cannot be met: the least-cost policy needs %.0f; it is written to %s", plan.Budget, plan.Worst, *f.write))
	}
	return nil
}

func writePlan(e cli.Env, plan *tune.Plan, asJSON bool, top int) error {
	if asJSON {
		enc := json.NewEncoder(e.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(plan)
	}
	return plan.WriteText(e.Stdout, top)
}

// recordCapture reads capture name into memory, through sel when not
// nil (see decodejob.Selector).
func recordCapture(ctx context.Context, e cli.Env, name string, db *dbc.Database, sel *decodejob.Selector, skip bool) (*tune.Recording, error) {
	if name == "-" {
		return nil, cli.Exit(2, errors.New("tune: --write-policy reads each capture many times: name files, not standard input"))
	}
	in, err := capture.OpenContext(ctx, name, capture.Options{SkipInvalid: skip})
	if err != nil {
		return nil, fmt.Errorf("tune: %w", err)
	}
	defer in.Close()
	if sel == nil {
		return tune.Record(ctx, name, in, db)
	}
	src := sel.Source(in)
	r, err := tune.Record(ctx, name, src, db)
	// An IFACE= that names no interface of the capture is said first:
	// it is most likely why no frame was decoded.
	if ferr := src.Finish(e.Stderr, "tune", "candec tune: ", name); ferr != nil && (err == nil || !errors.Is(err, context.Canceled)) {
		return nil, cli.Exit(2, ferr)
	}
	if err != nil {
		return nil, err
	}
	return r, nil
}

// captureArg is a capture of tune --write-policy: its file, and the DBC
// files given for it alone (none: --dbc's).
type captureArg struct {
	file string
	dbcs []string
}

// splitCaptures reads CAPTURE or CAPTURE=DBC[,DBC] arguments; a name
// that is a file is a capture whatever it holds.
func splitCaptures(names []string) []captureArg {
	var out []captureArg
	for _, n := range names {
		file, dbcs, ok := strings.Cut(n, "=")
		if _, err := os.Stat(n); err == nil || !ok || file == "" || dbcs == "" {
			out = append(out, captureArg{file: n})
			continue
		}
		out = append(out, captureArg{file: file, dbcs: cli.SplitList(dbcs)})
	}
	return out
}

// agreeingDBC returns the database every capture is decoded with: that
// of the first capture (its own DBC files, or def from --dbc), after
// checking that every other capture's agrees with it.
func agreeingDBC(ctx context.Context, caps []captureArg, def *dbc.Database, defName string) (*dbc.Database, error) {
	load := func(c captureArg) (*dbc.Database, string, error) {
		if len(c.dbcs) == 0 {
			return def, defName, nil
		}
		db, err := dbc.LoadContext(ctx, c.dbcs...)
		return db, strings.Join(c.dbcs, ","), err
	}
	ref, refName, err := load(caps[0])
	if err != nil {
		return nil, err
	}
	for _, c := range caps[1:] {
		db, name, err := load(c)
		if err != nil {
			return nil, err
		}
		if err := tune.Agree(ref, db, refName+" (for "+caps[0].file+")", name+" (for "+c.file+")"); err != nil {
			return nil, err
		}
	}
	return ref, nil
}

// checkOptimizeOnly refuses the optimizer's flags without --write-policy,
// where they would be silently ignored.
func checkOptimizeOnly(fs *flag.FlagSet, optimize bool) error {
	var err error
	fs.Visit(func(fl *flag.Flag) {
		switch fl.Name {
		case "keep", "min-rate", "max-lag", "transitions", "jobs":
			if !optimize && err == nil {
				err = cli.Exit(2, fmt.Errorf("tune: --%s works only with --write-policy", fl.Name))
			}
		}
	})
	return err
}
