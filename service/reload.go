package service

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/yukart/candec/pipeline"
)

// Errors of ReloadPolicy besides the policy's own.
var (
	// ErrNoPolicyFile: the service runs the built-in policy, so there is
	// no file to read again.
	ErrNoPolicyFile = errors.New("service: no policy file to reload (the built-in policy is running)")
	// ErrStopped: the service's engine has stopped.
	ErrStopped = errors.New("service: stopped")
)

// Results of a policy reload, the label of candec_policy_reloads_total.
const (
	reloadOK    = "ok"
	reloadError = "error"
)

// reloader is what the service keeps for policy reloads: the way to the
// engine goroutine and the metrics.
type reloader struct {
	req  chan reloadReq // to the engine goroutine
	gone chan struct{}  // closed when the engine goroutine has ended

	ok, failed prometheus.Counter
	loaded     prometheus.Gauge
}

// reloadReq asks the engine goroutine to run a new policy; it answers on
// done.
type reloadReq struct {
	policy *pipeline.PolicyFile
	// campaign: the policy is a campaign's, of version; the window
	// stream carries the version from the swap on.
	campaign bool
	version  uint64
	done     chan reloadResult
}

type reloadResult struct {
	changes pipeline.PolicyChanges
	err     error
}

// initReload sets up policy reloads and registers their metrics on reg.
// loadedAt is when the policy the service starts with was read.
func (s *Service) initReload(reg prometheus.Registerer, loadedAt time.Time) error {
	r := &s.reload
	r.req = make(chan reloadReq)
	r.gone = make(chan struct{})
	reloads := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "candec_policy_reloads_total",
		Help: "Policy reloads (SIGHUP): ok, or error when the new file was refused and the running policy stayed.",
	}, []string{"result"})
	r.ok, r.failed = reloads.WithLabelValues(reloadOK), reloads.WithLabelValues(reloadError)
	r.loaded = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "candec_policy_loaded_timestamp_seconds",
		Help: "When the running policy was read: at start, or at the last successful reload (Unix time).",
	})
	r.loaded.Set(float64(loadedAt.UnixNano()) / 1e9)
	for _, c := range []prometheus.Collector{reloads, r.loaded} {
		if err := reg.Register(c); err != nil {
			return fmt.Errorf("service: register metrics: %w", err)
		}
	}
	return nil
}

// ReloadPolicy reads the policy file again and, when it is valid, has the
// engine run it from its current frame time, without a restart: the
// epoch stays and every topic's seq goes on (see pipeline's
// Engine.SetPolicies for what happens to held values, timers and signals
// whose publish flips). An invalid file, or one that gives two signals
// one topic, leaves the running policy in place. Either way it logs one
// line (what changed, or the error, which names the file and line) and
// counts candec_policy_reloads_total. `candec run` calls it on SIGHUP.
// It waits for the engine, at most until ctx ends; the service must be
// running (ErrStopped once it has stopped).
func (s *Service) ReloadPolicy(ctx context.Context) error {
	if s.camp != nil {
		if v := s.camp.applied(); v > 0 {
			s.log.Warn("policy reload asked for, but campaign version " + strconv.FormatUint(v, 10) +
				" runs: the policy file is read only while no campaign is applied (docs/campaigns.md, going back)")
			return ErrCampaignPolicy
		}
	}
	if s.cfg.Policy == "" {
		s.log.Warn("policy reload asked for, but no policy file is configured; the built-in policy stays")
		return ErrNoPolicyFile
	}
	ch, err := s.reloadPolicy(ctx)
	if err != nil {
		if errors.Is(err, ErrStopped) || ctx.Err() != nil {
			return err
		}
		s.reload.failed.Inc()
		s.log.Error("policy reload failed; the running policy stays", "policy", s.cfg.Policy, "err", err)
		return err
	}
	s.reload.ok.Inc()
	s.reload.loaded.Set(float64(s.now().UnixNano()) / 1e9)
	s.log.Info(fmt.Sprintf("policy reloaded: %d signals changed", ch.Changed), "policy", s.cfg.Policy,
		"now_published", ch.Published, "now_unpublished", ch.Unpublished)
	return nil
}

// reloadPolicy reads the file here, off the engine goroutine, and hands
// the parsed policy to it. The file is read in a goroutine of its own,
// so that the end of ctx ends the wait even for a read that does not
// return (a file system that hangs): a reload never holds up shutdown.
func (s *Service) reloadPolicy(ctx context.Context) (pipeline.PolicyChanges, error) {
	type loaded struct {
		p   *pipeline.PolicyFile
		err error
	}
	lc := make(chan loaded, 1)
	go func() {
		p, err := pipeline.LoadPolicyContext(ctx, s.cfg.Policy)
		lc <- loaded{p, err}
	}()
	var p *pipeline.PolicyFile
	select {
	case l := <-lc:
		if l.err != nil {
			return pipeline.PolicyChanges{}, l.err
		}
		p = l.p
	case <-ctx.Done():
		return pipeline.PolicyChanges{}, ctx.Err()
	}
	return s.onEngine(ctx, reloadReq{policy: p})
}

// onEngine has the engine goroutine run req's policy and waits for its
// answer, at most until ctx ends; ErrStopped once the engine has ended.
func (s *Service) onEngine(ctx context.Context, req reloadReq) (pipeline.PolicyChanges, error) {
	req.done = make(chan reloadResult, 1)
	select {
	case s.reload.req <- req:
	case <-s.reload.gone:
		return pipeline.PolicyChanges{}, ErrStopped
	case <-ctx.Done():
		return pipeline.PolicyChanges{}, ctx.Err()
	}
	// The engine always answers a request it took.
	res := <-req.done
	return res.changes, res.err
}

// applyPolicy runs on the engine goroutine: the swap happens between two
// batches, at the engine's frame time, and what it publishes (a held
// value now due, a heartbeat) goes out with the next drain.
func (s *Service) applyPolicy(r reloadReq) {
	// Up to the watermark first, so that the new policy starts now, not
	// up to a tick ago.
	s.advance()
	var old uint64
	if r.campaign {
		// The open window goes out under the version of its envelopes.
		old = s.engine.PolicyVersion()
		s.engine.SetPolicyVersion(r.version)
	}
	ch, err := s.engine.SetPolicies(r.policy)
	if err != nil && r.campaign {
		s.engine.SetPolicyVersion(old)
	}
	s.syncStats()
	r.done <- reloadResult{changes: ch, err: err}
}

// ReloadOn calls ReloadPolicy each time hup receives (`candec run`
// passes SIGHUP), until ctx ends, and returns then without waiting for a
// reload that is still reading. A reload runs apart from the receiving,
// so no signal waits for one: a signal that comes while a reload runs is
// logged, and one more reload follows the running one, reading the file
// as it is then; however many come meanwhile, that one reload serves
// them all.
func (s *Service) ReloadOn(ctx context.Context, hup <-chan os.Signal) {
	reloadOn(ctx, hup, s.log.Info, func() { _ = s.ReloadPolicy(ctx) })
}

// reloadOn is ReloadOn with the reload and the log as functions, for
// tests.
func reloadOn(ctx context.Context, hup <-chan os.Signal, info func(msg string, args ...any), reload func()) {
	var (
		wg      sync.WaitGroup
		busy    atomic.Bool              // a reload runs
		pending = make(chan struct{}, 1) // one reload asked for
	)
	defer wg.Wait()
	wg.Go(func() {
		for {
			select {
			case <-pending:
				busy.Store(true)
				reload()
				busy.Store(false)
			case <-ctx.Done():
				return
			}
		}
	})
	for {
		select {
		case sig := <-hup:
			// Whether a reload runs is read before asking for one: read
			// after, it would see the reload this very signal started.
			running := busy.Load()
			select {
			case pending <- struct{}{}:
				if running {
					info("policy reload asked for while one runs: the file is read again once it ends", "signal", sig.String())
				}
			default:
				info("policy reload asked for while one runs and another waits: the waiting one serves both", "signal", sig.String())
			}
		case <-ctx.Done():
			return
		}
	}
}
