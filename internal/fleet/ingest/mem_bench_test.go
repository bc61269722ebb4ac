package ingest

import (
	"cmp"
	"fmt"
	"io"
	"io/fs"
	"runtime"
	rtmetrics "runtime/metrics"
	"sync"
	"testing"
	"time"

	"github.com/yukart/candec/envelope"
	"github.com/yukart/candec/internal/fleet/lake"
)

// nullStore is a lake.TempStore that keeps nothing but the names of
// the record's files: a benchmark of the ingest's memory measures the
// ingest, not a store in memory.
type nullStore struct {
	mu    sync.Mutex
	files map[string][]byte // the record's (small) files only
}

type nullFile struct {
	s    *nullStore
	rel  string
	keep []byte
}

func (f *nullFile) Write(p []byte) (int, error) {
	if f.rel != "" {
		f.keep = append(f.keep, p...)
	}
	return len(p), nil
}
func (f *nullFile) Commit() error { return f.CommitAs(f.rel) }
func (f *nullFile) CommitAs(rel string) error {
	f.s.mu.Lock()
	defer f.s.mu.Unlock()
	f.s.files[rel] = f.keep
	return nil
}
func (f *nullFile) Abort() {}

func (s *nullStore) Create(rel string) (lake.File, error) { return &nullFile{s: s, rel: rel}, nil }
func (s *nullStore) CreateTemp(string) (lake.TempFile, error) {
	return &nullFile{s: s}, nil
}
func (s *nullStore) ReadFile(rel string, _ int64) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.files[rel]
	if !ok {
		return nil, fmt.Errorf("nullstore: %s: %w", rel, fs.ErrNotExist)
	}
	return b, nil
}
func (s *nullStore) WriteFile(rel string, b []byte) error {
	f, _ := s.Create(rel)
	_, _ = f.Write(b)
	return f.Commit()
}
func (s *nullStore) List(string) ([]string, error) { return nil, nil }
func (s *nullStore) Remove(rel string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.files, rel)
	return nil
}
func (s *nullStore) String() string { return "null/" }

var _ io.Writer = (*nullFile)(nil)

// heapPeak samples the live heap every millisecond until stop and
// returns the highest figure seen.
func heapPeak() (stop func() uint64) {
	sample := []rtmetrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	done := make(chan struct{})
	var peak uint64
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			rtmetrics.Read(sample)
			peak = max(peak, sample[0].Value.Uint64())
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	})
	return func() uint64 { close(done); wg.Wait(); return peak }
}

// BenchmarkManyVehiclesOneCommit measures the memory of many
// vehicles in one commit: each of N vehicles sends the test capture's
// first W windows (20: 200 ms of the kart, a row or two of each of its
// messages; 200: 2 s), all taken in before the commit (by count, every
// 65,535 messages, or by RollMemory). peak-MB is the highest live heap
// seen from the first window to the end of the last commit (sampled
// every millisecond: garbage not yet collected included), KB/vehicle
// that peak less the heap before, per vehicle; retained-MB the live
// heap after the commit: what the vehicles cost while the instance
// runs. Run with -benchtime=1x.
func BenchmarkManyVehiclesOneCommit(b *testing.B) {
	for _, tc := range []struct {
		vehicles, windows int
		rollMemory        int64
	}{
		{100, 20, 0}, {1500, 20, 0}, {1500, 20, 32 << 20}, {100, 200, 0}, {500, 200, 0},
	} {
		name := fmt.Sprintf("vehicles=%d/windows=%d/roll-memory=%dMiB", tc.vehicles, tc.windows, cmp.Or(tc.rollMemory, DefaultRollMemory)>>20)
		b.Run(name, func(b *testing.B) {
			wins := carWindows(b, envelope.Msgpack)[:tc.windows]
			for range b.N {
				manyVehiclesOnce(b, wins, tc.vehicles, tc.rollMemory)
			}
		})
	}
}

func manyVehiclesOnce(b *testing.B, wins [][]byte, vehicles int, memBytes int64) {
	b.StopTimer()
	store := &nullStore{files: map[string][]byte{}}
	cfg := testConfig(b, "mem")
	cfg.Store, cfg.Dir = store, ""
	cfg.RollBytes, cfg.MaxUnacked, cfg.RollAge = 1<<40, ReceiveMaximum, time.Hour
	cfg.RollMemory = memBytes
	in, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer in.Close()
	c := in.core
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	before := ms.HeapAlloc
	stop := heapPeak()
	b.StartTimer()
	id := uint16(1)
	for i := range vehicles {
		topic := fmt.Sprintf("fleet/car%05d/yukart/window", i)
		for _, w := range wins {
			c.handle(topic, w, ackRef{gen: 1, id: id})
			if id++; id == 0 {
				id = 1
			}
		}
	}
	if err := c.close(); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	peak := stop()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	cnt := in.Counters()
	b.ReportMetric(float64(peak)/(1<<20), "peak-MB")
	b.ReportMetric(float64(peak-before)/1024/float64(vehicles), "KB/vehicle")
	b.ReportMetric(float64(ms.HeapAlloc)/(1<<20), "retained-MB")
	b.ReportMetric(float64(cnt.Commits), "commits")
	b.ReportMetric(float64(cnt.Files), "files")
}

// largestWindow is a window of DefaultMaxWindowBytes at most, in enc,
// of the smallest items a car can send (an integer of MOT_Speed, each
// a frame of its own): the most items, so the most rows, a window of
// that size can hold.
func largestWindow(enc envelope.Encoding) []byte {
	w := envelope.NewWindowEncoder(enc)
	w.Reset(0, 1)
	var e envelope.Envelope
	var out []byte
	for i := int64(0); ; i++ {
		e.SetInt(i % 1000)
		e.TS, e.Seq, e.Epoch = 1791563856000000000+i*1000, uint64(i+1), 7
		w.Add(DefaultSignalPrefix+"MOT_Speed", &e)
		if i%100 == 0 {
			if next := w.Append(out[:0], 1, 7); len(next) > DefaultMaxWindowBytes-64<<10 {
				return next
			} else {
				out = next
			}
		}
	}
}

// BenchmarkLargestWindow measures what the largest window taken in
// (DefaultMaxWindowBytes of the smallest items) costs: peak-MB is the
// highest live heap seen while it is taken in and committed, less the
// heap before, x-payload that over the payload's size. Run with
// -benchtime=1x.
func BenchmarkLargestWindow(b *testing.B) {
	for _, enc := range []envelope.Encoding{envelope.JSON, envelope.Msgpack} {
		b.Run(enc.String(), func(b *testing.B) {
			win := largestWindow(enc)
			for range b.N {
				b.StopTimer()
				cfg := testConfig(b, "big")
				cfg.Store, cfg.Dir = &nullStore{files: map[string][]byte{}}, ""
				in, err := New(cfg)
				if err != nil {
					b.Fatal(err)
				}
				runtime.GC()
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				before := ms.HeapAlloc
				stop := heapPeak()
				b.StartTimer()
				in.core.handle(kartTopic, win, ackRef{gen: 1, id: 1})
				if err := in.core.close(); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				peak := stop() - before
				in.Close()
				if c := in.Counters(); c.Windows != 1 || len(c.Malformed) != 0 {
					b.Fatalf("the window was not taken: %+v", c)
				}
				b.ReportMetric(float64(len(win))/(1<<20), "payload-MB")
				b.ReportMetric(float64(in.Counters().Rows), "rows")
				b.ReportMetric(float64(peak)/(1<<20), "peak-MB")
				b.ReportMetric(float64(peak)/float64(len(win)), "x-payload")
			}
		})
	}
}
