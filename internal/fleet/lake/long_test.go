package lake

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/decoder"
	"github.com/yukart/candec/frame"
)

// failAfter fails every write once n bytes have been written.
type failAfter struct{ n int }

var errDisk = errors.New("disk full")

func (f *failAfter) Write(p []byte) (int, error) {
	if f.n -= len(p); f.n < 0 {
		return 0, errDisk
	}
	return len(p), nil
}

// TestLongWriteError checks that a failing output ends the long file
// with its error, from Write or from Close, and that nothing waits
// for ever on the chunks in flight.
func TestLongWriteError(t *testing.T) {
	l := NewLong(&failAfter{n: 50 << 10}, nil)
	l.rows = 1000
	var err error
	for range 5 {
		decodeIdle(t, func(f *frame.Frame, iface string, vals []decoder.Value) error {
			if err == nil {
				err = l.Write(f, iface, vals)
			}
			return nil
		})
	}
	if err == nil {
		err = l.Close()
	}
	if !errors.Is(err, errDisk) {
		t.Fatalf("got %v, want %v", err, errDisk)
	}
}

// TestLongSignals writes values of signals that are not among their
// message's (made by hand, not loaded), of a message without signals
// in its list, and of two interfaces, and reads each row back.
func TestLongSignals(t *testing.T) {
	m := &dbc.Message{Name: "M", ID: 1}
	a := &dbc.Signal{Name: "A", Message: m, Factor: 0.1, Unit: "V"}
	b := &dbc.Signal{Name: "B", Message: m, Factor: 1,
		Values: []dbc.ValueDescription{{Value: 1, Label: "one"}, {Value: 3, Label: "three"}}}
	// Both have Index 0, and m lists neither.
	name := filepath.Join(t.TempDir(), "values.parquet")
	var buf bytes.Buffer
	l := NewLong(&buf, nil)
	l.rows = 3
	type row struct {
		bus, signal, unit, label string
		value                    float64
		null                     bool
	}
	var want []row
	for i := range 10 {
		bus := []string{"can0", "can1"}[i%2]
		vals := []decoder.Value{
			{Signal: a, Raw: uint64(i), Phys: float64(i) * 0.1},
			{Signal: b, Raw: uint64(i % 4), Int: int64(i % 4), Phys: float64(i % 4), Flags: decoder.Exact},
			{Signal: a, Phys: math.NaN(), Flags: decoder.Float},
		}
		if err := l.Write(&frame.Frame{Time: int64(i + 1), ID: 1}, bus, vals); err != nil {
			t.Fatal(err)
		}
		lb := map[int]string{1: "one", 3: "three"}[i%4]
		want = append(want,
			row{bus, "A", "V", "", decoder.TidyScaled(float64(i)*0.1, 10), false},
			row{bus, "B", "", lb, float64(i % 4), false},
			row{bus, "A", "V", "", 0, true})
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	_, rows, _ := readRows(t, name)
	if len(rows) != len(want) {
		t.Fatalf("got %d rows, want %d", len(rows), len(want))
	}
	for i, r := range rows {
		w := want[i]
		got := row{bus: string(r[lBus].ByteArray()), signal: string(r[lSignal].ByteArray()),
			unit: string(r[lUnit].ByteArray()), label: string(r[lLabel].ByteArray()), null: r[lValue].IsNull()}
		if !got.null {
			got.value = r[lValue].Double()
		}
		if got != w || string(r[lMessage].ByteArray()) != "M" {
			t.Errorf("row %d: got %+v (message %s), want %+v", i, got, r[lMessage].ByteArray(), w)
		}
	}
}
