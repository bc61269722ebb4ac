package service

import (
	"context"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coreos/go-systemd/v22/daemon"
)

// notifier speaks systemd's notify protocol (sd_notify(3)) when the
// service runs under a unit of Type=notify: READY=1 once the raw
// subscription is acknowledged, WATCHDOG=1 while the engine loop runs,
// STATUS= on connection changes, STOPPING=1 when the shutdown begins.
// Without NOTIFY_SOCKET in the environment it does nothing.
//
// The engine goroutine proves it is alive by counting its ticks (beat);
// the notifier's own goroutine pings the watchdog at half the interval
// systemd gave (WATCHDOG_USEC) only when the count moved since the last
// ping. A stuck engine, which neither decodes nor moves its clock, thus
// stops the pings, and systemd restarts the service (WatchdogSec with
// Restart=on-failure). A ping from a goroutine that merely runs beside a
// stuck engine would prove nothing.
type notifier struct {
	log *slog.Logger
	// on: NOTIFY_SOCKET is set; watchdog: the interval systemd wants a
	// ping within, 0 when it wants none.
	on       bool
	watchdog time.Duration
	// send writes one datagram to NOTIFY_SOCKET; tests replace it.
	send func(state string) error
	// stall, a test hook, runs on the engine goroutine at each beat.
	stall func()

	beats   atomic.Uint64 // the engine's ticks and batches
	ready   atomic.Bool   // READY=1 was sent
	errOnce sync.Once
}

// newNotifier reads NOTIFY_SOCKET, WATCHDOG_USEC and WATCHDOG_PID. The
// variables stay set: a second service in the process (a test) reads
// them too.
func newNotifier(log *slog.Logger) *notifier {
	n := &notifier{log: log, send: sdNotify}
	n.on = os.Getenv("NOTIFY_SOCKET") != ""
	if !n.on {
		return n
	}
	wd, err := daemon.SdWatchdogEnabled(false)
	if err != nil {
		log.Warn("watchdog disabled: bad WATCHDOG_USEC or WATCHDOG_PID", "err", err)
	}
	n.watchdog = wd
	return n
}

// beat is the engine loop's proof of life: one atomic add per tick.
func (n *notifier) beat() {
	if n.stall != nil {
		n.stall()
	}
	n.beats.Add(1)
}

// notify sends state; a failure is logged once (the service runs on: the
// service manager, not the decoding, is at fault).
func (n *notifier) notify(state string) {
	if !n.on {
		return
	}
	if err := n.send(state); err != nil {
		n.errOnce.Do(func() { n.log.Warn("notify the service manager", "state", state, "err", err) })
	}
}

// subscribed says the raw subscription was acknowledged: the first time,
// the service is ready.
func (n *notifier) subscribed(broker, topic string) {
	st := "STATUS=decoding " + topic + " from " + broker
	if n.ready.CompareAndSwap(false, true) {
		st = daemon.SdNotifyReady + "\n" + st
	}
	n.notify(st)
}

// status sets the one-line status systemctl status shows.
func (n *notifier) status(s string) { n.notify("STATUS=" + s) }

// run pings the watchdog while the engine beats, and says STOPPING=1 when
// ctx ends, which is when the shutdown begins.
func (n *notifier) run(ctx context.Context) {
	if !n.on {
		return
	}
	var ping <-chan time.Time
	if n.watchdog > 0 {
		// Half the interval, as sd_watchdog_enabled(3) advises: one
		// late ping is not yet a missed one.
		t := time.NewTicker(n.watchdog / 2)
		defer t.Stop()
		ping = t.C
	}
	last := n.beats.Load()
	stalled := false
	for {
		select {
		case <-ctx.Done():
			n.notify(daemon.SdNotifyStopping + "\nSTATUS=stopping")
			return
		case <-ping:
			b := n.beats.Load()
			if b == last {
				if !stalled {
					stalled = true
					n.log.Error("the engine loop has stopped; withholding the watchdog ping so that the service manager restarts the service",
						"watchdog", n.watchdog)
					n.status("engine loop stalled")
				}
				continue
			}
			if stalled {
				stalled = false
				n.log.Warn("the engine loop runs again")
			}
			last = b
			n.notify(daemon.SdNotifyWatchdog)
		}
	}
}

// sdNotify writes state to NOTIFY_SOCKET.
func sdNotify(state string) error {
	_, err := daemon.SdNotify(false, state)
	return err
}
