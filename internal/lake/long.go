package lake

import (
	"bufio"
	"io"
	"math"
	"slices"

	"github.com/parquet-go/parquet-go"

	"github.com/yukart/candec/decoder"
	"github.com/yukart/candec/envelope"
	"github.com/yukart/candec/frame"
)

// Row group sizes. A query engine reads a row group as a unit, and
// DuckDB, Spark and Trino work best with 100k–1M rows in one; a smaller
// group costs metadata and seeks, a larger one memory while writing.
const (
	// DefaultRowGroupRows is the rows of a row group of the long file.
	DefaultRowGroupRows = 1 << 20
	// DefaultTableRowGroupRows is the rows of a row group of a lake
	// table, whose rows are wider (a column per signal).
	DefaultTableRowGroupRows = 1 << 18
)

// The long file's columns, in order.
const (
	lTime = iota
	lBus
	lID
	lSA
	lMessage
	lSignal
	lValue
	lNonfinite
	lUnit
	lLabel
	lOOR
	lColumns
)

var longSchema = newSchema("candec_values", []column{
	{"time", timeNode},
	{"bus", stringNode},
	{"id", int64Node},
	{"sa", parquet.Optional(int32Node)},
	{"message", stringNode},
	{"signal", stringNode},
	{"value", parquet.Optional(doubleNode)},
	{"nonfinite", parquet.Optional(stringNode)},
	{"unit", parquet.Optional(stringNode)},
	{"label", parquet.Optional(stringNode)},
	{"oor", boolNode},
})

// Long writes decoded values to one Parquet file in long form, a row
// per value, with the columns of the JSON lines (docs/lake.md). Write
// buffers a row group and writes it when full; Close writes the rest
// and the footer. A Long belongs to one goroutine.
type Long struct {
	out       *bufio.Writer
	w         *parquet.Writer
	rows      int // rows a row group holds
	n         int // rows buffered
	lines     int
	truncated int

	time, id, sa         int64s
	bus, msg, sig        strs
	value                float64s
	nonfinite, unit, lbl strs
	oor                  bools
	pv                   values
}

// NewLong returns a Long that writes to w. meta is written in the
// file's key-value metadata (sorted by key, so the file is the same on
// every run).
func NewLong(w io.Writer, meta map[string]string) *Long {
	out := bufio.NewWriterSize(w, 1<<20)
	l := &Long{out: out, rows: DefaultRowGroupRows,
		w: parquet.NewWriter(out, longSchema, parquet.Compression(codec), parquet.PageBufferSize(1<<20))}
	setMeta(l.w, meta)
	l.sa.valid = []bool{}
	l.value.valid = []bool{}
	l.nonfinite.valid = []bool{}
	l.unit.valid = []bool{}
	l.lbl.valid = []bool{}
	return l
}

// Write adds a row per value of frame f, received on interface iface.
// Truncated values (signals past the end of a short frame) are left
// out, as in the JSON lines; Truncated counts them.
func (l *Long) Write(f *frame.Frame, iface string, vals []decoder.Value) error {
	for i := range vals {
		v := &vals[i]
		if v.Flags&decoder.Truncated != 0 {
			l.truncated++
			continue
		}
		s := v.Signal
		l.time.v = append(l.time.v, f.Time)
		l.bus.v = append(l.bus.v, iface)
		l.id.v = append(l.id.v, int64(f.ID))
		l.sa.v = append(l.sa.v, int64(v.SA))
		l.sa.valid = append(l.sa.valid, v.Flags&decoder.J1939 != 0)
		l.msg.v = append(l.msg.v, s.Message.Name)
		l.sig.v = append(l.sig.v, s.Name)
		x, nf := number(v)
		l.value.v = append(l.value.v, x)
		l.value.valid = append(l.value.valid, nf == "")
		l.nonfinite.v = append(l.nonfinite.v, nf)
		l.nonfinite.valid = append(l.nonfinite.valid, nf != "")
		l.unit.v = append(l.unit.v, s.Unit)
		l.unit.valid = append(l.unit.valid, s.Unit != "")
		lb, ok := label(v)
		l.lbl.v = append(l.lbl.v, lb)
		l.lbl.valid = append(l.lbl.valid, ok)
		l.oor.v = append(l.oor.v, v.Flags&decoder.OutOfRange != 0)
		l.lines++
		if l.n++; l.n == l.rows {
			if err := l.flush(); err != nil {
				return err
			}
		}
	}
	return nil
}

// number returns v as the float64 the lake stores, by the number rule
// of the JSON lines (decoder.Tidy), or, for NaN and ±Inf, the
// nonfinite name ("NaN", "+Inf", "-Inf") that stands for it.
func number(v *decoder.Value) (float64, string) {
	switch {
	case v.Flags&decoder.Unsigned != 0:
		return float64(v.Uint()), ""
	case v.Flags&decoder.Exact != 0:
		return float64(v.Int), ""
	case math.IsNaN(v.Phys) || math.IsInf(v.Phys, 0):
		return 0, envelope.NonFinite(v.Phys)
	}
	return decoder.Tidy(v), ""
}

// label returns the value-table label of v, as the JSON lines write it.
func label(v *decoder.Value) (string, bool) {
	s := v.Signal
	if len(s.Values) == 0 || v.Flags&decoder.Float != 0 {
		return "", false
	}
	return s.Label(int64(v.Raw))
}

// flush writes the buffered rows as one row group.
func (l *Long) flush() error {
	if l.n == 0 {
		return nil
	}
	w, p := l.w, &l.pv
	steps := []func() error{
		func() error { return writeColumn(w, lTime, p.int64s(&l.time, lTime)) },
		func() error { return writeColumn(w, lBus, p.strs(&l.bus, lBus)) },
		func() error { return writeColumn(w, lID, p.int64s(&l.id, lID)) },
		func() error { return writeColumn(w, lSA, p.int32s(&l.sa, lSA)) },
		func() error { return writeColumn(w, lMessage, p.strs(&l.msg, lMessage)) },
		func() error { return writeColumn(w, lSignal, p.strs(&l.sig, lSignal)) },
		func() error { return writeColumn(w, lValue, p.float64s(&l.value, lValue)) },
		func() error { return writeColumn(w, lNonfinite, p.strs(&l.nonfinite, lNonfinite)) },
		func() error { return writeColumn(w, lUnit, p.strs(&l.unit, lUnit)) },
		func() error { return writeColumn(w, lLabel, p.strs(&l.lbl, lLabel)) },
		func() error { return writeColumn(w, lOOR, p.bools(&l.oor, lOOR)) },
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return err
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	l.n = 0
	for _, c := range []*int64s{&l.time, &l.id, &l.sa} {
		c.v, c.valid = c.v[:0], truncValid(c.valid)
	}
	for _, c := range []*strs{&l.bus, &l.msg, &l.sig, &l.nonfinite, &l.unit, &l.lbl} {
		c.v, c.valid = c.v[:0], truncValid(c.valid)
	}
	l.value.v, l.value.valid = l.value.v[:0], l.value.valid[:0]
	l.oor.v = l.oor.v[:0]
	return nil
}

func truncValid(v []bool) []bool {
	if v == nil {
		return nil
	}
	return v[:0]
}

// Lines returns how many values Write has added, a row each.
func (l *Long) Lines() int { return l.lines }

// Truncated returns how many values Write left out because their
// signal did not fit in a short frame.
func (l *Long) Truncated() int { return l.truncated }

// Close writes the last row group and the footer. The file is a valid
// Parquet file only after Close.
func (l *Long) Close() error {
	if err := l.flush(); err != nil {
		return err
	}
	if err := l.w.Close(); err != nil {
		return err
	}
	return l.out.Flush()
}

func setMeta(w *parquet.Writer, meta map[string]string) {
	keys := make([]string, 0, len(meta))
	for k := range meta {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		w.SetKeyValueMetadata(k, meta[k])
	}
}
