package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/yukart/candec/benchmarks"
	"github.com/yukart/candec/benchmarks/report"
	"github.com/yukart/candec/benchmarks/scenario"
	"github.com/yukart/candec/internal/base/buildinfo"
	"github.com/yukart/candec/internal/cmdkit/cli"
	"github.com/yukart/candec/internal/cmdkit/outfile"
	"github.com/yukart/candec/internal/cmdkit/progress"
	"github.com/yukart/candec/internal/lab/chart"
	"github.com/yukart/candec/mqttclient"
)

// hostEnv names the variable that overrides the host name in result
// files.
const hostEnv = "CANDEC_BENCH_HOST"

func runBench(ctx context.Context, e cli.Env, args []string) error {
	if len(args) > 0 && args[0] == "summary" {
		return runBenchSummary(e, args[1:])
	}
	fs := cli.NewFlags(e, "bench", "[flags]  |  candec bench summary [flags]")
	file := fs.String("scenarios", "benchmarks/scenarios.yaml", "scenarios `FILE`")
	profile := fs.String("profile", "smoke", "profile to run (smoke, mix, full, stress) or one scenario's name")
	repeat := fs.Int("repeat", 1, fmt.Sprintf("run the profile `N` times, 1 to %d (3 for a baseline: the summary takes medians of three)", maxRepeat))
	duration := fs.Duration("duration", 0, "measured window of every run, > 0 (default: the scenarios file's)")
	warmup := fs.Duration("warmup", 0, "warm-up of every run, > 0 (default: the scenarios file's)")
	windowSubs := fs.Bool("window-subscribers", false, "put the envelope subscribers on the window stream in every run")
	conn := cli.OwnBrokerFlags(fs, benchmarks.DefaultClientID, "use the broker at `URL` instead of a private mosquitto (never needed for a baseline)")
	brokerPID := fs.Int("broker-pid", 0, "`PID` of the --broker (> 0), to measure its CPU")
	results := fs.String("results", "", "results `DIR` (default: results/ beside the scenarios file)")
	noResults := fs.Bool("no-results", false, "print the result lines only; append them to no file")
	host := fs.String("host", "", "host name in result files (default $"+hostEnv+" or the machine's name)")
	workDir := fs.String("logs", "", "keep each run's logs in `DIR` (default: a temporary directory, kept only on failure)")
	planOnly := fs.Bool("plan-only", false, "print what would run and for how long, and exit")
	failOnWarning := fs.Bool("fail-on-warning", false, "exit non-zero when a run has a warning (loss, a short sample)")
	ff := addFleetFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return cli.Exit(2, fmt.Errorf("bench: unexpected argument %q", fs.Arg(0)))
	}
	if err := checkFleetFlags(fs, ff); err != nil {
		return err
	}
	if *ff.cars > 0 {
		return runFleet(ctx, e, ff, fleetArgs{*duration, *warmup, *workDir, *results, *noResults, *host})
	}
	broker, err := cli.OwnBrokerSettings("bench", conn)
	if err != nil {
		return err
	}
	if err := checkBenchFlags(fs, *repeat, *duration, *warmup, *brokerPID, broker.Broker); err != nil {
		return err
	}
	// The decoder and the replay run in a directory of their own.
	if err := absTLSFiles(&broker); err != nil {
		return err
	}
	h, err := checkHost("bench", hostName(*host))
	if err != nil {
		return err
	}
	o := scenario.Overrides{Duration: *duration, Warmup: *warmup}
	if *windowSubs {
		o.Stream = scenario.StreamWindow
	}
	runs, err := benchPlan(*file, *profile, o)
	if err != nil {
		return err
	}
	if *planOnly {
		return scenario.WritePlan(e.Stdout, *profile, runs, *repeat)
	}
	cfg, err := benchConfig(e, broker, *brokerPID, h, *workDir)
	if err != nil {
		return err
	}
	cfg.FailOnWarning = *failOnWarning
	if !*noResults {
		cfg.ResultsDir = resultsDir(*results, *file)
	}
	tuneBench(&cfg)
	all := make([]scenario.Run, 0, len(runs)*(*repeat))
	for range *repeat {
		all = append(all, runs...)
	}
	fmt.Fprintf(e.Stderr, "candec bench: profile %s, %d runs, about %v\n", *profile, len(all), scenario.Estimate(all, 1).Round(1e9))
	_, err = benchmarks.Run(ctx, cfg, all)
	if errors.Is(err, benchmarks.ErrWarnings) {
		return cli.Exit(3, err)
	}
	return err
}

// resultsDir is --results, or results/ beside the scenarios file.
func resultsDir(flagValue, scenarios string) string {
	if flagValue != "" {
		return flagValue
	}
	return filepath.Join(filepath.Dir(scenarios), "results")
}

// benchConfig is the bench's configuration: this binary as the decoder
// and the replay, broker (with its PID when measured), host h, the logs
// kept in workDir, the output and the progress on e.
func benchConfig(e cli.Env, broker mqttclient.Settings, brokerPID int, h, workDir string) (benchmarks.Config, error) {
	exe, err := os.Executable()
	if err != nil {
		return benchmarks.Config{}, fmt.Errorf("bench: find the candec binary: %w", err)
	}
	return benchmarks.Config{
		Exe:       exe,
		Broker:    broker,
		BrokerPID: brokerPID,
		Host:      h,
		WorkDir:   workDir,
		Out:       e.Stdout,
		Log:       e.Stderr,
		Progress:  progress.New(e.Stderr, cli.IsTerminal(e.Stderr)),
		Versions:  report.Versions{Candec: buildinfo.Read().Short()},
	}, nil
}

// absTLSFiles makes the TLS files of s absolute paths, for processes
// that run in another directory.
func absTLSFiles(s *mqttclient.Settings) error {
	for _, f := range []*string{&s.CAFile, &s.CertFile, &s.KeyFile} {
		if *f != "" {
			var err error
			if *f, err = filepath.Abs(*f); err != nil {
				return fmt.Errorf("bench: %w", err)
			}
		}
	}
	return nil
}

// benchPlan loads the scenarios file and returns the runs of profile
// under o; an unknown profile is a usage error.
func benchPlan(file, profile string, o scenario.Overrides) ([]scenario.Run, error) {
	f, err := scenario.LoadFile(file)
	if err != nil {
		return nil, fmt.Errorf("bench: --scenarios: %w", err)
	}
	runs, err := f.Plan(profile, o)
	if err != nil {
		return nil, cli.Exit(2, err)
	}
	return runs, nil
}

// tuneBench changes the bench's configuration before it runs: tests
// shorten its waits (for a quiet machine, for the decoder); the command
// leaves the defaults.
var tuneBench = func(*benchmarks.Config) {}

// maxRepeat bounds --repeat: 100 passes of the mix profile are half a
// day, and the plan is built in memory before the first run.
const maxRepeat = 100

// checkBenchFlags rejects the numeric flags of bench whose out-of-range
// values would otherwise quietly become the defaults (0 and negative
// durations mean "the scenarios file's" to scenario.Plan) or be ignored.
func checkBenchFlags(fs *flag.FlagSet, repeat int, duration, warmup time.Duration, brokerPID int, broker string) error {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	switch {
	case repeat < 1 || repeat > maxRepeat:
		return badFlag("bench", "repeat", fmt.Sprint(repeat), fmt.Sprintf("must be 1 to %d", maxRepeat))
	case set["duration"] && duration <= 0:
		return badFlag("bench", "duration", duration.String(), "must be > 0, such as 20s (leave it out for the scenarios file's)")
	case set["warmup"] && warmup <= 0:
		return badFlag("bench", "warmup", warmup.String(), "must be > 0, such as 3s (leave it out for the scenarios file's)")
	case set["broker-pid"] && brokerPID <= 0:
		return badFlag("bench", "broker-pid", fmt.Sprint(brokerPID), "must be a process ID > 0")
	case brokerPID > 0 && broker == "":
		return badFlag("bench", "broker-pid", fmt.Sprint(brokerPID), "needs --broker: without it the bench measures the mosquitto it starts")
	}
	return nil
}

// summaryProfile is the profile bench summary takes by default: the
// committed baseline is the mix profile's, and a smoke or stress run in
// the same results file must not move it.
const summaryProfile = "mix"

// writeMarkdown writes the baseline; tests replace it to make it fail.
var writeMarkdown = report.WriteMarkdown

func runBenchSummary(e cli.Env, args []string) error {
	fs := cli.NewFlags(e, "bench summary", "[flags]")
	file := fs.String("scenarios", "benchmarks/scenarios.yaml", "scenarios `FILE` (row order and the report's figures)")
	profile := fs.String("profile", summaryProfile, "summarise only the runs of this `PROFILE` (as bench --profile named it); runs of other profiles in the same files are left out")
	results := fs.String("results", "", "results `DIR` (default: results/ beside the scenarios file)")
	host := fs.String("host", "", "host whose results to summarise (default $"+hostEnv+" or the machine's name)")
	out := fs.String("o", "", "output `FILE`, replaced only once written in full (default: <results>/baseline-<host>.md; - for standard output)")
	last := fs.Int("last", report.DefaultLastRuns, "median over the last `N` runs of each scenario (at least 1)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return cli.Exit(2, fmt.Errorf("bench summary: unexpected argument %q", fs.Arg(0)))
	}
	if *last < 1 {
		return badFlag("bench summary", "last", fmt.Sprint(*last), "must be at least 1")
	}
	if *profile == "" {
		return badFlag("bench summary", "profile", `""`, "must name a profile, such as "+summaryProfile)
	}
	h, err := checkHost("bench summary", hostName(*host))
	if err != nil {
		return err
	}
	dir := cmp.Or(*results, filepath.Join(filepath.Dir(*file), "results"))
	s, refs, inputs, err := summarize(*file, dir, h, *profile, *last)
	if err != nil {
		return err
	}
	meta := report.Meta{
		Source:     filepath.ToSlash(filepath.Join(dir, h+"-*.jsonl")),
		Profile:    *profile,
		Command:    summaryCommand(fs, *profile, h),
		References: refs,
		Generated:  s.To,
	}
	path := cmp.Or(*out, filepath.Join(dir, "baseline-"+h+".md"))
	if err := writeSummary(e, path, s, meta, inputs); err != nil {
		return err
	}
	if path != "-" {
		fmt.Fprintf(e.Stderr, "wrote %s (%d scenarios of profile %s)\n", path, len(s.Rows), *profile)
	}
	for _, w := range s.Warnings {
		fmt.Fprintln(e.Stderr, "warning:", w)
	}
	return nil
}

// summarize reads the scenarios file and host h's results in dir, and
// returns the median of the last runs of each scenario of profile, the
// report's figures by scenario, and the files read.
func summarize(file, dir, h, profile string, last int) (report.Summary, map[string]*scenario.Reference, []string, error) {
	f, err := scenario.LoadFile(file)
	if err != nil {
		return report.Summary{}, nil, nil, fmt.Errorf("bench summary: --scenarios: %w", err)
	}
	inputs, err := report.Files(dir, h)
	if err != nil {
		return report.Summary{}, nil, nil, err
	}
	all, err := report.ReadDir(dir, h)
	if err != nil {
		return report.Summary{}, nil, nil, err
	}
	rs := report.OfProfile(all, profile)
	if len(rs) == 0 {
		return report.Summary{}, nil, nil, fmt.Errorf("bench summary: no runs of profile %s for host %s in %s (it has runs of: %s; choose with --profile)",
			profile, h, dir, strings.Join(report.Profiles(all), ", "))
	}
	var order []string
	refs := map[string]*scenario.Reference{}
	for _, s := range f.Scenarios {
		order = append(order, s.Name)
		if s.Report != nil {
			refs[s.Name] = s.Report
		}
	}
	return report.Summarize(rs, order, last), refs, append(inputs, file), nil
}

// writeSummary writes the baseline of s to path (- for standard output)
// and its charts beside it, none of which may be one of inputs. All are
// written aside first and put in place only once every one is whole: a
// failure leaves the old baseline with its old charts.
func writeSummary(e cli.Env, path string, s report.Summary, meta report.Meta, inputs []string) error {
	w, err := outfile.Create(path, e.Stdout, inputs...)
	if err != nil {
		if errors.Is(err, outfile.ErrSameFile) {
			return cli.Exit(2, fmt.Errorf("bench summary: %w", err))
		}
		return fmt.Errorf("bench summary: %w", err)
	}
	defer w.Abort()
	// The charts go beside the baseline, which embeds them by name.
	var charts []*outfile.File
	defer func() {
		for _, c := range charts {
			c.Abort()
		}
	}()
	if path != "-" {
		if charts, meta.Charts, err = writeCharts(e, path, s, meta.References, inputs); err != nil {
			return err
		}
	}
	if err := writeMarkdown(w, s, meta); err != nil {
		return fmt.Errorf("bench summary: write %s: %w", path, err)
	}
	for _, c := range charts {
		if err := c.Commit(); err != nil {
			return fmt.Errorf("bench summary: %w", err)
		}
		fmt.Fprintf(e.Stderr, "wrote %s\n", c.Name())
	}
	if err := w.Commit(); err != nil {
		return fmt.Errorf("bench summary: %w", err)
	}
	return nil
}

// writeCharts writes the summary's charts, to be put beside the
// baseline at path as <baseline>-<chart>.svg, and returns them
// uncommitted with their names relative to the baseline.
func writeCharts(e cli.Env, path string, s report.Summary, refs map[string]*scenario.Reference, inputs []string) ([]*outfile.File, map[string]string, error) {
	stem := strings.TrimSuffix(path, filepath.Ext(path))
	var files []*outfile.File
	names := map[string]string{}
	for _, c := range report.Charts(s, refs) {
		name := stem + "-" + c.Name + ".svg"
		w, err := outfile.Create(name, e.Stdout, inputs...)
		if err != nil {
			if errors.Is(err, outfile.ErrSameFile) {
				err = cli.Exit(2, fmt.Errorf("bench summary: %w", err))
			} else {
				err = fmt.Errorf("bench summary: %w", err)
			}
			return files, nil, err
		}
		files = append(files, w)
		if err := chart.Write(w, c.Plot, c.Width, c.Height, chart.SVG); err != nil {
			return files, nil, fmt.Errorf("bench summary: write %s: %w", name, err)
		}
		names[c.Name] = filepath.Base(name)
	}
	return files, names, nil
}

// summaryCommand is the command line that writes the same summary again:
// the profile and host always, other flags as given, -o never.
func summaryCommand(fs *flag.FlagSet, profile, host string) string {
	parts := []string{"candec bench summary", "--profile " + profile, "--host " + host}
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "profile", "host", "o":
		default:
			parts = append(parts, "--"+f.Name+" "+f.Value.String())
		}
	})
	return strings.Join(parts, " ")
}

// badFlag is the error of a flag value out of its range: exit status 2,
// naming the command, the flag, the value and what is allowed.
func badFlag(cmd, name, value, allowed string) error {
	return cli.Exit(2, fmt.Errorf("%s: --%s %s: %s", cmd, name, value, allowed))
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

// checkHost returns h when it can name results files: the host is part of
// a file name in the results directory and of the pattern that finds them,
// so a path separator or a glob character would write or read elsewhere.
func checkHost(cmd, h string) (string, error) {
	ok := h != "" && h[0] != '.' && h[0] != '-'
	for _, c := range h {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			ok = false
		}
	}
	if !ok {
		return "", cli.Exit(2, fmt.Errorf("%s: host %q: must be letters, digits, '-', '_' and '.', not starting with '.' or '-' (--host or $%s)", cmd, h, hostEnv))
	}
	return h, nil
}
