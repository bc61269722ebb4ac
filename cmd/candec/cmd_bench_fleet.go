package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/yukart/candec/benchmarks/fleet"
	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/internal/base/buildinfo"
	"github.com/yukart/candec/internal/cmdkit/cli"
	"github.com/yukart/candec/internal/lab/cardata"
	"github.com/yukart/candec/internal/lab/natscluster"
)

// fleetFlags are bench's flags of a fleet run (--fleet N).
type fleetFlags struct {
	cars, ingests *int
	capture, dbc  *string
	seed          *uint64
	rollAge       *time.Duration
	window        *time.Duration
	engine        *string
	nodes         *int
	killNode      *string
	// campaign, campaignKey, campaignAt: a campaign pushed mid-run.
	campaign, campaignKey, campaignAt *string
}

func addFleetFlags(fs *flag.FlagSet) fleetFlags {
	return fleetFlags{
		cars:    fs.Int("fleet", 0, "run the fleet bench instead of a profile: `N` simulated cars through a broker into --ingests instances of candec ingest (docs/fleet.md)"),
		ingests: fs.Int("ingests", 1, "with --fleet: `M` candec ingest instances sharing the fleet ($share), 1 to 8"),
		capture: fs.String("fleet-capture", cardata.CaptureFile, "with --fleet: the capture every car replays, from a starting frame of its own; where the default file is missing, the idle capture built into candec"),
		dbc:     fs.String("fleet-dbc", cardata.DBCFile, "with --fleet: the cars' DBC, which the ingests decode with too"+cli.BuiltInDBCHelp),
		seed:    fs.Uint64("seed", 1, "with --fleet: the seed of the cars' variations"),
		window:  fs.Duration("fleet-window", 10*time.Millisecond, "with --fleet: the cars' window_period, the window stream's window, 1ms to 10s"),
		rollAge: fs.Duration("roll-age", 10*time.Second, "with --fleet: the ingests' --roll-age, > 0 (they also commit every 50,000 windows)"),
		engine:  fs.String("engine", fleet.EngineMosquitto, "with --fleet: the cloud tier, mosquitto (one broker) or nats (a NATS cluster from deploy/nats, run from the repository: nats-server is built from its module; deploy/README.md)"),
		nodes:   fs.Int("nodes", natscluster.DefaultNodes, "with --engine nats: the cluster's `N` nodes, 3 (the stream's replicas, R3) to 9"),
		killNode: fs.String("kill-node", "", "with --engine nats: SIGKILL node `I` (1 to --nodes, or leader: the stream's) a third into the measured window and start it again "+
			fleetKillDown.String()+" later; no car connects to it"),
		campaign:    fs.String("campaign", "", "with --fleet: push the signed campaign `FILE` (candec campaign sign) mid-run to the cars its glob names (car00000, car00001, …) and report the fleet before and after it (docs/campaigns.md)"),
		campaignKey: fs.String("campaign-key", "", "with --campaign: the public key `FILE` the cars trust (candec campaign keygen's .pub)"),
		campaignAt:  fs.String("campaign-at", "50%", "with --campaign: when to push it, a share of --duration or a duration into the measured window, `AT`"),
	}
}

// maxFleetCars bounds --fleet: each car is a connection of the bench's
// and a drive held in memory (maxDriveBytes).
const maxFleetCars = 2000

// maxDriveBytes bounds the windows of all drives, made before the run:
// a car's window stream is about 140 kB a second (docs/fleet.md).
const (
	maxDriveBytes  = 8 << 30
	carBytesPerSec = 140_000
)

// fleetOnly are the flags that mean nothing without --fleet, and
// profileOnly those that mean nothing with it.
var (
	fleetOnly   = []string{"ingests", "fleet-capture", "fleet-dbc", "fleet-window", "seed", "roll-age", "engine", "nodes", "kill-node", "campaign", "campaign-key", "campaign-at"}
	profileOnly = []string{"scenarios", "profile", "repeat", "window-subscribers", "broker", "broker-pid", "plan-only", "fail-on-warning"}
)

// checkFleetFlags refuses a flag of the other kind of run.
func checkFleetFlags(fs *flag.FlagSet, f fleetFlags) error {
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	other := fleetOnly
	if *f.cars > 0 {
		other = profileOnly
	}
	for _, name := range other {
		if set[name] {
			if *f.cars > 0 {
				return cli.Exit(2, fmt.Errorf("bench: --%s is a profile's flag, not the fleet bench's (--fleet)", name))
			}
			return cli.Exit(2, fmt.Errorf("bench: --%s needs --fleet N", name))
		}
	}
	switch {
	case *f.cars < 0 || *f.cars > maxFleetCars:
		return badFlag("bench", "fleet", fmt.Sprint(*f.cars), fmt.Sprintf("1 to %d cars", maxFleetCars))
	case *f.ingests < 1 || *f.ingests > 8:
		return badFlag("bench", "ingests", fmt.Sprint(*f.ingests), "1 to 8")
	case *f.window < time.Millisecond || *f.window > 10*time.Second:
		return badFlag("bench", "fleet-window", f.window.String(), "1ms to 10s")
	case *f.rollAge <= 0:
		return badFlag("bench", "roll-age", f.rollAge.String(), "a duration > 0")
	case *f.campaign == "" && (set["campaign-key"] || set["campaign-at"]):
		return cli.Exit(2, fmt.Errorf("bench: --campaign-key and --campaign-at need --campaign FILE"))
	case *f.campaign != "" && *f.campaignKey == "":
		return cli.Exit(2, fmt.Errorf("bench: --campaign needs --campaign-key, the public key the cars trust"))
	}
	return checkEngineFlags(fs, f)
}

// fleetKillDown is how long --kill-node keeps its node down.
const fleetKillDown = 5 * time.Second

// checkEngineFlags checks --engine and the flags only NATS takes.
func checkEngineFlags(fs *flag.FlagSet, f fleetFlags) error {
	switch *f.engine {
	case fleet.EngineMosquitto:
		set := false
		fs.Visit(func(fl *flag.Flag) { set = set || fl.Name == "nodes" || fl.Name == "kill-node" })
		if set {
			return cli.Exit(2, fmt.Errorf("bench: --nodes and --kill-node need --engine nats"))
		}
	case fleet.EngineNATS:
	default:
		return badFlag("bench", "engine", *f.engine, fleet.EngineMosquitto+" or "+fleet.EngineNATS)
	}
	if *f.nodes < natscluster.DefaultNodes || *f.nodes > 9 {
		return badFlag("bench", "nodes", fmt.Sprint(*f.nodes), fmt.Sprintf("%d (the stream's replicas) to 9", natscluster.DefaultNodes))
	}
	if _, _, err := killNode(*f.killNode, *f.nodes); err != nil {
		return err
	}
	return nil
}

// killNode reads --kill-node: "" (none), leader or a node 1 to nodes.
func killNode(v string, nodes int) (node int, leader bool, err error) {
	switch v {
	case "":
		return 0, false, nil
	case "leader":
		return 0, true, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > nodes {
		return 0, false, badFlag("bench", "kill-node", v, fmt.Sprintf("leader or a node, 1 to %d", nodes))
	}
	return n, false, nil
}

// natsConfig returns the NATS cluster's configuration of a fleet run on
// --engine nats: the repository's deploy/nats and nats-server built from
// its module, both found from the working directory.
func natsConfig(f fleetFlags) (fleet.NATSConfig, error) {
	cfg := fleet.NATSConfig{Nodes: *f.nodes, KillDown: fleetKillDown}
	if *f.engine != fleet.EngineNATS {
		return cfg, nil
	}
	var err error
	if cfg.KillNode, cfg.KillLeader, err = killNode(*f.killNode, *f.nodes); err != nil {
		return cfg, err
	}
	wd, err := os.Getwd()
	if err != nil {
		return cfg, err
	}
	repo, err := natscluster.Repo(wd)
	if err != nil {
		return cfg, fmt.Errorf("bench: --engine nats runs in the candec repository: %w", err)
	}
	if cfg.Binary, err = natscluster.Find(repo); err != nil {
		return cfg, fmt.Errorf("bench: --engine nats: %w", err)
	}
	cfg.ConfigDir = filepath.Join(repo, natscluster.ConfigDir)
	return cfg, nil
}

// fleetArgs are bench's flags that a fleet run shares with a profile's.
type fleetArgs struct {
	duration, warmup time.Duration
	workDir, results string
	noResults        bool
	host             string
}

// runFleet checks the shared flags and runs the fleet bench.
func runFleet(ctx context.Context, e cli.Env, f fleetFlags, a fleetArgs) error {
	if a.duration < 0 {
		return badFlag("bench", "duration", a.duration.String(), "a duration > 0")
	}
	if a.warmup < 0 {
		return badFlag("bench", "warmup", a.warmup.String(), "a duration > 0")
	}
	h, err := checkHost("bench", hostName(a.host))
	if err != nil {
		return err
	}
	results := a.results
	if a.noResults {
		results = ""
	} else if results == "" {
		results = filepath.Join("benchmarks", "results")
	}
	return runFleetBench(ctx, e, f, a.duration, a.warmup, a.workDir, results, h)
}

// runFleetBench runs one fleet run and prints and records its result.
func runFleetBench(ctx context.Context, e cli.Env, f fleetFlags, duration, warmup time.Duration, workDir, resultsDir, host string) error {
	duration = cmp.Or(duration, 20*time.Second)
	warmup = cmp.Or(warmup, 5*time.Second)
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("bench: find the candec binary: %w", err)
	}
	cfg := fleet.Config{Exe: exe, Ingests: *f.ingests, Warmup: warmup, Duration: duration, RollAge: *f.rollAge, Log: e.Stderr}
	if _, err := fleetDBCFiles(*f.dbc); err != nil {
		return err
	}
	nc, err := natsConfig(f)
	if err != nil {
		return err
	}
	if need := int64(*f.cars) * int64((duration+warmup).Seconds()+1) * carBytesPerSec; need > maxDriveBytes {
		return cli.Exit(2, fmt.Errorf("bench: %d cars for %v hold about %.1f GB of windows, made before the run (at most %d GB): fewer cars or a shorter --duration",
			*f.cars, duration+warmup, float64(need)/1e9, maxDriveBytes>>30))
	}
	dir, keep, err := fleetDir(workDir)
	if err != nil {
		return err
	}
	if f, err = fleetDefaults(f, dir); err != nil {
		return err
	}
	dbcPath, err := fleetDBC(*f.dbc)
	if err != nil {
		return err
	}
	cc, camp, err := benchCampaign(ctx, f, duration, warmup)
	if err == nil {
		live, liveFrom := liveCars(camp, cc, warmup)
		cfg.Cars, err = makeCars(ctx, e, f, duration+warmup, live, liveFrom)
	}
	if err != nil {
		if !keep {
			os.RemoveAll(dir)
		}
		return err
	}
	fmt.Fprintf(e.Stderr, "candec bench: fleet of %d cars into %d ingests through %s, %v + %v warm-up, in %s\n", len(cfg.Cars), *f.ingests, *f.engine, duration, warmup, dir)
	cfg.DBC, cfg.Dir, cfg.Campaign, cfg.Engine, cfg.NATS = dbcPath, dir, cc, *f.engine, nc
	res, err := fleet.Run(ctx, cfg)
	if err != nil {
		return fmt.Errorf("bench: fleet: %w (its files are in %s)", err, dir)
	}
	if !keep {
		os.RemoveAll(dir)
	}
	rec := fleet.Record{Result: *res, Host: host, Version: buildinfo.Read().Short(), Time: time.Now().UTC(),
		Capture: *f.capture, DBC: *f.dbc, Seed: *f.seed, Window: *f.window, RollAge: *f.rollAge, Cores: runtime.NumCPU(),
		CampaignFile: *f.campaign}
	fleet.WriteTable(e.Stdout, &rec)
	if resultsDir == "" {
		return nil
	}
	path := filepath.Join(resultsDir, "fleet-"+host+".jsonl")
	if err := fleet.Append(path, &rec); err != nil {
		return err
	}
	fmt.Fprintf(e.Stderr, "candec bench: appended to %s\n", path)
	return nil
}

// fleetDefaults returns f with its DBC and capture written to dir from
// the copies built into candec where they are the defaults and the
// default files are missing (outside a clone), as the other commands
// do: the ingests read the DBC from a file.
func fleetDefaults(f fleetFlags, dir string) (fleetFlags, error) {
	if *f.dbc == cardata.DBCFile && cardata.Missing(cardata.DBCFile) {
		path := filepath.Join(dir, filepath.Base(cardata.DBCFile))
		if err := os.WriteFile(path, cardata.DBC(), 0o600); err != nil {
			return f, fmt.Errorf("bench: write the built-in DBC: %w", err)
		}
		f.dbc = &path
	}
	if *f.capture == cardata.CaptureFile && cardata.Missing(cardata.CaptureFile) {
		b, err := cardata.Capture()
		if err != nil {
			return f, err
		}
		path := filepath.Join(dir, filepath.Base(cardata.CaptureFile))
		if err := os.WriteFile(path, b, 0o600); err != nil {
			return f, fmt.Errorf("bench: write the built-in capture: %w", err)
		}
		f.capture = &path
	}
	return f, nil
}

// makeCars makes the fleet's drives before the run, on every core;
// those of the cars a campaign is for up to a second before its push
// only, the rest during the run (fleet.CarConfig.LiveFrom).
func makeCars(ctx context.Context, e cli.Env, f fleetFlags, drive time.Duration, live func(id string) bool, liveFrom time.Duration) ([]fleet.Car, error) {
	files, err := fleetDBCFiles(*f.dbc)
	if err != nil {
		return nil, err
	}
	b, err := dbc.LoadBuses(ctx, files)
	if err != nil {
		return nil, fmt.Errorf("bench: --fleet-dbc: %w", err)
	}
	db := b.All
	frames, err := fleet.ReadFrames(ctx, *f.capture)
	if err != nil {
		return nil, err
	}
	// The drives start once they are made: a second per 200 cars is
	// plenty on a slow core.
	start := time.Now().Add(2*time.Second + time.Duration(*f.cars)*5*time.Millisecond)
	cfg := fleet.CarConfig{DB: db, Frames: frames, Drive: drive, Start: start.UnixNano(), Seed: *f.seed, Window: *f.window}
	cfg.Live, cfg.LiveFrom = live, liveFrom
	t0 := time.Now()
	cars, err := fleet.NewCars(ctx, cfg, *f.cars)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(e.Stderr, "candec bench: %d drives of %v made in %v\n", len(cars), drive, time.Since(t0).Round(time.Millisecond))
	return cars, nil
}

// fleetDir is the run's directory: in workDir, kept, or a temporary one.
// A run gets a new directory in workDir, so that a lake of an earlier
// run there is never counted as this one's.
func fleetDir(workDir string) (string, bool, error) {
	if workDir != "" {
		if err := os.MkdirAll(workDir, 0o755); err != nil {
			return "", false, fmt.Errorf("bench: --logs: %w", err)
		}
		d, err := os.MkdirTemp(workDir, "fleet-")
		return d, true, err
	}
	d, err := os.MkdirTemp("", "candec-fleet-")
	return d, false, err
}

// fleetDBCFiles reads --fleet-dbc as every --dbc is read (dbc.BusFiles):
// the fleet's cars send one bus, so its files are for every interface.
func fleetDBCFiles(v string) (dbc.BusFiles, error) {
	var files dbc.BusFiles
	if err := files.Set(v); err != nil {
		return files, cli.Exit(2, fmt.Errorf("bench: --fleet-dbc: %w", err))
	}
	if len(files.Interfaces) > 0 {
		return files, cli.Exit(2, fmt.Errorf("bench: --fleet-dbc %s: the fleet's cars send one bus: give its DBC as FILE[,FILE], not IFACE=FILE", v))
	}
	return files, nil
}

// fleetDBC is --fleet-dbc with absolute file names, for the ingests,
// which run elsewhere.
func fleetDBC(v string) (string, error) {
	files, err := fleetDBCFiles(v)
	if err != nil {
		return "", err
	}
	abs := make([]string, len(files.All))
	for i, f := range files.All {
		if abs[i], err = filepath.Abs(f); err != nil {
			return "", err
		}
	}
	return strings.Join(abs, ","), nil
}
