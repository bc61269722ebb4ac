package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"

	"golang.org/x/term"

	"github.com/yukart/candec/bench"
	"github.com/yukart/candec/bench/progress"
	"github.com/yukart/candec/bench/report"
	"github.com/yukart/candec/bench/scenario"
)

func init() {
	commands["bench"] = command{
		summary: "measure candec against a real mosquitto: the report's mix table (see benchmarks/README.md)",
		run:     runBench,
	}
}

// hostEnv names the variable that overrides the host name in result
// files.
const hostEnv = "CANDEC_BENCH_HOST"

func runBench(ctx context.Context, e env, args []string) error {
	if len(args) > 0 && args[0] == "summary" {
		return runBenchSummary(e, args[1:])
	}
	fs := newFlags(e, "bench", "[flags]  |  candec bench summary [flags]")
	file := fs.String("scenarios", "benchmarks/scenarios.yaml", "scenarios `FILE`")
	profile := fs.String("profile", "smoke", "profile to run (smoke, mix, full, stress) or one scenario's name")
	repeat := fs.Int("repeat", 1, "run the profile `N` times (3 for a baseline: the summary takes medians of three)")
	duration := fs.Duration("duration", 0, "measured window of every run (default: the scenarios file's)")
	warmup := fs.Duration("warmup", 0, "warm-up of every run (default: the scenarios file's)")
	windowSubs := fs.Bool("window-subscribers", false, "put the envelope subscribers on the window stream in every run")
	brokerURL := fs.String("broker", "", "use this broker `URL` instead of a private mosquitto (never needed for a baseline)")
	brokerPID := fs.Int("broker-pid", 0, "`PID` of the --broker, to measure its CPU")
	results := fs.String("results", "", "results `DIR` (default: results/ beside the scenarios file)")
	noResults := fs.Bool("no-results", false, "print the result lines only; append them to no file")
	host := fs.String("host", "", "host name in result files (default $"+hostEnv+" or the machine's name)")
	workDir := fs.String("logs", "", "keep each run's logs in `DIR` (default: a temporary directory, kept only on failure)")
	planOnly := fs.Bool("plan-only", false, "print what would run and for how long, and exit")
	failOnWarning := fs.Bool("fail-on-warning", false, "exit non-zero when a run has a warning (loss, a short sample)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return &exitError{2, fmt.Errorf("bench: unexpected argument %q", fs.Arg(0))}
	}
	f, err := scenario.LoadFile(*file)
	if err != nil {
		return err
	}
	o := scenario.Overrides{Duration: *duration, Warmup: *warmup}
	if *windowSubs {
		o.Stream = scenario.StreamWindow
	}
	runs, err := f.Plan(*profile, o)
	if err != nil {
		return &exitError{2, err}
	}
	if *planOnly {
		return scenario.WritePlan(e.stdout, *profile, runs, *repeat)
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("bench: find the candec binary: %w", err)
	}
	cfg := bench.Config{
		Exe:           exe,
		Broker:        *brokerURL,
		BrokerPID:     *brokerPID,
		Host:          hostName(*host),
		WorkDir:       *workDir,
		Out:           e.stdout,
		Log:           e.stderr,
		Progress:      progress.New(e.stderr, isTerminal(e.stderr)),
		Versions:      report.Versions{Candec: candecVersion()},
		FailOnWarning: *failOnWarning,
	}
	if !*noResults {
		cfg.ResultsDir = *results
		if cfg.ResultsDir == "" {
			cfg.ResultsDir = filepath.Join(filepath.Dir(*file), "results")
		}
	}
	all := make([]scenario.Run, 0, len(runs)*max(*repeat, 1))
	for range max(*repeat, 1) {
		all = append(all, runs...)
	}
	fmt.Fprintf(e.stderr, "candec bench: profile %s, %d runs, about %v\n", *profile, len(all), scenario.Estimate(all, 1).Round(1e9))
	_, err = bench.Run(ctx, cfg, all)
	if errors.Is(err, bench.ErrWarnings) {
		return &exitError{3, err}
	}
	return err
}

func runBenchSummary(e env, args []string) error {
	fs := newFlags(e, "bench summary", "[flags]")
	file := fs.String("scenarios", "benchmarks/scenarios.yaml", "scenarios `FILE` (row order and the report's figures)")
	profile := fs.String("profile", "", "summarise only runs of this profile (default: every run)")
	results := fs.String("results", "", "results `DIR` (default: results/ beside the scenarios file)")
	host := fs.String("host", "", "host whose results to summarise (default $"+hostEnv+" or the machine's name)")
	out := fs.String("o", "", "output `FILE` (default: <results>/baseline-<host>.md; - for standard output)")
	last := fs.Int("last", report.DefaultLastRuns, "median over the last `N` runs of each scenario")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return &exitError{2, fmt.Errorf("bench summary: unexpected argument %q", fs.Arg(0))}
	}
	f, err := scenario.LoadFile(*file)
	if err != nil {
		return err
	}
	dir := *results
	if dir == "" {
		dir = filepath.Join(filepath.Dir(*file), "results")
	}
	h := hostName(*host)
	rs, err := report.ReadDir(dir, h)
	if err != nil {
		return err
	}
	if *profile != "" {
		kept := rs[:0]
		for _, r := range rs {
			if r.Profile == *profile {
				kept = append(kept, r)
			}
		}
		if len(kept) == 0 {
			return fmt.Errorf("bench summary: no runs of profile %s for host %s in %s", *profile, h, dir)
		}
		rs = kept
	}
	var order []string
	refs := map[string]*scenario.Reference{}
	for _, s := range f.Scenarios {
		order = append(order, s.Name)
		if s.Report != nil {
			refs[s.Name] = s.Report
		}
	}
	s := report.Summarize(rs, order, *last)
	meta := report.Meta{Source: filepath.ToSlash(filepath.Join(dir, h+"-*.jsonl")), References: refs, Generated: s.To}
	if *out == "-" {
		return report.WriteMarkdown(e.stdout, s, meta)
	}
	path := *out
	if path == "" {
		path = filepath.Join(dir, "baseline-"+h+".md")
	}
	w, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("bench summary: %w", err)
	}
	if err := report.WriteMarkdown(w, s, meta); err != nil {
		w.Close()
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "wrote %s (%d scenarios)\n", path, len(s.Rows))
	for _, w := range s.Warnings {
		fmt.Fprintln(e.stderr, "warning:", w)
	}
	return nil
}

// hostName returns the host name for result files: flag, then
// $CANDEC_BENCH_HOST, then the machine's name up to its first dot.
func hostName(flagValue string) string {
	if flagValue != "" {
		return flagValue
	}
	if h := os.Getenv(hostEnv); h != "" {
		return h
	}
	h, err := os.Hostname()
	if err != nil || h == "" {
		return "localhost"
	}
	h, _, _ = strings.Cut(h, ".")
	return h
}

// candecVersion returns the module version and VCS revision the binary
// was built from, as far as the build recorded them.
func candecVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := bi.Main.Version
	if v == "" || v == "(devel)" {
		v = "devel"
	}
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			v += " " + s.Value[:12]
		}
		if s.Key == "vcs.modified" && s.Value == "true" {
			v += "+dirty"
		}
	}
	return v
}

// isTerminal reports whether w is a terminal.
func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
