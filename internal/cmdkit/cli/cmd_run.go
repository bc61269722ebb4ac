package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/internal/cmdkit/earlyhup"
	"github.com/yukart/candec/service"
)

// runRun is `candec run`: configuration from --config FILE, CANDEC_*
// variables and flags (see the service package for the keys), then the
// service until SIGINT or SIGTERM. SIGHUP reads the policy file again
// (service.ReloadOn): a bad one is logged and the running policy stays.
func runRun(ctx context.Context, e Env, args []string) error {
	// SIGHUP is caught from the first instant: one that comes while the
	// process or the service starts (a big DBC takes a while) must not
	// end it, as the signal's default would. It waits, and the policy
	// is read again once the service runs. internal/cmdkit/earlyhup caught it
	// before the other packages' inits and main; where it did not (run
	// inside a test), it is caught here.
	hup, early := earlyhup.Take()
	if !early {
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, syscall.SIGHUP)
		defer signal.Stop(ch)
		hup = ch
	}
	fs := NewFlags(e, "run", "[--config FILE] [flags]")
	file := fs.String("config", os.Getenv(service.EnvConfig), "YAML config `file` (env "+service.EnvConfig+"); flags and CANDEC_* variables override it")
	flags := service.RegisterFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return &ExitError{2, errors.New("run: unexpected arguments (the DBC files go in --dbc or the config)")}
	}
	cfg, err := service.LoadConfig(*file, service.EnvOverrides(os.Environ()), flags.Overrides())
	if err != nil {
		return err
	}
	log, err := service.NewLogger(e.Stderr, cfg.LogFormat, cfg.LogLevel)
	if err != nil {
		return err
	}
	files, err := cfg.DBCFiles()
	if err != nil {
		return err
	}
	buses, err := dbc.LoadBuses(ctx, files)
	if err == nil {
		_, err = buses.Merged() // checked here to name where the files came from
	}
	if err != nil {
		if w := cfg.Where("dbc"); w != "" {
			// Name the config file (or variable, or flag) that gave it.
			return fmt.Errorf("%s: %w", w, err)
		}
		return err
	}
	logQuirks(log, buses)
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	svc, err := service.NewBuses(cfg, buses, log, reg)
	if err != nil {
		return err
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	hctx, stop := context.WithCancel(ctx)
	defer stop()
	// ReloadOn logs each outcome; run goes on either way, and its end is
	// never held up by a reload.
	wg.Go(func() { svc.ReloadOn(hctx, hup) })
	return svc.Run(ctx)
}

// logQuirks logs the quirks each database of b tolerated, once each, in
// the order of the interfaces.
func logQuirks(log *slog.Logger, b *dbc.Buses) {
	dbs := []*dbc.Database{b.All}
	for _, name := range b.Files.Names() {
		dbs = append(dbs, b.Interfaces[name])
	}
	seen := map[*dbc.Database]bool{}
	for _, db := range dbs {
		if db == nil || seen[db] {
			continue
		}
		seen[db] = true
		for _, w := range db.Warnings {
			log.Warn("dbc quirk tolerated", "at", w.String())
		}
	}
}
