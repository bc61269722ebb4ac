package lake

import (
	"bufio"
	"io"
	"math"
	"runtime"
	"slices"
	"sync/atomic"

	"github.com/parquet-go/parquet-go"
	"golang.org/x/sync/errgroup"

	"github.com/yukart/candec/dbc"
	"github.com/yukart/candec/decoder"
	"github.com/yukart/candec/envelope"
	"github.com/yukart/candec/frame"
)

// Row group sizes. A query engine reads a row group as a unit, and
// DuckDB, Spark and Trino work best with 100k–1M rows in one; a smaller
// group costs metadata and seeks, a larger one memory while writing.
const (
	// DefaultRowGroupRows is the rows of a row group of the long file.
	DefaultRowGroupRows = 1 << 17
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
// buffers rows a chunk at a time and hands each full chunk to be
// written into the row group being built; Close writes the rest and the
// footer. A Long belongs to one goroutine.
type Long struct {
	out       *bufio.Writer
	w         *parquet.Writer
	rows      int // rows a row group holds
	inGroup   int // rows of the row group being built, cur's included
	cur       []longRow
	lines     int
	truncated int
	pv        [2]values // used by the chunk being written

	// A full chunk is encoded on a goroutine of its own while Write
	// fills the next one: decoding and encoding then run on two cores.
	// Chunks are written one at a time, in order, so the file is the
	// same whatever the timing. Only the chunks in flight are in
	// memory, not a whole row group: fresh memory (page faults) is
	// what costs most in a short decode.
	queue []*longJob // chunks handed on, oldest first
	spare [][]longRow
}

// longJob is a chunk of rows being written; end marks the last of a row
// group, after which the group is flushed.
type longJob struct {
	rows []longRow
	end  bool
	done chan struct{} // closed once written (or failed)
	err  error
}

const (
	// longChunk is the rows of a chunk: the parquet values of a column
	// of a chunk stay in the CPU's cache between conversion and
	// encoding.
	longChunk = 4096
	// longInFlight is the chunks handed on and not yet written at most,
	// beyond which Write waits.
	longInFlight = 4
)

// longRow is a buffered row: what the columns are made of when its row
// group is written. The names, unit and label come from the signal.
type longRow struct {
	time  int64
	sig   *dbc.Signal
	bus   string
	value float64 // by the number rule; 0 for a non-finite value
	raw   uint64  // for the label
	id    uint32
	sa    uint8
	flags uint8
}

// longRow flags.
const (
	rowJ1939 = 1 << iota
	rowOOR
	rowLabel
	rowNaN
	rowPosInf
	rowNegInf
)

// NewLong returns a Long that writes to w. meta is written in the
// file's key-value metadata (sorted by key, so the file is the same on
// every run).
func NewLong(w io.Writer, meta map[string]string) *Long {
	out := bufio.NewWriterSize(w, 1<<20)
	l := &Long{out: out, rows: DefaultRowGroupRows,
		w: parquet.NewWriter(out, longSchema, parquet.Compression(codec))}
	setMeta(l.w, meta)
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
		r := longRow{time: f.Time, sig: v.Signal, bus: iface, raw: v.Raw, id: f.ID, sa: v.SA}
		if v.Flags&decoder.J1939 != 0 {
			r.flags |= rowJ1939
		}
		if v.Flags&decoder.OutOfRange != 0 {
			r.flags |= rowOOR
		}
		if len(v.Signal.Values) > 0 && v.Flags&decoder.Float == 0 {
			r.flags |= rowLabel
		}
		x, nf := number(v)
		switch nf {
		case "NaN":
			r.flags |= rowNaN
		case "+Inf":
			r.flags |= rowPosInf
		case "-Inf":
			r.flags |= rowNegInf
		}
		r.value = x
		if l.cur == nil {
			l.cur = make([]longRow, 0, longChunk)
		}
		l.cur = append(l.cur, r)
		l.lines++
		if l.inGroup++; l.inGroup == l.rows || len(l.cur) == longChunk {
			if err := l.hand(); err != nil {
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

// hand hands the chunk being filled on to a goroutine that writes it,
// once the chunk before has been written; at the end of a row group,
// the group is flushed after it. It waits while longInFlight chunks
// are in flight, and returns the error of any written before.
func (l *Long) hand() error {
	j := &longJob{rows: l.cur, end: l.inGroup == l.rows, done: make(chan struct{})}
	if j.end {
		l.inGroup = 0
	}
	var prev *longJob
	if n := len(l.queue); n > 0 {
		prev = l.queue[n-1]
	}
	l.queue = append(l.queue, j)
	go func() {
		defer close(j.done)
		if prev != nil {
			<-prev.done
			if prev.err != nil {
				j.err = prev.err
				return
			}
		}
		j.err = l.writeChunk(j.rows, j.end)
	}()
	l.cur = nil
	if len(l.queue) >= longInFlight {
		if err := l.waitOldest(); err != nil {
			return err
		}
	}
	if n := len(l.spare); n > 0 {
		l.cur, l.spare = l.spare[n-1][:0], l.spare[:n-1]
	}
	return nil
}

// waitOldest waits for the oldest chunk in flight and keeps its rows'
// memory for another.
func (l *Long) waitOldest() error {
	j := l.queue[0]
	<-j.done
	l.queue = slices.Delete(l.queue, 0, 1)
	l.spare = append(l.spare, j.rows)
	return j.err
}

// writeChunk writes rows into the row group being built, then flushes
// the group when end. The columns are independent, so they are
// converted, encoded and compressed on up to two goroutines (the decode
// has the rest of the machine); the file is laid out in column order
// when the group is flushed, whatever the timing.
func (l *Long) writeChunk(rows []longRow, end bool) error {
	var next atomic.Int32
	var g errgroup.Group
	for k := range min(2, runtime.GOMAXPROCS(0)) {
		g.Go(func() error {
			for {
				col := int(next.Add(1) - 1)
				if col >= lColumns {
					return nil
				}
				if err := l.writeColumn(col, rows, &l.pv[k]); err != nil {
					return err
				}
			}
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	if !end {
		return nil
	}
	return l.w.Flush()
}

// writeColumn writes column col of a chunk of rows.
func (l *Long) writeColumn(col int, part []longRow, pv *values) error {
	if len(part) == 0 {
		return nil
	}
	out := pv.reset(len(part))
	defer func() { pv.buf = out }()
	switch col {
	case lTime:
		for i := range part {
			out = put(out, parquet.Int64Value(part[i].time), 0, col)
		}
	case lBus:
		for i := range part {
			out = put(out, parquet.ByteArrayValue(bytesOf(part[i].bus)), 0, col)
		}
	case lID:
		for i := range part {
			out = put(out, parquet.Int64Value(int64(part[i].id)), 0, col)
		}
	case lSA:
		for i := range part {
			if part[i].flags&rowJ1939 == 0 {
				out = put(out, parquet.Value{}, 0, col)
			} else {
				out = put(out, parquet.Int32Value(int32(part[i].sa)), 1, col)
			}
		}
	case lMessage:
		for i := range part {
			out = put(out, parquet.ByteArrayValue(bytesOf(part[i].sig.Message.Name)), 0, col)
		}
	case lSignal:
		for i := range part {
			out = put(out, parquet.ByteArrayValue(bytesOf(part[i].sig.Name)), 0, col)
		}
	case lValue:
		for i := range part {
			if part[i].flags&(rowNaN|rowPosInf|rowNegInf) != 0 {
				out = put(out, parquet.Value{}, 0, col)
			} else {
				out = put(out, parquet.DoubleValue(part[i].value), 1, col)
			}
		}
	case lNonfinite:
		for i := range part {
			switch f := part[i].flags; {
			case f&rowNaN != 0:
				out = put(out, parquet.ByteArrayValue(nanName), 1, col)
			case f&rowPosInf != 0:
				out = put(out, parquet.ByteArrayValue(posInfName), 1, col)
			case f&rowNegInf != 0:
				out = put(out, parquet.ByteArrayValue(negInfName), 1, col)
			default:
				out = put(out, parquet.Value{}, 0, col)
			}
		}
	case lUnit:
		for i := range part {
			if u := part[i].sig.Unit; u == "" {
				out = put(out, parquet.Value{}, 0, col)
			} else {
				out = put(out, parquet.ByteArrayValue(bytesOf(u)), 1, col)
			}
		}
	case lLabel:
		for i := range part {
			r := &part[i]
			lb, ok := "", false
			if r.flags&rowLabel != 0 {
				lb, ok = r.sig.Label(int64(r.raw))
			}
			if !ok {
				out = put(out, parquet.Value{}, 0, col)
			} else {
				out = put(out, parquet.ByteArrayValue(bytesOf(lb)), 1, col)
			}
		}
	case lOOR:
		for i := range part {
			out = put(out, parquet.BooleanValue(part[i].flags&rowOOR != 0), 0, col)
		}
	}
	return writeColumn(l.w, col, out)
}

var (
	nanName    = []byte("NaN")
	posInfName = []byte("+Inf")
	negInfName = []byte("-Inf")
)

// Lines returns how many values Write has added, a row each.
func (l *Long) Lines() int { return l.lines }

// Truncated returns how many values Write left out because their
// signal did not fit in a short frame.
func (l *Long) Truncated() int { return l.truncated }

// Close writes the last row group and the footer. The file is a valid
// Parquet file only after Close.
func (l *Long) Close() error {
	if l.inGroup > 0 {
		l.inGroup = l.rows // the chunk ends the group
		if err := l.hand(); err != nil {
			return err
		}
	}
	for len(l.queue) > 0 {
		if err := l.waitOldest(); err != nil {
			return err
		}
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
