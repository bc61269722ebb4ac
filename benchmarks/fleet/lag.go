package fleet

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// LagEvery is how often a NATS run reads its stream's lag.
const LagEvery = 500 * time.Millisecond

// duringWindow starts what a NATS run does while the window is open:
// it reads the stream's lag every LagEvery and kills and restarts a node
// (NATSConfig.KillNode). The returned finish, called at the window's
// end, stops both and writes what they saw into res. For mosquitto it
// does nothing.
func (r *run) duringWindow(ctx context.Context, open time.Time, res *Result) (finish func() error) {
	n, ok := r.cloud.(*natsCloud)
	if !ok {
		return func() error { return nil }
	}
	// The node is killed and started again whatever the window does:
	// on the run's context, not the window's.
	runCtx := ctx
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	var lagErr, killErr error
	var lag lagStats
	wg.Go(func() { lagErr = n.watchLag(ctx, &lag) })
	if k := n.victim; k >= 0 {
		res.KilledNode, res.KillDown = n.c.Nodes[k].Name, n.cfg.KillDown
		wg.Go(func() { killErr = n.killAndRestart(runCtx, k, open.Add(r.cfg.Duration/3)) })
	}
	return func() error {
		cancel()
		wg.Wait()
		end, cancelEnd := context.WithTimeout(context.Background(), 5*time.Second)
		last, err := n.lag(end)
		cancelEnd()
		res.StreamLag, res.StreamPending, res.StreamLagMax = last.held, last.pending, max(lag.held, last.held)
		if killErr != nil {
			return killErr
		}
		if lagErr != nil {
			return lagErr
		}
		return err
	}
}

// lagStats is the stream's lag: the windows it holds (work-queue
// retention: not yet acknowledged by an ingest), those of them not yet
// delivered to one, and those delivered and not yet acknowledged (held
// for a commit, or lost on the way to an ingest whose connection or
// pull request ended: sent again after the ack wait).
type lagStats struct{ held, pending, unacked uint64 }

// watchLag reads the lag every LagEvery until ctx ends, keeping the
// most held in most. A read that fails (a node down) is skipped.
func (n *natsCloud) watchLag(ctx context.Context, most *lagStats) error {
	tick := time.NewTicker(LagEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		try, cancel := context.WithTimeout(ctx, LagEvery)
		l, err := n.lag(try)
		cancel()
		if err == nil {
			most.held = max(most.held, l.held)
		}
	}
}

// lag reads the stream's lag as the operator would.
func (n *natsCloud) lag(ctx context.Context) (lagStats, error) {
	if n.admin == nil {
		nc, err := n.c.Connect("fleet-admin")
		if err != nil {
			return lagStats{}, err
		}
		if n.admin, err = jetstream.New(nc); err != nil {
			return lagStats{}, err
		}
	}
	st, err := n.admin.Stream(ctx, n.c.Stream)
	if err != nil {
		return lagStats{}, fmt.Errorf("fleet: stream lag: %w", err)
	}
	l := lagStats{held: st.CachedInfo().State.Msgs}
	cs := st.ListConsumers(ctx)
	for ci := range cs.Info() {
		l.pending += ci.NumPending
		l.unacked += uint64(ci.NumAckPending)
	}
	if err := cs.Err(); err != nil {
		return l, fmt.Errorf("fleet: stream lag: %w", err)
	}
	return l, nil
}

// killAndRestart SIGKILLs node i at at, starts it again KillDown
// later, and waits until it has caught up.
func (n *natsCloud) killAndRestart(ctx context.Context, i int, at time.Time) error {
	if err := sleepUntil(ctx, at); err != nil {
		return err
	}
	if err := n.c.Kill(i); err != nil {
		return err
	}
	if err := sleepUntil(ctx, time.Now().Add(n.cfg.KillDown)); err != nil {
		return err
	}
	return n.c.Restart(ctx, i)
}
