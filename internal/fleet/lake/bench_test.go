package lake

import (
	"fmt"
	"io"
	"slices"
	"testing"

	"github.com/yukart/candec/decoder"
	"github.com/yukart/candec/frame"
	"github.com/yukart/candec/internal/cmdkit/valuelog"
)

// decoded is one frame of the idle capture with its values.
type decoded struct {
	f    frame.Frame
	vals []decoder.Value
}

// idleDecoded decodes the idle capture once, so that the benchmarks
// time the writers alone.
func idleDecoded(b *testing.B) ([]decoded, int) {
	var out []decoded
	lines := 0
	decodeIdle(b, func(f *frame.Frame, _ string, vals []decoder.Value) error {
		out = append(out, decoded{*f, slices.Clone(vals)})
		for _, v := range vals {
			if v.Flags&decoder.Truncated == 0 {
				lines++
			}
		}
		return nil
	})
	return out, lines
}

// benchWriter writes the idle capture's values once per iteration and
// reports the time per output line (one value: a JSON line, a CSV row,
// a row of the long file, a cell of the lake).
func benchWriter(b *testing.B, open func() (write func(*frame.Frame, string, []decoder.Value) error, end func() error)) {
	frames, lines := idleDecoded(b)
	b.ReportAllocs()
	b.ResetTimer()
	// One writer for the whole run, as a decode has: the capture is
	// written again each iteration, the file ended once.
	write, end := open()
	pass := func() {
		for i := range frames {
			if err := write(&frames[i].f, "can0", frames[i].vals); err != nil {
				b.Fatal(err)
			}
		}
	}
	// Once before the timer (b.Loop starts it): what a writer makes on
	// first sight of a message (its text, its table) is made once in a
	// decode, which writes many frames of each.
	pass()
	for b.Loop() {
		pass()
	}
	if err := end(); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(lines), "ns/line")
}

func BenchmarkOutputJSON(b *testing.B) {
	benchWriter(b, func() (func(*frame.Frame, string, []decoder.Value) error, func() error) {
		w := valuelog.NewWriter(io.Discard, valuelog.JSON)
		return w.Write, w.Flush
	})
}

func BenchmarkOutputCSV(b *testing.B) {
	benchWriter(b, func() (func(*frame.Frame, string, []decoder.Value) error, func() error) {
		w := valuelog.NewWriter(io.Discard, valuelog.CSV)
		return w.Write, w.Flush
	})
}

func BenchmarkOutputParquetLong(b *testing.B) {
	benchWriter(b, func() (func(*frame.Frame, string, []decoder.Value) error, func() error) {
		l := NewLong(io.Discard, nil)
		return l.Write, l.Close
	})
}

func BenchmarkOutputLake(b *testing.B) {
	dir := b.TempDir()
	lk, err := Open(Config{Dir: dir})
	if err != nil {
		b.Fatal(err)
	}
	benchWriter(b, func() (func(*frame.Frame, string, []decoder.Value) error, func() error) {
		w := lk.NewWriter()
		return w.Write, func() error { return w.Commit("0000000000000000") }
	})
}

// plainStore hides the directory store's CreateTemp: a Writer spools
// its tables to local files and copies them into the store at Commit,
// as it does into a store that is no TempStore.
type plainStore struct{ Store }

// BenchmarkLakeCommit writes the idle capture as one input and commits
// it, each iteration: into the directory (a temporary file renamed in
// place) and through a Store that is no TempStore (spooled, copied).
func BenchmarkLakeCommit(b *testing.B) {
	frames, _ := idleDecoded(b)
	for _, spooled := range []bool{false, true} {
		b.Run(map[bool]string{false: "dir", true: "spooled"}[spooled], func(b *testing.B) {
			dir := b.TempDir()
			lk, err := Open(Config{Dir: dir})
			if err != nil {
				b.Fatal(err)
			}
			defer lk.Close()
			if spooled {
				b.Setenv("TMPDIR", b.TempDir())
				if lk, err = Open(Config{Dir: dir, Store: plainStore{lk.Store()}}); err != nil {
					b.Fatal(err)
				}
			}
			w := lk.NewWriter()
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				for j := range frames {
					if err := w.Write(&frames[j].f, "can0", frames[j].vals); err != nil {
						b.Fatal(err)
					}
				}
				if err := w.Commit(fmt.Sprintf("%016x", i)); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(w.Files())/float64(b.N), "files/op")
		})
	}
}
