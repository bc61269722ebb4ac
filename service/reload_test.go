package service

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/yukart/candec/envelope"
	"github.com/yukart/candec/frame"
	"github.com/yukart/candec/internal/testkit/brokertest"
	"github.com/yukart/candec/pipeline"
)

// TestReloadPolicy: against mosquitto, a policy reload changes a cap
// from 1 Hz to 10 Hz from the next window and starts publishing a
// signal that was not; an invalid file then keeps the 10 Hz policy, is
// counted and logged with its file and line. A subscriber's loss
// tracker sees no gap, no repeat and no restart on any topic across
// both.
func TestReloadPolicy(t *testing.T) {
	b := brokertest.Start(t)
	sub := brokertest.Connect(t, b.URL)
	sub.Subscribe("yukart/vehicle/#", DefaultStatusTopic)
	cfg := testConfig(t, b.URL)
	// A clock lag far above any pause of the test: no frame is ever late,
	// so the envelopes are those of the frames alone.
	cfg.ClockLag = 2 * time.Second
	write := func(text string) {
		t.Helper()
		if err := os.WriteFile(cfg.Policy, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("defaults:\n  max_rate: 1\nrules:\n  - match: Torque\n    publish: false\n")
	var log lineLog
	r := startServiceLog(t, cfg, loadTestDB(t), io.MultiWriter(&log, testWriter{t}), slog.LevelInfo)
	r.waitConnected(t, sub)
	loaded0 := counter(t, r.reload.loaded)

	base := time.Now().UnixNano()
	const phase = 2 * int64(time.Second)
	pub := brokertest.Connect(t, b.URL)
	seq := uint64(0)
	send := func(from int64) {
		// 100 Hz for one phase, one frame per batch as a bridge sends
		// them every 10 ms.
		for at := from; at < from+phase; at += int64(10 * time.Millisecond) {
			f := motorFrame(base+at, uint16(at/int64(time.Millisecond)), 1)
			r.sendPaced(t, pub, seq, []frame.Frame{f})
			seq++
		}
	}
	send(0)
	write("defaults:\n  max_rate: 10\n")
	if err := r.ReloadPolicy(t.Context()); err != nil {
		t.Fatalf("ReloadPolicy: %v", err)
	}
	send(phase)
	write("defaults:\n  max_rate: 10\n  max_rat: 1\n")
	err := r.ReloadPolicy(t.Context())
	if err == nil || !strings.Contains(err.Error(), cfg.Policy+":3:") {
		t.Fatalf("ReloadPolicy of a bad file: got %v, want an error naming %s:3", err, cfg.Policy)
	}
	send(2 * phase)

	if got := counter(t, r.reload.ok); got != 1 {
		t.Errorf("candec_policy_reloads_total{result=ok}: got %v, want 1", got)
	}
	if got := counter(t, r.reload.failed); got != 1 {
		t.Errorf("candec_policy_reloads_total{result=error}: got %v, want 1", got)
	}
	if got := counter(t, r.reload.loaded); got <= loaded0 {
		t.Errorf("candec_policy_loaded_timestamp_seconds: got %v, want it later than %v after the reload", got, loaded0)
	}
	lines := strings.Join(log.all(), "\n")
	for _, want := range []string{"policy reloaded: 3 signals changed", "policy reload failed; the running policy stays", cfg.Policy + ":3:3: max_rat"} {
		if !strings.Contains(lines, want) {
			t.Errorf("the log lacks %q:\n%s", want, lines)
		}
	}

	r.stop(t)
	published := 0.0
	for k, c := range r.m.published {
		if pipeline.Kinds()[k] != pipeline.KindWindow {
			published += counter(t, c)
		}
	}
	msgs := sub.WaitFor("every envelope", func(m []brokertest.Message) bool {
		return len(parse(t, m, "yukart/vehicle/")) >= int(published)
	})
	tr := envelope.NewTracker()
	epochs := map[uint64]bool{}
	count := map[string][3]int{}
	for _, p := range parse(t, msgs, "yukart/vehicle/") {
		tr.Observe(p.topic, &p.Envelope)
		epochs[p.Epoch] = true
		c := count[p.topic]
		if i := (p.TS - base) / phase; i >= 0 && i < 3 {
			c[i]++
		}
		count[p.topic] = c
	}
	if tot := tr.Totals(); tot.Lost != 0 || tot.Duplicates != 0 || tot.Restarts != 0 {
		t.Errorf("loss tracker across the reloads: got %+v, want no loss, duplicate or restart", tot)
	}
	if len(epochs) != 1 {
		t.Errorf("got epochs %v, want one epoch throughout", epochs)
	}
	// 1 Hz: the frames at 0 and 1 s. 10 Hz from the first frame after
	// the swap: every 100 ms, also after the refused reload; the last
	// phase's final value, held by the cap, is flushed at the stop.
	for topic, want := range map[string][3]int{
		"yukart/vehicle/Speed":  {2, 20, 21},
		"yukart/vehicle/Torque": {0, 20, 21},
	} {
		if got := count[topic]; got != want {
			t.Errorf("%s: got %v envelopes per 2 s phase, want %v", topic, got, want)
		}
	}
	if st, _ := tr.Topic("yukart/vehicle/Torque"); st.Seq != 41 {
		t.Errorf("Torque, first published by the reload: got last seq %d, want 41 (from 1)", st.Seq)
	}
}

// TestReloadPolicyStates: no policy file, and a stopped service.
func TestReloadPolicyStates(t *testing.T) {
	b := brokertest.Start(t)
	cfg := testConfig(t, b.URL)
	cfg.Policy = ""
	r := startService(t, cfg, loadTestDB(t))
	if err := r.ReloadPolicy(t.Context()); !errors.Is(err, ErrNoPolicyFile) {
		t.Errorf("without a policy file: got %v, want ErrNoPolicyFile", err)
	}
	cfg = testConfig(t, b.URL)
	cfg.ClientID += "-2"
	r = startService(t, cfg, loadTestDB(t))
	r.stop(t)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if err := r.ReloadPolicy(ctx); !errors.Is(err, ErrStopped) {
		t.Errorf("after Run returned: got %v, want ErrStopped", err)
	}
}

// TestReloadOnCoalesces: signals that come while a reload runs are
// logged, not dropped unseen, and together make one more reload; the end
// of ctx ends ReloadOn while a reload is still stuck.
func TestReloadOnCoalesces(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	hup := make(chan os.Signal)
	started := make(chan int)
	release := make(chan struct{})
	logged := make(chan string, 10)
	info := func(msg string, _ ...any) { logged <- msg }
	n := 0
	reload := func() {
		n++
		started <- n
		select {
		case <-release:
		case <-ctx.Done(): // a reload stuck until the end
		}
	}
	done := make(chan struct{})
	go func() {
		reloadOn(ctx, hup, info, reload)
		close(done)
	}()
	send := func() {
		t.Helper()
		select {
		case hup <- syscall.SIGHUP:
		case <-time.After(10 * time.Second):
			t.Fatal("ReloadOn does not take a signal while a reload runs")
		}
	}
	send()
	if got := <-started; got != 1 {
		t.Fatalf("got reload %d, want 1", got)
	}
	// Three more while the first runs: each is taken at once and logged.
	send()
	send()
	send()
	var got []string
	for range 3 {
		select {
		case m := <-logged:
			got = append(got, m)
		case <-time.After(10 * time.Second):
			t.Fatalf("got log %q, want a line for each signal that came during the reload", got)
		}
	}
	if !strings.Contains(got[0], "the file is read again once it ends") ||
		!strings.Contains(got[1], "the waiting one serves both") || got[2] != got[1] {
		t.Errorf("got log %q, want one line per signal that came during the reload", got)
	}
	release <- struct{}{}
	if got := <-started; got != 2 {
		t.Fatalf("got reload %d, want 2: one more for the signals that came meanwhile", got)
	}
	// The second reload is stuck; the end of ctx ends ReloadOn all the
	// same.
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("ReloadOn did not return after its context ended")
	}
	select {
	case got := <-started:
		t.Errorf("got reload %d after the second, want none: three signals make one reload", got)
	default:
	}
}
