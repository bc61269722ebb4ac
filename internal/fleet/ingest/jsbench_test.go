package ingest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/yukart/candec/envelope"
)

// BenchmarkPathThroughJetStream is BenchmarkPathThroughBroker on the
// cluster of deploy/nats: 100 cars' windows (the test capture's first
// 1,000 each, 10 ms windows, JSON, published over MQTT 3.1.1 to the
// nodes in turn) wait in the stream, then 1 or 2 instances take them,
// commit (every 50,000 messages, --max-unacked's default, and at the
// end) and acknowledge them. CPU is the test process's from the
// instances' start to their end (the cars have finished; the nodes are
// other processes): values per CPU second is the instances' together.
//
//	go test -run XXX -bench BenchmarkPathThroughJetStream -benchtime 1x ./internal/fleet/ingest/
func BenchmarkPathThroughJetStream(b *testing.B) {
	for _, n := range []int{1, 2} {
		b.Run(fmt.Sprintf("instances=%d", n), func(b *testing.B) {
			for range b.N {
				jsPathOnce(b, 100, 1000, n)
			}
		})
	}
}

func jsPathOnce(b *testing.B, cars, windows, instances int) {
	b.StopTimer()
	ids := make([]string, cars)
	for i := range ids {
		ids[i] = fmt.Sprintf("kart%03d", i)
	}
	f := startJS(b, ids...)
	wins := carWindows(b, envelope.JSON)[:windows]
	var wg sync.WaitGroup
	sem := make(chan struct{}, 10)
	for _, id := range ids {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			f.car(b, id).publish(b, "fleet/"+id+"/yukart/window", wins, false)
		})
	}
	wg.Wait()
	dir := b.TempDir()
	b.StartTimer()
	cpu := cpuSeconds(b)
	t0 := time.Now()
	var rs []*running
	for i := range instances {
		cfg := jsConfig(b, f, fmt.Sprintf("i%d", i), dir)
		// The defaults: a 50,000-message commit may outlast the test's
		// 2 s pins.
		cfg.RollAge, cfg.JetStream.AckWait, cfg.JetStream.PinnedTTL = time.Minute, 0, 0
		rs = append(rs, startIngest(b, cfg))
	}
	total := uint64(cars * windows)
	deadline := time.Now().Add(10 * time.Minute)
	for taken := uint64(0); taken < total; time.Sleep(20 * time.Millisecond) {
		taken = 0
		for _, r := range rs {
			taken += r.in.Counters().Windows
			select {
			case <-r.done:
				b.Fatalf("an instance stopped: %v", r.err)
			default:
			}
		}
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d windows in 10 minutes", taken, total)
		}
	}
	for _, r := range rs {
		r.stop()
	}
	elapsed, cpu := time.Since(t0), cpuSeconds(b)-cpu
	b.StopTimer()
	var values uint64
	for i, r := range rs {
		if r.err != nil {
			b.Fatal(r.err)
		}
		c := r.in.Counters()
		values += c.Values
		b.Logf("instance %d: %d vehicles, %d windows, %d values, %d files in %d commits (%.0f files a commit), %d duplicates",
			i, len(c.Vehicles), c.Windows, c.Values, c.Files, c.Commits, float64(c.Files)/float64(max(c.Commits, 1)), c.Duplicates)
	}
	b.ReportMetric(float64(values)/elapsed.Seconds(), "values/s")
	b.ReportMetric(float64(values)/cpu, "values/cpu-s")
	b.Logf("%d instances: %d values in %v, %.2f CPU s: %.0f values per CPU second", instances, values, elapsed.Round(time.Millisecond), cpu, float64(values)/cpu)
}
