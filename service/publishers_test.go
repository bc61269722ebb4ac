package service

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/yukart/candec/capture"
	"github.com/yukart/candec/internal/cmdkit/replay"
	"github.com/yukart/candec/internal/testkit/brokertest"
)

// TestTwoPublishersOnRawTopic plays the idle capture twice at once, as
// two replays (or a replay beside the bridge) would, to one service.
// Before, each change of publisher looked like a gap or a bridge
// restart: the lost count reached 1.7 × 10⁸ against 93 337 frames
// received, and a restart line was logged for every other batch. Now
// the two seq streams are followed apart: no frame is counted lost
// that the service did not drop itself, the gauge shows two
// publishers, and the log says so in a bounded number of lines.
func TestTwoPublishersOnRawTopic(t *testing.T) {
	b := brokertest.Start(t)
	sub := brokertest.Connect(t, b.URL)
	sub.Subscribe(DefaultStatusTopic)
	var log lineLog
	cfg := testConfig(t, b.URL)
	r := startServiceLog(t, cfg, loadTestDB(t), &log, slog.LevelInfo)
	r.waitConnected(t, sub)
	probed := counter(t, r.m.rawFrames) // waitConnected's probes carry no frames

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	stats := make([]replay.Stats, 2)
	errs := make([]error, 2)
	for i := range 2 {
		pub := rawPublisher(t, b.URL, "replay-"+string(rune('a'+i)))
		wg.Go(func() {
			// The second starts a little later: its seq runs behind the
			// first's.
			time.Sleep(time.Duration(i) * 300 * time.Millisecond)
			stats[i], errs[i] = replay.Run(ctx, replay.OpenFile(ctx, "../testdata/idle.log", capture.Options{}), pub,
				replay.Options{Speed: 4})
		})
	}
	waitUntil(t, "the second replay under way", func() bool { return counter(t, r.m.rawPublishers) == 2 })
	wg.Wait()
	for i, err := range errs {
		if err != nil || stats[i].Failed > 0 {
			t.Fatalf("replay %d: %+v, %v", i, stats[i], err)
		}
	}
	sent := float64(stats[0].Frames + stats[1].Frames)
	waitUntil(t, "every frame handled", func() bool {
		return counter(t, r.m.rawFrames)-probed+counter(t, r.m.rawDropped) >= sent
	})
	lost, dropped := counter(t, r.m.rawLost), counter(t, r.m.rawDropped)
	if lost > dropped {
		t.Errorf("got %v frames lost, %v dropped by the service; want no loss beyond its own drops (%v frames sent)", lost, dropped, sent)
	}
	if n := counter(t, r.m.bridgeRestarts); n > 1 {
		t.Errorf("got %v bridge restarts, want at most 1 (the second replay's start)", n)
	}
	lines := log.all()
	said := 0
	for _, l := range lines {
		if strings.Contains(l, "more than one publisher on the raw topic") {
			said++
		}
	}
	if said < 1 || len(lines) > 20 {
		t.Errorf("got %d log lines, %d of them about two publishers; want the warning, in at most 20 lines:\n%s",
			len(lines), said, strings.Join(lines, "\n"))
	}
}
