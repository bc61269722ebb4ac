package ingest

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/yukart/candec/envelope"
)

// cpuSeconds is the process's user and system time so far.
func cpuSeconds(tb testing.TB) float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// withEpoch returns the windows with their epoch (testEpoch) replaced
// by epoch, in every window and envelope: the same values, windows the
// ingest has not seen.
func withEpoch(wins [][]byte, enc envelope.Encoding, epoch uint64) [][]byte {
	var old, new []byte
	if enc == envelope.JSON {
		old, new = []byte(strconv.FormatUint(testEpoch, 10)), []byte(strconv.FormatUint(epoch, 10))
	} else {
		old, new = binary.BigEndian.AppendUint64([]byte{0xcf}, testEpoch), binary.BigEndian.AppendUint64([]byte{0xcf}, epoch)
	}
	out := make([][]byte, len(wins))
	for i, w := range wins {
		out[i] = bytes.ReplaceAll(w, old, new)
	}
	return out
}

// BenchmarkWindowsToLake measures the ingest's own work, from a window
// payload to committed lake files: parse, rows, Parquet, the commit
// (files synced, manifest). An op is the test capture's 1,872 windows
// (20 s of the kart, 21,362 values) of one vehicle, then a commit.
// values/cpu-s is per CPU second of the process: the figure per core.
func BenchmarkWindowsToLake(b *testing.B) {
	for _, enc := range []envelope.Encoding{envelope.JSON, envelope.Msgpack} {
		b.Run(enc.String(), func(b *testing.B) {
			wins := carWindows(b, enc)
			cfg := testConfig(b, "bench")
			cfg.Dir = b.TempDir()
			cfg.RollBytes, cfg.MaxUnacked = 1<<40, ReceiveMaximum
			in, err := New(cfg)
			if err != nil {
				b.Fatal(err)
			}
			defer in.Close()
			c := in.core
			var values uint64
			b.ReportAllocs()
			b.ResetTimer()
			cpu := cpuSeconds(b)
			for i := range b.N {
				b.StopTimer()
				batch := withEpoch(wins, enc, testEpoch+uint64(i)+1)
				before := c.counters().Values
				b.StartTimer()
				feed(c, kartTopic, batch, 1)
				c.mu.Lock()
				err := c.commit()
				c.mu.Unlock()
				if err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				values += c.counters().Values - before
				b.StartTimer()
			}
			cpu = cpuSeconds(b) - cpu
			b.ReportMetric(float64(values)/b.Elapsed().Seconds(), "values/s")
			b.ReportMetric(float64(values)/cpu, "values/cpu-s")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(values), "ns/value")
		})
	}
}

// BenchmarkPathThroughBroker measures the whole path through the
// fleet's broker as shipped (TLS, fleet.acl, fleet.conf): 24 cars'
// window streams wait in the instance's session (it was away), then the
// instance takes the backlog, commits it and acknowledges it. values/s
// is the instance's throughput, cpu-µs/value the CPU time of this
// process (the instance; the broker is another) per value. Run with
// -benchtime=1x.
func BenchmarkPathThroughBroker(b *testing.B) {
	for _, enc := range []envelope.Encoding{envelope.JSON, envelope.Msgpack} {
		b.Run(enc.String(), func(b *testing.B) {
			for range b.N {
				pathOnce(b, enc)
			}
		})
	}
}

func pathOnce(b *testing.B, enc envelope.Encoding) {
	b.StopTimer()
	c, elapsed, cpu := backlog(b, enc, 24, b.StartTimer, b.StopTimer)
	b.ReportMetric(float64(c.Values)/elapsed.Seconds(), "values/s")
	b.ReportMetric(cpu*1e6/float64(c.Values), "cpu-µs/value")
	b.ReportMetric(float64(c.Commits), "commits")
	b.Logf("%d windows of 24 cars, %d values, %d rows in %d files, %d commits in %v; %.2f CPU s",
		c.Windows, c.Values, c.Rows, c.Files, c.Commits, elapsed.Round(time.Millisecond), cpu)
}

// backlog has cars publish the test capture's windows while the
// instance is away, then starts it and waits until it has taken them
// all; it returns its counts, the time and the CPU time of the process
// from its start to its end (between start and stop).
func backlog(tb testing.TB, enc envelope.Encoding, cars int, start, stop func()) (Counters, time.Duration, float64) {
	f := startFleet(tb)
	wins := carWindows(tb, enc)
	cfg := Config{ID: "path", Conn: f.settings(tb, "ingest"), Buses: []Bus{{DB: loadDB(tb)}}, Dir: tb.TempDir(), DBCHash: "sha256:bench",
		ConnectTimeout: 10 * time.Second}
	first := startIngest(tb, cfg) // makes the session, then goes away
	first.stop()
	var wg sync.WaitGroup
	for i := range cars {
		wg.Go(func() {
			f.car(tb, fmt.Sprintf("kart%02d", i)).publish(tb, wins)
		})
	}
	wg.Wait()
	start()
	cpu := cpuSeconds(tb)
	t0 := time.Now()
	r := startIngest(tb, cfg)
	r.waitFor(tb, "every window", func(c Counters) bool { return c.Windows == uint64(cars*len(wins)) })
	r.stop()
	elapsed, cpu := time.Since(t0), cpuSeconds(tb)-cpu
	stop()
	if r.err != nil {
		tb.Fatal(r.err)
	}
	return r.in.Counters(), elapsed, cpu
}
