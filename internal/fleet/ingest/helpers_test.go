package ingest

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/yukart/candec/capture"
	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/decoder"
	"github.com/yukart/candec/envelope"
	"github.com/yukart/candec/frame"
	"github.com/yukart/candec/internal/fleet/lake"
	"github.com/yukart/candec/pipeline"
)

// testEpoch is the car's run in the test windows.
const testEpoch = 1791563850000000000

// The car's DBC and capture.
const (
	testDBC     = "../../../testdata/yukart.dbc"
	testCapture = "../../../testdata/idle.log"
)

var (
	loadOnce sync.Once
	testDB   *dbc.Database
	loadErr  error
)

func loadDB(t testing.TB) *dbc.Database {
	t.Helper()
	loadOnce.Do(func() { testDB, loadErr = dbc.Load(testDBC) })
	if loadErr != nil {
		t.Fatal(loadErr)
	}
	return testDB
}

// carWindows returns the window stream the car publishes for the test
// capture under the default policy, in enc: the pipeline the service
// runs, offline.
func carWindows(t testing.TB, enc envelope.Encoding) [][]byte {
	t.Helper()
	db := loadDB(t)
	var out [][]byte
	sink := pipeline.SinkFunc(func(o *pipeline.Out) {
		if o.Kind == pipeline.KindWindow {
			out = append(out, slices.Clone(o.Payload))
		}
	})
	eng, err := pipeline.New(db, pipeline.Config{Encoding: enc, Window: &pipeline.WindowConfig{}, Epoch: testEpoch}, sink)
	if err != nil {
		t.Fatal(err)
	}
	src, err := capture.Open(testCapture, capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if _, err := pipeline.RunOffline(context.Background(), src, eng, pipeline.OfflineOptions{}); err != nil {
		t.Fatal(err)
	}
	if len(out) < 100 {
		t.Fatalf("the capture made %d windows", len(out))
	}
	return out
}

// cell is one value in the lake: a message's row at a time, a signal.
type cell struct {
	vehicle, message, signal string
	time                     int64
}

// published returns the values the windows carry, by cell, each window
// (vehicle, epoch, seq) once, stale marks left out: what the lake must
// hold. A cell published twice (a heartbeat of the same frame) counts
// twice.
func published(t testing.TB, vehicle string, payloads [][]byte) map[cell][]float64 {
	t.Helper()
	db := loadDB(t)
	bySignal := map[string]*dbc.Signal{}
	for _, s := range db.Signals {
		bySignal[DefaultSignalPrefix+s.Name] = s
	}
	out := map[cell][]float64{}
	seen := map[[2]uint64]bool{}
	var w envelope.Window
	for _, p := range payloads {
		if err := envelope.ParseWindow(p, &w); err != nil {
			t.Fatal(err)
		}
		if seen[[2]uint64{w.Epoch, w.Seq}] {
			continue
		}
		seen[[2]uint64{w.Epoch, w.Seq}] = true
		for _, it := range w.Items {
			s := bySignal[string(it.Topic)]
			if s == nil || it.Envelope.Stale() {
				continue
			}
			k := cell{vehicle, s.Message.Name, s.Name, it.Envelope.TS}
			out[k] = append(out[k], it.Envelope.Float64())
		}
	}
	return out
}

// publishedLabels returns the labels the windows carry, by cell (its
// signal the label column's name, <signal>_label), as published.
func publishedLabels(t testing.TB, vehicle string, payloads [][]byte) map[cell][]string {
	t.Helper()
	db := loadDB(t)
	bySignal := map[string]*dbc.Signal{}
	for _, s := range db.Signals {
		bySignal[DefaultSignalPrefix+s.Name] = s
	}
	out := map[cell][]string{}
	seen := map[[2]uint64]bool{}
	var w envelope.Window
	for _, p := range payloads {
		if err := envelope.ParseWindow(p, &w); err != nil {
			t.Fatal(err)
		}
		if seen[[2]uint64{w.Epoch, w.Seq}] {
			continue
		}
		seen[[2]uint64{w.Epoch, w.Seq}] = true
		for _, it := range w.Items {
			s := bySignal[string(it.Topic)]
			if s == nil || it.Envelope.Stale() || len(it.Envelope.Label) == 0 {
				continue
			}
			k := cell{vehicle, s.Message.Name, s.Name + "_label", it.Envelope.TS}
			out[k] = append(out[k], string(it.Envelope.Label))
		}
	}
	return out
}

// sameCells compares the lake's cells with the published ones, values
// sorted per cell, NaN equal to NaN.
func sameCells(t testing.TB, got, want map[cell][]float64) {
	t.Helper()
	bad := 0
	for k, w := range want {
		g := got[k]
		slices.Sort(g)
		slices.Sort(w)
		if !slices.EqualFunc(g, w, func(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }) {
			if bad++; bad <= 5 {
				t.Errorf("%+v: got %v, want %v", k, g, w)
			}
		}
	}
	for k, g := range got {
		if _, ok := want[k]; !ok {
			if bad++; bad <= 5 {
				t.Errorf("%+v: got %v, published none", k, g)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d cells differ", bad, len(want))
	}
}

// memStore is a lake.Store in memory, for the record's tests.
type memStore struct {
	mu    sync.Mutex
	files map[string][]byte
	// failWrite, when set, fails every write of a name it matches.
	failWrite func(rel string) error
}

func newMemStore() *memStore { return &memStore{files: map[string][]byte{}} }

type memFile struct {
	s   *memStore
	rel string
	b   []byte
}

func (f *memFile) Write(p []byte) (int, error) { f.b = append(f.b, p...); return len(p), nil }
func (f *memFile) Commit() error {
	f.s.mu.Lock()
	defer f.s.mu.Unlock()
	if f.s.failWrite != nil {
		if err := f.s.failWrite(f.rel); err != nil {
			return err
		}
	}
	f.s.files[f.rel] = f.b
	return nil
}
func (f *memFile) Abort() {}

func (s *memStore) Create(rel string) (lake.File, error) { return &memFile{s: s, rel: rel}, nil }
func (s *memStore) ReadFile(rel string, limit int64) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.files[rel]
	switch {
	case !ok:
		return nil, fmt.Errorf("memstore: %s: %w", rel, fs.ErrNotExist)
	case int64(len(b)) > limit:
		return nil, fmt.Errorf("memstore: %s: longer than %d bytes", rel, limit)
	}
	return b, nil
}
func (s *memStore) WriteFile(rel string, b []byte) error {
	f, _ := s.Create(rel)
	f.Write(b)
	return f.Commit()
}
func (s *memStore) List(dir string) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for k := range s.files {
		if strings.HasPrefix(k, dir+"/") {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out, nil
}
func (s *memStore) Remove(rel string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.files, rel)
	return nil
}
func (s *memStore) String() string { return "mem/" }

func (s *memStore) names() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Sorted(maps.Keys(s.files))
}

// fakeRow is a row a fakeWriter was given.
type fakeRow struct {
	message string
	time    int64
	vals    []decoder.Value
	policy  uint64 // SetPolicyVersion's
}

// fakeWriter is a lake.Writer that keeps its rows in memory: it names
// its files as the lake does, and a commit puts an empty file of each
// in its store.
type fakeWriter struct {
	store     *memStore
	prefix    string
	rows      map[string][]fakeRow // by file, less the input
	committed []string
	lake      *fakeLake
	policy    uint64
}

// fakeLake collects the committed rows of its writers.
type fakeLake struct {
	mu    sync.Mutex
	store *memStore
	rows  map[string][]fakeRow // by file
}

func newFakeLake() *fakeLake { return &fakeLake{store: newMemStore(), rows: map[string][]fakeRow{}} }

func (l *fakeLake) opened() openedLake {
	return openedLake{store: l.store, close: func() error { return nil }, newWriter: func(prefix string) tableWriter {
		return &fakeWriter{store: l.store, prefix: prefix, rows: map[string][]fakeRow{}, lake: l}
	}}
}

func (w *fakeWriter) Write(f *frame.Frame, iface string, vals []decoder.Value) error {
	m := vals[0].Signal.Message
	date := lake.DayDate(lake.Day(f.Time))
	k := w.prefix + "/message=" + lake.Escape(m.Name) + "/date=" + date + "/" + lake.Escape(iface)
	w.rows[k] = append(w.rows[k], fakeRow{m.Name, f.Time, slices.Clone(vals), w.policy})
	return nil
}

func (w *fakeWriter) Commit(input string) error {
	w.committed = nil
	for k, rows := range w.rows {
		name := k + "-" + input + ".parquet"
		if err := w.store.WriteFile(name, nil); err != nil {
			return err
		}
		w.lake.mu.Lock()
		w.lake.rows[name] = rows
		w.lake.mu.Unlock()
		w.committed = append(w.committed, name)
	}
	slices.Sort(w.committed)
	clear(w.rows)
	return nil
}

func (w *fakeWriter) Abort()                    { clear(w.rows) }
func (w *fakeWriter) Buffered() int64           { return 0 }
func (w *fakeWriter) DropIdle()                 {}
func (w *fakeWriter) SetPolicyVersion(v uint64) { w.policy = v }
func (w *fakeWriter) Committed() []string       { return w.committed }

// cells returns the committed rows' values by cell, as the lake would
// hold them: a value as lake.Writer writes it.
func (l *fakeLake) cells() map[cell][]float64 {
	return l.cellsOf(func(fakeRow) bool { return true })
}

// cellsOf is cells of the rows keep keeps.
func (l *fakeLake) cellsOf(keep func(fakeRow) bool) map[cell][]float64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[cell][]float64{}
	for name, rows := range l.rows {
		if _, err := l.store.ReadFile(name, 0); err != nil {
			continue // removed
		}
		vehicle := strings.TrimPrefix(strings.Split(name, "/")[0], "vehicle=")
		for _, r := range rows {
			if !keep(r) {
				continue
			}
			for _, v := range r.vals {
				k := cell{vehicle, r.message, v.Signal.Name, r.time}
				x := v.Phys
				if v.Flags&decoder.Exact != 0 && v.Flags&decoder.Unsigned == 0 {
					x = float64(v.Int)
				}
				out[k] = append(out[k], x)
			}
		}
	}
	return out
}

// testConfig is a Config of one instance on the test DBC.
func testConfig(t testing.TB, id string) Config {
	return Config{ID: id, Buses: []Bus{{DB: loadDB(t)}}, Dir: "unused", DBCHash: "test",
		Now: func() time.Time { return time.Unix(0, 0) }}
}

// newTestIngest is an instance on l.
func newTestIngest(t testing.TB, cfg Config, l openedLake) *Ingest {
	t.Helper()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	in, err := newIngest(cfg.withDefaults(), l)
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// errCrash is the test's crash between commit and acknowledgement.
var errCrash = errors.New("crash after the manifest")

// feed hands every payload to c on topic, acknowledging with ids from
// first on, and returns the acknowledgements c sent.
func feed(c *core, topic string, payloads [][]byte, first uint16) {
	for i, p := range payloads {
		c.handle(topic, p, ackRef{gen: 1, id: first + uint16(i)})
	}
}
