package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/yukart/candec/capture"
	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/internal/tune"
	"github.com/yukart/candec/pipeline"
)

func runTune(ctx context.Context, e env, args []string) error {
	fs := newFlags(e, "tune", "--dbc FILE[,FILE] [--policy FILE] [flags] CAPTURE|-")
	dbcs := fs.String("dbc", "testdata/yukart.dbc", "DBC `FILE[,FILE]`")
	policy := fs.String("policy", "", "policy `FILE` (default: the built-in default policy)")
	subs := fs.Int("subscribers", tune.DefaultSubscribers, "all-signal subscribers the deliveries are counted for (`N` ≥ 1)")
	top := fs.Int("top", 20, "show the `N` costliest signals (0: all)")
	template := fs.String("topic-template", "", "topic `TEMPLATE`: {signal}, {message}, {bus} (default yukart/vehicle/{signal}; a DBC that repeats signal names needs {message})")
	window := fs.Bool("window", false, "also count the window stream's messages")
	asJSON := fs.Bool("json", false, "write the report as JSON")
	skip := fs.Bool("skip-invalid", false, "skip malformed capture lines instead of stopping")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return &exitError{2, fmt.Errorf("tune: want one capture file (or - for standard input)")}
	}
	// Zero or negative counts are mistakes, not requests for the
	// defaults: say so rather than report something else.
	if *subs < 1 {
		return &exitError{2, fmt.Errorf("tune: --subscribers must be 1 or more, got %d", *subs)}
	}
	if *top < 0 {
		return &exitError{2, fmt.Errorf("tune: --top must be 0 (all signals) or more, got %d", *top)}
	}
	db, err := dbc.Load(strings.Split(*dbcs, ",")...)
	if err != nil {
		return err
	}
	var pol *pipeline.PolicyFile
	if *policy != "" {
		if pol, err = pipeline.LoadPolicy(*policy); err != nil {
			return err
		}
	}
	in, err := capture.Open(fs.Arg(0), capture.Options{SkipInvalid: *skip, Stdin: e.stdin})
	if err != nil {
		return fmt.Errorf("tune: %w", err)
	}
	defer in.Close()
	rep, err := tune.Analyze(in, tune.Config{
		DB: db, Policy: pol, Subscribers: *subs, Window: *window, TopicTemplate: *template,
	})
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	name := "default"
	if pol != nil {
		name = pol.Name()
	}
	fmt.Fprintf(e.stdout, "policy: %s   DBC: %s\n", name, *dbcs)
	return rep.WriteText(e.stdout, *top)
}
